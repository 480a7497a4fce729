"""Fleiss' κ [1]_ from category counts, and those counts from a subjects × raters
label table (layouts: :mod:`creagraph.judgments.agreement`).

References
----------
.. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
   *Psychological Bulletin* 76(5), 378–382.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from creagraph.judgments.ratings import _rows, is_missing

__all__ = [
    "category_counts",
    "fleiss_kappa",
]


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
    """Fleiss' κ for many raters and nominal categories [1]_.

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
