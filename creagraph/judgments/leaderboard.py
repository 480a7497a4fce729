"""The Bradley–Terry leaderboard: :func:`bradley_terry` with intervals, ranks,
bootstrap and diagnostics (conventions: :mod:`creagraph.judgments.comparisons`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from creagraph.judgments.choices import BootstrapUnit, Ties
from creagraph.judgments.comparisons import (
    _TIE_POLICIES,
    TIE,
    Comparisons,
    DegenerateClustersWarning,
    DisconnectedComparisonsError,
    NotIdentifiableError,
    TiePolicy,
    _check_arrays,
    _component_labels,
    _restrict,
    _warn_unconverged,
    as_comparisons,
    comparison_components,
    count_matrices,
)
from creagraph.judgments.elo import ELO_BASE_RATING, ELO_SCALE, elo_scale
from creagraph.judgments.fit import _bt_mle_fit, _davidson_fit, win_probabilities
from creagraph.judgments.sparse_bt import SPARSE_ITEMS
from creagraph.judgments.uncertainty import (
    MIN_CLUSTERS,
    model_covariance,
    sandwich_covariance,
    significance_ranks,
)

__all__ = [
    "BTResult",
    "bradley_terry",
    "bradley_terry_by_component",
]


@dataclass
class BTResult:
    """A fitted Bradley–Terry leaderboard (plain arrays, indexed like ``items``).

    Attributes
    ----------
    items : list of str
    theta : ndarray
        Log-strengths (mean-centred).
    strength : ndarray
        ``exp(theta)`` normalised to sum 1 (evalica's convention).
    se : ndarray
        Wald standard errors of ``theta``.
    ci_low, ci_high : ndarray
        Confidence interval of ``theta`` (bootstrap percentile when ``n_bootstrap > 0``,
        otherwise Wald).
    standardized : ndarray
        ``(theta - mean) / std`` across items.
    elo : ndarray
        :func:`elo_scale` of ``theta``: the Bradley–Terry estimate on the Elo scale
        (1000 + 400·log10 odds), *not* sequential Elo (see :func:`sequential_elo`).
    elo_ci_low, elo_ci_high : ndarray
        ``ci_low``/``ci_high`` on the same Elo scale.
    expected_win_rate : ndarray
        Mean predicted win probability against every other item (the population).
    rank : ndarray of int
        1 = best.
    tier : ndarray of int
        Significance rank: ``1 +`` the number of items significantly better (at the
        interval's level and with its covariance). Never chained: two items share a
        value only if neither is significantly below the same set.
    rank_best, rank_worst : ndarray of int
        The range of ranks the item could take: ``tier`` and ``n −`` the number of items
        significantly worse.
    interval_method : str
        ``"wald"`` (the fitted model's information; for half-ties its sandwich),
        ``"bootstrap percentile"``, or ``"cluster-robust t (G raters, G−1 df)"`` when the
        comparisons are clustered (``cluster`` = rater or prompt).
    rank_probabilities : ndarray, shape (n_items, n_items)
        ``[i, r]`` = probability that item ``i`` has rank ``r + 1`` (bootstrap, or draws
        from the Wald normal approximation when no bootstrap was run). Above
        :data:`~creagraph.judgments.sparse_bt.SPARSE_ITEMS` items only the first column
        (P(rank 1)) is kept: shape (n_items, 1).
    covariance : ndarray or None
        Covariance of ``theta`` behind ``se`` and ``tier`` (Wald of the fitted model, or
        cluster-robust). None above ``SPARSE_ITEMS`` items: there the covariance is
        never formed (:mod:`~creagraph.judgments.sparse_bt` computes the standard errors
        and ranks from sparse solves).
    n_comparisons, n_wins, n_losses, n_ties : ndarray
        Per-item counts (weighted), ties included.
    raw_win_rate, tie_half_win_rate : ndarray
        ``wins / comparisons`` and ``(wins + ties / 2) / comparisons``.
    tie_rate : float
        Overall fraction of comparisons that were ties.
    tie_policy : str
    alpha : float
    nu : float or None
        Davidson tie parameter (``tie_policy="davidson"``).
    n_bootstrap : int
    n_degenerate_resamples : int
        Bootstrap resamples with no ML estimate, refitted with a small ridge.
    bootstrap_theta : ndarray or None, shape (n_bootstrap, n_items)
    bootstrap_cluster : str
        What the bootstrap resampled: ``"comparison"``, ``"rater"`` or ``"prompt"``.
    n_clusters : int
        Number of resampled units (comparisons, raters or prompts).
    converged : bool
        Whether the solver met its tolerance on the full data (else a
        :class:`ConvergenceWarning` was issued with ``convergence_message``).
    convergence_message : str
    n_unconverged_resamples : int
        Bootstrap resamples whose solver did not converge.
    component : ndarray of int
        Connected group of the comparison graph each item belongs to (0 = largest);
        several groups are only ranked together with ``across_components=True``.
    """

    items: list[str]
    theta: np.ndarray
    strength: np.ndarray
    se: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    standardized: np.ndarray
    elo: np.ndarray
    expected_win_rate: np.ndarray
    rank: np.ndarray
    tier: np.ndarray
    rank_probabilities: np.ndarray
    covariance: np.ndarray | None
    n_comparisons: np.ndarray
    n_wins: np.ndarray
    n_losses: np.ndarray
    n_ties: np.ndarray
    raw_win_rate: np.ndarray
    tie_half_win_rate: np.ndarray
    tie_rate: float
    tie_policy: str
    alpha: float
    ci_level: float
    nu: float | None = None
    n_bootstrap: int = 0
    n_degenerate_resamples: int = 0
    bootstrap_theta: np.ndarray | None = field(default=None, repr=False)
    elo_ci_low: np.ndarray | None = None
    elo_ci_high: np.ndarray | None = None
    bootstrap_cluster: str = "comparison"
    n_clusters: int = 0
    converged: bool = True
    convergence_message: str = ""
    n_unconverged_resamples: int = 0
    component: np.ndarray | None = None
    rank_best: np.ndarray | None = None
    rank_worst: np.ndarray | None = None
    interval_method: str = "wald"

    def order(self) -> np.ndarray:
        """Item indices from best to worst."""
        return np.argsort(self.rank, kind="stable")

    def leaderboard(self) -> list[dict[str, Any]]:
        """One record per item, best first (for tables and :func:`write_records`)."""
        rows = []
        for k in self.order():
            rows.append(
                {
                    "rank": int(self.rank[k]),
                    "tier": int(self.tier[k]),
                    "rank_best": int(self.rank_best[k]) if self.rank_best is not None
                    else int(self.tier[k]),
                    "rank_worst": int(self.rank_worst[k]) if self.rank_worst is not None
                    else len(self.items),
                    "item": self.items[k],
                    "theta": float(self.theta[k]),
                    "ci_low": float(self.ci_low[k]),
                    "ci_high": float(self.ci_high[k]),
                    "se": float(self.se[k]),
                    "strength": float(self.strength[k]),
                    "standardized": float(self.standardized[k]),
                    "elo": float(self.elo[k]),
                    "elo_ci_low": float(self.elo_ci_low[k])
                    if self.elo_ci_low is not None else float("nan"),
                    "elo_ci_high": float(self.elo_ci_high[k])
                    if self.elo_ci_high is not None else float("nan"),
                    "expected_win_rate": float(self.expected_win_rate[k]),
                    "p_rank_1": float(self.rank_probabilities[k, 0]),
                    "n_comparisons": float(self.n_comparisons[k]),
                    "wins": float(self.n_wins[k]),
                    "losses": float(self.n_losses[k]),
                    "ties": float(self.n_ties[k]),
                    "raw_win_rate": float(self.raw_win_rate[k]),
                    "tie_half_win_rate": float(self.tie_half_win_rate[k]),
                    "component": int(self.component[k]) if self.component is not None else 0,
                }
            )
        return rows


def _fit(
    wins: np.ndarray, ties: np.ndarray, policy: str, alpha: float, items: Sequence[str] | None
) -> tuple[np.ndarray, float | None, bool, str]:
    if policy == "exclude":
        theta, ok, detail = _bt_mle_fit(wins, alpha, items)
        return theta, None, ok, detail
    if policy == "half":
        theta, ok, detail = _bt_mle_fit(wins + ties / 2.0, alpha, items)
        return theta, None, ok, detail
    return _davidson_fit(wins, ties, alpha, items)


def _ranks(theta: np.ndarray) -> np.ndarray:
    """1-based ranks, best first; exact ties broken by index (stable)."""
    order = np.argsort(-theta, kind="stable")
    rank = np.empty(theta.size, dtype=np.int64)
    rank[order] = np.arange(1, theta.size + 1)
    return rank


def _rank_probabilities(samples: np.ndarray) -> np.ndarray:
    """``[i, r]`` = share of the draws (rows) in which item ``i`` has rank ``r + 1``
    (exact ties broken by index): one sort, then one count of (item, rank) pairs."""
    n_draws, n = samples.shape
    order = np.argsort(-samples, axis=1, kind="stable")  # order[d, r] = item ranked r
    counts = np.bincount((order * n + np.arange(n)).ravel(), minlength=n * n)
    return counts.reshape(n, n) / n_draws


# over 80 lines only for the docstring of its ten options; the body (~50 lines) calls helpers
def bradley_terry(
    comparisons: Comparisons,
    *,
    ties: TiePolicy | Ties = "exclude",
    alpha: float = 0.0,
    n_bootstrap: int = 0,
    ci: float = 0.95,
    seed: int | None = 0,
    degenerate_alpha: float = 0.01,
    show_progress: bool = False,
    cluster: Literal["comparison", "rater", "prompt"] | BootstrapUnit = "comparison",
    across_components: bool = False,
) -> BTResult:
    """Fit a Bradley–Terry leaderboard with diagnostics, intervals, ranks and tiers.

    Parameters
    ----------
    comparisons : Comparisons or pandas.DataFrame
        See :func:`make_comparisons`; a table with columns ``left``, ``right``, ``winner``
        (optionally ``weight``, ``rater``, ``prompt``) is read by
        :func:`~creagraph.judgments.comparisons.as_comparisons`.
    ties : {"exclude", "half", "davidson"}
        Tie policy (module docstring). Ties always enter the diagnostics.
    alpha : float
        L2 penalty on the log-strengths (0: maximum likelihood).
    n_bootstrap : int
        Number of bootstrap resamples (with replacement); when > 0, ``ci_low``/``ci_high``
        are percentile intervals and rank probabilities come from the resamples.
    ci : float
        Confidence level of the intervals and of the tier test.
    seed : int or None
        Seed of the bootstrap / rank-probability draws.
    degenerate_alpha : float
        Ridge used for bootstrap resamples (and only those) where the ML estimate does
        not exist; they are counted in ``n_degenerate_resamples``.
    show_progress : bool
        Show a progress bar over the bootstrap.
    cluster : {"comparison", "rater", "prompt"}
        What the bootstrap resamples: single comparisons (independent), or whole raters /
        prompts with all their comparisons (a cluster bootstrap: raters with their own
        tastes, or prompts that favour some model, make comparisons dependent, and
        resampling them one by one gives intervals that are too narrow).
    across_components : bool
        When the comparison graph falls into groups never compared with each other,
        raise :class:`DisconnectedComparisonsError` naming them (default), or — when true —
        rank all items together anyway (their relative position across groups then only
        reflects the penalty ``alpha``). See also :func:`bradley_terry_by_component`.

    Returns
    -------
    BTResult

    Warns
    -----
    ConvergenceWarning
        When the solver did not converge on the data or on some bootstrap resamples.

    Examples
    --------
    >>> from creagraph.judgments import make_comparisons
    >>> c = make_comparisons(["a", "a", "b", "c", "a"], ["b", "b", "c", "a", "c"],
    ...                      ["left", "left", "left", "left", "tie"])
    >>> res = bradley_terry(c)
    >>> [row["item"] for row in res.leaderboard()], round(res.tie_rate, 2)
    (['a', 'c', 'b'], 0.2)
    """
    comparisons = as_comparisons(comparisons)  # a DataFrame too, or say what to pass
    _check_fit_args(ties, ci, n_bootstrap, comparisons)
    n = comparisons.n_items
    li, ri, oc, w = _check_arrays(
        n, comparisons.left, comparisons.right, comparisons.outcome, comparisons.weight
    )
    component = _components(comparisons, li, ri, across_components)
    cluster_ids = _cluster_ids(comparisons, cluster)
    n_clusters = int(cluster_ids.max()) + 1 if cluster_ids.size else 0

    if n > SPARSE_ITEMS:
        return _bradley_terry_sparse(
            comparisons, (li, ri, oc, w), component, cluster_ids, n_clusters,
            ties=ties, alpha=alpha, n_bootstrap=n_bootstrap, ci=ci, seed=seed,
            degenerate_alpha=degenerate_alpha, show_progress=show_progress, cluster=cluster)
    with _blas_threads(1):  # small dense algebra: extra BLAS threads only contend
        return _bradley_terry_dense(
            comparisons, (li, ri, oc, w), component, cluster_ids, n_clusters,
            ties=ties, alpha=alpha, n_bootstrap=n_bootstrap, ci=ci, seed=seed,
            degenerate_alpha=degenerate_alpha, show_progress=show_progress, cluster=cluster)


_BLAS: list[Any] = []


def _blas_threads(limit: int) -> Any:
    """A context limiting the BLAS thread pools (one threadpoolctl controller, made on
    first use: limiting through it costs microseconds)."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=limit, user_api="blas")


def _bradley_terry_dense(
    comparisons: Comparisons, arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    component: np.ndarray, cluster_ids: np.ndarray, n_clusters: int, *, ties: Any,
    alpha: float, n_bootstrap: int, ci: float, seed: int | None, degenerate_alpha: float,
    show_progress: bool, cluster: Any,
) -> BTResult:
    """:func:`bradley_terry` with ``n × n`` count, information and covariance matrices."""
    li, ri, oc, w = arrays
    n = comparisons.n_items
    wins, tie_m = count_matrices(n, li, ri, oc, w)
    fitted = _first_fit(ties, alpha, tie_m.sum(), wins.sum(),
                        lambda: _fit(wins, tie_m, ties, alpha, comparisons.items))
    theta = fitted[0]
    cov, crit, method = _covariance(theta, fitted[1], (li, ri, oc, w), ties, alpha, cluster,
                                    cluster_ids, ci)
    rng = np.random.default_rng(seed)
    resampled = _bootstrap(comparisons, (li, ri, oc, w), cluster_ids, rng, n_bootstrap, ties,
                           alpha, degenerate_alpha, show_progress)
    boot = resampled[0]
    draws = boot if boot is not None else _normal_draws(theta, cov, rng, 2000)
    tier, rank_best, rank_worst = significance_ranks(theta, cov, crit)
    spread = {
        "se": np.sqrt(np.clip(np.diag(cov), 0.0, None)), "covariance": cov, "tier": tier,
        "rank_best": rank_best, "rank_worst": rank_worst,
        "rank_probabilities": _rank_probabilities(draws),
        "expected_win_rate": (win_probabilities(theta).sum(axis=1) - 0.5) / max(n - 1, 1),
        **_item_counts(wins, tie_m),
    }
    return _result(comparisons, arrays, component, fitted, resampled, spread, crit, method,
                   ties=ties, alpha=alpha, ci=ci, n_bootstrap=n_bootstrap, cluster=cluster,
                   n_clusters=n_clusters)


#: One fit: log-strengths, the Davidson tie parameter (None otherwise), whether the solver
#: converged and what it said.
_Fitted = tuple[np.ndarray, float | None, bool, str]
#: The bootstrap: centred estimates per resample (None without one), resamples refitted
#: with ``degenerate_alpha``, resamples that did not converge.
_Resampled = tuple[np.ndarray | None, int, int]


def _first_fit(ties: str, alpha: float, n_ties: float, n_decided: float,
               fit: Callable[[], _Fitted]) -> _Fitted:
    """``fit()`` of the data, after refusing what has no estimate (Davidson without a
    penalty on ties alone); warns when the solver did not converge."""
    if ties == "davidson" and alpha == 0 and n_ties > 0 and n_decided == 0:
        raise NotIdentifiableError(
            "every comparison is a tie: the Davidson tie parameter has no finite estimate "
            "and no item is ranked above another (use ties='half', or alpha > 0)")
    fitted = fit()
    if not fitted[2]:
        _warn_unconverged(fitted[3], stacklevel=5)
    return fitted


def _result(
    comparisons: Comparisons, arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    component: np.ndarray, fitted: _Fitted, resampled: _Resampled, spread: dict[str, Any],
    crit: float, method: str, *, ties: Any, alpha: float, ci: float, n_bootstrap: int,
    cluster: Any, n_clusters: int,
) -> BTResult:
    """The :class:`BTResult` of either path (dense or sparse): ``spread`` holds what the
    path computes its own way (standard errors, covariance, ranks, rank probabilities,
    expected win rates, per-item counts); intervals are bootstrap percentiles for
    independent comparisons, else ``theta ± crit · se``."""
    theta, nu, converged, conv_msg = fitted
    boot, n_degenerate, n_unconverged = resampled
    _, _, oc, w = arrays
    se = spread["se"]
    if boot is not None and method.startswith("wald"):
        ci_low = np.quantile(boot, (1 - ci) / 2.0, axis=0)
        ci_high = np.quantile(boot, 1 - (1 - ci) / 2.0, axis=0)
        method = "bootstrap percentile"
    else:
        ci_low, ci_high = theta - crit * se, theta + crit * se
    total_w = float(w.sum())
    centre = float(theta.mean())
    return BTResult(
        items=list(comparisons.items), theta=theta, **_scales(theta), **spread,
        ci_low=ci_low, ci_high=ci_high, interval_method=method,
        elo_ci_low=ELO_BASE_RATING + ELO_SCALE * (ci_low - centre),
        elo_ci_high=ELO_BASE_RATING + ELO_SCALE * (ci_high - centre),
        tie_rate=float(w[oc == TIE].sum() / total_w) if total_w > 0 else 0.0,
        tie_policy=ties, alpha=alpha, ci_level=ci, nu=nu, n_bootstrap=n_bootstrap,
        n_degenerate_resamples=n_degenerate, bootstrap_theta=boot, bootstrap_cluster=cluster,
        n_clusters=n_clusters if (n_bootstrap > 0 or cluster != "comparison") else 0,
        converged=converged, convergence_message=conv_msg,
        n_unconverged_resamples=n_unconverged, component=component,
    )


def _item_counts(wins: np.ndarray, tie_m: np.ndarray) -> dict[str, Any]:
    """Per item: comparisons, wins, losses, ties (always counted) and the raw win rates."""
    return _item_rates(wins.sum(axis=1), wins.sum(axis=0), tie_m.sum(axis=1))


def _item_rates(n_wins: np.ndarray, n_losses: np.ndarray, n_ties: np.ndarray
                ) -> dict[str, Any]:
    n_comp = n_wins + n_losses + n_ties
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.where(n_comp > 0, n_wins / n_comp, np.nan)
        half = np.where(n_comp > 0, (n_wins + n_ties / 2.0) / n_comp, np.nan)
    return {"n_comparisons": n_comp, "n_wins": n_wins, "n_losses": n_losses,
            "n_ties": n_ties, "raw_win_rate": raw, "tie_half_win_rate": half}


def _scales(theta: np.ndarray) -> dict[str, Any]:
    """The estimate read other ways: strengths summing to 1, z-scores, Elo and ranks."""
    n = theta.size
    sd = float(theta.std())
    strength = np.exp(theta - theta.max())
    return {
        "strength": strength / strength.sum(),
        "standardized": (theta - theta.mean()) / sd if sd > 0 else np.zeros(n),
        "elo": elo_scale(theta),
        "rank": _ranks(theta),
    }


def _covariance(
    theta: np.ndarray, nu: float | None, arrays: tuple[np.ndarray, ...], ties: str,
    alpha: float, cluster: str, cluster_ids: np.ndarray, ci: float,
) -> tuple[np.ndarray, float, str]:
    """Covariance of ``theta``, the critical value of its intervals and their method:
    the fitted model's Wald covariance, or — when comparisons are clustered by rater or
    prompt — the cluster-robust sandwich with Student's t on G − 1 degrees of freedom
    (:mod:`~creagraph.judgments.uncertainty`)."""
    from scipy.special import ndtri, stdtrit  # the quantiles of scipy.stats.norm / t

    li, ri, oc, w = arrays
    z = float(ndtri(0.5 + ci / 2.0))
    cov = model_covariance(theta, nu, li, ri, oc, w, ties, alpha)
    method = "wald" if ties != "half" else "wald (robust to half-ties)"
    if cluster == "comparison":
        return cov, z, method
    cov_c, g = sandwich_covariance(theta, nu, li, ri, oc, w, ties, cluster_ids, alpha)
    if g < MIN_CLUSTERS:
        warnings.warn(
            f"only {g} {cluster}(s): too few clusters for a cluster-robust interval; the "
            "intervals assume independent comparisons and are too narrow if the "
            f"{cluster}s differ", DegenerateClustersWarning, stacklevel=5,
        )
        return cov, z, f"{method} (too few {cluster}s: {g})"
    return cov_c, float(stdtrit(g - 1, 0.5 + ci / 2.0)), (
        f"cluster-robust t ({g} {cluster}s, {g - 1} df)")


def _normal_draws(theta: np.ndarray, cov: np.ndarray, rng: np.random.Generator,
                  size: int) -> np.ndarray:
    """Draws from N(theta, cov) through a Cholesky factor (an eigendecomposition costs far
    more). ``cov`` is singular along the all-ones direction when unpenalised: factor
    ``cov + c·11ᵀ/n`` and remove each draw's mean shift, which leaves N(0, cov) exactly."""
    n = theta.size
    ones = np.full((n, n), 1.0 / n)
    c = max(float(np.trace(cov)) / n, 1e-12)
    try:
        chol = np.linalg.cholesky(cov + c * ones)
    except np.linalg.LinAlgError:  # not positive definite beyond the ones direction
        return rng.multivariate_normal(theta, cov, size=size, method="eigh")
    z = rng.standard_normal((size, n)) @ chol.T
    if np.allclose(cov.sum(axis=1), 0.0, atol=1e-9 * c):
        z -= z.mean(axis=1, keepdims=True)
    else:  # a penalised fit: the ones direction is part of cov, no shift was added there
        return rng.multivariate_normal(theta, cov, size=size, method="eigh")
    return theta + z


def _check_fit_args(ties: str, ci: float, n_bootstrap: int, comparisons: Comparisons) -> None:
    if ties not in _TIE_POLICIES:
        raise ValueError(f"unknown tie policy {ties!r} (use one of {_TIE_POLICIES})")
    if not 0 < ci < 1:
        raise ValueError("ci must lie in (0, 1)")
    if n_bootstrap < 0:
        raise ValueError("n_bootstrap must be >= 0")
    if len(comparisons) == 0:
        raise ValueError("no comparisons")


def _components(
    comparisons: Comparisons, li: np.ndarray, ri: np.ndarray, across_components: bool
) -> np.ndarray:
    """Connected group of each item, largest group first (0); raises
    :class:`DisconnectedComparisonsError` for several groups unless ``across_components``."""
    n = comparisons.n_items
    components = _component_labels(n, li, ri)
    n_groups = int(components.max()) + 1 if n else 0
    if n_groups > 1:
        groups = comparison_components(comparisons)
        if not across_components:
            shown = " | ".join(str(g[:6]) + ("…" if len(g) > 6 else "") for g in groups[:5])
            raise DisconnectedComparisonsError(
                f"the comparisons fall into {n_groups} groups never compared with each other "
                f"({shown}); their strengths are not on a common scale. Rank each group "
                "separately (bradley_terry_by_component) or pass across_components=True",
                groups,
            )
    # number components largest first
    sizes = np.bincount(components, minlength=n_groups) if n else np.zeros(0, np.int64)
    order_groups = sorted(
        range(n_groups), key=lambda g: (-sizes[g], int(np.argmax(components == g)))
    )
    relabel = {g: k for k, g in enumerate(order_groups)}
    return np.array([relabel[int(c)] for c in components], dtype=np.int64)


def _cluster_ids(comparisons: Comparisons, cluster: str) -> np.ndarray:
    """The bootstrap unit of each comparison: itself, or its rater / prompt (numbered in
    order of first appearance)."""
    if cluster == "comparison":
        return np.arange(len(comparisons))
    if cluster in ("rater", "prompt"):
        keys = comparisons.raters if cluster == "rater" else comparisons.prompts
        if keys is None:
            raise ValueError(f"cluster={cluster!r} needs comparisons with {cluster}s recorded")
        first_seen: dict[Any, int] = {}
        return np.fromiter(
            (first_seen.setdefault(key, len(first_seen)) for key in keys.tolist()),
            dtype=np.int64, count=len(keys),
        )
    raise ValueError(f"unknown cluster {cluster!r} (use 'comparison', 'rater' or 'prompt')")


def _bootstrap(
    comparisons: Comparisons,
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    cluster_ids: np.ndarray,
    rng: np.random.Generator,
    n_bootstrap: int,
    ties: str,
    alpha: float,
    degenerate_alpha: float,
    show_progress: bool,
    count: Callable[[np.ndarray], Any] | None = None,
    refit: Callable[[Any, float], _Fitted] | None = None,
) -> _Resampled:
    """Refit on ``n_bootstrap`` resamples of the clusters (with replacement): the centred
    estimates, the number of resamples refitted with ``degenerate_alpha`` and the number
    that did not converge (warned about); ``(None, 0, 0)`` when ``n_bootstrap`` is 0.
    ``count`` turns the resample's comparison weights into what ``refit`` (counts,
    alpha) fits: by default the dense count matrices and :func:`_fit`."""
    if n_bootstrap <= 0:
        return None, 0, 0
    li, ri, oc, w = arrays
    if count is None or refit is None:
        def count(weights: np.ndarray) -> Any:
            return count_matrices(comparisons.n_items, li, ri, oc, weights)

        def refit(counts: Any, a: float) -> _Fitted:
            wins, tie_m = counts
            return _fit(wins, tie_m, ties, a, comparisons.items)
    n_clusters = int(cluster_ids.max()) + 1 if cluster_ids.size else 0
    boot = np.empty((n_bootstrap, comparisons.n_items))
    n_degenerate = n_unconverged = 0
    draws: Iterable[int] = range(n_bootstrap)
    if show_progress:
        from creagraph.core.progress import progress

        draws = progress(draws, total=n_bootstrap, desc="bootstrap")
    for b in draws:
        counts = np.bincount(rng.integers(0, n_clusters, size=n_clusters),
                             minlength=n_clusters)
        counted = count(w * counts[cluster_ids])
        try:
            fit = refit(counted, alpha)
        except NotIdentifiableError:
            n_degenerate += 1
            fit = refit(counted, max(alpha, degenerate_alpha))
        boot[b] = fit[0] - fit[0].mean()
        n_unconverged += not fit[2]
    if n_unconverged:
        _warn_unconverged(
            f"{n_unconverged} of {n_bootstrap} bootstrap resamples did not converge "
            f"(solver for ties={ties!r})", stacklevel=5)
    return boot, n_degenerate, n_unconverged


def _sparse_fit(e: Any, policy: str, alpha: float, items: Sequence[str] | None
                ) -> tuple[np.ndarray, float | None, bool, str]:
    """:func:`_fit` on pair counts (:mod:`~creagraph.judgments.sparse_bt`)."""
    from creagraph.judgments import sparse_bt

    items = list(items) if items is not None else None
    if policy == "exclude":
        theta, ok, detail = sparse_bt.bt_fit(e, e.a, e.b, alpha, items)
        return theta, None, ok, detail
    if policy == "half":
        theta, ok, detail = sparse_bt.bt_fit(e, e.a + e.t / 2, e.b + e.t / 2, alpha, items)
        return theta, None, ok, detail
    return sparse_bt.davidson_fit(e, alpha, items)


def _bradley_terry_sparse(
    comparisons: Comparisons, arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    component: np.ndarray, cluster_ids: np.ndarray, n_clusters: int, *, ties: str,
    alpha: float, n_bootstrap: int, ci: float, seed: int | None, degenerate_alpha: float,
    show_progress: bool, cluster: str,
) -> BTResult:
    """:func:`bradley_terry` above :data:`~creagraph.judgments.sparse_bt.SPARSE_ITEMS`
    items: the same estimates, intervals and ranks from pair counts, without ``n × n``
    matrices; ``covariance`` is None and ``rank_probabilities`` keeps only its first
    column (P(rank 1))."""
    from scipy.special import ndtri, stdtrit  # the quantiles of scipy.stats.norm / t

    from creagraph.judgments import sparse_bt

    li, ri, oc, w = arrays
    n = comparisons.n_items
    e = sparse_bt.edge_counts(n, li, ri, oc, w)
    fitted = _first_fit(ties, alpha, e.t.sum(), e.a.sum() + e.b.sum(),
                        lambda: _sparse_fit(e, ties, alpha, comparisons.items))
    theta, nu = fitted[0], fitted[1]
    z = float(ndtri(0.5 + ci / 2.0))
    clustered = cluster != "comparison"
    op, g = sparse_bt.covariance_operator(theta, nu, e, arrays, ties, alpha,
                                          cluster_ids if clustered else None, clustered)
    crit, method = z, "wald" if ties != "half" else "wald (robust to half-ties)"
    if clustered:
        if g < MIN_CLUSTERS:
            warnings.warn(
                f"only {g} {cluster}(s): too few clusters for a cluster-robust interval; the "
                "intervals assume independent comparisons and are too narrow if the "
                f"{cluster}s differ", DegenerateClustersWarning, stacklevel=4)
            op, _ = sparse_bt.covariance_operator(theta, nu, e, arrays, ties, alpha, None,
                                                  False)
            method = f"{method} (too few {cluster}s: {g})"
        else:
            crit = float(stdtrit(g - 1, 0.5 + ci / 2.0))
            method = f"cluster-robust t ({g} {cluster}s, {g - 1} df)"
    var = sparse_bt.variances(op)
    rng = np.random.default_rng(seed)
    resampled = _bootstrap(
        comparisons, arrays, cluster_ids, rng, n_bootstrap, ties, alpha, degenerate_alpha,
        show_progress, lambda weights: sparse_bt.edge_counts(n, li, ri, oc, weights),
        lambda counts, a: _sparse_fit(counts, ties, a, comparisons.items))
    boot = resampled[0]
    if boot is not None:
        first = np.bincount(np.argmax(boot, axis=1), minlength=n) / boot.shape[0]
    else:
        first = sparse_bt.p_rank_1(theta, op, rng)
    best, worst = sparse_bt.significance_ranks(theta, op, var, crit)
    spread = {
        "se": np.sqrt(np.clip(var, 0.0, None)), "covariance": None, "tier": best,
        "rank_best": best, "rank_worst": worst, "rank_probabilities": first[:, None],
        "expected_win_rate": sparse_bt.expected_win_rate(theta),
        **_item_rates(*e.item_counts()),
    }
    return _result(comparisons, arrays, component, fitted, resampled, spread, crit, method,
                   ties=ties, alpha=alpha, ci=ci, n_bootstrap=n_bootstrap, cluster=cluster,
                   n_clusters=n_clusters)


def bradley_terry_by_component(comparisons: Comparisons, **kwargs: Any) -> list[BTResult]:
    """Fit :func:`bradley_terry` separately on each group of items linked by comparisons.

    Parameters
    ----------
    comparisons : Comparisons
    **kwargs
        Passed to :func:`bradley_terry`.

    Returns
    -------
    list of BTResult
        One per group, largest first (see :func:`comparison_components`); groups of a
        single item (nothing to rank) are skipped.

    Examples
    --------
    >>> from creagraph.judgments import make_comparisons
    >>> c = make_comparisons(["a", "b", "c", "d"], ["b", "a", "d", "c"],
    ...                      ["left", "left", "left", "left"])
    >>> [r.items for r in bradley_terry_by_component(c)]
    [['a', 'b'], ['c', 'd']]
    """
    results = []
    for group in comparison_components(comparisons):
        if len(group) < 2:
            continue
        idx = np.array([comparisons.items.index(g) for g in group], dtype=np.int64)
        results.append(bradley_terry(_restrict(comparisons, idx), **kwargs))
    return results
