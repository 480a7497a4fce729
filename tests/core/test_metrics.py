import itertools

import numpy as np
import pytest

from creagraph.core.metrics import (
    creative_utility,
    discounts,
    distance_matrix,
    greedy_order,
    mean_pairwise_distance,
    path_strength,
    path_string,
    specificity,
    transform_distance,
    utility_curve,
)


@pytest.mark.parametrize(
    ("x", "expected", "tol"),
    [
        (0.13, 0.0029, 5e-5),
        (0.33, 0.117, 5e-4),
        (0.40, 0.241, 5e-4),
        (0.58, 0.777, 5e-4),
        (0.7, 1.0, 1e-12),
        (0.71, 1.0, 0),
        (1.0, 1.0, 0),
        (0.0, 0.0, 0),
    ],
)
def test_g_pinned_values(x, expected, tol):
    assert abs(transform_distance(x) - expected) <= tol


def test_specificity_mapping_boundaries():
    assert [specificity(n) for n in (0, 10, 11, 99, 100, 499, 500, 4999, 5000, 10**6)] == [
        5,
        5,
        4,
        4,
        3,
        3,
        2,
        2,
        1,
        1,
    ]


def test_path_strength_excludes_final_triple():
    assert path_strength([4, 2, 5]) == 2
    assert path_strength([1, 5]) == 1
    assert path_strength([3]) == 3
    assert path_strength([]) == 0


def test_path_string_format():
    path = [
        ["Morton Gould", "Collaborated With", "Benny Carter"],
        ["Benny Carter", "discography", "Benny Carter discography"],
    ]
    assert path_string(path) == " [collaborated with] benny carter"
    three = [["A", "r1", "B"], ["B", "r2", "C"], ["C", "r3", "D"]]
    assert path_string(three) == " [r1] b | b [r2] c"
    assert path_string([["A", "R", "B"]]) == " [r] b"


def test_greedy_order_hand_built_and_ties():
    d = np.array([[0, 0.1, 0.8, 1.0], [0.1, 0, 0.9, 1.0], [0.8, 0.9, 0, 0.3], [1, 1, 0.3, 0]])
    order, mins = greedy_order([3, 3, 3, 2], d)
    # first: highest quality, lowest index on ties; then 2 (3*0.8=2.4 > 2*1.0=2.0)
    assert order == [0, 2, 3, 1]
    assert mins == [1.0, 0.8, 0.3, 0.1]
    tie = np.ones((3, 3)) - np.eye(3)
    assert greedy_order([1, 1, 1], tie)[0] == [0, 1, 2]


def _cubic_reference(q, d, gamma, mode):
    """The published triple loop: recompute every min from scratch at each step."""
    n = len(q)
    if n == 0:
        return 1.0 if mode == "published" else 0.0
    chosen = [int(np.argmax(q))]
    while len(chosen) < n:
        best, best_gain = None, -1.0
        for i in range(n):
            if i in chosen:
                continue
            gain = q[i] * min(d[i][j] for j in chosen)
            if gain > best_gain:
                best, best_gain = i, gain
        chosen.append(best)
    total = 0.0
    for k, i in enumerate(chosen):
        m = 1.0 if k == 0 else min(d[i][j] for j in chosen[:k])
        w = gamma ** (k if mode == "paper" else max(k - 1, 0))
        total += w * q[i] * m
    return total


def test_greedy_matches_cubic_reference_on_random_sets():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 20, 40):
        v = rng.normal(size=(n, 8))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        q = rng.integers(0, 6, size=n).astype(float)
        for mode in ("paper", "published"):
            d = distance_matrix(v, mode)
            for gamma in (0.0, 0.7, 0.9, 1.0):
                assert creative_utility(q, d, gamma, mode) == pytest.approx(
                    _cubic_reference(q, d, gamma, mode)
                )


def test_discount_modes_empty_and_single():
    assert discounts(3, 0.7).tolist() == pytest.approx([1, 0.7, 0.49])
    assert discounts(3, 0.7, "published").tolist() == pytest.approx([1, 1, 0.7])
    empty = np.zeros((0, 0))
    assert creative_utility([], empty, 0.7) == 0.0
    assert creative_utility([], empty, 0.7, "published") == 1.0
    assert creative_utility([4], np.zeros((1, 1)), 0.7) == 4.0
    assert utility_curve([4, 4], np.array([[0, 1.0], [1.0, 0]]), [0, 0.5, 1]) == [4, 6, 8]
    with pytest.raises(ValueError):
        discounts(2, 0.5, "other")


def test_published_diagonal_and_pairwise_mean():
    v = np.eye(3)
    assert np.diag(distance_matrix(v, "published")).tolist() == [1, 1, 1]
    assert np.diag(distance_matrix(v, "paper")).tolist() == [0, 0, 0]
    assert mean_pairwise_distance(distance_matrix(v)) == pytest.approx(1.0)
    assert np.isnan(mean_pairwise_distance(np.zeros((1, 1))))


def test_utility_is_order_invariant_in_input():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(6, 5))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q = np.array([5, 4, 4, 3, 2, 1], dtype=float)
    base = creative_utility(q, distance_matrix(v), 0.9)
    for perm in itertools.islice(itertools.permutations(range(6)), 0, 720, 97):
        p = list(perm)
        assert creative_utility(q[p], distance_matrix(v[p]), 0.9) == pytest.approx(base)


def test_raw_distance_is_one_formula_for_scalars_and_matrices():
    """The scalar form (the `distance` command, distinctiveness) and the matrix form (the
    scorer's distance stage) of 1 − cos give the same numbers (issue 18)."""
    from creagraph.core.metrics import raw_distance

    rng = np.random.default_rng(3)
    v = rng.normal(size=(6, 8))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    gram = v @ v.T
    matrix = raw_distance(gram)
    assert matrix.dtype == np.float64 and matrix.min() >= 0.0 and matrix.max() <= 2.0
    for i, j in itertools.product(range(6), repeat=2):
        assert raw_distance(gram[i, j]) == matrix[i, j] == min(2.0, max(0.0, 1.0 - gram[i, j]))
    np.testing.assert_array_equal(distance_matrix(v, transformed=False)[~np.eye(6, dtype=bool)],
                                  matrix[~np.eye(6, dtype=bool)])
    in_place = gram.copy()
    assert raw_distance(in_place, out=in_place) is in_place
    np.testing.assert_array_equal(in_place, matrix)
    assert raw_distance(np.float32(1.0000001)) == 0.0 and raw_distance(-1.5) == 2.0
    assert isinstance(raw_distance(np.float32(0.5)), float)


def test_path_quality_from_strength():
    from creagraph.core.metrics import path_quality, quality_from_strength

    assert quality_from_strength(None, True) == 0.0
    assert quality_from_strength(4, True) == 4.0 == path_quality([4, 5, 1], True)
    assert quality_from_strength(4, False) == 0.0 == path_quality([4, 5, 1], False)
