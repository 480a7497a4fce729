"""Rater agreement: Kendall's W, Friedman, Krippendorff's α, Fleiss' κ, ICC, order swaps.

Layouts (validated at the boundary, missing values as ``None``/``NaN``/``pd.NA``; a
pandas DataFrame is read by its *values*, row by row, never by its column labels):

- *reliability data* (Krippendorff): shape ``(n_raters, n_units)``, one row per rater;
- *blocks × treatments* (Friedman, Kendall's W): shape ``(n_blocks, n_treatments)``; each
  row (a rater, or a prompt) scores or ranks every treatment (model);
- *targets × raters* (ICC): shape ``(n_targets, n_raters)``, complete;
- *category counts* (Fleiss): shape ``(n_subjects, n_categories)``, the same number of
  raters per subject.

:func:`ratings_matrix` turns long records (unit, rater, value) into the first layout.

References
----------
.. [1] Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings.
   *Ann. Math. Statist.* 10(3), 275–287 (W with tie correction: Kendall, *Rank
   Correlation Methods*, 1948).
.. [2] Friedman, M. (1937). The use of ranks to avoid the assumption of normality
   implicit in the analysis of variance. *JASA* 32(200), 675–701.
.. [3] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
   https://repository.upenn.edu/asc_papers/43
.. [4] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
   *Psychological Bulletin* 76(5), 378–382.
.. [5] Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing
   rater reliability. *Psychological Bulletin* 86(2), 420–428.
.. [6] Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena.
   *NeurIPS* (position bias and swap consistency of LLM judges).
.. [7] Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
   Psychological Measurement* 20(1), 37–46; weighted: Cohen, J. (1968), *Psychological
   Bulletin* 70(4), 213–220.
.. [8] McGraw, K. O. & Wong, S. P. (1996). Forming inferences about some intraclass
   correlation coefficients. *Psychological Methods* 1(1), 30–46 (ICC confidence
   intervals).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import krippendorff
import numpy as np

from creagraph.judgments.choices import MeasurementLevel
from creagraph.judgments.comparisons import LEFT, RIGHT, TIE, Comparisons, RecordError

__all__ = [
    "DegenerateDesignWarning",
    "MIN_ALPHA_UNITS",
    "is_missing",
    "CohenKappaResult",
    "CorrelationResult",
    "cohens_kappa",
    "correlation",
    "KendallWResult",
    "FriedmanResult",
    "ICCResult",
    "SwapConsistency",
    "ratings_matrix",
    "NA_TOKENS",
    "RatingLabels",
    "rating_labels",
    "agreement_statistics",
    "MeasurementLevel",
    "kendalls_w",
    "friedman",
    "krippendorff_alpha",
    "category_counts",
    "fleiss_kappa",
    "icc",
    "order_swap_consistency",
    "swapped_pairs",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]

MIN_ALPHA_UNITS = 5
"""Fewer pairable units than this make Krippendorff's α too unstable to report without a
:class:`DegenerateDesignWarning`."""


class DegenerateDesignWarning(UserWarning):
    """The design cannot support the statistic's usual reading (e.g. α on two units, a
    concordance between one rater's prompts called agreement between raters)."""


def is_missing(value: Any) -> bool:
    """Whether a cell is missing: ``None``, NaN, ``pd.NA``/``NaT`` or a blank string.

    Examples
    --------
    >>> [is_missing(v) for v in (None, float("nan"), "", " ", 0, "x")]
    [True, True, True, True, False, False]
    """
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, float | np.floating):
        return bool(np.isnan(value))
    return type(value).__name__ in ("NAType", "NaTType")


def _rows(data: Any, name: str) -> list[list[Any]]:
    """A 2-D table as a list of row lists, reading pandas objects by value (not labels)."""
    if hasattr(data, "to_numpy") and hasattr(data, "columns"):  # pandas DataFrame
        return data.to_numpy(dtype=object).tolist()
    if hasattr(data, "to_numpy"):  # a pandas Series is one row, not a table
        raise ValueError(f"{name} must be 2-D (got a 1-D {type(data).__name__})")
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {data.shape}")
        return data.tolist()
    try:
        rows = [list(r) for r in data]
    except TypeError:
        raise ValueError(f"{name} must be a 2-D table (rows of cells)") from None
    return rows


def _as_float_matrix(data: Any, name: str) -> np.ndarray:
    rows = _rows(data, name)
    try:
        arr = np.array([[np.nan if is_missing(v) else v for v in row] for row in rows],
                       dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D array of numbers ({exc})") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    return arr


def ratings_matrix(
    units: Sequence[Hashable],
    raters: Sequence[Hashable],
    values: Sequence[Any],
) -> tuple[np.ndarray, list[Hashable], list[Hashable]]:
    """Pivot long ratings into a ``(n_raters, n_units)`` float matrix (NaN = missing).

    Repeated (rater, unit) pairs are averaged.

    Returns
    -------
    matrix : ndarray, shape (n_raters, n_units)
    unit_labels, rater_labels : list
        Sorted (by ``str``) labels for the columns and rows.

    Examples
    --------
    >>> m, u, r = ratings_matrix(["p1", "p1", "p2"], ["ann", "bob", "ann"], [3, 4, 5])
    >>> m.tolist(), u, r
    ([[3.0, 5.0], [4.0, nan]], ['p1', 'p2'], ['ann', 'bob'])
    """
    unit_labels, rater_labels, ui, ri = _pivot_labels(units, raters, values)
    total = np.zeros((len(rater_labels), len(unit_labels)))
    count = np.zeros_like(total)
    for u, r, v in zip(units, raters, values, strict=True):
        if is_missing(v):
            continue
        total[ri[r], ui[u]] += float(v)
        count[ri[r], ui[u]] += 1
    with np.errstate(invalid="ignore"):
        matrix = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return matrix, unit_labels, rater_labels


def _pivot_labels(
    units: Sequence[Hashable], raters: Sequence[Hashable], values: Sequence[Any]
) -> tuple[list[Hashable], list[Hashable], dict[Hashable, int], dict[Hashable, int]]:
    """Sorted (by ``str``) unit and rater labels of long ratings, with their positions."""
    if not (len(units) == len(raters) == len(values)):
        raise ValueError("units, raters and values must have the same length")
    unit_labels = sorted(set(units), key=str)
    rater_labels = sorted(set(raters), key=str)
    ui = {u: k for k, u in enumerate(unit_labels)}
    ri = {r: k for k, r in enumerate(rater_labels)}
    return unit_labels, rater_labels, ui, ri


NA_TOKENS = frozenset(
    {"", "na", "n/a", "nan", "-nan", "none", "null", "<na>", "#n/a", "#na", "missing"}
)
"""Cells :func:`rating_labels` reads as missing (case-insensitive; pandas' default
``na_values``)."""


def _is_na(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() in NA_TOKENS


@dataclass(frozen=True)
class RatingLabels:
    """Long ratings pivoted into reliability data, labels kept as read.

    Attributes
    ----------
    table : list of list
        ``table[rater][unit]``: the label (stripped), ``None`` when missing.
    units, raters : list of str
        Sorted labels of the columns and rows.
    numeric : bool
        Whether every label reads as a number.
    """

    table: list[list[Any]]
    units: list[str]
    raters: list[str]
    numeric: bool


def rating_labels(
    units: Sequence[Any], raters: Sequence[Any], values: Sequence[Any]
) -> RatingLabels:
    """Pivot long ratings (one per record) into a raters × units table of labels.

    Unlike :func:`ratings_matrix` the labels stay as they are (nominal labels may be
    text), units and raters are matched by ``str``, the cells in :data:`NA_TOKENS` are
    missing, and a rater rating a unit twice is an error.

    Raises
    ------
    RecordError
        A value that is a number but not finite, or a second rating of the same unit by
        the same rater — with the index of the record.

    Examples
    --------
    >>> r = rating_labels(["p1", "p1", "p2"], ["ann", "bob", "ann"], ["3", "NA", " 4 "])
    >>> r.table, r.units, r.raters, r.numeric
    ([['3', '4'], [None, None]], ['p1', 'p2'], ['ann', 'bob'], True)
    """
    unit_labels, rater_labels, ui, ri = _pivot_labels(
        [str(u) for u in units], [str(r) for r in raters], values
    )
    table: list[list[Any]] = [[None] * len(unit_labels) for _ in rater_labels]
    numeric = True
    for k, (u, r, raw) in enumerate(zip(units, raters, values, strict=True)):
        if _is_na(raw):
            continue
        v = raw.strip() if isinstance(raw, str) else raw
        try:
            as_number: float | None = float(v)
        except (TypeError, ValueError):
            as_number = None
            numeric = False
        if as_number is not None and not math.isfinite(as_number):
            raise RecordError(k, None, f"{raw!r} is not a finite number "
                              "(leave the cell blank or write NA for a missing rating)")
        if table[ri[str(r)]][ui[str(u)]] is not None:
            raise RecordError(k, None, f"rater {r!r} rated unit {u!r} twice")
        table[ri[str(r)]][ui[str(u)]] = v
    return RatingLabels(table, [str(u) for u in unit_labels], [str(r) for r in rater_labels],
                        numeric)


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


# --------------------------------------------------------------------------- Krippendorff


def _is_number(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]] | np.ndarray,
    level: Level | MeasurementLevel = "interval",
    *,
    distance: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    value_domain: Sequence[Any] | None = None,
) -> float:
    """Krippendorff's α [3]_ (computed by the ``krippendorff`` package).

    Parameters
    ----------
    reliability_data : array_like, shape (n_raters, n_units)
        ``None``/``NaN``/``pd.NA``/empty string = missing. Strings are allowed for the
        nominal level. A pandas DataFrame is read by value (rows = raters).
    level : {"nominal", "ordinal", "interval", "ratio"}
    distance : callable, optional
        A custom squared-difference function ``distance(a, b) -> array`` (element-wise,
        broadcasting), used instead of ``level``.
    value_domain : sequence, optional
        All possible values in order (matters for the ordinal level when some values are
        unused).

    Returns
    -------
    float
        α; NaN when there is no pairable variation.

    Warns
    -----
    DegenerateDesignWarning
        Fewer than :data:`MIN_ALPHA_UNITS` units have two or more ratings.

    Examples
    --------
    >>> round(krippendorff_alpha([[1, 2, 3], [2, 3, 4]], "interval"), 7)
    0.5454545
    >>> round(krippendorff_alpha([["a", "b", None], ["a", "b", "b"]], "nominal"), 6)
    1.0
    """
    rows = _rows(reliability_data, "reliability_data")
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError("reliability_data must be a non-empty rectangular table")
    arr, dom = _alpha_codes(rows, level, distance, value_domain)
    n_pairable = int(np.sum(np.sum(~np.isnan(arr), axis=0) >= 2))
    if n_pairable == 0:
        raise ValueError("no unit has two or more ratings; α is undefined")
    if n_pairable < MIN_ALPHA_UNITS:
        warnings.warn(
            f"Krippendorff's α on only {n_pairable} unit(s) with two or more ratings "
            f"(< {MIN_ALPHA_UNITS}): too few to read as agreement",
            DegenerateDesignWarning, stacklevel=2,
        )
    if len(np.unique(arr[~np.isnan(arr)])) < 2:
        return float("nan")
    measure: Any = level
    if distance is not None:
        user = distance

        def measure(v1: np.ndarray, v2: np.ndarray, i1: Any, i2: Any, n_v: Any,
                    dtype: Any = np.float64) -> np.ndarray:  # krippendorff's protocol
            return np.asarray(user(v1, v2), dtype=dtype)

    elif level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"unknown level {level!r}")
    return float(
        krippendorff.alpha(reliability_data=arr, level_of_measurement=measure, value_domain=dom)
    )


def _alpha_codes(
    rows: list[list[Any]], level: str, distance: Any, value_domain: Sequence[Any] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Reliability data as floats (NaN = missing) and the value domain for
    ``krippendorff.alpha``: numbers as numbers (also when read as text), other labels coded
    by their position in ``value_domain`` (default: sorted)."""
    missing = is_missing
    present = [v for r in rows for v in r if not missing(v)]
    if any(isinstance(v, str) for v in present) and all(_is_number(v) for v in present):
        # numbers read from text files: compare them as numbers
        rows = [[None if missing(v) else float(v) for v in r] for r in rows]
        present = [float(v) for v in present]
    if not any(isinstance(v, str) for v in present):
        arr = np.array([[np.nan if missing(v) else float(v) for v in r] for r in rows])
        return arr, None if value_domain is None else np.asarray(value_domain, dtype=float)
    if level != "nominal" and distance is None and value_domain is None:
        raise ValueError(f"string labels need level='nominal' (or a value_domain for {level!r})")
    domain = list(value_domain) if value_domain is not None else sorted(set(present), key=str)
    code = {v: float(k) for k, v in enumerate(domain)}
    unknown = set(present) - set(code)
    if unknown:
        raise ValueError(f"values not in value_domain: {sorted(unknown, key=str)[:5]}")
    arr = np.array([[np.nan if missing(v) else code[v] for v in r] for r in rows])
    return arr, np.arange(len(domain), dtype=float)


# --------------------------------------------------------------------------- Fleiss


def category_counts(
    labels: Sequence[Sequence[Any]], categories: Sequence[Any] | None = None
) -> tuple[np.ndarray, list[Any]]:
    """Turn a ``(n_subjects, n_raters)`` label table into Fleiss' count table.

    Missing labels (``None``/NaN/empty) are skipped.

    Examples
    --------
    >>> counts, cats = category_counts([["x", "y"], ["y", "y"]])
    >>> counts.tolist(), cats
    ([[1, 1], [0, 2]], ['x', 'y'])
    """

    missing = is_missing
    labels = _rows(labels, "labels")
    present = {v for row in labels for v in row if not missing(v)}
    cats = list(categories) if categories is not None else sorted(present, key=str)
    index = {c: k for k, c in enumerate(cats)}
    unknown = present - set(index)
    if unknown:
        raise ValueError(f"labels not in categories: {sorted(unknown, key=str)[:5]}")
    counts = np.zeros((len(labels), len(cats)), dtype=np.int64)
    for s, row in enumerate(labels):
        for v in row:
            if not missing(v):
                counts[s, index[v]] += 1
    return counts, cats


def fleiss_kappa(counts: Sequence[Sequence[float]] | np.ndarray) -> float:
    """Fleiss' κ for many raters and nominal categories [4]_.

    Parameters
    ----------
    counts : array_like, shape (n_subjects, n_categories)
        ``counts[s, c]`` = number of raters who put subject ``s`` in category ``c``; every
        subject must have the same number of raters (>= 2). See :func:`category_counts`.

    Examples
    --------
    >>> fleiss_kappa([[2, 0], [0, 2], [2, 0]])
    1.0
    """
    arr = np.asarray(counts, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError("counts must be a non-empty 2-D table (subjects x categories)")
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError("counts must be non-negative integers")
    per_subject = arr.sum(axis=1)
    n = per_subject[0]
    if not np.all(per_subject == n):
        raise ValueError(
            "Fleiss' kappa needs the same number of raters per subject "
            f"(found {sorted(set(per_subject.astype(int).tolist()))[:5]})"
        )
    if n < 2:
        raise ValueError("Fleiss' kappa needs at least 2 raters per subject")
    p_cat = arr.sum(axis=0) / arr.sum()
    p_subj = (np.sum(arr**2, axis=1) - n) / (n * (n - 1))
    p_bar = float(p_subj.mean())
    p_e = float(np.sum(p_cat**2))
    if p_e == 1.0:
        return float("nan")
    return (p_bar - p_e) / (1.0 - p_e)


# --------------------------------------------------------------------------- ICC


@dataclass(frozen=True)
class ICCResult:
    """The six Shrout–Fleiss intraclass correlations [5]_ with their F tests.

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
    """Confidence interval per coefficient (keys as :meth:`as_dict`), F-based [8]_."""

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
    """Intraclass correlation coefficients (Shrout & Fleiss, 1979) [5]_ with intervals.

    Parameters
    ----------
    data : array_like, shape (n_targets, n_raters)
        Complete ratings (``nan_policy="omit"`` drops targets with a missing rating); a
        pandas DataFrame is read by value.
    ci : float
        Level of the F-distribution confidence intervals (Shrout & Fleiss; McGraw & Wong
        [8]_ for ICC2), in :attr:`ICCResult.ci`.

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
    """F-based confidence intervals (Shrout & Fleiss; McGraw & Wong [8]_ for ICC2)."""
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


# --------------------------------------------------------------------------- Cohen, correlations


@dataclass(frozen=True)
class CohenKappaResult:
    """Cohen's κ for two raters [7]_.

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
    """Cohen's κ between two raters over the same units [7]_.

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


# --------------------------------------------------------------------------- order swaps


@dataclass(frozen=True)
class SwapConsistency:
    """Order-swap consistency of a judge [6]_.

    Attributes
    ----------
    consistency : float
        Fraction of pairs whose verdict names the same winner (or a tie both times) when
        the two sides are swapped.
    n_pairs : int
    first_position_rate : float
        Among inconsistent pairs, the fraction where the judge chose whichever response
        was shown first both times (position bias towards the left/first slot).
    second_position_rate : float
        Same, for the second slot.
    """

    consistency: float
    n_pairs: int
    first_position_rate: float
    second_position_rate: float


def order_swap_consistency(
    original: Sequence[int] | np.ndarray, swapped: Sequence[int] | np.ndarray
) -> SwapConsistency:
    """Fraction of pairs whose verdict survives swapping left and right.

    Parameters
    ----------
    original : array_like of int
        Outcomes (``LEFT``/``RIGHT``/``TIE``) with the pair shown as (a, b).
    swapped : array_like of int
        Outcomes for the same pairs shown as (b, a). Consistent means
        ``swapped == -original``.

    Examples
    --------
    >>> r = order_swap_consistency([1, 1, 0, -1], [-1, 1, 0, 1])
    >>> r.consistency, r.first_position_rate
    (0.75, 1.0)
    """
    a = np.asarray(original, dtype=np.int64).reshape(-1)
    b = np.asarray(swapped, dtype=np.int64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError("original and swapped must have the same length")
    if a.size == 0:
        raise ValueError("no pairs")
    for arr in (a, b):
        if not np.isin(arr, (LEFT, RIGHT, TIE)).all():
            raise ValueError("outcomes must be 1 (left), -1 (right) or 0 (tie)")
    consistent = b == -a
    bad = ~consistent
    n_bad = int(bad.sum())
    first = int(np.sum(bad & (a == LEFT) & (b == LEFT)))
    second = int(np.sum(bad & (a == RIGHT) & (b == RIGHT)))
    return SwapConsistency(
        consistency=float(consistent.mean()),
        n_pairs=int(a.size),
        first_position_rate=first / n_bad if n_bad else 0.0,
        second_position_rate=second / n_bad if n_bad else 0.0,
    )


def swapped_pairs(comparisons: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """Match comparisons judged in both orders by the same rater on the same prompt.

    Each (rater, prompt, a, b) seen as ``a`` vs ``b`` is paired with the first unused
    ``b`` vs ``a`` by that rater on that prompt. Missing raters/prompts count as one group.

    Returns
    -------
    original, swapped : ndarray of int
        Outcomes ready for :func:`order_swap_consistency`.
    """
    n = len(comparisons)
    raters = comparisons.raters if comparisons.raters is not None else np.zeros(n, dtype=object)
    prompts = comparisons.prompts if comparisons.prompts is not None else np.zeros(n, dtype=object)
    pending: dict[tuple[Any, Any, int, int], list[int]] = {}
    orig: list[int] = []
    swap: list[int] = []
    for k in range(n):
        a, b = int(comparisons.left[k]), int(comparisons.right[k])
        key_rev = (raters[k], prompts[k], b, a)
        waiting = pending.get(key_rev)
        if waiting:
            j = waiting.pop(0)
            orig.append(int(comparisons.outcome[j]))
            swap.append(int(comparisons.outcome[k]))
        else:
            pending.setdefault((raters[k], prompts[k], a, b), []).append(k)
    return np.asarray(orig, dtype=np.int64), np.asarray(swap, dtype=np.int64)


# --------------------------------------------------------------------------- all at once


def _stat(stat: str, val: float | None, n: int | str, note: str = "") -> dict[str, Any]:
    return {"statistic": stat, "value": val, "n": n, "note": note}


def _alpha_rows(labels: RatingLabels, level: str) -> list[dict[str, Any]]:
    """Krippendorff's α at every level the labels allow (nominal only for text)."""
    table, units = labels.table, labels.units
    levels = ["nominal"] + (["ordinal", "interval", "ratio"] if labels.numeric else [])
    pairable = sum(1 for i in range(len(units))
                   if sum(table[j][i] is not None for j in range(len(labels.raters))) >= 2)
    few = (f"degenerate: only {pairable} unit(s) rated twice or more"
           if pairable < MIN_ALPHA_UNITS else "")
    rows = []
    for lv in levels:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the note column says it
                a = krippendorff_alpha(table, lv)  # type: ignore[arg-type]
        except ValueError as exc:
            rows.append(_stat(f"krippendorff_alpha_{lv}", None, len(units), str(exc)))
            continue
        note = "; ".join(x for x in ("selected" if lv == level else "", few) if x)
        rows.append(_stat(f"krippendorff_alpha_{lv}", a, len(units), note))
    return rows


def _cohen_rows(labels: RatingLabels) -> list[dict[str, Any]]:
    """Cohen's κ (and, for numbers, its weighted forms) when there are two raters."""
    if len(labels.raters) != 2:
        return []
    first, second = labels.table
    rows = []
    try:
        kappa = cohens_kappa(first, second)
        rows.append(_stat("cohens_kappa", kappa.kappa, kappa.n, "two raters, unweighted"))
        if labels.numeric:
            for wt in ("linear", "quadratic"):
                kw = cohens_kappa(first, second, weights=wt)
                rows.append(_stat(f"cohens_kappa_{wt}", kw.kappa, kw.n, "two raters, weighted"))
    except ValueError as exc:
        rows.append(_stat("cohens_kappa", None, 0, str(exc)))
    return rows


def _fleiss_rows(labels: RatingLabels) -> list[dict[str, Any]]:
    """Fleiss' κ over the units that have the largest number of ratings."""
    table = labels.table
    by_unit = [[table[j][i] for j in range(len(labels.raters))] for i in range(len(labels.units))]
    counts, cats = category_counts(by_unit)
    per_unit = counts.sum(axis=1)
    keep = per_unit == per_unit.max()
    if per_unit.max() >= 2 and keep.sum() >= 1:
        return [_stat("fleiss_kappa", fleiss_kappa(counts[keep]), int(keep.sum()),
                      f"{len(cats)} categories; units with all {int(per_unit.max())} ratings")]
    return []


def _complete_rater_rows(labels: RatingLabels, ties_correction: bool) -> list[dict[str, Any]]:
    """ICC, Kendall's W and Friedman over the raters that rated every unit (numbers)."""
    n_units = len(labels.units)
    mat = np.array([[np.nan if v is None else float(v) for v in row] for row in labels.table])
    full_raters = ~np.isnan(mat).any(axis=1)
    if not (full_raters.sum() >= 2 and n_units >= 2):
        return []
    rows = []
    # ICC: targets x raters over the raters that rated every unit
    r = icc(mat[full_raters].T)
    for name, val in r.as_dict().items():
        lo, hi = r.ci.get(name, (float("nan"), float("nan")))
        rows.append(_stat(name, val, n_units,
                          f"{int(full_raters.sum())} complete raters; 95% CI [{lo:.3g}, {hi:.3g}]"))
    # Kendall's W / Friedman: raters (blocks) ranking the units
    kw = kendalls_w(mat[full_raters], correction=ties_correction)
    rows.append(_stat("kendalls_w", kw.w, int(full_raters.sum()),
                      f"p = {kw.pvalue:.4g}; " + ("ties corrected" if ties_correction
                                                   else "no ties correction")))
    if n_units >= 3:
        fr = friedman(mat[full_raters])
        rows.append(_stat("friedman_chi2", fr.statistic, fr.n_blocks, f"p = {fr.pvalue:.4g}"))
        rows.append(_stat("friedman_p", fr.pvalue, fr.n_blocks, ""))
    return rows


def agreement_statistics(
    labels: RatingLabels,
    *,
    level: Level | MeasurementLevel = "interval",
    ties_correction: bool = True,
) -> list[dict[str, Any]]:
    """Every agreement statistic the ratings allow, as ``statistic, value, n, note`` rows.

    Krippendorff's α at each level (text labels: nominal only; ``level`` is marked
    ``selected``), Cohen's κ for two raters (weighted too for numbers), Fleiss' κ, and —
    for numbers, over the raters that rated every unit — the ICCs with 95% intervals,
    Kendall's W (``ties_correction``) and Friedman's test.

    Parameters
    ----------
    labels : RatingLabels
        From :func:`rating_labels`.
    level : {"nominal", "ordinal", "interval", "ratio"}
        The level marked ``selected``; text labels need ``"nominal"``.
    ties_correction : bool
        Passed to :func:`kendalls_w`.

    Examples
    --------
    >>> labels = rating_labels(["u1", "u2", "u1", "u2"], ["a", "a", "b", "b"],
    ...                        ["x", "y", "x", "y"])
    >>> [(r["statistic"], r["value"]) for r in agreement_statistics(labels, level="nominal")]
    [('krippendorff_alpha_nominal', 1.0), ('cohens_kappa', 1.0), ('fleiss_kappa', 1.0)]
    """
    if not labels.numeric and level != "nominal":
        raise ValueError(f"non-numeric labels need level='nominal', not {level!r}")
    rows = _alpha_rows(labels, level) + _cohen_rows(labels) + _fleiss_rows(labels)
    if labels.numeric:
        rows += _complete_rater_rows(labels, ties_correction)
    return rows
