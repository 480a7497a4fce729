"""ClichéScore of a cluster and its three factors (SPEC §4.5).

Definition
----------
For a cluster C in the graph of one task's (reference) population with model set M:

* coverage ``κ(C) = √(κ_M(C) · κ_R(C))``, the geometric mean of the *model share*
  ``κ_M(C) = |{m ∈ M : some response of m has an atom in C}| / |M|`` (distinct models, not
  samples) and the *response share* ``κ_R(C) = |{r ∈ R : r has an atom in C}| / |R|`` over
  the population's responses R (issue 27: the model share alone saturates at 1 for every
  idea each model has once, so it cannot tell a pattern of every answer from one of a
  few answers per model); κ is increasing in each share, 1 only when every response
  hits C;
* centrality ``π(C) = P(C) / max_{C'} P(C')`` where ``P(C)`` is the PageRank mass (or
  weighted-degree share) of C's nodes in the whole task graph, so the most central cluster
  of the task has 1;
* convergence ``v(C)`` = mean cosine similarity over all pairs of distinct atom
  occurrences in C (0 for a single occurrence; negative means clipped to 0).

The ClichéScore is a smoothed weighted geometric mean

    ``S(C) = (ε + κ)^{w_κ} · (ε + π)^{w_π} · (ε + v)^{w_v} − ε``

with weights ``w = (0.5, 0.25, 0.25)`` (summing to one) and ``ε = 0.05``. It is 0 when all
factors are 0, 1 when all are 1, and strictly increasing in each factor whatever the
others are (every base is positive), unlike a plain product which is flat once one factor
is zero. Coverage weighs most: a cliché is, first of all, common across models.

References
----------
SPEC §4.5. PageRank: Brin & Page (1998), "The anatomy of a large-scale hypertextual Web
search engine".

Examples
--------
>>> round(cliche_score(1.0, 1.0, 1.0), 6), round(cliche_score(0.0, 0.0, 0.0), 6)
(1.0, 0.0)
>>> cliche_score(0.5, 0.2, 0.7) < cliche_score(0.6, 0.2, 0.7)
True
>>> common, few = coverage_share(1.0, 0.9), coverage_share(1.0, 0.1)
>>> cliche_score(common, 0.5, 0.5) > cliche_score(few, 0.5, 0.5)
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from creagraph.tig.config import DEFAULT_EPSILON, DEFAULT_WEIGHTS

__all__ = [
    "DEFAULT_WEIGHTS",
    "DEFAULT_EPSILON",
    "cliche_score",
    "model_coverage",
    "response_coverage",
    "coverage_share",
    "centrality_share",
    "internal_convergence",
]



def cliche_score(
    coverage: float | np.ndarray,
    centrality: float | np.ndarray,
    convergence: float | np.ndarray,
    *,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    epsilon: float = DEFAULT_EPSILON,
) -> float | np.ndarray:
    """``S = (ε+κ)^{w_κ} (ε+π)^{w_π} (ε+v)^{w_v} − ε`` (see the module docstring).

    Parameters
    ----------
    coverage, centrality, convergence : float or ndarray, each in [0, 1]
        The three factors (broadcast together).
    weights : three positive floats
        Exponents; normalised to sum to one.
    epsilon : float
        Smoothing constant, > 0.

    Returns
    -------
    float or ndarray in [0, 1]

    Raises
    ------
    ValueError
        When a factor lies outside [0, 1], a weight is not positive or ε ≤ 0.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (3,) or np.any(w <= 0):
        raise ValueError(f"weights must be three positive numbers, got {weights!r}")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be positive, got {epsilon!r}")
    w = w / w.sum()
    factors = [np.asarray(x, dtype=np.float64) for x in (coverage, centrality, convergence)]
    for name, value in zip(("coverage", "centrality", "convergence"), factors, strict=True):
        if np.any(value < 0) or np.any(value > 1) or np.any(np.isnan(value)):
            raise ValueError(f"{name} must lie in [0, 1]")
    score = np.ones(np.broadcast(*factors).shape)
    for weight, value in zip(w, factors, strict=True):
        score = score * (epsilon + value) ** weight
    score = np.clip(score - epsilon, 0.0, 1.0)
    if score.ndim == 0:
        return float(score)
    return score


def model_coverage(hit_models: Sequence[int] | np.ndarray, n_models: int) -> np.ndarray:
    """Share of the population's models hitting each cluster.

    Parameters
    ----------
    hit_models : array of int
        Number of distinct models whose responses have an atom in each cluster.
    n_models : int
        Number of models in the population.

    Examples
    --------
    >>> model_coverage([3, 6], 6).tolist()
    [0.5, 1.0]
    """
    if n_models <= 0:
        raise ValueError("a population needs at least one model")
    hits = np.asarray(hit_models, dtype=np.float64)
    if np.any(hits < 0) or np.any(hits > n_models):
        raise ValueError("hit counts must lie in [0, n_models]")
    return hits / n_models


def response_coverage(hit_responses: Sequence[int] | np.ndarray,
                      n_responses: int) -> np.ndarray:
    """Share of the population's responses with an atom in each cluster (κ_R).

    Examples
    --------
    >>> response_coverage([3, 30], 30).tolist()
    [0.1, 1.0]
    """
    if n_responses <= 0:
        raise ValueError("a population needs at least one response")
    hits = np.asarray(hit_responses, dtype=np.float64)
    if np.any(hits < 0) or np.any(hits > n_responses):
        raise ValueError("hit counts must lie in [0, n_responses]")
    return hits / n_responses


def coverage_share(model_share: float | np.ndarray,
                   response_share: float | np.ndarray) -> np.ndarray:
    """The coverage factor ``κ = √(κ_M · κ_R)`` of the ClichéScore (see the module
    docstring): increasing in each share, in [0, 1].

    Examples
    --------
    >>> coverage_share([1.0, 1.0, 0.5], [1.0, 0.04, 0.04]).round(3).tolist()
    [1.0, 0.2, 0.141]
    """
    models = np.asarray(model_share, dtype=np.float64)
    responses = np.asarray(response_share, dtype=np.float64)
    for name, value in (("model share", models), ("response share", responses)):
        if np.any(value < 0) or np.any(value > 1) or np.any(np.isnan(value)):
            raise ValueError(f"{name} must lie in [0, 1]")
    return np.sqrt(models * responses)


def centrality_share(node_scores: np.ndarray, cluster_of_node: np.ndarray,
                     n_clusters: int) -> np.ndarray:
    """Cluster mass of a node centrality, divided by the largest cluster mass.

    Examples
    --------
    >>> centrality_share(np.array([0.5, 0.3, 0.2]), np.array([0, 1, 1]), 2).tolist()
    [1.0, 1.0]
    """
    mass = np.bincount(cluster_of_node, weights=np.asarray(node_scores, dtype=np.float64),
                       minlength=n_clusters)
    top = mass.max() if mass.size else 0.0
    if top <= 0:
        return np.zeros(n_clusters)
    return np.clip(mass / top, 0.0, 1.0)


def internal_convergence(vectors: np.ndarray, counts: np.ndarray,
                         cluster_of_row: np.ndarray, n_clusters: int) -> np.ndarray:
    """Mean pairwise cosine similarity of the atom occurrences in each cluster.

    Each row of ``vectors`` is a unit-norm form vector occurring ``counts`` times; with
    ``s = Σ n_f x_f`` and ``N = Σ n_f`` the mean over the ``N(N−1)`` ordered pairs of
    distinct occurrences is ``(‖s‖² − N) / (N(N−1))``. Clusters with ``N < 2`` get 0;
    the result is clipped to [0, 1].

    Examples
    --------
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> internal_convergence(x, np.array([2, 1]), np.array([0, 0]), 1).round(4).tolist()
    [0.3333]
    """
    vectors = np.asarray(vectors, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    cluster_of_row = np.asarray(cluster_of_row, dtype=np.int64)
    sums = np.zeros((n_clusters, vectors.shape[1] if vectors.ndim == 2 else 0))
    if len(counts):
        order = np.argsort(cluster_of_row, kind="stable")
        sorted_clusters = cluster_of_row[order]
        starts = np.flatnonzero(np.r_[True, sorted_clusters[1:] != sorted_clusters[:-1]])
        sums[sorted_clusters[starts]] = np.add.reduceat(
            vectors[order] * counts[order, None], starts, axis=0)
    totals = np.bincount(cluster_of_row, weights=counts, minlength=n_clusters)
    squared = np.einsum("ij,ij->i", sums, sums)
    result = np.zeros(n_clusters)
    many = totals >= 2
    result[many] = (squared[many] - totals[many]) / (totals[many] * (totals[many] - 1))
    return np.clip(result, 0.0, 1.0)
