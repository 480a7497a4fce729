"""Human Creativity Benchmark (HCB): per domain × phase analysis (SPEC §5).

The files (layout, reading, validation, writing) are :mod:`creagraph.judgments.hcb_io`;
its public names are re-exported here.

:func:`hcb_report` produces, per domain × stage: win rates (``tournament_win_rate`` =
the share of the cell's tournaments each model won, the HCB paper's Table 2, summing to 1
over the cell's models; ``pairwise_win_rate`` = (wins + ties/2) / comparisons), also by
``evaluator_core_skill``, and the Table-2-shaped ``table2``; head-to-head matrices;
Bradley–Terry ratings with bootstrap intervals that resample whole raters;
Krippendorff's α per model and axis; Friedman's test across models; Kendall's W with the
evaluators as judges (the paper's; a phase pools its domains only when they share their
models, else combines the per-domain tests) and over prompt × evaluator blocks; mean
scalar ratings per axis; correlations between the axes; qualitative theme counts — and
a convergence/divergence view per axis (per domain × phase and per phase): the rule is
:func:`~creagraph.judgments.divergence.convergence_verdict`, on Krippendorff's α and two
permutation tests (do the models differ; do the evaluators disagree *about the models*,
the rater × model interaction that is taste). Statistics that rest on degenerate
designs say so in a ``note`` column.

References
----------
.. [1] Krippendorff, K. (2004). *Content Analysis*, 2nd ed., §11.3.4 (α ≥ .800 reliable,
   .667 ≤ α < .800 tentative conclusions only).
"""

from __future__ import annotations

import math
import os
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from creagraph.core.io import atomic_write
from creagraph.judgments import hcb_io
from creagraph.judgments.agreement import (
    MIN_ALPHA_UNITS,
    CorrelationResult,
    DegenerateDesignWarning,
    correlation,
    friedman,
    krippendorff_alpha,
    ratings_matrix,
)
from creagraph.judgments.comparisons import (
    Comparisons,
    NotIdentifiableError,
    TiePolicy,
    _restrict,
    comparison_components,
    count_matrices,
    make_comparisons,
)
from creagraph.judgments.divergence import (
    POWER_TASTE_RATIO,
    Profiles,
    convergence_verdict,
    interaction_power,
    interaction_test,
    model_effect_test,
    tournament_profiles,
)
from creagraph.judgments.hcb_io import *  # noqa: F403 (the file API, re-exported)
from creagraph.judgments.hcb_io import AXES, SENTIMENTS, STAGES, HCBData, write_table
from creagraph.judgments.hcb_views import VIEW_TABLES, hcb_views
from creagraph.judgments.leaderboard import BTResult, bradley_terry
from creagraph.judgments.tournaments import tournament_wins

__all__ = [*hcb_io.__all__, "HCBReport", "hcb_comparisons", "hcb_report", "write_hcb_report"]

@dataclass
class HCBReport:
    """Report tables (lists of flat records) keyed by name, plus a Markdown summary."""

    tables: dict[str, list[dict[str, Any]]]
    summary: str


def hcb_comparisons(
    data: HCBData,
    rows: Sequence[dict[str, Any]] | None = None,
    models: Sequence[str] | None = None,
) -> Comparisons:
    """Pairwise rows as :class:`~creagraph.judgments.Comparisons` (empty-response rule
    applied from ``model_outputs.csv``; raters = evaluator ids; prompts = prompt ids).

    Examples
    --------
    >>> from creagraph.judgments.synthetic import generate_hcb
    >>> data, _ = generate_hcb(seed=0, prompts_per_cell=1)
    >>> c = hcb_comparisons(data)
    >>> len(c), c.items
    (450, ['aurora', 'basalt', 'cobalt', 'dune', 'ember'])
    """
    rows = data.pairwise if rows is None else rows
    empty = data.empty_outputs()
    return make_comparisons(
        [r["model_a"] for r in rows],
        [r["model_b"] for r in rows],
        [r["chosen"] or "tie" for r in rows],
        left_empty=[(r["prompt_id"], r["model_a"]) in empty for r in rows],
        right_empty=[(r["prompt_id"], r["model_b"]) in empty for r in rows],
        items=sorted(models) if models is not None else None,
        raters=[r["evaluator_id"] for r in rows],
        prompts=[r["prompt_id"] for r in rows],
    )


def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _safe_alpha(matrix: np.ndarray, level: str) -> float | None:
    if matrix.size == 0 or matrix.shape[0] < 2:
        return None
    try:
        with warnings.catch_warnings():  # the report notes small designs itself
            warnings.simplefilter("ignore", DegenerateDesignWarning)
            return _nan_to_none(krippendorff_alpha(matrix, level))  # type: ignore[arg-type]
    except ValueError:
        return None


def _pairable_units(matrix: np.ndarray) -> int:
    return int(np.sum(np.sum(~np.isnan(matrix), axis=0) >= 2)) if matrix.size else 0


def _model_blocks(
    records: Sequence[dict[str, Any]], axis: str, models: Sequence[str], block_keys: Sequence[str]
) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Blocks (rows) × models matrix of ratings and the block keys (distinct values of
    ``block_keys``, sorted)."""
    col = {m: k for k, m in enumerate(models)}
    blocks: dict[tuple[Any, ...], list[list[float]]] = {}
    for r in records:
        v = r[axis]
        if not math.isnan(v) and r["model"] in col:
            key = tuple(r[k] for k in block_keys)
            blocks.setdefault(key, [[] for _ in models])[col[r["model"]]].append(v)
    items = sorted(blocks.items(), key=lambda kv: tuple(map(str, kv[0])))
    out = [[float(np.mean(cell)) if cell else float("nan") for cell in cells] for _, cells in items]
    return np.array(out, dtype=float).reshape(-1, len(models)), [k for k, _ in items]


def _friedman_record(matrix: np.ndarray, keys: Sequence[tuple[Any, ...]],
                     rater_pos: int | None) -> dict[str, Any]:
    """Friedman / Kendall's W over the complete blocks, with a degenerate-design note."""
    complete_mask = ~np.isnan(matrix).any(axis=1) if matrix.size else np.zeros(0, bool)
    complete = matrix[complete_mask] if matrix.size else matrix.reshape(0, matrix.shape[-1])
    raters = ({keys[k][rater_pos] for k in np.flatnonzero(complete_mask).tolist()}
              if rater_pos is not None else set())
    rec: dict[str, Any] = {
        "n_blocks": int(complete.shape[0]),
        "n_block_raters": len(raters) if rater_pos is not None else None,
        "friedman_statistic": None,
        "friedman_p": None,
        "kendalls_w": None,
        "df": None,
        "note": "",
    }
    n_models = matrix.shape[1] if matrix.ndim == 2 else 0
    if complete.shape[0] < 2 or n_models < 3:
        rec["note"] = (f"not computable: {complete.shape[0]} complete block(s) rate all "
                       f"{n_models} models (need >= 2 blocks and >= 3 models)")
        return rec
    if np.all(complete == complete[:, :1]):  # every block ties every model: no ranking
        rec["note"] = "not computable: every block rates every model the same"
        return rec
    res = friedman(complete)
    rec.update(
        friedman_statistic=_nan_to_none(res.statistic),
        friedman_p=_nan_to_none(res.pvalue),
        kendalls_w=_nan_to_none(res.kendalls_w),
        df=res.df,
    )
    if rater_pos is not None and len(raters) == 1:
        rec["note"] = ("degenerate: all complete blocks come from one rater, so W measures "
                       "that rater's consistency across prompts, not agreement between raters")
    return rec


_POWER_CACHE: dict[tuple[Any, ...], float | None] = {}


def _design_power(profiles: Sequence[Profiles], significance: float,
                  seed: int | None, n_simulations: int) -> float | None:
    """:func:`~creagraph.judgments.divergence.interaction_power` at the design of
    ``profiles`` (evaluators, prompts, models per stratum), cached by design: the axes
    of a cell usually share it."""
    if n_simulations <= 0:
        return None
    key = (significance, seed, n_simulations, *(
        (p.values.shape[1], p.raters.tobytes(), None if p.prompts is None else p.prompts.tobytes())
        for p in profiles))
    if key not in _POWER_CACHE:
        if len(_POWER_CACHE) > 256:
            _POWER_CACHE.clear()
        _POWER_CACHE[key] = interaction_power(profiles, significance=significance, seed=seed,
                                              n_simulations=n_simulations)
    return _POWER_CACHE[key]


def _divergence_fields(
    records: Sequence[dict[str, Any]], axis: str, stratum_key: str | None,
    n_permutations: int, seed: int | None, significance: float = 0.05,
    n_power_simulations: int = 200,
) -> dict[str, Any]:
    """The two permutation tests of :mod:`~creagraph.judgments.divergence` on the
    tournaments (evaluator × prompt) of ``records`` — per stratum (``stratum_key``, e.g.
    the domain) when given — and the spread of the evaluators' favourite models."""
    strata: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        strata[r[stratum_key] if stratum_key else None].append(r)
    profiles = [
        tournament_profiles([r[axis] for r in rs], [r["evaluator_id"] for r in rs],
                            [(r["evaluator_id"], r["prompt_id"]) for r in rs],
                            [r["model"] for r in rs], [r["prompt_id"] for r in rs])
        for _, rs in sorted(strata.items(), key=lambda kv: str(kv[0]))
    ]
    main = model_effect_test(profiles, n_permutations=n_permutations, seed=seed)
    inter = interaction_test(profiles, n_permutations=n_permutations, seed=seed)
    power = _design_power(profiles, significance, seed, n_power_simulations)
    tops: dict[str, int] = defaultdict(int)
    means: dict[tuple[Any, str, str], list[float]] = defaultdict(list)
    for r in records:
        if not math.isnan(r[axis]):
            means[(r[stratum_key] if stratum_key else None, r["evaluator_id"], r["model"])].append(
                r[axis])
    by_rater: dict[tuple[Any, str], dict[str, float]] = defaultdict(dict)
    for (st, ev, m), vals in means.items():
        by_rater[(st, ev)][m] = float(np.mean(vals))
    for ratings in by_rater.values():
        best = max(ratings.values())
        for m, mu in ratings.items():
            tops[m] += mu == best
    ranked = sorted(tops.items(), key=lambda kv: (-kv[1], kv[0]))
    spread = ", ".join(f"{m} {c}" for m, c in ranked[:6]) + (", …" if len(ranked) > 6 else "")
    return {
        "models_p": main.pvalue if main else None,
        "interaction_statistic": inter.statistic if inter else None,
        "interaction_p": inter.pvalue if inter else None,
        "interaction_power": power,
        "power_taste_ratio": POWER_TASTE_RATIO,
        "n_tournaments": int(sum(p.values.shape[0] for p in profiles)),
        "n_tournaments_incomplete": int(sum(p.n_dropped for p in profiles)),
        "rater_top_models": spread,
    }


def _evaluator_skills(data: HCBData) -> dict[str, str]:
    """evaluator_id -> core skill (the most frequent one recorded in the pairwise file)."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in data.pairwise:
        if r.get("evaluator_core_skill"):
            counts[r["evaluator_id"]][r["evaluator_core_skill"]] += 1
    return {e: max(c.items(), key=lambda kv: (kv[1], kv[0]))[0] for e, c in counts.items()}


TABLES = (
    "win_rates", "table2", "win_rates_by_skill", "head_to_head", "bradley_terry", "krippendorff",
    "friedman", "kendalls_w_phase", "kendalls_w_blocks", "scalar_means", "scalar_means_by_skill",
    "axis_correlations", "themes", "convergence", "convergence_phase", *VIEW_TABLES,
)


# over 80 lines only for its NumPy docstring (45 lines); the body (~40 lines) calls helpers
def hcb_report(
    data: HCBData,
    *,
    ties: TiePolicy = "exclude",
    alpha: float = 0.0,
    n_bootstrap: int = 200,
    cluster: Literal["comparison", "rater", "prompt"] = "rater",
    seed: int | None = 0,
    converge_at: float = 0.667,
    significance: float = 0.05,
    n_permutations: int = 999,
    show_progress: bool = False,
    n_power_simulations: int = 200,
) -> HCBReport:
    """Per domain × phase tables and the convergence/divergence view (SPEC §5).

    Parameters
    ----------
    data : HCBData
    ties, alpha, n_bootstrap, seed
        Passed to :func:`~creagraph.judgments.leaderboard.bradley_terry` for every domain × stage ×
        dimension. When the ML estimate does not exist in a cell, that cell is refitted
        with ``alpha = 0.01`` (column ``alpha`` of the table says so); a cell whose
        comparisons fall into unconnected groups is ranked per group (column
        ``component``).
    cluster : {"rater", "prompt", "comparison"}
        What the Bradley–Terry bootstrap resamples (default: whole raters, since raters
        with their own tastes make their comparisons dependent).
    converge_at : float
        Krippendorff's α (interval) from which raters agree [1]_ (see
        :func:`~creagraph.judgments.divergence.convergence_verdict`).
    n_permutations : int
        Permutations of the model-effect and evaluator × model interaction tests.
    n_power_simulations : int
        Simulations behind ``interaction_power`` (the interaction test's power at each
        design, :func:`~creagraph.judgments.divergence.interaction_power`); 0 skips it
        (the column is then empty).
    significance : float
        Level for ``models_differ`` (Friedman / Kendall p below it) and for the per-rater
        model-difference tests behind the ``divergent`` verdict.

    Returns
    -------
    HCBReport
        Tables ``win_rates`` (``tournament_win_rate``: the HCB paper's share of the
        cell's tournaments won, summing to 1 over the models of a domain × phase, see
        :mod:`~creagraph.judgments.tournaments`; ``pairwise_win_rate``: (wins + ties/2) /
        comparisons), ``table2`` (the paper's Table 2 shape: domain × phase × model with
        the tournament win rate, α per axis and model, and Friedman's p over the cell's
        tournaments), ``win_rates_by_skill``, ``head_to_head``,
        ``bradley_terry``, ``krippendorff``, ``friedman``, ``kendalls_w_phase`` (evaluators
        as judges, per domain, and per phase pooled or stratified by domain),
        ``kendalls_w_blocks`` (the same over prompt × evaluator blocks), ``scalar_means``,
        ``scalar_means_by_skill``, ``axis_correlations``, ``themes``, ``convergence``
        (domain × stage × axis), ``convergence_phase`` (stage × axis) and a Markdown
        ``summary``, and the paper's other views of :mod:`~creagraph.judgments.hcb_views`
        (``rating_vs_win_rate``, ``head_to_head_phase``, ``axis_correlations_domain``,
        ``themes_phase``, ``scalar_rank_link``, ``phase_leaders``). The convergence rows
        carry ``interaction_power`` (see ``n_power_simulations``). ``models_differ`` is
        ``None`` (unknown) when no test was possible.

    Warns
    -----
    DegenerateDesignWarning
        Once, when some statistic rests on a degenerate design (see the ``note`` columns).

    Examples
    --------
    >>> from creagraph.judgments.synthetic import generate_hcb
    >>> data, truth = generate_hcb(seed=0, prompts_per_cell=4)
    >>> report = hcb_report(data, n_bootstrap=0)
    >>> [r["verdict"] for r in report.tables["convergence_phase"]][:3]  # ideation: PA, U, VA
    ['convergent', 'mixed', 'divergent']
    """
    prompts = data.prompt_index()
    cells = _cells(data, prompts)
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    skills = _evaluator_skills(data)
    fit = {"ties": ties, "alpha": alpha, "n_bootstrap": n_bootstrap, "cluster": cluster,
           "seed": seed}
    thresholds = {"converge_at": converge_at, "significance": significance,
                  "n_permutations": n_permutations, "seed": seed,
                  "n_power_simulations": n_power_simulations}
    for domain, stage in _cell_order(cells, show_progress):
        cell = cells[(domain, stage)]
        base = {"domain": domain, "stage": stage}
        _pairwise_cell(tables, data, base, cell["pairwise"], fit)
        scalar = cell["scalar"]
        models = sorted({r["model"] for r in scalar})
        for axis in AXES:
            _scalar_means_and_alpha(tables, base, scalar, axis, models)
            _scalar_means_by_skill(tables["scalar_means_by_skill"], base, scalar, axis, models,
                                   skills)
            if models:
                _cell_axis_tests(tables, base, scalar, axis, models, thresholds)
        _theme_rows(tables["themes"], base, cell["qualitative"])

    _fill_table2_alpha(tables)
    _phase_tables(tables, data, prompts, thresholds)
    _axis_correlations(tables, data, prompts)
    tables.update(hcb_views(data, tables))
    n_notes = sum(1 for rows in tables.values() for r in rows
                  if str(r.get("note", "")).startswith("degenerate"))
    if n_notes:
        warnings.warn(
            f"HCB report: {n_notes} statistic(s) rest on degenerate designs "
            "(see the 'note' columns)", DegenerateDesignWarning, stacklevel=2,
        )
    return HCBReport(tables=tables, summary=_summary(tables, n_notes))


def _cells(
    data: HCBData, prompts: dict[str, dict[str, Any]]
) -> dict[tuple[str, str], dict[str, list]]:
    """The pairwise, scalar and qualitative records of each (domain, stage)."""
    cells: dict[tuple[str, str], dict[str, list]] = defaultdict(
        lambda: {"pairwise": [], "scalar": [], "qualitative": []}
    )
    for kind in ("pairwise", "scalar", "qualitative"):
        for r in getattr(data, kind):
            p = prompts[r["prompt_id"]]
            cells[(p["domain"], p["stage"])][kind].append(r)
    return cells


def _cell_order(
    cells: dict[tuple[str, str], Any], show_progress: bool
) -> Iterable[tuple[str, str]]:
    """The cells by domain, then stage in workflow order (with a progress bar if asked)."""
    stage_order = {s: k for k, s in enumerate(STAGES)}
    keys = sorted(cells, key=lambda k: (k[0], stage_order[k[1]]))
    if show_progress:
        from creagraph.core.progress import progress

        return progress(keys, total=len(keys), desc="hcb cells")
    return keys


def _pairwise_cell(tables: dict[str, list], data: HCBData, base: dict[str, Any],
                   pairwise: list[dict[str, Any]], fit: dict[str, Any]) -> None:
    """Win rates (also by skill), head-to-head and Bradley–Terry per judged dimension."""
    by_dim: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in pairwise:
        by_dim[r.get("dimension") or "overall"].append(r)
    for dim, rows in sorted(by_dim.items()):
        comps = hcb_comparisons(data, rows)
        _pairwise_tables(tables, {**base, "dimension": dim}, comps)
        by_skill: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            if r.get("evaluator_core_skill"):
                by_skill[r["evaluator_core_skill"]].append(r)
        for skill, srows in sorted(by_skill.items()):
            skill_comps = hcb_comparisons(data, srows)
            _win_rate_rows(tables["win_rates_by_skill"],
                           {**base, "dimension": dim, "evaluator_core_skill": skill},
                           skill_comps)
        for res, fit_alpha in _fit_cell(comps, fit["ties"], fit["alpha"], fit["n_bootstrap"],
                                        fit["cluster"], fit["seed"]):
            for row in res.leaderboard():
                tables["bradley_terry"].append(
                    {**base, "dimension": dim, "tie_policy": fit["ties"], "alpha": fit_alpha,
                     "bootstrap": f"{res.n_bootstrap} × {res.bootstrap_cluster}"
                     if res.n_bootstrap else "wald",
                     "model": row.pop("item"), **row}
                )


def _scalar_means_and_alpha(tables: dict[str, list], base: dict[str, Any],
                            scalar: list[dict[str, Any]], axis: str, models: list[str]) -> None:
    """Per model: the mean rating on ``axis`` and Krippendorff's α over its prompts."""
    for m in models:
        sub = [r for r in scalar if r["model"] == m]
        vals = np.array([r[axis] for r in sub], dtype=float)
        vals = vals[~np.isnan(vals)]
        tables["scalar_means"].append(
            {**base, "model": m, "axis": axis, "n": int(vals.size),
             "mean": float(vals.mean()) if vals.size else None,
             "sd": float(vals.std(ddof=1)) if vals.size > 1 else None}
        )
        mat, units, raters = ratings_matrix(
            [r["prompt_id"] for r in sub], [r["evaluator_id"] for r in sub],
            [r[axis] for r in sub],
        )
        pairable = _pairable_units(mat)
        tables["krippendorff"].append(
            {**base, "model": m, "axis": axis,
             "alpha_ordinal": _safe_alpha(mat, "ordinal"),
             "alpha_interval": _safe_alpha(mat, "interval"),
             "n_units": len(units), "n_pairable_units": pairable,
             "n_raters": len(raters), "n_ratings": int(np.sum(~np.isnan(mat))),
             "note": "" if pairable >= MIN_ALPHA_UNITS else
             f"degenerate: only {pairable} unit(s) rated twice or more "
             f"(< {MIN_ALPHA_UNITS}); α is not interpretable"}
        )


def _scalar_means_by_skill(out: list[dict[str, Any]], base: dict[str, Any],
                           scalar: list[dict[str, Any]], axis: str, models: list[str],
                           skills: dict[str, str]) -> None:
    """Mean rating per evaluator core skill and model (when skills are recorded)."""
    for skill in sorted(set(skills.values())):
        for m in models:
            vals = np.array([r[axis] for r in scalar if r["model"] == m
                             and skills.get(r["evaluator_id"]) == skill], dtype=float)
            vals = vals[~np.isnan(vals)]
            if vals.size:
                out.append(
                    {**base, "evaluator_core_skill": skill, "model": m,
                     "axis": axis, "n": int(vals.size), "mean": float(vals.mean())}
                )


def _cell_axis_tests(tables: dict[str, list], base: dict[str, Any],
                     scalar: list[dict[str, Any]], axis: str, models: list[str],
                     thresholds: dict[str, Any]) -> None:
    """Friedman / Kendall's W across the models (prompt × evaluator blocks, else prompt
    means) and the convergence verdict of one domain × stage × axis."""
    blocks, bkeys = _model_blocks(scalar, axis, models, ("prompt_id", "evaluator_id"))
    fr = _friedman_record(blocks, bkeys, 1)
    block_kind = "prompt×evaluator"
    if fr["friedman_p"] is None:
        blocks, bkeys = _model_blocks(scalar, axis, models, ("prompt_id",))
        fr2 = _friedman_record(blocks, bkeys, None)
        if fr2["friedman_p"] is not None:
            fr, block_kind = fr2, "prompt (mean rating)"
    tables["friedman"].append(
        {**base, "axis": axis, "n_models": len(models), "blocks": block_kind, **fr}
    )
    # pooled agreement: units = (prompt, model), raters = evaluators
    mat, units, raters = ratings_matrix(
        [(r["prompt_id"], r["model"]) for r in scalar],
        [r["evaluator_id"] for r in scalar],
        [r[axis] for r in scalar],
    )
    ev_blocks, ev_keys = _model_blocks(scalar, axis, models, ("evaluator_id",))
    w_ev = _friedman_record(ev_blocks, ev_keys, 0)
    div = _divergence_fields(scalar, axis, None, thresholds["n_permutations"],
                             thresholds["seed"], thresholds["significance"],
                             thresholds["n_power_simulations"])
    tables["convergence"].append(
        {**base, "axis": axis,
         **_convergence_record(mat, units, raters, w_ev["kendalls_w"], w_ev["friedman_p"], div,
                               thresholds["converge_at"], thresholds["significance"])}
    )


def _theme_rows(out: list[dict[str, Any]], base: dict[str, Any],
                qualitative: list[dict[str, Any]]) -> None:
    """Theme counts per model with the share of each sentiment."""
    themes: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in qualitative:
        themes[(r["model"], r["theme"])][r["sentiment"]] += 1
    for (m, theme), counts_s in sorted(themes.items()):
        total = sum(counts_s.values())
        out.append(
            {**base, "model": m, "theme": theme, "count": total,
             **{f"share_{s}": counts_s.get(s, 0) / total for s in SENTIMENTS}}
        )


def _fit_cell(comps: Comparisons, ties: TiePolicy, alpha: float, n_bootstrap: int,
              cluster: str, seed: int | None) -> list[tuple[BTResult, float]]:
    """Bradley–Terry for one cell: ML, else MAP (alpha 0.01); per connected group when the
    comparisons of the cell fall into groups never compared with each other."""
    kw = {"ties": ties, "n_bootstrap": n_bootstrap, "seed": seed, "cluster": cluster}
    groups = [g for g in comparison_components(comps) if len(g) >= 2]
    parts = ([_restrict(comps, np.array([comps.items.index(x) for x in g])) for g in groups]
             if len(groups) > 1 else [comps])
    out = []
    for k, part in enumerate(parts):
        fit_alpha = alpha
        try:
            res = bradley_terry(part, alpha=alpha, **kw)  # type: ignore[arg-type]
        except NotIdentifiableError:
            fit_alpha = max(alpha, 0.01)
            res = bradley_terry(part, alpha=fit_alpha, **kw)  # type: ignore[arg-type]
        if len(parts) > 1:
            res.component = np.full(len(res.items), k, dtype=np.int64)
        out.append((res, fit_alpha))
    return out


def _convergence_record(
    mat: np.ndarray, units: list, raters: list, w: float | None, p: float | None,
    divergence: dict[str, Any], converge_at: float, significance: float,
) -> dict[str, Any]:
    a_int = _safe_alpha(mat, "interval")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        counts = np.sum(~np.isnan(mat), axis=0) if mat.size else np.zeros(0)
        sds = np.nanstd(mat[:, counts >= 2], axis=0, ddof=1) if mat.size else np.array([])
    pairable = _pairable_units(mat)
    notes = []
    if pairable < MIN_ALPHA_UNITS:
        notes.append(f"degenerate: only {pairable} unit(s) rated twice or more")
    if len(raters) < 2:
        notes.append("degenerate: one rater, no agreement to measure")
    if divergence["interaction_p"] is None:
        notes.append("interaction not testable: needs two evaluators and more tournaments "
                     "than evaluators")
    models_p, inter_p = divergence["models_p"], divergence["interaction_p"]
    power = divergence.get("interaction_power")
    if inter_p is not None and inter_p >= significance and power is not None and power < 0.8:
        notes.append(f"low power: the interaction test finds taste of s.d. "
                     f"{POWER_TASTE_RATIO} × noise only {power:.0%} of the time at this "
                     "design; taste is not ruled out")
    return {
        "alpha_interval": a_int,
        "alpha_ordinal": _safe_alpha(mat, "ordinal"),
        "mean_rater_sd": float(np.mean(sds)) if sds.size else None,
        "kendalls_w": w,
        "friedman_p": p,
        **divergence,
        "models_differ": None if models_p is None else models_p < significance,
        "raters_disagree_about_models": None if inter_p is None else inter_p < significance,
        "verdict": convergence_verdict(a_int, models_p, inter_p, converge_at=converge_at,
                                       significance=significance),
        "n_units": len(units),
        "n_raters": len(raters),
        "note": "; ".join(notes),
    }


def _counts(comps: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """Unweighted win and tie counts (the tables report numbers of comparisons; weights
    enter the Bradley–Terry fits only)."""
    return count_matrices(comps.n_items, comps.left, comps.right, comps.outcome)


def _win_rate_rows(out: list[dict[str, Any]], base: dict[str, Any], comps: Comparisons) -> None:
    """Per model: wins, losses, ties, tournaments and the win rates of
    :mod:`~creagraph.judgments.tournaments`."""
    items = comps.items
    wins, tie_m = _counts(comps)
    tw = tournament_wins(comps)
    for i, m in enumerate(items):
        w, lo, t = wins[i].sum(), wins[:, i].sum(), tie_m[i].sum()
        total = w + lo + t
        if total == 0:
            continue
        decisive = w + lo
        out.append(
            {**base, "model": m, "comparisons": int(total), "wins": int(w), "losses": int(lo),
             "ties": int(t), "tournaments": int(tw.tournaments[i]),
             "tournaments_won": float(tw.won[i]),
             "tournament_win_rate": float(tw.won[i] / tw.n_tournaments),
             "pairwise_win_rate": float((w + t / 2) / total),
             "raw_win_rate": float(w / total),
             "decisive_win_rate": float(w / decisive) if decisive else None}
        )


def _tournament_friedman(comps: Comparisons) -> dict[str, Any]:
    """Friedman's test over the cell's complete tournaments (blocks), each ranking the
    models by their pairing scores (Table 2's per-cell p)."""
    tw = tournament_wins(comps)
    rows = [pts for _, pts in tw.points if not np.isnan(pts).any()]
    rec: dict[str, Any] = {"friedman_p": None, "friedman_tournaments": len(rows), "note": ""}
    mat = np.array(rows).reshape(-1, comps.n_items)
    if mat.shape[0] < 2 or comps.n_items < 3 or np.all(mat == mat[:, :1]):
        rec["note"] = (f"Friedman not computable: {mat.shape[0]} complete tournament(s), "
                       f"{comps.n_items} models, or every tournament a draw")
        return rec
    rec["friedman_p"] = _nan_to_none(friedman(mat).pvalue)
    return rec


def _table2_rows(tables: dict[str, list], base: dict[str, Any], comps: Comparisons) -> None:
    """The paper's Table 2 shape: per model the tournament win rate, α per axis (filled
    from the krippendorff table once the cell's scalar ratings are done), Friedman p."""
    fr = _tournament_friedman(comps)
    tw = tournament_wins(comps)
    for i, m in enumerate(comps.items):
        if tw.tournaments[i]:
            tables["table2"].append({**base, "model": m, "tournaments": tw.n_tournaments,
                                     "tournament_win_rate": float(tw.won[i] / tw.n_tournaments),
                                     **{f"alpha_{a}": None for a in AXES}, **fr})


def _fill_table2_alpha(tables: dict[str, list]) -> None:
    alpha = {(r["domain"], r["stage"], r["model"], r["axis"]): r["alpha_interval"]
             for r in tables["krippendorff"]}
    for r in tables["table2"]:
        for a in AXES:
            r[f"alpha_{a}"] = alpha.get((r["domain"], r["stage"], r["model"], a))


def _pairwise_tables(tables: dict[str, list], base: dict[str, Any], comps: Comparisons) -> None:
    wins, tie_m = _counts(comps)
    _win_rate_rows(tables["win_rates"], base, comps)
    _table2_rows(tables, base, comps)
    for i, m in enumerate(comps.items):
        for j, opp in enumerate(comps.items):
            tot = wins[i, j] + wins[j, i] + tie_m[i, j]
            if i == j or tot == 0:
                continue
            tables["head_to_head"].append(
                {**base, "model": m, "opponent": opp, "comparisons": int(tot),
                 "wins": int(wins[i, j]), "losses": int(wins[j, i]), "ties": int(tie_m[i, j]),
                 "pairwise_win_rate": float((wins[i, j] + tie_m[i, j] / 2) / tot)}
            )


def _phase_tables(
    tables: dict[str, list],
    data: HCBData,
    prompts: dict[str, dict[str, Any]],
    thresholds: dict[str, Any],
) -> None:
    """Kendall's W (evaluators as judges; and over prompt × evaluator blocks) and the
    convergence verdict per stage × axis, over the domains."""
    for stage in STAGES:
        recs = [
            {**r, "domain": prompts[r["prompt_id"]]["domain"]}
            for r in data.scalar
            if prompts[r["prompt_id"]]["stage"] == stage
        ]
        if not recs:
            continue
        for axis in AXES:
            phase, per_domain = _phase_concordance(recs, stage, axis, "evaluators")
            tables["kendalls_w_phase"].append(phase)
            tables["kendalls_w_phase"].extend(per_domain)
            bphase, bdomain = _phase_concordance(recs, stage, axis, "blocks")
            tables["kendalls_w_blocks"].append(bphase)
            tables["kendalls_w_blocks"].extend(bdomain)
            mat, units, raters = ratings_matrix(
                [(r["domain"], r["prompt_id"], r["model"]) for r in recs],
                [r["evaluator_id"] for r in recs],
                [r[axis] for r in recs],
            )
            div = _divergence_fields(recs, axis, "domain", thresholds["n_permutations"],
                                     thresholds["seed"], thresholds["significance"],
                             thresholds["n_power_simulations"])
            conv = _convergence_record(
                mat, units, raters, phase["kendalls_w"], phase["pvalue"], div,
                thresholds["converge_at"], thresholds["significance"],
            )
            conv["kendalls_w_p"] = conv.pop("friedman_p")
            tables["convergence_phase"].append({"stage": stage, "axis": axis, **conv})


def _w_record(fr: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A ``kendalls_w_phase`` row from a :func:`_friedman_record`."""
    return {**fields, "n_blocks": fr["n_blocks"], "n_block_raters": fr["n_block_raters"],
            "kendalls_w": fr["kendalls_w"], "chi2": fr["friedman_statistic"], "df": fr["df"],
            "pvalue": fr["friedman_p"]}


def _phase_concordance(
    recs: list[dict[str, Any]], stage: str, axis: str, judges: Literal["evaluators", "blocks"]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Kendall's W of one phase and of each of its domains. ``judges="evaluators"`` (the
    HCB paper's W): each evaluator's mean rating of each model is one judge's ranking;
    ``"blocks"``: each prompt × evaluator block is one (mixing prompt variation with rater
    disagreement). The phase pools its judges when every one rates every model of the
    phase, else combines the domains
    (independent Friedman χ² summed, W weighted)."""
    from scipy import stats

    models = sorted({r["model"] for r in recs})
    domains = sorted({r["domain"] for r in recs})
    # Kendall's W per domain: complete blocks (prompt × evaluator) over the domain's own models
    keys: tuple[str, ...] = (("evaluator_id",) if judges == "evaluators"
                             else ("prompt_id", "evaluator_id"))
    per_domain = []
    for dom in domains:
        drecs = [r for r in recs if r["domain"] == dom]
        dmodels = sorted({r["model"] for r in drecs})
        blocks, bkeys = _model_blocks(drecs, axis, dmodels, keys)
        fr = _friedman_record(blocks, bkeys, len(keys) - 1)
        per_domain.append({**_w_record(fr, stage=stage, axis=axis, scope="domain", domain=dom,
                                       n_models=len(dmodels)), "note": fr["note"]})
    blocks, bkeys = _model_blocks(recs, axis, models, ("domain", *keys))
    fr = _friedman_record(blocks, bkeys, len(keys))
    phase = {**_w_record(fr, stage=stage, axis=axis, scope="phase", domain="",
                         n_models=len(models)), "method": "pooled blocks", "note": fr["note"]}
    usable = [r for r in per_domain if r["kendalls_w"] is not None]
    if phase["kendalls_w"] is None and len(domains) > 1:
        if usable:
            weights = [r["n_blocks"] * (r["n_models"] - 1) for r in usable]
            chi2 = float(sum(r["chi2"] for r in usable))
            df = int(sum(r["df"] for r in usable))
            phase.update(
                kendalls_w=float(np.average([r["kendalls_w"] for r in usable], weights=weights)),
                chi2=chi2, df=df, pvalue=float(stats.chi2.sf(chi2, df)),
                n_blocks=int(sum(r["n_blocks"] for r in usable)),
                n_block_raters=None,
                method=f"stratified by domain ({len(usable)} of {len(domains)})",
                note=("model sets differ across domains: no block rates every model; "
                      "per-domain W combined"),
            )
        else:
            phase["note"] = ("not computable: no domain has complete blocks "
                             "(model sets differ across domains)")
    return phase, per_domain


def _axis_correlations(tables: dict[str, list], data: HCBData,
                       prompts: dict[str, dict[str, Any]]) -> None:
    """Pearson and Spearman correlations between the rating axes over the ratings
    (one per prompt × evaluator × model), over all phases and per phase."""
    scopes: list[tuple[str, list[dict[str, Any]]]] = [("all", list(data.scalar))]
    for stage in STAGES:
        rows = [r for r in data.scalar if prompts[r["prompt_id"]]["stage"] == stage]
        if rows:
            scopes.append((stage, rows))
    for scope, rows in scopes:
        for i, a in enumerate(AXES):
            for b in AXES[i + 1:]:
                x = np.array([r[a] for r in rows], dtype=float)
                y = np.array([r[b] for r in rows], dtype=float)
                rec: dict[str, Any] = {"stage": scope, "axis_a": a, "axis_b": b,
                                       "n": int(np.sum(~np.isnan(x) & ~np.isnan(y)))}
                pr: CorrelationResult | None
                sp: CorrelationResult | None
                try:
                    pr = correlation(x, y)
                    sp = correlation(x, y, method="spearman")
                except ValueError:
                    pr = sp = None
                rec.update(
                    pearson_r=_nan_to_none(pr.r) if pr else None,
                    ci_low=_nan_to_none(pr.ci_low) if pr else None,
                    ci_high=_nan_to_none(pr.ci_high) if pr else None,
                    pvalue=_nan_to_none(pr.pvalue) if pr else None,
                    spearman_rho=_nan_to_none(sp.r) if sp else None,
                )
                tables["axis_correlations"].append(rec)


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _md_table(title: str, header: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown section: blank line, ``## title``, blank line, then the table."""
    return ["", f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)]


def _summary(tables: dict[str, list[dict[str, Any]]], n_notes: int = 0) -> str:
    lines = ["# HCB convergence / divergence", ""]
    lines.append(
        "Krippendorff's α (interval) over (prompt, model) units, raters = evaluators. "
        "Two permutation tests on the tournaments (one evaluator × one prompt), each "
        "centred on its mean: *models p* — do the models differ at all (model labels "
        "shuffled within tournaments); *interaction p* — do the evaluators disagree about "
        "the models, i.e. taste (evaluator labels shuffled among tournaments, within "
        "prompts when prompts are shared). Divergent: interaction significant and α below "
        "the convergence threshold (legitimate taste: a mean rating hides real "
        "disagreement). Convergent: models differ, no interaction, α at or above the "
        "threshold. No difference: neither test significant (no signal, not taste). "
        "Mixed: the rest. Kendall's W: evaluators as judges (each evaluator's mean rating "
        "ranks the models), per domain; a phase combines its domains when their model "
        "sets differ (the prompt × evaluator block version is kendalls_w_blocks.csv). "
        "Raters' favourites: how many raters rate each model highest. *Power*: the "
        "simulated chance that the interaction test finds taste of s.d. "
        f"{POWER_TASTE_RATIO} × one rating's noise s.d. at this design (its evaluators, "
        "prompts and models; `creagraph.judgments.divergence.interaction_power`); below "
        "0.8, a verdict other than divergent does not rule taste out."
    )
    lines += _md_table(
        "Per phase (over domains)",
        ["stage", "axis", "α interval", "Kendall's W", "W p", "models p", "interaction p",
         "power", "raters' favourites", "verdict"],
        [[r["stage"], r["axis"], _fmt(r["alpha_interval"]), _fmt(r["kendalls_w"]),
          _fmt(r["kendalls_w_p"]), _fmt(r["models_p"]), _fmt(r["interaction_p"]),
          _fmt(r["interaction_power"]), r["rater_top_models"] or "–", r["verdict"]]
         for r in tables["convergence_phase"]],
    )
    lines += _md_table(
        "Per domain × phase",
        ["domain", "stage", "axis", "α interval", "Kendall's W", "models p", "interaction p",
         "power", "verdict"],
        [[r["domain"], r["stage"], r["axis"], _fmt(r["alpha_interval"]), _fmt(r["kendalls_w"]),
          _fmt(r["models_p"]), _fmt(r["interaction_p"]), _fmt(r["interaction_power"]),
          r["verdict"]]
         for r in tables["convergence"]],
    )
    if tables["axis_correlations"]:
        lines += _md_table(
            "Correlations between axes (all phases)",
            ["axes", "Pearson r (95% CI)", "Spearman ρ", "n"],
            [[f"{r['axis_a']} × {r['axis_b']}",
              f"{_fmt(r['pearson_r'])} ({_fmt(r['ci_low'])}, {_fmt(r['ci_high'])})",
              _fmt(r["spearman_rho"]), r["n"]]
             for r in tables["axis_correlations"] if r["stage"] == "all"],
        )
    by_axis: dict[str, list[str]] = defaultdict(list)
    for r in tables["convergence_phase"]:
        by_axis[r["verdict"]].append(f"{r['axis']} ({r['stage']})")
    lines += ["", "## Verdicts", ""]
    for verdict in ("convergent", "mixed", "divergent", "no_difference", "undetermined"):
        if by_axis.get(verdict):
            lines.append(f"- **{verdict}**: {', '.join(by_axis[verdict])}")
    lines += ["", "tournament_win_rate = the share of the cell's tournaments (one evaluator "
              "× one prompt, every pairing) the model won, a shared first place split "
              "equally (the HCB paper's Table 2; sums to 1 over the cell's models); "
              "pairwise_win_rate = (wins + ties/2) / comparisons. Bradley–Terry intervals: "
              "see the bootstrap column of bradley_terry.csv."]
    if n_notes:
        lines += ["", f"**Caution:** {n_notes} statistic(s) rest on degenerate designs "
                  "(too few units, a single rater); see the `note` columns."]
    return "\n".join(lines) + "\n"


def write_hcb_report(report: HCBReport, outdir: str | os.PathLike[str]) -> list[Path]:
    """Write every report table as ``<name>.csv`` and the summary as ``convergence.md``."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in report.tables.items():
        if not rows:
            continue
        path = out / f"{name}.csv"
        write_table(path, rows)
        written.append(path)
    path = out / "convergence.md"
    with atomic_write(path) as handle:
        handle.write(report.summary)
    written.append(path)
    return written
