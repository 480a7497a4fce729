"""Bradley–Terry on sparse designs (sparse_bt): the same estimates, standard errors and
significance ranks as the dense path, without n × n matrices."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from creagraph.judgments import leaderboard, read_llmfao
from creagraph.judgments.comparisons import Comparisons, NotIdentifiableError
from creagraph.judgments.sparse_bt import SPARSE_ITEMS, _Bread, edge_counts


@pytest.fixture(scope="module")
def llmfao(shared_dir):
    return read_llmfao(None)


def _both(comps, monkeypatch, **kw):
    """The dense and the sparse result on the same comparisons."""
    monkeypatch.setattr(leaderboard, "SPARSE_ITEMS", 10 ** 9)
    dense = leaderboard.bradley_terry(comps, **kw)
    monkeypatch.setattr(leaderboard, "SPARSE_ITEMS", 0)
    sparse_ = leaderboard.bradley_terry(comps, **kw)
    return dense, sparse_


def _ring(n: int, seed: int = 0) -> Comparisons:
    """Item k against k + 1 (mod n) twice: once won by k, once drawn from BT."""
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    theta = 2.0 * np.sin(2 * math.pi * k / n)
    nxt = (k + 1) % n
    won = np.concatenate([np.ones(n, bool),
                          rng.random(n) < 1 / (1 + np.exp(-(theta - theta[nxt])))])
    return Comparisons(items=[f"m{i:04d}" for i in range(n)], left=np.concatenate([k, k]),
                       right=np.concatenate([nxt, nxt]),
                       outcome=np.where(won, 1, -1).astype(np.int8), weight=np.ones(2 * n))


@pytest.mark.parametrize(("ties", "alpha", "cluster"), [
    ("exclude", 0.0, "comparison"), ("half", 0.0, "comparison"),
    ("davidson", 0.0, "comparison"), ("exclude", 0.05, "comparison"),
    ("half", 0.0, "rater"),
])
def test_sparse_path_matches_dense_on_llmfao(llmfao, monkeypatch, ties, alpha, cluster):
    if cluster == "rater" and llmfao.raters is None:
        pytest.skip("LLMFAO without raters")  # pragma: no cover
    dense, sp = _both(llmfao, monkeypatch, ties=ties, alpha=alpha, cluster=cluster)
    np.testing.assert_allclose(sp.theta, dense.theta, atol=1e-9)
    np.testing.assert_allclose(sp.se, dense.se, rtol=1e-8)
    np.testing.assert_array_equal(sp.tier, dense.tier)
    np.testing.assert_array_equal(sp.rank_worst, dense.rank_worst)
    np.testing.assert_allclose(sp.expected_win_rate, dense.expected_win_rate, atol=1e-9)
    np.testing.assert_allclose(sp.n_comparisons, dense.n_comparisons)
    assert sp.interval_method == dense.interval_method
    if ties == "davidson":
        assert sp.nu == pytest.approx(dense.nu, rel=1e-9)
    assert sp.covariance is None and sp.rank_probabilities.shape == (llmfao.n_items, 1)
    # P(rank 1) from other draws: the same up to Monte Carlo error (2,000 draws)
    np.testing.assert_allclose(sp.rank_probabilities[:, 0], dense.rank_probabilities[:, 0],
                               atol=0.05)
    assert sp.rank_probabilities[:, 0].sum() == pytest.approx(1.0)


@pytest.mark.parametrize(("ties", "alpha"), [("exclude", 0.0), ("half", 0.0),
                                             ("exclude", 0.1)])
def test_ring_uses_the_banded_factor_and_matches_dense(monkeypatch, ties, alpha):
    comps = _ring(300)
    dense, sp = _both(comps, monkeypatch, ties=ties, alpha=alpha)
    np.testing.assert_allclose(sp.theta, dense.theta, atol=1e-9)
    np.testing.assert_allclose(sp.se, dense.se, rtol=1e-9)
    np.testing.assert_array_equal(sp.tier, dense.tier)
    np.testing.assert_array_equal(sp.rank_worst, dense.rank_worst)


def test_takahashi_diagonal_is_the_inverse_diagonal():
    from scipy import sparse

    rng = np.random.default_rng(3)
    n = 40  # a chain with a few chords: bandwidth > 1 after reordering
    i = np.r_[np.arange(n - 1), rng.integers(0, n - 5, 8)]
    j = np.r_[np.arange(1, n), i[n - 1:] + rng.integers(2, 5, 8)]
    q = rng.random(i.size) + 0.2
    lap = sparse.csc_matrix((np.r_[q, q, -q, -q], (np.r_[i, j, i, j], np.r_[i, j, j, i])),
                            shape=(n, n))
    bread = _Bread(lap, pin=True)
    assert bread.banded is not None and bread.banded.shape[0] > 2
    want = np.r_[0.0, np.diag(np.linalg.inv(lap.toarray()[1:, 1:]))]
    np.testing.assert_allclose(bread.inverse_diagonal(), want, rtol=1e-12)
    rhs = rng.normal(size=(n, 3))
    rhs[0] = 0.0
    np.testing.assert_allclose(bread.solve(rhs)[1:],
                               np.linalg.solve(lap.toarray()[1:, 1:], rhs[1:]), rtol=1e-10)


def test_large_ring_goes_sparse_and_recovers_the_strengths():
    n = SPARSE_ITEMS + 100
    res = leaderboard.bradley_terry(_ring(n))
    assert res.covariance is None and res.rank_probabilities.shape == (n, 1)
    truth = 2.0 * np.sin(2 * math.pi * np.arange(n) / n)
    assert np.corrcoef(res.theta, truth)[0, 1] > 0.3
    assert np.all(res.rank_best <= res.rank_worst) and np.all(np.isfinite(res.se))
    rows = res.leaderboard()
    assert len(rows) == n and 0.0 <= rows[0]["p_rank_1"] <= 1.0


def test_sparse_path_refuses_a_missing_ml_estimate_naming_the_items(monkeypatch):
    monkeypatch.setattr(leaderboard, "SPARSE_ITEMS", 0)
    comps = Comparisons(items=["a", "b", "c"], left=np.array([0, 1, 0]),
                        right=np.array([1, 2, 2]), outcome=np.array([1, 1, 1], np.int8),
                        weight=np.ones(3))
    with pytest.raises(NotIdentifiableError, match=r"never lose: \['a'\]"):
        leaderboard.bradley_terry(comps)
    res = leaderboard.bradley_terry(comps, alpha=0.1)  # MAP exists
    assert res.theta[0] > res.theta[1] > res.theta[2]


def test_sparse_bootstrap_and_few_clusters(monkeypatch, llmfao):
    monkeypatch.setattr(leaderboard, "SPARSE_ITEMS", 0)
    res = leaderboard.bradley_terry(llmfao, ties="half", n_bootstrap=5, seed=1)
    assert res.bootstrap_theta.shape == (5, llmfao.n_items)
    assert res.interval_method == "bootstrap percentile"
    two = Comparisons(items=["a", "b", "c"], left=np.array([0, 1, 2, 1, 0, 2]),
                      right=np.array([1, 2, 0, 0, 2, 1]),
                      outcome=np.array([1, 1, 1, 1, 1, -1], np.int8), weight=np.ones(6),
                      raters=np.array(["r", "r", "r", "s", "s", "s"], dtype=object))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = leaderboard.bradley_terry(two, cluster="rater")
    assert "too few raters: 2" in res.interval_method
    assert any("too few clusters" in str(w.message) for w in caught)


def test_edge_counts_aggregate_both_directions_and_ties():
    e = edge_counts(3, np.array([0, 1, 1, 2, 0]), np.array([1, 0, 0, 1, 1]),
                    np.array([1, 1, -1, 0, 0]), np.array([1.0, 2.0, 1.0, 1.0, 0.5]))
    assert e.i.tolist() == [0, 1] and e.j.tolist() == [1, 2]
    # pair (0, 1): 0 won once (w 1) and once as the right side (w 1); 1 won once (w 2)
    assert e.a.tolist() == [2.0, 0.0] and e.b.tolist() == [2.0, 0.0]
    assert e.t.tolist() == [0.5, 1.0]
    wins, losses, ties = e.item_counts()
    assert wins.tolist() == [2.0, 2.0, 0.0] and ties.tolist() == [0.5, 1.5, 1.0]
