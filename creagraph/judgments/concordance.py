"""Kendall's W [1]_ and Friedman's test [2]_ over blocks × treatments
(layouts: :mod:`creagraph.judgments.agreement`).

References
----------
.. [1] Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings.
   *Ann. Math. Statist.* 10(3), 275–287 (W with tie correction: Kendall, *Rank
   Correlation Methods*, 1948).
.. [2] Friedman, M. (1937). The use of ranks to avoid the assumption of normality
   implicit in the analysis of variance. *JASA* 32(200), 675–701.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from creagraph.judgments.ratings import _as_float_matrix

__all__ = [
    "KendallWResult",
    "kendalls_w",
    "FriedmanResult",
    "friedman",
]


# --------------------------------------------------------------------------- Kendall / Friedman


@dataclass(frozen=True)
class KendallWResult:
    """Kendall's coefficient of concordance.

    Attributes
    ----------
    w : float
        Tie-corrected W in [0, 1].
    chi2 : float
        Friedman statistic ``n_blocks * (n_treatments - 1) * W``.
    df : int
    pvalue : float
        Chi-squared approximation.
    n_blocks, n_treatments : int
    """

    w: float
    chi2: float
    df: int
    pvalue: float
    n_blocks: int
    n_treatments: int


def _complete_rows(arr: np.ndarray, nan_policy: str, name: str) -> np.ndarray:
    bad = np.isnan(arr).any(axis=1)
    if bad.any():
        if nan_policy == "raise":
            raise ValueError(
                f"{name}: {int(bad.sum())} row(s) have missing values "
                "(pass nan_policy='omit' to drop them)"
            )
        if nan_policy != "omit":
            raise ValueError("nan_policy must be 'raise' or 'omit'")
        arr = arr[~bad]
    return arr


def kendalls_w(
    data: Sequence[Sequence[float]] | np.ndarray,
    *,
    nan_policy: Literal["raise", "omit"] = "raise",
    correction: bool = True,
) -> KendallWResult:
    """Kendall's W, with tie correction by default [1]_.

    Each row (a rater, or a block) is ranked across the columns (the treatments, e.g.
    models) with average ranks for ties; then

    ``W = (12 S - 3 m² n (n+1)²) / (m² n (n² - 1) - m Σ T)``,

    with ``m`` rows, ``n`` columns, ``S`` the sum of squared column rank sums and
    ``T = Σ (t³ - t)`` over the tie groups of each row. Higher values in ``data`` mean a
    higher rank.

    Parameters
    ----------
    data : array_like, shape (n_blocks, n_treatments)
        A pandas DataFrame is read by value.
    nan_policy : {"raise", "omit"}
        ``"omit"`` drops incomplete rows.
    correction : bool
        ``False`` drops the tie term (``Σ T = 0``): Kendall's original
        ``W = 12 S' / (m² (n³ - n))`` on average ranks, as some packages report it.

    Examples
    --------
    >>> round(kendalls_w([[1, 2, 3], [1, 2, 3], [1, 2, 3]]).w, 6)
    1.0
    """
    arr = _complete_rows(_as_float_matrix(data, "data"), nan_policy, "data")
    m, n = arr.shape
    if m < 2 or n < 2:
        raise ValueError(f"need at least 2 complete rows and 2 columns, got {arr.shape}")
    from scipy import stats  # imported here: scipy.stats costs ~1 s, paid only when used

    ranks = stats.rankdata(arr, axis=1)
    ties = 0.0
    for row in arr:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts**3 - counts))
    ssbn = float(np.sum(ranks.sum(axis=0) ** 2))
    denom = m**2 * n * (n**2 - 1) - (m * ties if correction else 0.0)
    w = (12.0 * ssbn - 3.0 * m**2 * n * (n + 1) ** 2) / denom if denom > 0 else float("nan")
    chi2 = m * (n - 1) * w
    return KendallWResult(
        w=float(w),
        chi2=float(chi2),
        df=n - 1,
        pvalue=float(stats.chi2.sf(chi2, n - 1)),
        n_blocks=m,
        n_treatments=n,
    )


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman test across treatments (scipy's tie-corrected statistic) plus Kendall's W."""

    statistic: float
    pvalue: float
    df: int
    kendalls_w: float
    n_blocks: int
    n_treatments: int


def friedman(
    data: Sequence[Sequence[float]] | np.ndarray,
    *,
    nan_policy: Literal["raise", "omit"] = "raise",
) -> FriedmanResult:
    """Friedman's rank test [2]_ (``scipy.stats.friedmanchisquare``) with Kendall's W.

    Parameters
    ----------
    data : array_like, shape (n_blocks, n_treatments)
        Rows are blocks (raters or prompts), columns the treatments (models); a pandas
        DataFrame is read by value.
    nan_policy : {"raise", "omit"}

    Examples
    --------
    >>> r = friedman([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3]])
    >>> round(r.statistic, 3), r.df
    (4.5, 2)
    """
    arr = _complete_rows(_as_float_matrix(data, "data"), nan_policy, "data")
    m, n = arr.shape
    if m < 2 or n < 3:
        raise ValueError(
            f"Friedman's test needs at least 2 complete blocks and 3 treatments, got {arr.shape}"
        )
    from scipy import stats

    res = stats.friedmanchisquare(*arr.T)
    kw = kendalls_w(arr)
    return FriedmanResult(
        statistic=float(res.statistic),
        pvalue=float(res.pvalue),
        df=n - 1,
        kendalls_w=kw.w,
        n_blocks=m,
        n_treatments=n,
    )
