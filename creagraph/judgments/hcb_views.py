"""The HCB paper's other views, as report tables (SPEC §5; the paper's Figure 3A, its
head-to-head, axis-correlation, theme and phase-leader views).

Every function reads an :class:`~creagraph.judgments.hcb_io.HCBData` (and, for the
views built on the per-cell win rates and mean ratings, the tables
:func:`~creagraph.judgments.hcb.hcb_report` already made) and returns flat records:

- :func:`rating_vs_win_rate` — Figure 3A: per domain × model, the mean scalar rating
  (over the three axes and every phase) beside the pairwise win rate (wins + ties/2 over
  the model's comparisons, every phase and dimension of the domain);
- :func:`head_to_head_by_phase` — per phase, model × opponent pairwise win rates pooled
  over the domains (the per-cell matrices are ``head_to_head.csv``);
- :func:`axis_correlations_by_domain` — Pearson / Spearman between the axes per domain;
- :func:`themes_by_phase` — per phase × theme: share of the phase's mentions and net
  sentiment ``(positive − negative) / mentions``;
- :func:`scalar_rank_link` — does a higher scalar rating go with a higher pairwise win
  rate? Spearman's ρ between the models' mean rating on an axis and their pairwise win
  rate, per domain × phase (``n`` = models: with 4 models one cell says little) and pooled
  over the cells (ranks within cells are not comparable across cells, so the pooled ρ is
  over within-cell centred values);
- :func:`phase_leaders` — per domain × phase, the model leading on each criterion
  (tournament win rate, pairwise win rate, mean rating per axis), the runner-up and the gap.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from creagraph.judgments.agreement import correlation
from creagraph.judgments.comparisons import count_matrices, make_comparisons
from creagraph.judgments.hcb_io import AXES, SENTIMENTS, STAGES, HCBData

__all__ = [
    "VIEW_TABLES",
    "rating_vs_win_rate",
    "head_to_head_by_phase",
    "axis_correlations_by_domain",
    "themes_by_phase",
    "scalar_rank_link",
    "phase_leaders",
    "hcb_views",
]

#: the tables :func:`hcb_views` adds to the HCB report (written as ``<name>.csv``)
VIEW_TABLES = (
    "rating_vs_win_rate", "head_to_head_phase", "axis_correlations_domain", "themes_phase",
    "scalar_rank_link", "phase_leaders",
)


def _none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _pair_counts(data: HCBData, rows: Sequence[dict[str, Any]]
                 ) -> dict[tuple[str, str], list[float]]:
    """(model, opponent) -> [wins, losses, ties] over pairwise rows (both directions),
    the empty-response rule applied as in :func:`~creagraph.judgments.hcb.hcb_comparisons`."""
    out: dict[tuple[str, str], list[float]] = {}
    if not rows:
        return out
    empty = data.empty_outputs()
    comps = make_comparisons(
        [r["model_a"] for r in rows], [r["model_b"] for r in rows],
        [r["chosen"] or "tie" for r in rows],
        left_empty=[(r["prompt_id"], r["model_a"]) in empty for r in rows],
        right_empty=[(r["prompt_id"], r["model_b"]) in empty for r in rows],
    )
    wins, ties = count_matrices(comps.n_items, comps.left, comps.right, comps.outcome)
    for i, m in enumerate(comps.items):
        for j, opp in enumerate(comps.items):
            if i != j and wins[i, j] + wins[j, i] + ties[i, j] > 0:
                out[(m, opp)] = [float(wins[i, j]), float(wins[j, i]), float(ties[i, j])]
    return out


def _model_pairwise(data: HCBData, rows: Sequence[dict[str, Any]]
                    ) -> dict[str, tuple[float, int]]:
    """model -> (pairwise win rate (wins + ties/2) / comparisons, comparisons)."""
    per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for (m, _), (w, lo, t) in _pair_counts(data, rows).items():
        per[m][0] += w
        per[m][1] += lo
        per[m][2] += t
    return {m: ((w + t / 2) / (w + lo + t), int(w + lo + t)) for m, (w, lo, t) in per.items()
            if w + lo + t > 0}


def _by_prompt(data: HCBData, kind: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(domain, stage) -> the records of ``kind`` (pairwise, scalar, qualitative)."""
    prompts = data.prompt_index()
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in getattr(data, kind):
        p = prompts[r["prompt_id"]]
        out[(p["domain"], p["stage"])].append(r)
    return out


def rating_vs_win_rate(data: HCBData) -> list[dict[str, Any]]:
    """Figure 3A: per domain × model, mean scalar rating beside pairwise win rate.

    Examples
    --------
    >>> from creagraph.judgments.synthetic import generate_hcb
    >>> data, _ = generate_hcb(seed=0, prompts_per_cell=2)
    >>> rows = rating_vs_win_rate(data)
    >>> sorted(rows[0])[:4]
    ['comparisons', 'domain', 'mean_prompt_adherence', 'mean_rating']
    """
    pair = _by_prompt(data, "pairwise")
    scal = _by_prompt(data, "scalar")
    domains = sorted({d for d, _ in pair} | {d for d, _ in scal})
    out = []
    for dom in domains:
        prow = [r for (d, _), rs in pair.items() if d == dom for r in rs]
        srow = [r for (d, _), rs in scal.items() if d == dom for r in rs]
        rates = _model_pairwise(data, prow)
        models = sorted(set(rates) | {r["model"] for r in srow})
        for m in models:
            per_axis = {a: np.array([r[a] for r in srow if r["model"] == m], float) for a in AXES}
            every = np.concatenate(list(per_axis.values()))
            every = every[~np.isnan(every)]
            rate, n_comp = rates.get(m, (float("nan"), 0))
            out.append({
                "domain": dom, "model": m,
                "mean_rating": _none(float(every.mean())) if every.size else None,
                **{f"mean_{a}": _none(float(np.nanmean(v))) if np.any(~np.isnan(v)) else None
                   for a, v in per_axis.items()},
                "n_ratings": int(every.size),
                "pairwise_win_rate": _none(rate), "comparisons": n_comp,
            })
    return out


def head_to_head_by_phase(data: HCBData) -> list[dict[str, Any]]:
    """Per phase, model × opponent counts and pairwise win rate pooled over domains and
    dimensions (only pairs actually compared)."""
    pair = _by_prompt(data, "pairwise")
    out = []
    for stage in STAGES:
        rows = [r for (_, s), rs in pair.items() if s == stage for r in rs]
        for (m, opp), (w, lo, t) in sorted(_pair_counts(data, rows).items()):
            n = w + lo + t
            out.append({"stage": stage, "model": m, "opponent": opp, "comparisons": int(n),
                        "wins": int(w), "losses": int(lo), "ties": int(t),
                        "pairwise_win_rate": (w + t / 2) / n})
    return out


def axis_correlations_by_domain(data: HCBData) -> list[dict[str, Any]]:
    """Pearson r (with its 95 % interval) and Spearman ρ between each pair of axes, per
    domain, over the ratings (one per prompt × evaluator × model)."""
    scal = _by_prompt(data, "scalar")
    out = []
    for dom in sorted({d for d, _ in scal}):
        rows = [r for (d, _), rs in scal.items() if d == dom for r in rs]
        for i, a in enumerate(AXES):
            for b in AXES[i + 1:]:
                x = np.array([r[a] for r in rows], float)
                y = np.array([r[b] for r in rows], float)
                rec: dict[str, Any] = {"domain": dom, "axis_a": a, "axis_b": b,
                                       "n": int(np.sum(~np.isnan(x) & ~np.isnan(y)))}
                try:
                    pr = correlation(x, y)
                    sp = correlation(x, y, method="spearman")
                    rec.update(pearson_r=_none(pr.r), ci_low=_none(pr.ci_low),
                               ci_high=_none(pr.ci_high), pvalue=_none(pr.pvalue),
                               spearman_rho=_none(sp.r), note="")
                except ValueError as exc:  # too few pairs or a constant axis
                    rec.update(pearson_r=None, ci_low=None, ci_high=None, pvalue=None,
                               spearman_rho=None, note=f"not computable: {exc}")
                out.append(rec)
    return out


def themes_by_phase(data: HCBData) -> list[dict[str, Any]]:
    """Per phase × theme: mentions, their share of the phase's mentions, the count of
    each sentiment and the net sentiment ``(positive − negative) / mentions`` (in [−1, 1]).

    Examples
    --------
    >>> from creagraph.judgments.synthetic import generate_hcb
    >>> data, _ = generate_hcb(seed=0, prompts_per_cell=2)
    >>> rows = themes_by_phase(data)
    >>> stage = rows[0]["stage"]
    >>> round(sum(r["share_of_mentions"] for r in rows if r["stage"] == stage), 6)
    1.0
    """
    qual = _by_prompt(data, "qualitative")
    out = []
    for stage in STAGES:
        counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for (_, s), rs in qual.items():
            if s == stage:
                for r in rs:
                    counts[r["theme"]][r["sentiment"]] += 1
        total = sum(sum(c.values()) for c in counts.values())
        for theme, c in sorted(counts.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
            n = sum(c.values())
            out.append({"stage": stage, "theme": theme, "mentions": n,
                        "share_of_mentions": n / total,
                        **{s: c.get(s, 0) for s in SENTIMENTS},
                        "net_sentiment": (c.get("positive", 0) - c.get("negative", 0)) / n})
    return out


def _mean_ratings(tables: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str, str],
                                                                    dict[str, float]]:
    """(domain, stage, axis) -> model -> mean rating, from the report's scalar_means."""
    out: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for r in tables.get("scalar_means", []):
        if r["mean"] is not None:
            out[(r["domain"], r["stage"], r["axis"])][r["model"]] = float(r["mean"])
    return out


def scalar_rank_link(data: HCBData, tables: dict[str, list[dict[str, Any]]]
                     ) -> list[dict[str, Any]]:
    """Spearman's ρ between the models' mean rating on each axis and their pairwise win
    rate: per domain × phase (``scope = "cell"``) and over every cell's models with both
    values centred within their cell (``scope = "pooled"``), with the number of models
    ``n``. A cell with fewer than 3 models, or a constant value, has no ρ (``note``)."""
    from scipy import stats

    pair = _by_prompt(data, "pairwise")
    means = _mean_ratings(tables)
    out = []
    pooled: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (dom, stage, axis), by_model in sorted(
            means.items(), key=lambda kv: (kv[0][0], STAGES.index(kv[0][1]), kv[0][2])):
        rates = _model_pairwise(data, pair.get((dom, stage), []))
        models = sorted(m for m in by_model if m in rates)
        x = np.array([by_model[m] for m in models])
        y = np.array([rates[m][0] for m in models])
        rec: dict[str, Any] = {"scope": "cell", "domain": dom, "stage": stage, "axis": axis,
                               "n": len(models), "spearman_rho": None, "pvalue": None,
                               "note": ""}
        if len(models) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            rec["note"] = "not computable: fewer than 3 models or a constant value"
        else:
            res = stats.spearmanr(x, y)
            rec.update(spearman_rho=_none(float(res.statistic)), pvalue=_none(float(res.pvalue)))
            pooled[axis].extend(zip((x - x.mean()).tolist(), (y - y.mean()).tolist(),
                                    strict=True))
        out.append(rec)
    for axis in AXES:
        pts = pooled.get(axis, [])
        rec = {"scope": "pooled", "domain": "", "stage": "", "axis": axis, "n": len(pts),
               "spearman_rho": None, "pvalue": None, "note": "within-cell centred values"}
        if len(pts) >= 3:
            res = stats.spearmanr([p[0] for p in pts], [p[1] for p in pts])
            rec.update(spearman_rho=_none(float(res.statistic)), pvalue=_none(float(res.pvalue)))
        out.append(rec)
    return out


def phase_leaders(tables: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per domain × phase, for each criterion — ``tournament_win_rate`` and
    ``pairwise_win_rate`` (per judged dimension) and ``mean_<axis>`` — the leading model
    (joint leaders joined by `` / ``), its value, the runner-up, and the gap."""
    groups: dict[tuple[str, str, str, str], dict[str, float]] = defaultdict(dict)
    for r in tables.get("win_rates", []):
        for crit in ("tournament_win_rate", "pairwise_win_rate"):
            if r.get(crit) is not None:
                groups[(r["domain"], r["stage"], crit, r.get("dimension", ""))][r["model"]] = (
                    float(r[crit]))
    for (dom, stage, axis), by_model in _mean_ratings(tables).items():
        groups[(dom, stage, f"mean_{axis}", "")].update(by_model)
    out = []
    for (dom, stage, crit, dim), vals in sorted(
            groups.items(), key=lambda kv: (kv[0][0], STAGES.index(kv[0][1]), kv[0][2], kv[0][3])):
        ranked = sorted(vals.items(), key=lambda kv: (-kv[1], kv[0]))
        best = ranked[0][1]
        leaders = [m for m, v in ranked if math.isclose(v, best, abs_tol=1e-12)]
        rest = [(m, v) for m, v in ranked if m not in leaders]
        out.append({
            "domain": dom, "stage": stage, "criterion": crit, "dimension": dim,
            "leader": " / ".join(leaders), "value": best,
            "runner_up": rest[0][0] if rest else None,
            "runner_up_value": rest[0][1] if rest else None,
            "gap": best - rest[0][1] if rest else None, "n_models": len(vals),
        })
    return out


def hcb_views(data: HCBData, tables: dict[str, list[dict[str, Any]]]
              ) -> dict[str, list[dict[str, Any]]]:
    """Every table of :data:`VIEW_TABLES`, keyed by name."""
    return {
        "rating_vs_win_rate": rating_vs_win_rate(data),
        "head_to_head_phase": head_to_head_by_phase(data),
        "axis_correlations_domain": axis_correlations_by_domain(data),
        "themes_phase": themes_by_phase(data),
        "scalar_rank_link": scalar_rank_link(data, tables),
        "phase_leaders": phase_leaders(tables),
    }
