"""Krippendorff's α [1]_ (via the `krippendorff` package) over reliability data
(layouts: :mod:`creagraph.judgments.agreement`).

References
----------
.. [1] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
   https://repository.upenn.edu/asc_papers/43
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import krippendorff
import numpy as np

from creagraph.judgments.choices import MeasurementLevel
from creagraph.judgments.ratings import (
    MIN_ALPHA_UNITS,
    DegenerateDesignWarning,
    Level,
    _rows,
    is_missing,
)

__all__ = [
    "krippendorff_alpha",
]


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
    """Krippendorff's α [1]_ (computed by the ``krippendorff`` package).

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
