import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from creagraph.tig.cliche import (
    centrality_share,
    cliche_score,
    coverage_share,
    internal_convergence,
    model_coverage,
    response_coverage,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_definition_and_range():
    assert cliche_score(1, 1, 1) == pytest.approx(1.0)
    assert cliche_score(0, 0, 0) == pytest.approx(0.0)
    expected = (0.05 + 0.6) ** 0.5 * (0.05 + 0.3) ** 0.25 * (0.05 + 0.9) ** 0.25 - 0.05
    assert cliche_score(0.6, 0.3, 0.9) == pytest.approx(expected)
    grid = np.linspace(0, 1, 11)
    values = cliche_score(*np.meshgrid(grid, grid, grid))
    assert values.min() >= 0 and values.max() <= 1


@pytest.mark.parametrize("factor", range(3))
def test_strictly_increasing_in_each_factor_on_a_grid(factor):
    grid = np.linspace(0, 1, 21)
    for others in itertools.product(grid, repeat=2):
        args = list(others)
        values = []
        for x in grid:
            full = args[:factor] + [x] + args[factor:]
            values.append(cliche_score(*full))
        assert np.all(np.diff(values) > 0), (factor, others)


@given(unit, unit, unit, unit, st.integers(0, 2))
def test_strictly_increasing_property(a, b, c, d, factor):
    low, high = sorted((c, d))
    if high - low < 1e-9:
        return
    base = [a, b]
    lo = base[:factor] + [low] + base[factor:]
    hi = base[:factor] + [high] + base[factor:]
    assert cliche_score(*hi) > cliche_score(*lo)


def test_weights_matter_and_validation():
    coverage_heavy = cliche_score(0.9, 0.1, 0.1, weights=(0.8, 0.1, 0.1))
    coverage_light = cliche_score(0.9, 0.1, 0.1, weights=(0.1, 0.45, 0.45))
    assert coverage_heavy > coverage_light
    with pytest.raises(ValueError, match="coverage must lie"):
        cliche_score(1.2, 0.5, 0.5)
    with pytest.raises(ValueError, match="weights"):
        cliche_score(0.5, 0.5, 0.5, weights=(1, 0, 1))
    with pytest.raises(ValueError, match="epsilon"):
        cliche_score(0.5, 0.5, 0.5, epsilon=0)


def test_factors():
    assert model_coverage([2, 4], 4).tolist() == [0.5, 1.0]
    with pytest.raises(ValueError):
        model_coverage([5], 4)
    shares = centrality_share(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 0, 1, 2]), 3)
    assert shares.tolist() == pytest.approx([0.75, 0.75, 1.0])


def test_convergence_matches_brute_force():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(6, 5))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    counts = np.array([2, 1, 3, 1, 1, 4])
    cluster = np.array([0, 0, 1, 1, 1, 2])
    result = internal_convergence(vectors, counts, cluster, 4)
    for k in range(3):
        occurrences = [v for v, n, c in zip(vectors, counts, cluster, strict=True)
                       if c == k for _ in range(n)]
        sims = [a @ b for i, a in enumerate(occurrences)
                for j, b in enumerate(occurrences) if i != j]
        assert result[k] == pytest.approx(max(0.0, float(np.mean(sims))))
    assert result[3] == 0.0  # empty cluster
    single = internal_convergence(vectors[:1], np.array([1]), np.array([0]), 1)
    assert single.tolist() == [0.0]


def test_response_share_and_combined_coverage():
    assert response_coverage([3, 30], 30).tolist() == pytest.approx([0.1, 1.0])
    with pytest.raises(ValueError):
        response_coverage([31], 30)
    with pytest.raises(ValueError):
        response_coverage([1], 0)
    assert coverage_share(1.0, 1.0) == pytest.approx(1.0)
    assert coverage_share(0.0, 0.7) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="response share"):
        coverage_share(0.5, 1.5)
    # every model has the idea once vs. in most answers: the model share alone saturates
    # at 1 for both; the combined coverage separates them
    rare, common = coverage_share(1.0, 0.05), coverage_share(1.0, 0.8)
    assert common > rare
    assert cliche_score(common, 0.5, 0.5) > cliche_score(rare, 0.5, 0.5)


@given(unit, unit, unit, unit, unit, unit, st.integers(0, 1))
def test_cliche_score_increasing_in_each_share(m, r, c, v, low, high, which):
    """Via the combined coverage, the ClichéScore is non-decreasing in the model share and
    in the response share, and strictly increasing when the other share is positive."""
    low, high = sorted((low, high))
    shares_low = [m, r]
    shares_high = [m, r]
    shares_low[which], shares_high[which] = low, high
    s_low = cliche_score(float(coverage_share(*shares_low)), c, v)
    s_high = cliche_score(float(coverage_share(*shares_high)), c, v)
    assert s_high >= s_low - 1e-12
    other = shares_low[1 - which]
    if high - low > 1e-6 and other > 1e-3:
        assert s_high > s_low
