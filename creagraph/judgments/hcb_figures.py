"""The HCB report's figures and its self-contained ``report.html`` (the ``report`` extra:
matplotlib and jinja2, imported through :func:`creagraph.core.extras.require`).

Every figure is drawn from the report's tables (:func:`~creagraph.judgments.hcb.hcb_report`,
the views of :mod:`~creagraph.judgments.hcb_views`) and embedded in the page as a PNG
``data:`` URI, so the page is one file that opens anywhere. Labels from the inputs are
escaped (jinja2 autoescape; ``$`` is not read as mathtext in the figures).
"""

from __future__ import annotations

import base64
import io
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from creagraph.core.extras import require
from creagraph.core.io import atomic_write
from creagraph.judgments.hcb_io import AXES, STAGES

if TYPE_CHECKING:  # matplotlib is an extra (report), imported where a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["hcb_figures", "hcb_report_html", "write_hcb_html"]

_VERDICT_COLOURS = {"convergent": "#2a9d4b", "divergent": "#d1495b", "mixed": "#e9a23b",
                    "no_difference": "#9e9e9e", "undetermined": "#ffffff"}


def _pyplot() -> Any:
    matplotlib = require("matplotlib", "report", "needed to draw the HCB report's figures")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plain(label: Any) -> str:
    return str(label).replace("$", r"\$")


def _png(fig: Figure) -> str:
    """The figure as a base64 PNG (closed afterwards)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _rating_vs_win_rate(rows: list[dict[str, Any]]) -> Figure:
    """Figure 3A: mean scalar rating (x) vs pairwise win rate (y), one point per model ×
    domain, a colour per domain."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    domains = sorted({r["domain"] for r in rows})
    cmap = plt.get_cmap("tab10")
    for k, dom in enumerate(domains):
        pts = [r for r in rows if r["domain"] == dom and r["mean_rating"] is not None
               and r["pairwise_win_rate"] is not None]
        ax.scatter([r["mean_rating"] for r in pts], [r["pairwise_win_rate"] for r in pts],
                   color=cmap(k % 10), label=_plain(dom), s=36)
        for r in pts:
            ax.annotate(_plain(r["model"]), (r["mean_rating"], r["pairwise_win_rate"]),
                        fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set_xlabel("mean scalar rating (three axes, every phase)")
    ax.set_ylabel("pairwise win rate (wins + ties/2)")
    ax.set_title("Scalar rating vs pairwise win rate per model × domain")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _tournament_win_rates(rows: list[dict[str, Any]]) -> Figure:
    """Table 2 as bars: tournament win rate per model, one panel per domain, phases side
    by side."""
    plt = _pyplot()
    domains = sorted({r["domain"] for r in rows})
    fig, axes = plt.subplots(len(domains), 1, figsize=(7.5, 2.4 * len(domains) + 0.6),
                             squeeze=False)
    for ax, dom in zip(axes[:, 0], domains, strict=True):
        drows = [r for r in rows if r["domain"] == dom]
        models = sorted({r["model"] for r in drows})
        stages = [s for s in STAGES if any(r["stage"] == s for r in drows)]
        width = 0.8 / max(len(stages), 1)
        for k, stage in enumerate(stages):
            rate = {r["model"]: r["tournament_win_rate"] for r in drows if r["stage"] == stage}
            ax.bar([i + k * width for i in range(len(models))],
                   [rate.get(m, 0.0) for m in models], width=width, label=stage)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(models))],
                      [_plain(m) for m in models], fontsize=8)
        ax.set_ylabel("tournament win rate", fontsize=8)
        ax.set_title(_plain(dom), fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    return fig


def _head_to_head(rows: list[dict[str, Any]]) -> Figure:
    """Per phase, the model × opponent pairwise win rate as a heat map."""
    plt = _pyplot()
    stages = [s for s in STAGES if any(r["stage"] == s for r in rows)]
    fig, axes = plt.subplots(1, len(stages), figsize=(4.2 * len(stages) + 1.0, 4.4),
                             squeeze=False, layout="constrained")
    image = None
    for ax, stage in zip(axes[0], stages, strict=True):
        srows = [r for r in rows if r["stage"] == stage]
        models = sorted({r["model"] for r in srows} | {r["opponent"] for r in srows})
        ix = {m: k for k, m in enumerate(models)}
        grid = [[math.nan] * len(models) for _ in models]
        for r in srows:
            grid[ix[r["model"]]][ix[r["opponent"]]] = r["pairwise_win_rate"]
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="RdBu")
        ax.set_xticks(range(len(models)), [_plain(m) for m in models], rotation=90, fontsize=7)
        ax.set_yticks(range(len(models)), [_plain(m) for m in models], fontsize=7)
        ax.set_title(f"{stage}: row beats column", fontsize=9)
        if len(models) <= 8:
            for i in range(len(models)):
                for j in range(len(models)):
                    if not math.isnan(grid[i][j]):
                        ax.text(j, i, f"{grid[i][j]:.2f}", ha="center", va="center",
                                fontsize=7)
    if image is not None:
        fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="pairwise win rate")
    return fig


def _verdicts(rows: list[dict[str, Any]]) -> Figure:
    """Stage × axis verdict grid, each cell annotated with α and the test's power."""
    plt = _pyplot()
    from matplotlib.colors import to_rgb

    stages = [s for s in STAGES if any(r["stage"] == s for r in rows)]
    fig, ax = plt.subplots(figsize=(7.0, 0.9 * len(stages) + 1.4))
    by = {(r["stage"], r["axis"]): r for r in rows}
    grid = [[to_rgb(_VERDICT_COLOURS.get(by[(s, a)]["verdict"], "#ffffff"))
             if (s, a) in by else (1.0, 1.0, 1.0) for a in AXES] for s in stages]
    ax.imshow(grid, aspect="auto")
    for i, s in enumerate(stages):
        for j, a in enumerate(AXES):
            r = by.get((s, a))
            if r is None:
                continue
            alpha = "–" if r["alpha_interval"] is None else f"{r['alpha_interval']:.2f}"
            power = "–" if r.get("interaction_power") is None else f"{r['interaction_power']:.2f}"
            ax.text(j, i, f"{r['verdict']}\nα {alpha} · power {power}", ha="center",
                    va="center", fontsize=8)
    ax.set_xticks(range(len(AXES)), AXES, fontsize=8)
    ax.set_yticks(range(len(stages)), stages, fontsize=8)
    ax.set_title("Convergence verdict per phase × axis")
    return fig


def _themes(rows: list[dict[str, Any]]) -> Figure:
    """Per phase, each theme's share of mentions (bar) coloured by its net sentiment."""
    plt = _pyplot()
    stages = [s for s in STAGES if any(r["stage"] == s for r in rows)]
    themes = sorted({r["theme"] for r in rows})
    fig, axes = plt.subplots(1, len(stages), figsize=(4.0 * len(stages), 0.35 * len(themes) + 1.6),
                             squeeze=False, sharey=True)
    cmap = plt.get_cmap("RdYlGn")
    for ax, stage in zip(axes[0], stages, strict=True):
        by = {r["theme"]: r for r in rows if r["stage"] == stage}
        shares = [by[t]["share_of_mentions"] if t in by else 0.0 for t in themes]
        colours = [cmap((by[t]["net_sentiment"] + 1) / 2) if t in by else "white"
                   for t in themes]
        ax.barh(range(len(themes)), shares, color=colours, edgecolor="0.4")
        ax.set_yticks(range(len(themes)), [_plain(t) for t in themes], fontsize=8)
        ax.set_xlabel("share of mentions (colour: net sentiment, red −1 … green +1)",
                      fontsize=7)
        ax.set_title(stage, fontsize=9)
    return fig


def _axis_correlations(rows: list[dict[str, Any]]) -> Figure:
    """Pearson r between the axes, one row of bars per domain."""
    plt = _pyplot()
    domains = sorted({r["domain"] for r in rows})
    pairs = sorted({(r["axis_a"], r["axis_b"]) for r in rows})
    fig, ax = plt.subplots(figsize=(7.0, 0.5 * len(domains) * len(pairs) / 2 + 1.8))
    width = 0.8 / max(len(pairs), 1)
    for k, pair in enumerate(pairs):
        by = {r["domain"]: r for r in rows if (r["axis_a"], r["axis_b"]) == pair}
        vals = [by[d]["pearson_r"] if d in by and by[d]["pearson_r"] is not None else 0.0
                for d in domains]
        ax.barh([i + k * width for i in range(len(domains))], vals, height=width,
                label=f"{pair[0]} × {pair[1]}")
    ax.set_yticks([i + 0.4 - width / 2 for i in range(len(domains))],
                  [_plain(d) for d in domains], fontsize=8)
    ax.set_xlim(-1, 1)
    ax.set_xlabel("Pearson r between axes")
    ax.legend(fontsize=7)
    ax.grid(axis="x", alpha=0.3)
    return fig


#: figure name -> (drawing function, table it reads, caption)
_FIGURES = {
    "verdicts": (_verdicts, "convergence_phase",
                 "Convergence verdict per phase × axis (convergence_phase.csv), with "
                 "Krippendorff's α and the interaction test's power at the design."),
    "rating_vs_win_rate": (_rating_vs_win_rate, "rating_vs_win_rate",
                           "The paper's Figure 3A: mean scalar rating vs pairwise win rate "
                           "per model × domain (rating_vs_win_rate.csv)."),
    "tournament_win_rates": (_tournament_win_rates, "table2",
                             "Tournament win rate (the paper's Table 2) per domain × phase "
                             "(table2.csv)."),
    "head_to_head": (_head_to_head, "head_to_head_phase",
                     "Head-to-head pairwise win rates per phase, pooled over domains "
                     "(head_to_head_phase.csv)."),
    "axis_correlations": (_axis_correlations, "axis_correlations_domain",
                          "Correlations between the rating axes per domain "
                          "(axis_correlations_domain.csv)."),
    "themes": (_themes, "themes_phase",
               "Qualitative themes: share of each phase's mentions and net sentiment "
               "(themes_phase.csv)."),
}


def hcb_figures(tables: dict[str, list[dict[str, Any]]]) -> dict[str, tuple[str, str]]:
    """Figure name -> (caption, base64 PNG) for every figure whose table has rows.

    Raises
    ------
    MissingExtraError
        When matplotlib (the ``report`` extra) is not installed.
    """
    out = {}
    for name, (draw, table, caption) in _FIGURES.items():
        rows = tables.get(table) or []
        if rows:
            out[name] = (caption, _png(draw(rows)))
    return out


_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>HCB report</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; }
th { background: #f2f2f2; }
figure { margin: 1em 0 2em; } figcaption { font-size: 0.9em; color: #555; }
img { max-width: 100%; }
</style></head><body>
<h1>HCB convergence / divergence</h1>
<p>Rule: <code>creagraph.judgments.divergence.convergence_verdict</code>. Tables:
the CSV files beside this page. The Markdown summary is <code>convergence.md</code>.</p>
{% for name, (caption, png) in figures.items() %}
<figure><img alt="{{ name }}" src="data:image/png;base64,{{ png }}">
<figcaption>{{ caption }}</figcaption></figure>
{% endfor %}
{% for title, header, rows in tables %}
<h2>{{ title }}</h2>
<table><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in rows %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}
</table>
{% endfor %}
</body></html>
"""


def _cell(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return "–" if math.isnan(x) else f"{x:.3f}"
    return str(x)


def _page_tables(tables: dict[str, list[dict[str, Any]]]) -> list[tuple[str, list[str],
                                                                         list[list[str]]]]:
    specs = [
        ("Per phase (convergence_phase.csv)", "convergence_phase",
         ["stage", "axis", "alpha_interval", "kendalls_w", "models_p", "interaction_p",
          "interaction_power", "verdict", "note"]),
        ("Table 2 (table2.csv)", "table2",
         ["domain", "stage", "model", "tournament_win_rate", *(f"alpha_{a}" for a in AXES),
          "friedman_p"]),
        ("Phase leaders (phase_leaders.csv)", "phase_leaders",
         ["domain", "stage", "criterion", "dimension", "leader", "value", "runner_up", "gap"]),
        ("Scalar rating → pairwise rank (scalar_rank_link.csv)", "scalar_rank_link",
         ["scope", "domain", "stage", "axis", "n", "spearman_rho", "pvalue", "note"]),
    ]
    out = []
    for title, name, cols in specs:
        rows = tables.get(name) or []
        if rows:
            out.append((title, cols, [[_cell(r.get(c)) for c in cols] for r in rows]))
    return out


def hcb_report_html(tables: dict[str, list[dict[str, Any]]]) -> str:
    """The self-contained HTML page: every figure of :func:`hcb_figures` and the key
    tables.

    Raises
    ------
    MissingExtraError
        When matplotlib or jinja2 (the ``report`` extra) is not installed.
    """
    jinja2 = require("jinja2", "report", "needed to write the HCB report page")
    figures = hcb_figures(tables)
    env = jinja2.Environment(autoescape=True)
    return env.from_string(_TEMPLATE).render(figures=figures, tables=_page_tables(tables))


def write_hcb_html(tables: dict[str, list[dict[str, Any]]], outdir: str | os.PathLike[str]
                   ) -> Path:
    """Write :func:`hcb_report_html` as ``report.html`` in ``outdir`` (atomically; nothing
    is written when the ``report`` extra is missing: :class:`MissingExtraError`)."""
    page = hcb_report_html(tables)
    path = Path(outdir) / "report.html"
    with atomic_write(path) as handle:
        handle.write(page)
    return path
