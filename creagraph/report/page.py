"""The self-contained HTML report page and its PNG figures.

:func:`write_report` writes ``report.html`` (figures embedded as base64 ``data:`` URIs, so
the one file can be mailed or archived on its own), the same figures as PNG files beside
it, and ``leaderboard.csv``. The page is rendered from the jinja2 templates in
``creagraph/report/templates`` (a base page, and one template per section, fed by one
function here that computes the section's data) with autoescaping on: all text from the
inputs (model names, relation labels, cluster labels, checklist questions) is HTML-escaped.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from creagraph.core.io import atomic_write, write_records
from creagraph.core.records import QueryLike, QueryRecord
from creagraph.report import figures
from creagraph.report.novelty import repetition_rows
from creagraph.report.tables import (
    GROUNDING_STATUSES,
    cliche_tables,
    grounding_coverage,
    group_difference,
    judge_error_counts,
    kg_decided_share,
    leaderboard,
    mean_curves,
    query_coverage,
    relation_breakdown,
    source_relations,
)

if TYPE_CHECKING:
    import jinja2

#: Below this share of triples decided by the kg judge, the report shows a caveat.
DECIDED_CAVEAT = 0.5

__all__ = ["OPTIONAL_SECTIONS", "SECTIONS", "write_report"]

#: ``id`` and heading of every section of the page, in order; the section ``id`` is also
#: the name of its template, ``templates/<id>.html.j2``.
SECTIONS = (
    ("leaderboard", "Leaderboard"),
    ("curves", "Creative utility vs patience"),
    ("distinctiveness", "Distinctiveness"),
    ("relations", "Per-relation breakdown"),
    ("grounding", "Grounding coverage"),
    ("cliches", "Top cliché clusters per task"),
)

#: sections after :data:`SECTIONS` shown only when their input is given: the Ekphrasis
#: leaderboards are a separate benchmark, not a gap in a CREATE report
OPTIONAL_SECTIONS = (("ekphrasis", "Ekphrasis pairwise leaderboards"),
                     ("tig_novelty", "Population novelty and within-model repetition"))


@dataclass(frozen=True)
class _Figure:
    """A PNG figure: written as ``file`` beside the page and embedded in it."""

    file: str
    png: bytes
    alt: str

    @property
    def base64(self) -> str:
        return base64.b64encode(self.png).decode("ascii")


class _Section(NamedTuple):
    """What a section's template gets (``context``) and the figures it shows, in order."""

    context: dict[str, Any]
    figures: list[_Figure]


@cache
def _templates() -> jinja2.Environment:
    """The jinja2 environment over the package's templates (autoescape on; an undefined
    name is an error, not an empty string)."""
    from creagraph.core.extras import require

    jinja2 = require("jinja2", "report", "needed to render the report's page")

    return jinja2.Environment(
        loader=jinja2.PackageLoader("creagraph.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _render(template: str, context: Mapping[str, Any]) -> str:
    return _templates().get_template(template).render(context)


def _fmt(value: Any, digits: int = 2) -> str:
    """A table cell's text: floats to ``digits`` decimals, ``None`` and NaN as a dash."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if value != value else f"{value:.{digits}f}"
    return str(value)


def _percent(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}%}"


def _row(cells: Sequence[str], **data: Any) -> dict[str, Any]:
    """A table row for the ``table`` macro; ``data`` become ``data-*`` attributes."""
    return {"cells": list(cells), "data": data}


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
    queries: Sequence[QueryRecord],
    grounding_queries: Sequence[QueryRecord],
    coverage: Mapping[str, Any],
) -> list[str]:
    """Sentences (plain text) warning where the numbers claim less than they seem to."""
    out = []
    for model, d in coverage["differs"].items():
        out.append(
            f"⚠ {model} was scored on different queries than the other models "
            f"({d['missing']} missing, {d['extra']} extra): its means are not comparable."
        )
    shares = kg_decided_share([*queries, *grounding_queries])
    low = {m: s for m, s in shares.items() if s < DECIDED_CAVEAT}
    if low:
        listed = ", ".join(f"{m} {s:.0%}" for m, s in low.items())
        out.append(
            "Caution: the knowledge-graph judge decided (verified or refuted) only a small "
            f"share of the triples ({listed}); the rest are unknown and count as not "
            "factual, so these scores reflect the graph's coverage as much as the models."
        )
    errors = judge_error_counts(queries)
    if errors:
        listed = ", ".join(
            f"{m}: {e['unparsed']} unparsed, {e['failed']} failed" for m, e in errors.items()
        )
        out.append(f"The LLM judge could not judge some triples ({listed}); they count as "
                   "unknown.")
    return out


def _leaderboard_cells(
    row: Mapping[str, Any], flagged: Mapping[str, Any], has_nu: bool, has_ceiling: bool
) -> list[str]:
    """One model's leaderboard cells, in the order of the template's header."""
    flag = "⚠ " if row["model"] in flagged else ""
    cells = [f"tier {row['tier']} · {flag}{_fmt(row['model'])}", _fmt(row["n_queries"])]
    for g in ("0.7", "0.9"):
        cells.append(
            f"{_fmt(row[f's_{g}'])} [{_fmt(row[f's_{g}_ci_low'])}, "
            f"{_fmt(row[f's_{g}_ci_high'])}]"
        )
    cells.append(f"{_fmt(row['s_0.9_strict'])} / {_fmt(row['s_0.9_lenient'])}")
    cells.append(_percent(row.get("decided_share")))
    cells += [_fmt(row["max_quality"]), _fmt(row["mean_pairwise_distance"]),
              _fmt(row["n_kept"])]
    if has_nu:
        cells += [_fmt(row.get("avg_nu"), 3), _fmt(row.get("max_nu"), 3)]
    if has_ceiling:
        cells += [_percent(row.get("ceiling_fraction_0.9"), 1),
                  _percent(row.get("graph_path_recall"), 1)]
    return cells


def _leaderboard_section(
    queries: Sequence[QueryRecord],
    grounding_queries: Sequence[QueryRecord],
    table: list[dict[str, Any]],
    coverage: Mapping[str, Any],
    *,
    n_resamples: int,
    level: float,
    seed: int,
) -> _Section:
    """The leaderboard (``table``: comparison groups in order, best first in each) with its
    caveats, scope and method note: one table per comparison group (judge, mode, query
    set; :func:`~creagraph.report.tables.leaderboard`), never ranked against each other."""
    has_nu = any("avg_nu" in row for row in table)
    has_ceiling = any("ceiling_fraction_0.9" in row for row in table)
    numbers = sorted({row["comparison_group"] for row in table})
    groups = []
    for number in numbers:
        members = [row for row in table if row["comparison_group"] == number]
        names = {row["model"] for row in members}
        scored = [q for q in queries if str(q.model) in names]
        group_coverage = query_coverage(scored) if len(numbers) > 1 else coverage
        first = members[0]
        size = first.get("query_set_size")
        groups.append({
            "number": number,
            "heading": (
                f"Table {number}: {first['judge']} judge, {first['mode']} mode, query set "
                f"{first['query_set']}" + (f" ({size} queries)" if size else "")
            ),
            "apart": (
                "" if number == numbers[0] else
                f"Not ranked against table {numbers[0]} ({group_difference(table[0], first)})."
            ),
            "caveats": [c for c in _caveats(scored, [], group_coverage) if c.startswith("⚠")],
            "n_tiers": max((row["tier"] for row in members), default=0),
            "rows": [
                _row(_leaderboard_cells(row, group_coverage["differs"], has_nu, has_ceiling),
                     model=row["model"], tier=row["tier"], group=number)
                for row in members
            ],
        })
    judges = sorted({f"{_or_unknown(q.judge)} judge, {_or_unknown(q.mode)} mode" for q in queries})
    shown = table if len(numbers) == 1 else [
        {**row, "model": f"[table {row['comparison_group']}] {row['model']}"} for row in table
    ]
    fig = _Figure("leaderboard.png", figures.leaderboard_figure(shown, level),
                  "leaderboard with confidence intervals")
    context = {
        "caveats": [c for c in _caveats(queries, grounding_queries, coverage)
                    if not c.startswith("⚠") or len(numbers) == 1],
        "scope": _scope(coverage),
        "level": f"{level:.0%}",
        "n_resamples": f"{n_resamples:,}",
        "seed": seed,
        "judges": "; ".join(judges),
        "has_nu": has_nu,
        "has_ceiling": has_ceiling,
        "groups": groups,
        "several": len(groups) > 1,
        "fig": fig,
    }
    return _Section(context, [fig])


def _or_unknown(value: str | None) -> str:
    """A record's field as the page says it, ``?`` when the record has none."""
    return "?" if value is None else value


def _curves_section(queries: Sequence[QueryRecord]) -> _Section:
    """Mean creative utility vs patience γ per model."""
    fig = _Figure("utility_curves.png", figures.curves_figure(mean_curves(queries)),
                  "creative utility vs patience")
    return _Section({"fig": fig}, [fig])


def _distinct_section(distinct_paths: Sequence[Mapping[str, Any]]) -> _Section:
    """Distributions of ν per model; no figure when no path carries one."""
    nus: dict[str, list[float]] = {}
    for p in distinct_paths:
        if p.get("nu") is not None:
            nus.setdefault(str(p["model"]), []).append(float(p["nu"]))
    if not nus:
        return _Section({"fig": None}, [])
    fig = _Figure("distinctiveness.png", figures.distinct_figure(nus),
                  "distinctiveness distributions")
    return _Section({"fig": fig}, [fig])


#: The relation breakdowns: key of :func:`relation_breakdown`, figure file, explanation.
_RELATION_KINDS = (
    ("source", "relations_source.png", "Source relation: the relation the query's source "
     "path is built on (from the generated queries / answer files)."),
    ("query", "relations_query.png", "Query relation (rel_b): the relation that ties "
     "concept C to the hidden bridge concept, as phrased in the query."),
)


def _relation_pivot(breakdown: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Models (the columns) and rows: one per relation, cells ``mean (n)`` per model."""
    models = sorted({r["model"] for r in breakdown})
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for r in breakdown:
        cells.setdefault(r["relation"], {})[r["model"]] = r
    rows = []
    for relation in sorted(cells):
        row = [_fmt(relation)]
        for m in models:
            c = cells[relation].get(m)
            row.append("–" if c is None else f"{_fmt(c['mean_utility'])} ({c['n_queries']})")
        rows.append(_row(row, relation=relation))
    return models, rows


def _relations_section(
    queries: Sequence[QueryRecord], relation_records: Sequence[Mapping[str, Any]]
) -> _Section:
    """A block per relation kind with a breakdown; the source kind says when no input names
    the source relations, the query kind is left out when no query names ``rel_b``."""
    relations = source_relations(relation_records)
    blocks: list[dict[str, Any]] = []
    shown: list[_Figure] = []
    for key, file, what in _RELATION_KINDS:
        breakdown = relation_breakdown(queries, key, relations)
        if not breakdown:
            if key == "source":
                blocks.append({"key": key, "fig": None})
            continue
        fig = _Figure(file, figures.relation_figure(breakdown, f"Mean s0.9 by {key} relation",
                                                    "0.9"),
                      f"mean utility by {key} relation")
        models, rows = _relation_pivot(breakdown)
        blocks.append({"key": key, "what": what, "models": models, "rows": rows, "fig": fig})
        shown.append(fig)
    return _Section({"blocks": blocks}, shown)


def _grounding_section(
    queries: Sequence[QueryRecord], grounding_queries: Sequence[QueryRecord]
) -> _Section:
    """Per model, the fractions of triples the kg judge verified / refuted / left unknown."""
    coverage = grounding_coverage([*queries, *grounding_queries])
    if not coverage:
        return _Section({"fig": None}, [])
    rows = [
        _row([_fmt(r["model"]), _fmt(r["n_queries"]), _fmt(r["n_triples"])]
             + [f"{r[s]:.1%}" for s in GROUNDING_STATUSES], model=r["model"])
        for r in coverage
    ]
    fig = _Figure("grounding.png", figures.grounding_figure(coverage), "grounding coverage")
    return _Section({"statuses": GROUNDING_STATUSES, "rows": rows, "fig": fig}, [fig])


def _cliches_section(
    tig_clusters: Sequence[Mapping[str, Any]],
    tig_anchors: Sequence[Mapping[str, Any]],
    top: int,
) -> _Section:
    """The ``top`` cliché clusters per task and comparison, with checklist questions."""
    groups = []
    for group in cliche_tables(tig_clusters, tig_anchors, top=top):
        comparison = group["comparison_key"]
        if comparison:
            a, _, b = comparison.partition("||")
            scope = f"reference population for {a} vs {b} (both left out)"
        else:
            scope = "whole population"
        has_checklist = any(r["checklist"] for r in group["rows"])
        rows = []
        for r in group["rows"]:
            cells = [_fmt(r["rank"]), _fmt(r["type"]), _fmt(r["summary"]),
                     _fmt(r["cliche_score"]), _fmt(r["coverage"]), _fmt(r["n_models"])]
            if has_checklist:
                cells.append(_fmt(r["checklist"]))
            rows.append(_row(cells))
        groups.append({"task_id": group["task_id"], "scope": scope,
                       "has_checklist": has_checklist, "rows": rows})
    return _Section({"groups": groups}, [])


def _ekphrasis_section(runs: Sequence[Mapping[str, Any]]) -> _Section:
    """One Bradley–Terry leaderboard per judged dimension, its diagnostics with the pilot
    gates, and every anchor used with its provenance (SPEC §4.12)."""
    order = {"usefulness": 0, "expressiveness": 1, "novelty": 2}
    shown = []
    for run in sorted(runs, key=lambda r: (order.get(r["dimension"], 9), r["dir"])):
        diag = run["diagnostics"]
        board = [_row([_fmt(r.get("rank")), _fmt(r.get("model")), _fmt(r.get("score")),
                       f"[{_fmt(r.get('ci_low'))}, {_fmt(r.get('ci_high'))}]",
                       f"{_fmt(r.get('rank_low'))}–{_fmt(r.get('rank_high'))}",
                       f"{_fmt(r.get('wins'))}/{_fmt(r.get('losses'))}/{_fmt(r.get('ties'))}",
                       _fmt(r.get("comparisons"))], model=r.get("model"))
                 for r in run["leaderboard"]]
        gates = [_row([name, _fmt(g.get("value"), 3), g.get("rule", ""),
                       {True: "pass", False: "FAIL", None: "n/a"}[g.get("pass")]],
                      gate=name)
                 for name, g in diag.get("gates", {}).items()]
        facts = [("comparisons", diag.get("n_comparisons")),
                 ("order swaps", diag.get("n_swaps")),
                 ("order-swap consistency", _fmt(diag.get("order_swap_consistency"), 3)),
                 ("length Spearman", _fmt(diag.get("length_spearman"), 3)),
                 ("judge", diag.get("judge"))]
        anchors = [{"id": a.get("anchor_id"), "text": a.get("text", ""),
                    "task_id": a.get("task_id"), "cluster_id": a.get("cluster_id"),
                    "labels": ", ".join(a.get("labels", [])[:8]),
                    "cliche_score": _fmt(a.get("cliche_score"), 3),
                    "n_comparisons": a.get("n_comparisons"),
                    "reference_models": ", ".join(a.get("reference_models", [])),
                    "response_ids": a.get("response_ids", []),
                    "n_responses": a.get("n_responses")}
                   for a in run["anchors"]]
        shown.append({"dimension": run["dimension"], "dir": run["dir"], "board": board,
                      "gates": gates, "facts": facts, "anchors": anchors,
                      "note": diag.get("fit_note", "")})
    return _Section({"runs": shown}, [])


def write_report(
    queries: Sequence[QueryLike],
    out_dir: str | os.PathLike[str],
    *,
    distinct_paths: Sequence[Mapping[str, Any]] = (),
    distinct_summary: Sequence[Mapping[str, Any]] = (),
    grounding_queries: Sequence[QueryLike] = (),
    relation_records: Sequence[Mapping[str, Any]] = (),
    tig_clusters: Sequence[Mapping[str, Any]] = (),
    tig_anchors: Sequence[Mapping[str, Any]] = (),
    ekphrasis: Sequence[Mapping[str, Any]] = (),
    tig_novelty: Sequence[Mapping[str, Any]] = (),
    top_clusters: int = 5,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    title: str = "creagraph report",
) -> list[Path]:
    """Write the report into ``out_dir``; returns the files written, ``report.html`` first.

    Parameters
    ----------
    queries : scored queries (``queries.jsonl`` of ``creagraph score``: records or their
        JSON form, :class:`~creagraph.core.records.QueryRecord`).
    distinct_paths, distinct_summary : output of ``creagraph distinct`` (optional).
    grounding_queries : extra scored queries used only for grounding coverage (e.g. a
        kg-judge run on a subset); coverage uses every query, of ``queries`` and these, that
        the kg judge scored.
    relation_records : generated queries or CREATE answer rows naming each query's source
        relation (see :func:`~creagraph.report.tables.source_relations`).
    tig_clusters, tig_anchors : rows of ``creagraph tig clusters|anchors`` (optional).
    top_clusters : clusters shown per task and comparison.
    ekphrasis : output folders of ``creagraph tig judge``, read by
        :func:`~creagraph.report.inputs.read_ekphrasis` (optional).
    tig_novelty : model rows of ``creagraph tig score --summary`` files, read by
        :func:`~creagraph.report.novelty.split_tig_summaries` (optional): novelty beside
        within-model repetition.

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
    records = [QueryRecord.of(q) for q in queries]
    grounding = [QueryRecord.of(q) for q in grounding_queries]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = leaderboard(
        records, distinct_summary, n_resamples=n_resamples, level=level, seed=seed
    )
    coverage = query_coverage(records)
    sections = {
        "leaderboard": _leaderboard_section(records, grounding, table, coverage,
                                            n_resamples=n_resamples, level=level, seed=seed),
        "curves": _curves_section(records),
        "distinctiveness": _distinct_section(distinct_paths),
        "relations": _relations_section(records, relation_records),
        "grounding": _grounding_section(records, grounding),
        "cliches": _cliches_section(tig_clusters, tig_anchors, top_clusters),
        "ekphrasis": _ekphrasis_section(ekphrasis),
        "tig_novelty": _Section({"rows": repetition_rows(tig_novelty)}, []),
    }
    given = {"ekphrasis": bool(ekphrasis), "tig_novelty": bool(tig_novelty)}
    shown = [*SECTIONS, *(s for s in OPTIONAL_SECTIONS if given[s[0]])]
    page = _render("page.html.j2", {
        "title": title,
        "scope": _scope(coverage),
        "n_answers": f"{len(queries):,}",
        "sections": [
            {"id": sid, "heading": heading,
             "html": _render(f"{sid}.html.j2", sections[sid].context)}
            for sid, heading in shown
        ],
    })
    written = [out / "report.html", out / "leaderboard.csv"]
    with atomic_write(written[0]) as handle:
        handle.write(page)
    write_records(written[1], table)
    for fig in (fig for sid, _ in shown for fig in sections[sid].figures):
        with atomic_write(out / fig.file, mode="wb", encoding=None) as handle:
            handle.write(fig.png)
        written.append(out / fig.file)
    return written
