"""Active sampling: which pairs to compare next."""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- active sampling


__all__ = [
    "next_pairs",
]

def next_pairs(
    theta: np.ndarray,
    covariance: np.ndarray,
    pair_counts: np.ndarray,
    k: int = 1,
    *,
    warm_start: int = 1,
) -> list[tuple[int, int]]:
    """Choose the next ``k`` pairs to compare (active sampling).

    Warm start first: while some pair has fewer than ``warm_start`` comparisons, the
    least-compared pairs are returned (lowest index first among equals). After that,
    pairs are scored by ``Var(theta_i - theta_j) * p_ij * (1 - p_ij)`` — the current
    uncertainty of their difference times the Fisher information one more comparison
    would bring — and the ``k`` highest are returned.

    Parameters
    ----------
    theta : ndarray, shape (n_items,)
    covariance : ndarray, shape (n_items, n_items)
        E.g. :attr:`BTResult.covariance` or :func:`bt_covariance`.
    pair_counts : ndarray, shape (n_items, n_items)
        Symmetric number of comparisons made so far per pair.
    k : int
    warm_start : int
        Minimum comparisons per pair before uncertainty-driven selection.

    Returns
    -------
    list of (i, j) with ``i < j``.

    Examples
    --------
    >>> next_pairs(np.zeros(3), np.eye(3), np.zeros((3, 3)), k=2)
    [(0, 1), (0, 2)]
    """
    theta = np.asarray(theta, float)
    cov = np.asarray(covariance, float)
    counts = np.asarray(pair_counts, float)
    n = theta.size
    if cov.shape != (n, n) or counts.shape != (n, n):
        raise ValueError("covariance and pair_counts must be (n_items, n_items)")
    if k < 1:
        raise ValueError("k must be >= 1")
    iu, ju = np.triu_indices(n, 1)
    c = counts[iu, ju]
    chosen: list[tuple[int, int]] = []
    cold = np.flatnonzero(c < warm_start)
    if cold.size:
        order = cold[np.argsort(c[cold], kind="stable")]
        chosen = [(int(iu[q]), int(ju[q])) for q in order[:k]]
        if len(chosen) == k:
            return chosen
    var = cov[iu, iu] + cov[ju, ju] - 2 * cov[iu, ju]
    p = 1.0 / (1.0 + np.exp(-(theta[iu] - theta[ju])))
    score = var * p * (1 - p)
    taken = {pair for pair in chosen}
    for q in np.argsort(-score, kind="stable"):
        pair = (int(iu[q]), int(ju[q]))
        if pair not in taken:
            chosen.append(pair)
            taken.add(pair)
        if len(chosen) == k:
            break
    return chosen
