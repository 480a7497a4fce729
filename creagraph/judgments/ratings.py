"""Long ratings as matrices and labels, missing values, and the shared layout checks
(layouts: :mod:`creagraph.judgments.agreement`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from creagraph.judgments.comparisons import RecordError

__all__ = [
    "MIN_ALPHA_UNITS",
    "DegenerateDesignWarning",
    "is_missing",
    "ratings_matrix",
    "NA_TOKENS",
    "RatingLabels",
    "rating_labels",
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
