"""Cohen's κ [1]_ (unweighted and weighted) and Pearson / Spearman correlations
for two raters.

References
----------
.. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
   Psychological Measurement* 20(1), 37–46; weighted: Cohen, J. (1968), *Psychological
   Bulletin* 70(4), 213–220.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from creagraph.judgments.alpha import _is_number
from creagraph.judgments.ratings import _as_float_matrix, is_missing

__all__ = [
    "CohenKappaResult",
    "cohens_kappa",
    "CorrelationResult",
    "correlation",
]


# --------------------------------------------------------------------------- Cohen, correlations


@dataclass(frozen=True)
class CohenKappaResult:
    """Cohen's κ for two raters [1]_.

    Attributes
    ----------
    kappa : float
    weights : str or None
        ``None`` (unweighted), ``"linear"`` or ``"quadratic"``.
    observed, expected : float
        Observed and chance (weighted) agreement.
    n : int
        Units rated by both raters.
    categories : list
    """

    kappa: float
    weights: str | None
    observed: float
    expected: float
    n: int
    categories: list[Any]


def cohens_kappa(
    rater_a: Sequence[Any],
    rater_b: Sequence[Any],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: Sequence[Any] | None = None,
) -> CohenKappaResult:
    """Cohen's κ between two raters over the same units [1]_.

    ``κ = (p_o - p_e) / (1 - p_e)`` from the two raters' confusion table; with
    ``weights``, disagreements between categories ``i`` and ``j`` (positions in the
    ordered ``categories``) count ``|i - j|`` (linear) or ``(i - j)²`` (quadratic).
    Units missing for either rater are dropped.

    Parameters
    ----------
    rater_a, rater_b : sequence
        The two raters' labels, aligned by unit (pandas Series are read by value).
    weights : {None, "linear", "quadratic"}
    categories : sequence, optional
        All categories in order (default: the labels seen, sorted; numbers as numbers).

    Examples
    --------
    >>> round(cohens_kappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]).kappa, 6)
    0.5
    """
    a = list(rater_a.to_numpy(dtype=object)) if hasattr(rater_a, "to_numpy") else list(rater_a)
    b = list(rater_b.to_numpy(dtype=object)) if hasattr(rater_b, "to_numpy") else list(rater_b)
    if len(a) != len(b):
        raise ValueError(f"the two raters must rate the same units ({len(a)} vs {len(b)})")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not is_missing(x) and not is_missing(y)]
    if not pairs:
        raise ValueError("no unit was rated by both raters")
    seen = {v for p in pairs for v in p}
    if categories is None:
        if all(_is_number(v) for v in seen):
            pairs = [(float(x), float(y)) for x, y in pairs]
            cats: list[Any] = sorted({v for p in pairs for v in p})
        else:
            cats = sorted(seen, key=str)
    else:
        cats = list(categories)
        unknown = seen - set(cats)
        if unknown:
            raise ValueError(f"labels not in categories: {sorted(unknown, key=str)[:5]}")
    index = {c: k for k, c in enumerate(cats)}
    q = len(cats)
    table = np.zeros((q, q))
    for x, y in pairs:
        table[index[x], index[y]] += 1
    n = int(table.sum())
    pos = np.arange(q, dtype=float)
    if weights is None:
        dist = (pos[:, None] != pos[None, :]).astype(float)
    elif weights == "linear":
        dist = np.abs(pos[:, None] - pos[None, :])
    elif weights == "quadratic":
        dist = (pos[:, None] - pos[None, :]) ** 2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    prob = table / n
    expected_table = np.outer(prob.sum(axis=1), prob.sum(axis=0))
    d_obs = float(np.sum(dist * prob))
    d_exp = float(np.sum(dist * expected_table))
    scale = float(dist.max()) if dist.max() > 0 else 1.0
    kappa = 1.0 - d_obs / d_exp if d_exp > 0 else float("nan")
    return CohenKappaResult(
        kappa=float(kappa),
        weights=weights,
        observed=1.0 - d_obs / scale,
        expected=1.0 - d_exp / scale,
        n=n,
        categories=cats,
    )


@dataclass(frozen=True)
class CorrelationResult:
    """A correlation with its test and Fisher-z confidence interval.

    Attributes
    ----------
    r : float
    pvalue : float
        Two-sided, from the t distribution with ``n - 2`` degrees of freedom.
    ci_low, ci_high : float
    n : int
    method : str
        ``"pearson"`` or ``"spearman"``.
    """

    r: float
    pvalue: float
    ci_low: float
    ci_high: float
    n: int
    method: str


def correlation(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    method: Literal["pearson", "spearman"] = "pearson",
    ci: float = 0.95,
) -> CorrelationResult:
    """Pearson (or Spearman) correlation between two paired series, e.g. two rating axes.

    Pairs with a missing value are dropped. The interval is Fisher's
    ``tanh(atanh(r) ± z / sqrt(n - 3))`` (as ``scipy.stats.pearsonr``'s); for Spearman it
    is the same transform applied to ρ (an approximation).

    Examples
    --------
    >>> r = correlation([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
    >>> round(r.r, 4), r.n
    (0.7746, 5)
    """
    xs = _as_float_matrix([list(x)], "x")[0] if not hasattr(x, "to_numpy") else \
        _as_float_matrix([x.to_numpy(dtype=object).tolist()], "x")[0]
    ys = _as_float_matrix([list(y)], "y")[0] if not hasattr(y, "to_numpy") else \
        _as_float_matrix([y.to_numpy(dtype=object).tolist()], "y")[0]
    if xs.size != ys.size:
        raise ValueError(f"x and y must have the same length ({xs.size} vs {ys.size})")
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', not {method!r}")
    keep = ~np.isnan(xs) & ~np.isnan(ys)
    xs, ys = xs[keep], ys[keep]
    n = int(xs.size)
    if n < 3:
        raise ValueError(f"need at least 3 complete pairs, got {n}")
    from scipy import stats

    if method == "spearman":
        xs, ys = stats.rankdata(xs), stats.rankdata(ys)
    if np.all(xs == xs[0]) or np.all(ys == ys[0]):
        nan = float("nan")
        return CorrelationResult(nan, nan, nan, nan, n, method)
    r = float(np.clip(np.corrcoef(xs, ys)[0, 1], -1.0, 1.0))
    if abs(r) == 1.0:
        p = 0.0
    else:
        t = r * math.sqrt((n - 2) / (1 - r * r))
        p = float(2 * stats.t.sf(abs(t), n - 2))
    if n > 3 and abs(r) < 1:
        z = float(stats.norm.ppf(1 - (1 - ci) / 2))
        half = z / math.sqrt(n - 3)
        lo, hi = math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)
    else:
        lo = hi = r if abs(r) == 1 else float("nan")
    return CorrelationResult(r=r, pvalue=p, ci_low=lo, ci_high=hi, n=n, method=method)
