"""Reports people look at (SPEC §6): a leaderboard with confidence intervals, utility-vs-
patience curves and distinctiveness distributions, as CSV, HTML and PNG files.

Inputs are the files ``creagraph score`` and ``creagraph distinct`` write. Confidence
intervals are percentile bootstrap intervals over queries (resampling a model's queries
with replacement, seeded, 2,000 resamples by default).

References
----------
.. [1] Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.io import atomic_write, write_records

__all__ = ["bootstrap_ci", "leaderboard", "mean_curves", "write_report"]


def bootstrap_ci(
    values: Sequence[float], *, n_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean.

    Examples
    --------
    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0])
    >>> lo < 2.5 < hi
    True
    """
    x = np.asarray([v for v in values if v is not None], dtype=np.float64)
    if len(x) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(n_resamples, len(x)))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1.0 - alpha))


def leaderboard(
    queries: Sequence[dict[str, Any]],
    distinct_summary: Sequence[dict[str, Any]] = (),
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per-model means with bootstrap CIs of s₀.₇ and s₀.₉, sorted by s₀.₉ (best first)."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for q in queries:
        by_model.setdefault(q["model"], []).append(q)
    nu = {row["model"]: row for row in distinct_summary}
    table = []
    for model, rows in by_model.items():
        entry: dict[str, Any] = {"model": model, "n_queries": len(rows)}
        for gamma in ("0.7", "0.9"):
            values = [q["utility"][gamma] for q in rows]
            lo, hi = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
            entry[f"s_{gamma}"] = float(np.mean(values))
            entry[f"s_{gamma}_ci_low"], entry[f"s_{gamma}_ci_high"] = lo, hi
        entry["max_quality"] = float(np.mean([q["max_quality"] for q in rows]))
        distances = [
            q["mean_pairwise_distance"] for q in rows if q["mean_pairwise_distance"] is not None
        ]
        entry["mean_pairwise_distance"] = float(np.mean(distances)) if distances else None
        entry["n_kept"] = float(np.mean([q["n_kept"] for q in rows]))
        if model in nu:
            entry["avg_nu"] = nu[model].get("avg_nu")
            entry["max_nu"] = nu[model].get("max_nu")
        table.append(entry)
    table.sort(key=lambda e: (-e["s_0.9"], e["model"]))
    return table


def mean_curves(queries: Sequence[dict[str, Any]]) -> dict[str, tuple[list[float], list[float]]]:
    """Model → (γ values, mean utility over queries at each γ)."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    by_model: dict[str, list[dict[str, Any]]] = {}
    for q in queries:
        by_model.setdefault(q["model"], []).append(q)
    for model, rows in sorted(by_model.items()):
        gammas = sorted(rows[0]["utility_curve"], key=float)
        out[model] = (
            [float(g) for g in gammas],
            [float(np.mean([q["utility_curve"][g] for q in rows])) for g in gammas],
        )
    return out


def _html_table(table: list[dict[str, Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}"
        return html.escape("" if v is None else str(v))

    columns = list(dict.fromkeys(k for row in table for k in row))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell(row.get(c))}</td>" for c in columns) + "</tr>" for row in table
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_report(
    queries: Sequence[dict[str, Any]],
    out_dir: str | os.PathLike[str],
    *,
    distinct_paths: Sequence[dict[str, Any]] = (),
    distinct_summary: Sequence[dict[str, Any]] = (),
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[Path]:
    """Write ``leaderboard.csv``, ``leaderboard.html``, ``utility_curves.png`` and (with
    distinctiveness results) ``distinctiveness.png`` into ``out_dir``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = leaderboard(queries, distinct_summary, n_resamples=n_resamples, seed=seed)
    written = [out / "leaderboard.csv", out / "leaderboard.html", out / "utility_curves.png"]
    write_records(written[0], table)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for model, (gammas, values) in mean_curves(queries).items():
        ax.plot(gammas, values, marker="o", markersize=3, label=model)
    ax.set_xlabel("patience γ")
    ax.set_ylabel("mean creative utility s(U)")
    ax.set_title("Creative utility vs patience")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_write(written[2], mode="wb") as handle:
        fig.savefig(handle, format="png", dpi=120)
    plt.close(fig)

    images = ['<img src="utility_curves.png" alt="utility vs patience">']
    nus: dict[str, list[float]] = {}
    for p in distinct_paths:
        if p.get("nu") is not None:
            nus.setdefault(p["model"], []).append(p["nu"])
    if nus:
        path = out / "distinctiveness.png"
        fig, ax = plt.subplots(figsize=(7, 4.5))
        models = sorted(nus)
        ax.boxplot([nus[m] for m in models], showmeans=True)
        ax.set_xticks(range(1, len(models) + 1), models, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("ν(u): distance to nearest other-model path")
        ax.set_title("Distinctiveness of kept paths")
        fig.tight_layout()
        with atomic_write(path, mode="wb") as handle:
            fig.savefig(handle, format="png", dpi=120)
        plt.close(fig)
        written.append(path)
        images.append('<img src="distinctiveness.png" alt="distinctiveness">')
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>creagraph report</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "th{background:#f4f4f4}</style></head><body><h1>CREATE leaderboard</h1>"
        f"<p>Mean over queries; 95% bootstrap intervals over queries ({n_resamples} resamples)."
        f"</p>{_html_table(table)}{''.join(images)}</body></html>"
    )
    with atomic_write(written[1]) as handle:
        handle.write(page)
    return written
