"""Fleiss' κ from category counts.

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
