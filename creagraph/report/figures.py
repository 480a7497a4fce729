"""The report's figures (SPEC §6), drawn with matplotlib and returned as PNG bytes.

matplotlib is imported inside the functions (Agg backend), so importing this module, and
`creagraph --help`, stays cheap. Labels from the inputs are shown as typed (``$`` is not
read as mathtext).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from creagraph.core.extras import require
from creagraph.report.tables import GROUNDING_STATUSES

if TYPE_CHECKING:  # matplotlib is an extra (report), imported where a figure is drawn
    from matplotlib.figure import Figure

__all__ = [
    "curves_figure",
    "distinct_figure",
    "grounding_figure",
    "leaderboard_figure",
    "relation_figure",
]

_STATUS_COLOURS = {"verified": "#2a9d4b", "refuted": "#d1495b", "unknown": "#9e9e9e"}


def _png(fig: Figure) -> bytes:
    import matplotlib.pyplot as plt  # loaded by _pyplot(), which made ``fig``

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _pyplot() -> Any:
    matplotlib = require("matplotlib", "report", "needed to draw the report's figures")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plain(labels: Sequence[str]) -> list[str]:
    """Labels shown as typed: matplotlib would read ``$…$`` as mathtext."""
    return [str(label).replace("$", r"\$") for label in labels]


def leaderboard_figure(table: list[dict[str, Any]], level: float) -> bytes:
    """s₀.₇ and s₀.₉ per model with their bootstrap intervals, best model on top.

    Parameters
    ----------
    table : rows of :func:`~creagraph.report.tables.leaderboard`, best first.
    level : confidence level of the intervals, for the axis label.
    """
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


def curves_figure(curves: dict[str, tuple[list[float], list[float]]]) -> bytes:
    """Mean creative utility against patience γ, one line per model (SPEC §3.6).

    Parameters
    ----------
    curves : model → (γ values, means), as :func:`~creagraph.report.tables.mean_curves`.
    """
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


def distinct_figure(nus: dict[str, list[float]]) -> bytes:
    """Box plots of the kept paths' distinctiveness ν per model (SPEC §3.7).

    Parameters
    ----------
    nus : model → ν of each of its kept paths.
    """
    plt = _pyplot()
    from matplotlib.lines import Line2D

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


def relation_figure(rows: list[dict[str, Any]], title: str, gamma: str) -> bytes:
    """Heat map of the mean utility per relation (rows) and model (columns).

    Parameters
    ----------
    rows : rows of :func:`~creagraph.report.tables.relation_breakdown`.
    title : figure title.
    gamma : patience of the means, for the colour bar's label.
    """
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


def grounding_figure(rows: list[dict[str, Any]]) -> bytes:
    """Stacked bars of the verified / refuted / unknown triple fractions per model.

    Parameters
    ----------
    rows : rows of :func:`~creagraph.report.tables.grounding_coverage`.
    """
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
