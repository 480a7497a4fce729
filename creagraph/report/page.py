"""The self-contained HTML report page and its PNG figures.

:func:`write_report` writes ``report.html`` (figures embedded as base64 ``data:`` URIs, so
the one file can be mailed or archived on its own), the same figures as PNG files beside
it, and ``leaderboard.csv``. All text from the inputs (model names, relation labels,
cluster labels, checklist questions) is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import atomic_write, write_records
from creagraph.report.tables import (
    GROUNDING_STATUSES,
    cliche_tables,
    grounding_coverage,
    judge_error_counts,
    kg_decided_share,
    leaderboard,
    mean_curves,
    query_coverage,
    relation_breakdown,
    source_relations,
)

#: Below this share of triples decided by the kg judge, the report shows a caveat.
DECIDED_CAVEAT = 0.5

__all__ = ["SECTIONS", "write_report"]

#: ``id`` and heading of every section of the page, in order.
SECTIONS = (
    ("leaderboard", "Leaderboard"),
    ("curves", "Creative utility vs patience"),
    ("distinctiveness", "Distinctiveness"),
    ("relations", "Per-relation breakdown"),
    ("grounding", "Grounding coverage"),
    ("cliches", "Top cliché clusters per task"),
)

_STATUS_COLOURS = {"verified": "#2a9d4b", "refuted": "#d1495b", "unknown": "#9e9e9e"}

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222;padding:0 1em}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.8em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top}
td,th{white-space:nowrap}td.text,th.text{text-align:left;white-space:normal}
th{background:#f4f4f4}
tbody tr:nth-child(even){background:#fafafa}
img{max-width:100%;height:auto;display:block;margin:.8em 0}
.na{color:#777;font-style:italic}.note{color:#555;font-size:.92em}
.caveat{background:#fff4e0;border-left:4px solid #e69500;padding:.4em .8em}
"""


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if value != value else f"{value:.{digits}f}"
    return html.escape(str(value))


def _table(header: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]], **attrs) -> str:
    """An HTML table; ``header`` is (already-escaped label, is_text_column); cells are
    already escaped. ``attrs`` become ``data-*`` attributes per row when given as lists."""
    head = "".join(f"<th class='text'>{h}</th>" if t else f"<th>{h}</th>" for h, t in header)
    body = []
    for i, row in enumerate(rows):
        data = "".join(
            f' data-{k}="{html.escape(str(v[i]), quote=True)}"' for k, v in attrs.items()
        )
        cells = "".join(
            f"<td class='text'>{c}</td>" if header[j][1] else f"<td>{c}</td>"
            for j, c in enumerate(row)
        )
        body.append(f"<tr{data}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _pivot(breakdown: list[dict[str, Any]]) -> str:
    """Relations as rows, models as columns, cells ``mean (n)``."""
    models = sorted({r["model"] for r in breakdown})
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for r in breakdown:
        cells.setdefault(r["relation"], {})[r["model"]] = r
    rows = []
    for relation in sorted(cells):
        row = [_fmt(relation)]
        for m in models:
            r = cells[relation].get(m)
            row.append("–" if r is None else f"{_fmt(r['mean_utility'])} ({r['n_queries']})")
        rows.append(row)
    header = [("relation", True)] + [(html.escape(m), False) for m in models]
    return _table(header, rows, relation=sorted(cells))


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plain(labels: Sequence[str]) -> list[str]:
    """Labels shown as typed: matplotlib would read ``$…$`` as mathtext."""
    return [str(label).replace("$", r"\$") for label in labels]


def _leaderboard_figure(table: list[dict[str, Any]], level: float) -> bytes:
    plt = _pyplot()
    models = [row["model"] for row in table][::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(models) + 1.6))
    for offset, gamma, colour in ((-0.15, "0.7", "#4c72b0"), (0.15, "0.9", "#dd8452")):
        rows = table[::-1]
        y = [i + offset for i in range(len(rows))]
        x = [row[f"s_{gamma}"] for row in rows]
        err = [
            [row[f"s_{gamma}"] - row[f"s_{gamma}_ci_low"] for row in rows],
            [row[f"s_{gamma}_ci_high"] - row[f"s_{gamma}"] for row in rows],
        ]
        ax.errorbar(x, y, xerr=err, fmt="o", color=colour, capsize=3, label=f"s{gamma}")
    ax.set_yticks(range(len(models)), _plain(models), fontsize=8)
    ax.set_xlabel(f"mean creative utility ({level:.0%} bootstrap interval)")
    ax.set_title("Leaderboard")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _curves_figure(curves: dict[str, tuple[list[float], list[float]]]) -> bytes:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for model, (gammas, values) in curves.items():
        ax.plot(gammas, values, marker="o", markersize=3, label=_plain([model])[0])
    ax.set_xlabel("patience γ")
    ax.set_ylabel("mean creative utility s(U)")
    ax.set_title("Creative utility vs patience")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _distinct_figure(nus: dict[str, list[float]]) -> bytes:
    from matplotlib.lines import Line2D

    plt = _pyplot()
    models = sorted(nus)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    ax.boxplot([nus[m] for m in models], showmeans=True)
    ax.set_xticks(range(1, len(models) + 1), _plain(models), rotation=20, ha="right",
                  fontsize=8)
    ax.set_ylabel("ν(u) = g(1 − cos) to the nearest other-model path")
    ax.set_title("Distinctiveness of kept paths (g: saturating distance transform)")
    ax.legend(
        handles=[
            Line2D([], [], color="#ff7f0e", label="median"),
            Line2D([], [], color="#2ca02c", marker="^", linestyle="", label="mean"),
        ],
        fontsize=8,
        loc="best",
    )
    return _png(fig)


def _relation_figure(rows: list[dict[str, Any]], title: str, gamma: str) -> bytes:
    import numpy as np

    plt = _pyplot()
    relations = sorted({r["relation"] for r in rows})
    models = sorted({r["model"] for r in rows})
    grid = np.full((len(relations), len(models)), np.nan)
    for r in rows:
        if r["mean_utility"] is not None:
            grid[relations.index(r["relation"]), models.index(r["model"])] = r["mean_utility"]
    fig, ax = plt.subplots(figsize=(1.2 * len(models) + 4.5, 0.32 * len(relations) + 1.8))
    image = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(models)), _plain(models), rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(relations)), _plain(relations), fontsize=8)
    fig.colorbar(image, ax=ax, label=f"mean s{gamma}")
    ax.set_title(title)
    return _png(fig)


def _grounding_figure(rows: list[dict[str, Any]]) -> bytes:
    plt = _pyplot()
    rows = rows[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.6))
    left = [0.0] * len(rows)
    for status in GROUNDING_STATUSES:
        widths = [r[status] for r in rows]
        ax.barh(range(len(rows)), widths, left=left, label=status,
                color=_STATUS_COLOURS[status])
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(rows)), _plain([r["model"] for r in rows]))
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of triples (kg judge)")
    ax.set_title("Grounding coverage")
    ax.legend(fontsize=8, ncol=3, loc="lower right")
    ax.tick_params(axis="y", labelsize=8)
    return _png(fig)


def _scope(coverage: Mapping[str, Any]) -> str:
    """"N queries × M models", said as such only when every model has the same queries."""
    n, m = coverage["n_queries"], coverage["n_models"]
    if coverage["same"]:
        return f"{n:,} queries × {m} model{'s' if m != 1 else ''}"
    return (
        f"{n:,} distinct queries over {m} models, {coverage['common']:,} of them answered by "
        "every model (models scored on different queries are marked ⚠)"
    )


def _caveats(
    queries: Sequence[Mapping[str, Any]],
    grounding_queries: Sequence[Mapping[str, Any]],
    coverage: Mapping[str, Any],
) -> list[str]:
    """Escaped HTML sentences warning where the numbers claim less than they seem to."""
    out = []
    for model, d in coverage["differs"].items():
        out.append(
            f"⚠ {html.escape(model)} was scored on different queries than the other models "
            f"({d['missing']} missing, {d['extra']} extra): its means are not comparable."
        )
    shares = kg_decided_share([*queries, *grounding_queries])
    low = {m: s for m, s in shares.items() if s < DECIDED_CAVEAT}
    if low:
        listed = ", ".join(f"{html.escape(m)} {s:.0%}" for m, s in low.items())
        out.append(
            "Caution: the knowledge-graph judge decided (verified or refuted) only a small "
            f"share of the triples ({listed}); the rest are unknown and count as not "
            "factual, so these scores reflect the graph's coverage as much as the models."
        )
    errors = judge_error_counts(queries)
    if errors:
        listed = ", ".join(
            f"{html.escape(m)}: {e['unparsed']} unparsed, {e['failed']} failed"
            for m, e in errors.items()
        )
        out.append(f"The LLM judge could not judge some triples ({listed}); they count as "
                   "unknown.")
    return out


def _img(name: str, data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return (
        f"<img src='data:image/png;base64,{encoded}' alt='{html.escape(alt, quote=True)}' "
        f"data-file='{html.escape(name, quote=True)}'>"
    )


def _not_available(reason: str) -> str:
    return f"<p class='na'>Not available: {html.escape(reason)}</p>"


def write_report(
    queries: Sequence[Mapping[str, Any]],
    out_dir: str | os.PathLike[str],
    *,
    distinct_paths: Sequence[Mapping[str, Any]] = (),
    distinct_summary: Sequence[Mapping[str, Any]] = (),
    grounding_queries: Sequence[Mapping[str, Any]] = (),
    relation_records: Sequence[Mapping[str, Any]] = (),
    tig_clusters: Sequence[Mapping[str, Any]] = (),
    tig_anchors: Sequence[Mapping[str, Any]] = (),
    top_clusters: int = 5,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    title: str = "creagraph report",
) -> list[Path]:
    """Write the report into ``out_dir``; returns the files written, ``report.html`` first.

    Parameters
    ----------
    queries : scored queries (``queries.jsonl`` of ``creagraph score``).
    distinct_paths, distinct_summary : output of ``creagraph distinct`` (optional).
    grounding_queries : extra scored queries used only for grounding coverage (e.g. a
        kg-judge run on a subset); coverage uses every query, of ``queries`` and these, that
        the kg judge scored.
    relation_records : generated queries or CREATE answer rows naming each query's source
        relation (see :func:`~creagraph.report.tables.source_relations`).
    tig_clusters, tig_anchors : rows of ``creagraph tig clusters|anchors`` (optional).
    top_clusters : clusters shown per task and comparison.

    Examples
    --------
    >>> import tempfile
    >>> q = [{"model": "m", "utility": {"0.7": u, "0.9": u}, "rel_b": "occupation",
    ...       "utility_curve": {"0.0": u, "1.0": u}, "n_kept": 1} for u in (1.0, 2.0)]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write_report(q, d, n_resamples=100)]  # doctest: +NORMALIZE_WHITESPACE
    ['report.html', 'leaderboard.csv', 'leaderboard.png', 'utility_curves.png',
     'relations_query.png']
    """
    if not queries:
        raise ValueError("no scored queries to report on")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, bytes]] = []
    parts: dict[str, str] = {}

    table = leaderboard(
        queries, distinct_summary, n_resamples=n_resamples, level=level, seed=seed
    )
    figures.append(("leaderboard.png", _leaderboard_figure(table, level)))
    has_nu = any("avg_nu" in row for row in table)
    header = [("model", True), ("queries", False)]
    header += [(f"s<sub>{g}</sub> [{level:.0%} CI]", False) for g in ("0.7", "0.9")]
    header += [("s<sub>0.9</sub> strict / lenient", False), ("decided", False)]
    header += [("max σ", False), ("d", False), ("|U|", False)]
    if has_nu:
        header += [("avg ν", False), ("max ν", False)]
    coverage_q = query_coverage(queries)
    flagged = coverage_q["differs"]
    has_ceiling = any("ceiling_fraction_0.9" in row for row in table)
    if has_ceiling:
        header += [("ceiling s<sub>0.9</sub>", False), ("graph recall", False)]
    rows = []
    for row in table:
        flag = "⚠ " if row["model"] in flagged else ""
        cells = [f"tier {row['tier']} · {flag}{_fmt(row['model'])}", _fmt(row["n_queries"])]
        for g in ("0.7", "0.9"):
            cells.append(
                f"{_fmt(row[f's_{g}'])} [{_fmt(row[f's_{g}_ci_low'])}, "
                f"{_fmt(row[f's_{g}_ci_high'])}]"
            )
        cells.append(f"{_fmt(row['s_0.9_strict'])} / {_fmt(row['s_0.9_lenient'])}")
        decided = row.get("decided_share")
        cells.append(f"{decided:.0%}" if decided is not None else "–")
        cells += [_fmt(row["max_quality"]), _fmt(row["mean_pairwise_distance"]),
                  _fmt(row["n_kept"])]
        if has_nu:
            cells += [_fmt(row.get("avg_nu"), 3), _fmt(row.get("max_nu"), 3)]
        if has_ceiling:
            fraction = row.get("ceiling_fraction_0.9")
            recall = row.get("graph_path_recall")
            cells += [
                "–" if fraction is None else f"{fraction:.1%}",
                "–" if recall is None else f"{recall:.1%}",
            ]
        rows.append(cells)
    judges = sorted({f"{q.get('judge', '?')} judge, {q.get('mode', '?')} mode" for q in queries})
    caveats = _caveats(queries, grounding_queries, coverage_q)
    n_tiers = max((row["tier"] for row in table), default=0)
    parts["leaderboard"] = (
        "".join(f"<p class='caveat'>{c}</p>" for c in caveats)
        + f"<p class='note'>{_scope(coverage_q)}. Mean over queries; {level:.0%} percentile "
        f"bootstrap intervals over queries ({n_resamples:,} resamples, seed {seed}). Sorted "
        "by s<sub>0.9</sub> and ranked only in <b>tiers</b>: a model starts a new tier when "
        "its s<sub>0.9</sub> interval lies wholly below the interval of the model above it; "
        f"within a tier the order is not significant ({n_tiers} tier"
        f"{'s' if n_tiers != 1 else ''}). "
        "Strict / lenient: triples the judge left unknown counted as not factual / factual "
        "(the utility interval); decided: share of triples with a verdict. "
        f"Scored with: {html.escape('; '.join(judges))}.</p>"
        + _table(header, rows, model=[r["model"] for r in table],
                 tier=[r["tier"] for r in table])
        + _img("leaderboard.png", figures[-1][1], "leaderboard with confidence intervals")
    )

    curves = mean_curves(queries)
    figures.append(("utility_curves.png", _curves_figure(curves)))
    parts["curves"] = (
        "<p class='note'>Mean creative utility over each model's queries at patience γ "
        "(γ = 0: only the best path counts — the best two in published mode; γ = 1: every "
        "kept path counts fully).</p>"
        + _img("utility_curves.png", figures[-1][1], "creative utility vs patience")
    )

    nus: dict[str, list[float]] = {}
    for p in distinct_paths:
        if p.get("nu") is not None:
            nus.setdefault(str(p["model"]), []).append(float(p["nu"]))
    if nus:
        figures.append(("distinctiveness.png", _distinct_figure(nus)))
        parts["distinctiveness"] = (
            "<p class='note'>ν of each kept high-quality path: its transformed distance g "
            "(the saturating transform of 1 − cos, SPEC §3.5) to the nearest path another "
            "model gave to the same query. Boxes: quartiles, with the <b>median</b> as a "
            "line and the <b>mean</b> as a triangle.</p>"
            + _img("distinctiveness.png", figures[-1][1], "distinctiveness distributions")
        )
    else:
        parts["distinctiveness"] = _not_available(
            "no distinctiveness results given (run `creagraph distinct` and pass --distinct)."
        )

    relation_parts = []
    relations = source_relations(relation_records)
    for key, name, what in (
        ("source", "relations_source.png", "Source relation: the relation the query's source "
         "path is built on (from the generated queries / answer files)."),
        ("query", "relations_query.png", "Query relation (rel_b): the relation that ties "
         "concept C to the hidden bridge concept, as phrased in the query."),
    ):
        breakdown = relation_breakdown(queries, key, relations)
        if not breakdown:
            if key == "source":
                relation_parts.append(
                    "<h3>By source relation</h3>"
                    + _not_available("no input names the queries' source relations "
                                     "(pass the answer or generated query files with "
                                     "--queries).")
                )
            continue
        figures.append((name, _relation_figure(breakdown, f"Mean s0.9 by {key} relation",
                                               "0.9")))
        relation_parts.append(
            f"<h3>By {key} relation</h3><p class='note'>{html.escape(what)} Cells: mean "
            "s<sub>0.9</sub> (number of queries).</p>"
            + _pivot(breakdown)
            + _img(name, figures[-1][1], f"mean utility by {key} relation")
        )
    parts["relations"] = "".join(relation_parts) or _not_available(
        "the scored queries name no relation."
    )

    coverage = grounding_coverage([*queries, *grounding_queries])
    if coverage:
        figures.append(("grounding.png", _grounding_figure(coverage)))
        parts["grounding"] = (
            "<p class='note'>Fractions of the triples in the answers the kg judge "
            "<b>verified</b> in the knowledge graph, <b>refuted</b> (positive evidence "
            "against: a property with complete values, or a known negative) or left "
            "<b>unknown</b> (an end or the relation not linked, or absent without evidence "
            "against), over the queries it judged.</p>"
            + _table(
                [("model", True), ("queries", False), ("triples", False)]
                + [(s, False) for s in GROUNDING_STATUSES],
                [[_fmt(r["model"]), _fmt(r["n_queries"]), _fmt(r["n_triples"])]
                 + [f"{r[s]:.1%}" for s in GROUNDING_STATUSES] for r in coverage],
                model=[r["model"] for r in coverage],
            )
            + _img("grounding.png", figures[-1][1], "grounding coverage")
        )
    else:
        parts["grounding"] = _not_available(
            "the kg judge was not used (score with `--judge kg` and pass the result)."
        )

    groups = cliche_tables(tig_clusters, tig_anchors, top=top_clusters)
    if groups:
        blocks = []
        for group in groups:
            comparison = group["comparison_key"]
            if comparison:
                a, _, b = comparison.partition("||")
                scope = f"reference population for {a} vs {b} (both left out)"
            else:
                scope = "whole population"
            has_checklist = any(r["checklist"] for r in group["rows"])
            header = [("#", False), ("type", True), ("cluster", True), ("ClichéScore", False),
                      ("coverage", False), ("models", False)]
            if has_checklist:
                header.append(("checklist question", True))
            rows = []
            for r in group["rows"]:
                cells = [_fmt(r["rank"]), _fmt(r["type"]), _fmt(r["summary"]),
                         _fmt(r["cliche_score"]), _fmt(r["coverage"]), _fmt(r["n_models"])]
                if has_checklist:
                    cells.append(_fmt(r["checklist"]))
                rows.append(cells)
            blocks.append(
                f"<h3 data-task=\"{html.escape(group['task_id'], quote=True)}\">"
                f"{html.escape(group['task_id'])} <small>({html.escape(scope)})</small></h3>"
                + _table(header, rows)
            )
        parts["cliches"] = "".join(blocks)
    else:
        parts["cliches"] = _not_available("no TIG clusters or anchors given (--tig).")

    body = "".join(
        f"<section id='{sid}'><h2>{html.escape(heading)}</h2>{parts[sid]}</section>"
        for sid, heading in SECTIONS
    )
    nav = " · ".join(f"<a href='#{sid}'>{html.escape(h)}</a>" for sid, h in SECTIONS)
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p class='note'>{_scope(coverage_q)} "
        f"({len(queries):,} scored answers). {nav}</p>{body}</body></html>"
    )
    written = [out / "report.html", out / "leaderboard.csv"]
    with atomic_write(written[0]) as handle:
        handle.write(page)
    write_records(written[1], table)
    for name, data in figures:
        with atomic_write(out / name, mode="wb", encoding=None) as handle:
            handle.write(data)
        written.append(out / name)
    return written
