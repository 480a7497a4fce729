"""CREATE formulas, each in one place: specificity, path quality, path strings, distance
transform, creative utility and distinctiveness (SPEC §3.4–3.7).

Used by CREATE scoring (:mod:`creagraph.scoring`) and by the oracle ceiling of query
generation (:mod:`creagraph.querygen`), so both measure paths identically.

References
----------
.. [1] Wadhwa et al., "CREATE: Testing LLMs for Associative Creativity",
   arXiv:2603.09970 (2026). Appendix D (class-size mapping), §3 (utility).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from creagraph.core.choices import UTILITY_MODES, UtilityMode, utility_mode

if TYPE_CHECKING:
    from creagraph.core.graph import KnowledgeGraph

__all__ = [
    "triple_class_size",
    "specificity",
    "path_strength",
    "path_quality",
    "quality_from_strength",
    "path_string",
    "raw_distance",
    "transform_distance",
    "distance_matrix",
    "greedy_order",
    "discounts",
    "creative_utility",
    "utility_curve",
    "mean_pairwise_distance",
    "UtilityMode",
    "UTILITY_MODES",
    "utility_mode",
    "PathSetDistances",
    "path_set_distances",
    "pairwise_distance_means",
    "greedy_order_from_vectors",
    "utilities_from_order",
    "empty_set_utility",
    "set_utilities",
]

Triple = Sequence[str]


def triple_class_size(kg: KnowledgeGraph, subject: str, prop: str, obj: str) -> int:
    """``max(|C_A|, |C_B|)`` for a grounded triple (SPEC §3.4), counted exactly in ``kg``.

    ``C_A = {x : (x, prop, obj)}`` and ``C_B = {y : (subject, prop, y)}``; ``kg`` is any
    :class:`creagraph.core.graph.KnowledgeGraph`.
    """
    return max(kg.count_subjects(prop, obj), kg.count_objects(subject, prop))


def specificity(class_size: int) -> int:
    """Map a class size to the published 1–5 specificity σ (SPEC §3.4, [1] App. D).

    size ≤ 10 → 5; 10 < size < 100 → 4; 100 ≤ size < 500 → 3; 500 ≤ size < 5000 → 2;
    otherwise 1.

    Examples
    --------
    >>> [specificity(n) for n in (1, 10, 11, 99, 100, 499, 500, 4999, 5000)]
    [5, 5, 4, 4, 3, 3, 2, 2, 1]
    """
    if class_size <= 10:
        return 5
    if class_size < 100:
        return 4
    if class_size < 500:
        return 3
    if class_size < 5000:
        return 2
    return 1


def path_strength(triple_specificities: Sequence[float]) -> float:
    """Path strength: the minimum σ over all triples but the final one (SPEC §3.4).

    The final triple is the target condition the query imposed, so it is excluded; a
    one-triple path uses its only triple; an empty path has strength 0 (as the
    published data do).

    Examples
    --------
    >>> path_strength([3, 5, 1])
    3
    >>> path_strength([4])
    4
    >>> path_strength([])
    0
    """
    if len(triple_specificities) == 0:
        return 0
    if len(triple_specificities) == 1:
        return triple_specificities[0]
    return min(triple_specificities[:-1])


def quality_from_strength(strength: float | None, factual: bool) -> float:
    """``f(u) = 1[u is factual] · strength`` (SPEC §3.4), 0 when the strength is unknown.

    The one place a path's quality is formed: :func:`path_quality` from the σ of its
    triples, the scorer from the strength its reading of unknown σ gives (``None`` when
    a σ that counts is unknown, see :mod:`creagraph.scoring.pipeline`).

    Examples
    --------
    >>> quality_from_strength(3, True), quality_from_strength(3, False)
    (3.0, 0.0)
    >>> quality_from_strength(None, True)
    0.0
    """
    return float(strength) if factual and strength is not None else 0.0


def path_quality(triple_specificities: Sequence[float], factual: bool) -> float:
    """``f(u) = 1[u is factual] · path_strength(u)`` (SPEC §3.4).

    Examples
    --------
    >>> path_quality([3, 5, 1], True), path_quality([3, 5, 1], False)
    (3.0, 0.0)
    """
    return quality_from_strength(path_strength(triple_specificities), factual)


def path_string(path: Sequence[Triple]) -> str:
    """The string a path is embedded as, exactly as the published code builds it (SPEC §3.5).

    Every part is lower-cased; with more than one triple the final (imposed) triple is
    dropped; the first triple is written without its head as ``" [r] t"``, later ones as
    ``"h [r] t"``; triples are joined with ``" | "``.

    Examples
    --------
    >>> path_string([("A", "Born In", "Paris"), ("Paris", "capital of", "France")])
    ' [born in] paris'
    >>> path_string([("A", "r1", "B"), ("B", "r2", "C"), ("C", "r3", "D")])
    ' [r1] b | b [r2] c'
    """
    triples = list(path)
    if len(triples) > 1:
        triples = triples[:-1]
    parts = []
    for i, triple in enumerate(triples):
        h, r, t = (str(x).lower() for x in triple)
        parts.append(f" [{r}] {t}" if i == 0 else f"{h} [{r}] {t}")
    return " | ".join(parts)


def raw_distance(
    similarity: float | np.ndarray, *, out: np.ndarray | None = None
) -> float | np.ndarray:
    """Raw distance ``x = 1 − cos`` from the cosine similarity of L2-normalised embeddings,
    clipped to its range ``[0, 2]`` (rounding can leave a cosine just outside ``[−1, 1]``)
    (SPEC §3.5). The one place raw distance is computed; :func:`transform_distance` maps it
    to g.

    A scalar (a Python or NumPy number) gives a Python float computed in float64; an
    array gives a float array of the same shape and dtype as ``1 − similarity`` (float64
    for float64 input), written into ``out`` when given (``out=similarity`` reuses a Gram
    block in place).

    Examples
    --------
    >>> raw_distance(0.8), raw_distance(1.0000001), raw_distance(-1.0)
    (0.19999999999999996, 0.0, 2.0)
    >>> raw_distance(np.array([[1.0, 0.25], [0.25, 1.0]])).tolist()
    [[0.0, 0.75], [0.75, 0.0]]
    """
    if out is None and np.ndim(similarity) == 0:
        return min(2.0, max(0.0, 1.0 - float(similarity)))
    result = np.subtract(1.0, similarity, out=out)
    return np.clip(result, 0.0, 2.0, out=result)


def transform_distance(x: float | np.ndarray, *, mode: UtilityMode = "paper") -> float | np.ndarray:
    """Saturating transform of raw distance ``x = 1 − cos`` (SPEC §3.5).

    ``g(x) = ½·(1 − cos(π·(x/0.7)²))`` for ``x ≤ 0.7`` and 1 above (``paper`` mode).
    In ``published`` mode only ``(0.7, 1]`` maps to 1: a raw distance above 1 (negative
    cosine, which happens on real answers) goes through the cosine expression, as in the
    published code (SPEC §3.5, §3.6 quirk d). Negative ``x`` (rounding) counts as 0.

    Examples
    --------
    >>> round(transform_distance(0.13), 4), round(transform_distance(0.40), 3)
    (0.0029, 0.241)
    >>> transform_distance(0.7), transform_distance(0.9)
    (1.0, 1.0)
    >>> transform_distance(1.0117), round(transform_distance(1.0117, mode="published"), 4)
    (1.0, 0.0194)
    """
    utility_mode(mode)  # a ValueError naming the choices
    arr = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    cosine = 0.5 * (1.0 - np.cos(math.pi * (arr / 0.7) ** 2))
    saturated = arr > 0.7 if mode == "paper" else (arr > 0.7) & (arr <= 1.0)
    out = np.where(saturated, 1.0, cosine)
    return float(out) if np.ndim(out) == 0 else out


def distance_matrix(
    vectors: np.ndarray, mode: UtilityMode = "paper", *, transformed: bool = True
) -> np.ndarray:
    """Pairwise (transformed) distances between L2-normalised embeddings.

    In ``published`` mode the diagonal is 1 (the published code saturates it) and raw
    distances above 1 go through the cosine expression (:func:`transform_distance`); in
    ``paper`` mode the diagonal is 0.
    """
    v = np.asarray(vectors, dtype=np.float64)
    raw = raw_distance(v @ v.T)
    d = transform_distance(raw, mode=mode) if transformed else raw
    d = np.array(d, dtype=np.float64, copy=True)
    np.fill_diagonal(d, 1.0 if mode == "published" else 0.0)
    return d


def greedy_order(
    quality: Sequence[float] | np.ndarray, distances: np.ndarray
) -> tuple[list[int], list[float]]:
    """Greedy ordering for creative utility, O(n²) (SPEC §3.6).

    First the highest-quality path, then repeatedly the path maximising
    ``f(u) · min_{chosen} d(u, ·)``; ties go to the lowest index. Each candidate keeps
    its running minimum distance, so each step is O(n).

    Returns
    -------
    order : list of int
        Indices in selection order.
    min_distances : list of float
        For each selected path, its min distance to those chosen before (1 for the first).

    Examples
    --------
    >>> d = np.array([[0, .2, 1], [.2, 0, .9], [1, .9, 0]])
    >>> greedy_order([3, 3, 2], d)
    ([0, 2, 1], [1.0, 1.0, 0.2])
    """
    q = np.asarray(quality, dtype=np.float64)
    n = len(q)
    if n == 0:
        return [], []
    d = np.asarray(distances, dtype=np.float64)
    if d.shape != (n, n):
        raise ValueError(f"distances must be {n}x{n}, got {d.shape}")
    remaining = np.ones(n, dtype=bool)
    running = np.ones(n, dtype=np.float64)
    first = int(np.argmax(q))
    order, mins = [first], [1.0]
    remaining[first] = False
    np.minimum(running, d[first], out=running)
    for _ in range(n - 1):
        gains = np.where(remaining, q * running, -np.inf)
        best = int(np.argmax(gains))
        order.append(best)
        mins.append(float(running[best]))
        remaining[best] = False
        np.minimum(running, d[best], out=running)
    return order, mins


def discounts(n: int, gamma: float, mode: UtilityMode = "paper") -> np.ndarray:
    """Patience weights: ``γ^(i−1)`` (paper) or ``1, 1, γ, γ², …`` (published code).

    Examples
    --------
    >>> discounts(4, 0.5).tolist(), discounts(4, 0.5, "published").tolist()
    ([1.0, 0.5, 0.25, 0.125], [1.0, 1.0, 0.5, 0.25])
    """
    utility_mode(mode)  # a ValueError naming the choices
    i = np.arange(n, dtype=np.float64)
    if mode == "published":
        i = np.maximum(i - 1, 0)
    return np.power(float(gamma), i)


def empty_set_utility(mode: UtilityMode = "paper") -> float:
    """Creative utility of an empty kept set (SPEC §3.6): 0 in ``paper`` mode, 1 in
    ``published`` mode (the published code's behaviour).

    Examples
    --------
    >>> empty_set_utility("paper"), empty_set_utility("published")
    (0.0, 1.0)
    """
    return 1.0 if mode == "published" else 0.0


def creative_utility(
    quality: Sequence[float],
    distances: np.ndarray,
    gamma: float,
    mode: UtilityMode = "paper",
) -> float:
    """Creative utility ``s(U)`` of a path set at patience ``γ`` (SPEC §3.6), from its
    distance matrix: :func:`utility_curve` at one γ.

    ``s(U) = Σ_i w_i · f(u_τ(i)) · min_{j<i} d(u_τ(i), u_τ(j))`` with the greedy order τ,
    the first item's distance 1, and weights from :func:`discounts`
    (:func:`utilities_from_order`, the one place the sum is formed). An empty set scores
    :func:`empty_set_utility`.

    Examples
    --------
    >>> d = np.array([[0.0, 0.5], [0.5, 0.0]])
    >>> creative_utility([4, 2], d, 0.5)
    4.5
    >>> creative_utility([4, 2], d, 0.5, "published")
    5.0
    >>> empty = np.zeros((0, 0))
    >>> creative_utility([], empty, 0.9), creative_utility([], empty, 0.9, "published")
    (0.0, 1.0)
    """
    return utility_curve(quality, distances, [gamma], mode)[0]


def utility_curve(
    quality: Sequence[float],
    distances: np.ndarray,
    gammas: Sequence[float],
    mode: UtilityMode = "paper",
) -> list[float]:
    """:func:`creative_utility` at each γ from a distance matrix, sharing one greedy
    ordering (it does not depend on γ). :func:`set_utilities` computes the same from the
    paths' embeddings without the matrix."""
    order, mins = greedy_order(quality, distances) if len(quality) else ([], [])
    return utilities_from_order(quality, order, mins, gammas, mode)


def mean_pairwise_distance(distances: np.ndarray) -> float:
    """Mean distance over unordered pairs of distinct paths (NaN for fewer than two)."""
    d = np.asarray(distances, dtype=np.float64)
    n = d.shape[0]
    if n < 2:
        return float("nan")
    iu = np.triu_indices(n, k=1)
    return float(d[iu].mean())


# --------------------------------------------------------------------------- lean distance stage
#
# One path set's distances, in memory O(n·d) for n paths of dimension d: the Gram matrix is
# computed block by block (at most ``block_elements`` distances at a time), raw and transformed
# distances come from the same block, and the greedy order keeps one running minimum per
# path, fetching the rows of the paths it picks in batches. Below ``block_elements`` the
# whole matrix is one block and the greedy runs on it directly (:func:`greedy_order`).

#: Distances held at once (float64): 2**21 is 16 MB per block.
BLOCK_ELEMENTS = 1 << 21
#: Rows fetched at once by the blockwise greedy order (the picked path and the paths most
#: likely to be picked next).
GREEDY_BATCH_ROWS = 64


@dataclass(frozen=True)
class PathSetDistances:
    """The distance-derived quantities of one path set (SPEC §3.5–3.6).

    ``order``/``min_distances`` are :func:`greedy_order`'s results; ``mean_distance`` and
    ``mean_raw_distance`` the means of g and of the raw ``1 − cos`` over unordered pairs
    of distinct paths (NaN for fewer than two paths).
    """

    order: list[int]
    min_distances: list[float]
    mean_distance: float
    mean_raw_distance: float


def _transform(raw: np.ndarray, mode: UtilityMode) -> np.ndarray:
    """g applied to a block of raw distances: always through :func:`transform_distance`
    (the one place the lean stage applies g)."""
    return np.asarray(transform_distance(raw, mode=mode), dtype=np.float64)


def _distance_block(
    vectors: np.ndarray,
    rows: slice | np.ndarray,
    mode: UtilityMode,
    columns: slice = slice(None),
) -> tuple[np.ndarray, np.ndarray]:
    """Raw (``clip(1 − cos, 0, 2)``, computed in place in the Gram block) and transformed
    distances from ``vectors[rows]`` to ``vectors[columns]``, as :func:`distance_matrix`
    computes them (its diagonal fill aside)."""
    gram = vectors[rows] @ vectors[columns].T
    block = cast(np.ndarray, raw_distance(gram, out=gram))  # an array in, an array out
    return block, _transform(block, mode)


def _off_diagonal_sum(matrix: np.ndarray) -> float:
    """Sum of a square matrix without its diagonal entries (read through a strided view,
    no index arrays)."""
    n = len(matrix)
    diagonal = matrix.reshape(-1)[:: n + 1]
    return float(matrix.sum() - diagonal.sum())


def _pair_sum(block: np.ndarray, k: int) -> float:
    """Sum over unordered pairs in a row block against the columns from its own first row
    on: half the off-diagonal sum of its leading k×k square, plus the rest."""
    square = block[:, :k]
    return (float(square.sum()) - float(np.trace(square))) / 2 + float(block[:, k:].sum())


def pairwise_distance_means(
    vectors: np.ndarray, mode: UtilityMode = "paper", *, block_elements: int = BLOCK_ELEMENTS
) -> tuple[float, float]:
    """Mean transformed and mean raw distance over unordered pairs of distinct paths.

    Computed block by block from the embeddings (memory O(n·d + block_elements)); equal
    to :func:`mean_pairwise_distance` of :func:`distance_matrix` (transformed and raw) to
    rounding. NaN for fewer than two vectors.

    Examples
    --------
    >>> v = np.eye(3)
    >>> pairwise_distance_means(v)
    (1.0, 1.0)
    """
    v = np.ascontiguousarray(vectors, dtype=np.float64)
    n = len(v)
    if n < 2:
        return float("nan"), float("nan")
    rows = max(1, min(n, block_elements // n))
    total_d = total_raw = 0.0
    for start in range(0, n, rows):
        # rows start…stop against columns start…n: each unordered pair once (the square
        # part is symmetric: half of its off-diagonal sum), half the Gram work
        k = min(rows, n - start)
        raw, d = _distance_block(v, slice(start, start + k), mode, slice(start, None))
        total_raw += _pair_sum(raw, k)
        total_d += _pair_sum(d, k)
    pairs = n * (n - 1) / 2
    return total_d / pairs, total_raw / pairs


def greedy_order_from_vectors(
    quality: Sequence[float] | np.ndarray,
    vectors: np.ndarray,
    mode: UtilityMode = "paper",
    *,
    batch_rows: int = GREEDY_BATCH_ROWS,
) -> tuple[list[int], list[float]]:
    """:func:`greedy_order` computed from the embeddings, never holding the n×n matrix.

    Same rule, ties and results as ``greedy_order(quality, distance_matrix(vectors,
    mode))`` (to rounding, ~1e-15). Each path keeps its running minimum distance to the
    paths chosen so far; the distance row of each chosen path is computed from the
    embeddings, in batches of ``batch_rows`` rows: the path just chosen and the paths that
    currently lead (highest ``f(u) · running minimum``, ties by index), which are the
    likeliest next choices. Memory O(n·d + batch_rows·n).

    Examples
    --------
    >>> v = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    >>> greedy_order_from_vectors([3, 3, 2], v)[0]
    [0, 2, 1]
    """
    q = np.asarray(quality, dtype=np.float64)
    n = len(q)
    if n == 0:
        return [], []
    v = np.ascontiguousarray(vectors, dtype=np.float64)
    if len(v) != n:
        raise ValueError(f"{n} qualities but {len(v)} vectors")
    remaining = np.ones(n, dtype=bool)
    running = np.ones(n, dtype=np.float64)
    current = int(np.argmax(q))
    order, mins = [current], [1.0]
    cached: dict[int, int] = {}
    rows = np.zeros((0, n))
    while len(order) < n:
        remaining[current] = False
        position = cached.get(current)
        if position is None:
            gains = np.where(remaining, q * running, -np.inf)
            likely = np.argsort(-gains, kind="stable")[: max(0, batch_rows - 1)]
            fetch = np.concatenate(([current], likely[remaining[likely]]))
            _, rows = _distance_block(v, fetch, mode)
            cached = {int(i): k for k, i in enumerate(fetch)}
            position = 0
        np.minimum(running, rows[position], out=running)
        gains = np.where(remaining, q * running, -np.inf)
        current = int(np.argmax(gains))
        order.append(current)
        mins.append(float(running[current]))
    return order, mins


def path_set_distances(
    quality: Sequence[float],
    vectors: np.ndarray,
    mode: UtilityMode = "paper",
    *,
    block_elements: int = BLOCK_ELEMENTS,
) -> PathSetDistances:
    """Greedy order and mean distances of one path set, from its embeddings (SPEC §3.5–3.6).

    Raw and transformed distances come from one Gram computation. A set whose n×n
    matrix fits in ``block_elements`` is one block and ordered with :func:`greedy_order`
    on it; a larger one is handled block by block (:func:`pairwise_distance_means`,
    :func:`greedy_order_from_vectors`), in memory O(n·d), with the same results.
    """
    q = np.asarray(quality, dtype=np.float64)
    n = len(q)
    if n == 0:
        return PathSetDistances([], [], float("nan"), float("nan"))
    v = np.ascontiguousarray(vectors, dtype=np.float64)
    if n * n <= block_elements:
        raw, d = _distance_block(v, slice(None), mode)
        order, mins = greedy_order(q, d)
        pairs = n * (n - 1)
        if pairs == 0:
            return PathSetDistances(order, mins, float("nan"), float("nan"))
        return PathSetDistances(
            order, mins, _off_diagonal_sum(d) / pairs, _off_diagonal_sum(raw) / pairs
        )
    order, mins = greedy_order_from_vectors(q, v, mode)
    mean_d, mean_raw = pairwise_distance_means(v, mode, block_elements=block_elements)
    return PathSetDistances(order, mins, mean_d, mean_raw)


def utilities_from_order(
    quality: Sequence[float],
    order: Sequence[int],
    min_distances: Sequence[float],
    gammas: Sequence[float],
    mode: UtilityMode = "paper",
) -> list[float]:
    """Creative utility at each γ from a greedy order (:func:`greedy_order`'s results):
    ``s(U) = Σ_i w_i · f(u_τ(i)) · min_{j<i} d(u_τ(i), u_τ(j))`` (SPEC §3.6), the one
    place this sum is formed; :func:`empty_set_utility` for an empty order.

    Examples
    --------
    >>> utilities_from_order([4, 2], [0, 1], [1.0, 0.5], [0.5])
    [4.5]
    """
    if len(order) == 0:
        return [empty_set_utility(mode) for _ in gammas]
    terms = np.asarray(quality, dtype=np.float64)[list(order)] * np.asarray(min_distances)
    return [float(np.sum(discounts(len(order), g, mode) * terms)) for g in gammas]


def set_utilities(
    quality: Sequence[float],
    vectors: np.ndarray,
    gammas: Sequence[float],
    mode: UtilityMode = "paper",
    *,
    block_elements: int = BLOCK_ELEMENTS,
) -> tuple[list[float], PathSetDistances]:
    """Creative utility of one path set at each γ, from its embeddings (SPEC §3.5–3.6),
    and its distance statistics: the one utility path of CREATE scoring and of the query
    generator's oracle ceiling (SPEC §3.8).

    :func:`path_set_distances` (blockwise above ``block_elements`` distances, memory
    O(n·d)) then :func:`utilities_from_order`; equal to :func:`utility_curve` of
    :func:`distance_matrix` (to rounding, ~1e-15; exactly for a set in one block).

    Examples
    --------
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> set_utilities([4, 2], v, [0.5])[0]
    [5.0]
    >>> set_utilities([], np.zeros((0, 2)), [0.7, 0.9], "published")[0]
    [1.0, 1.0]
    """
    stats = path_set_distances(quality, vectors, mode, block_elements=block_elements)
    values = utilities_from_order(quality, stats.order, stats.min_distances, gammas, mode)
    return values, stats
