"""Intraclass correlations (Shrout & Fleiss [1]_) with F tests and intervals [2]_
over targets × raters (layouts: :mod:`creagraph.judgments.agreement`).

References
----------
.. [1] Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing
   rater reliability. *Psychological Bulletin* 86(2), 420–428.
.. [2] McGraw, K. O. & Wong, S. P. (1996). Forming inferences about some intraclass
   correlation coefficients. *Psychological Methods* 1(1), 30–46 (ICC confidence
   intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from creagraph.judgments.concordance import _complete_rows
from creagraph.judgments.ratings import _as_float_matrix

__all__ = [
    "ICCResult",
    "icc",
]


# --------------------------------------------------------------------------- ICC


@dataclass(frozen=True)
class ICCResult:
    """The six Shrout–Fleiss intraclass correlations [1]_ with their F tests.

    ``ICC1``: one-way random, single rater; ``ICC2``: two-way random, absolute
    agreement, single rater; ``ICC3``: two-way mixed, consistency, single rater; the
    ``k`` variants are for the mean of the ``k`` raters.
    """

    icc1: float
    icc2: float
    icc3: float
    icc1k: float
    icc2k: float
    icc3k: float
    f1: float
    p1: float
    f23: float
    p23: float
    n_targets: int
    n_raters: int
    ci_level: float = 0.95
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Confidence interval per coefficient (keys as :meth:`as_dict`), F-based [2]_."""

    def as_dict(self) -> dict[str, float]:
        return {
            "ICC1": self.icc1, "ICC2": self.icc2, "ICC3": self.icc3,
            "ICC1k": self.icc1k, "ICC2k": self.icc2k, "ICC3k": self.icc3k,
        }


def icc(
    data: Sequence[Sequence[float]] | np.ndarray,
    *,
    nan_policy: Literal["raise", "omit"] = "raise",
    ci: float = 0.95,
) -> ICCResult:
    """Intraclass correlation coefficients (Shrout & Fleiss, 1979) [1]_ with intervals.

    Parameters
    ----------
    data : array_like, shape (n_targets, n_raters)
        Complete ratings (``nan_policy="omit"`` drops targets with a missing rating); a
        pandas DataFrame is read by value.
    ci : float
        Level of the F-distribution confidence intervals (Shrout & Fleiss; McGraw & Wong
        [2]_ for ICC2), in :attr:`ICCResult.ci`.

    Examples
    --------
    >>> r = icc([[1, 1], [2, 2], [3, 3]])
    >>> round(r.icc1, 6), round(r.icc3k, 6)
    (1.0, 1.0)
    """
    arr = _complete_rows(_as_float_matrix(data, "data"), nan_policy, "data")
    n, k = arr.shape
    if n < 2 or k < 2:
        raise ValueError(f"ICC needs at least 2 targets and 2 raters, got {arr.shape}")
    msr, msc, mse, msw = _icc_mean_squares(arr)
    f1 = _f_ratio(msr, msw)
    f23 = _f_ratio(msr, mse)
    nan = float("nan")
    if not 0 < ci < 1:
        raise ValueError("ci must lie in (0, 1)")
    from scipy import stats

    icc2 = _ratio(msr - mse, msr + (k - 1) * mse + k * (msc - mse) / n)
    return ICCResult(
        icc1=_ratio(msr - msw, msr + (k - 1) * msw),
        icc2=icc2,
        icc3=_ratio(msr - mse, msr + (k - 1) * mse),
        icc1k=_ratio(msr - msw, msr),
        icc2k=_ratio(msr - mse, msr + (msc - mse) / n),
        icc3k=_ratio(msr - mse, msr),
        f1=f1,
        p1=float(stats.f.sf(f1, n - 1, n * (k - 1))) if not math.isnan(f1) else nan,
        f23=f23,
        p23=(float(stats.f.sf(f23, n - 1, (n - 1) * (k - 1))) if not math.isnan(f23)
             else nan),
        n_targets=n,
        n_raters=k,
        ci_level=ci,
        ci=_icc_intervals(n, k, ci, (msr, msc, mse), f1, f23, icc2),
    )


def _ratio(num: float, den: float) -> float:
    return num / den if den != 0 else float("nan")


def _f_ratio(ms_effect: float, ms_error: float) -> float:
    """An F statistic; an error mean square that is zero up to rounding (perfect
    agreement) gives F = inf (p = 0), not a rounding-noise ratio (p = 1)."""
    if ms_error <= 1e-12 * max(abs(ms_effect), 1e-300):
        return float("inf") if ms_effect > 0 else float("nan")
    return ms_effect / ms_error


def _icc_mean_squares(arr: np.ndarray) -> tuple[float, float, float, float]:
    """Two-way ANOVA mean squares of a targets × raters table: rows (targets), columns
    (raters), error and within targets."""
    n, k = arr.shape
    grand = arr.mean()
    ss_rows = k * float(np.sum((arr.mean(axis=1) - grand) ** 2))
    ss_cols = n * float(np.sum((arr.mean(axis=0) - grand) ** 2))
    ss_total = float(np.sum((arr - grand) ** 2))
    ss_err = ss_total - ss_rows - ss_cols
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    msw = (ss_cols + ss_err) / (n * (k - 1))
    return msr, msc, mse, msw


def _icc_intervals(
    n: int, k: int, ci: float, mean_squares: tuple[float, float, float], f1: float,
    f23: float, icc2: float,
) -> dict[str, tuple[float, float]]:
    """F-based confidence intervals (Shrout & Fleiss; McGraw & Wong [2]_ for ICC2)."""
    from scipy import stats

    msr, msc, mse = mean_squares
    q = 1 - (1 - ci) / 2
    df1, df_w, df_e = n - 1, n * (k - 1), (n - 1) * (k - 1)
    intervals: dict[str, tuple[float, float]] = {}
    with np.errstate(all="ignore"):
        if math.isfinite(f1) and f1 > 0:
            f1l = f1 / stats.f.ppf(q, df1, df_w)
            f1u = f1 * stats.f.ppf(q, df_w, df1)
            intervals["ICC1"] = ((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1))
            intervals["ICC1k"] = (1 - 1 / f1l, 1 - 1 / f1u)
        if math.isfinite(f23) and f23 > 0:
            f3l = f23 / stats.f.ppf(q, df1, df_e)
            f3u = f23 * stats.f.ppf(q, df_e, df1)
            intervals["ICC3"] = ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1))
            intervals["ICC3k"] = (1 - 1 / f3l, 1 - 1 / f3u)
        if mse > 0 and math.isfinite(icc2):
            fj = msc / mse
            vn = df_e * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
            vd = df1 * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
            v = vn / vd
            f2u = stats.f.ppf(q, df1, v)
            f2l = stats.f.ppf(q, v, df1)
            lo2 = n * (msr - f2u * mse) / (f2u * (k * msc + (k * n - k - n) * mse) + n * msr)
            hi2 = n * (f2l * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f2l * msr)
            intervals["ICC2"] = (float(lo2), float(hi2))
            intervals["ICC2k"] = (float(lo2 * k / (1 + lo2 * (k - 1))),
                                  float(hi2 * k / (1 + hi2 * (k - 1))))
    return {key: (float(a), float(b)) for key, (a, b) in intervals.items()}
