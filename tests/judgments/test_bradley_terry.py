from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from creagraph.judgments import (
    LEFT,
    RIGHT,
    TIE,
    NotIdentifiableError,
    apply_empty_rule,
    bradley_terry,
    bt_covariance,
    bt_mle,
    count_matrices,
    davidson_mle,
    elo_scale,
    make_comparisons,
    next_pairs,
    read_llmfao,
)


def _from_rows(rows):
    return make_comparisons(
        [r["left"] for r in rows], [r["right"] for r in rows], [r["winner"] for r in rows]
    )


# ---------------------------------------------------------------- reference values


@pytest.mark.parametrize("name", ["simple", "food", "llmfao"])
@pytest.mark.parametrize("method", ["newton", "mm"])
def test_evalica_golden_bradley_terry_half_ties(evalica_case, name, method):
    rows, golden = evalica_case(name)
    c = _from_rows(rows)
    wins, ties = count_matrices(c.n_items, c.left, c.right, c.outcome)
    theta = bt_mle(wins + ties / 2, method=method)
    strength = np.exp(theta) / np.exp(theta).sum()
    expected = np.array([golden["bradley_terry"][item] for item in c.items])
    np.testing.assert_allclose(strength, expected, rtol=1e-4)
    # the high-level API with the half-win policy gives the same normalised strengths
    res = bradley_terry(c, ties="half")
    np.testing.assert_allclose(res.strength, expected, rtol=1e-4)


@pytest.mark.parametrize("name", ["simple", "food", "llmfao"])
@pytest.mark.parametrize("alpha", [0.0, 1e-10])
def test_evalica_golden_newman_davidson(evalica_case, name, alpha):
    # evalica reports Newman's scores unnormalised (their scale is not identified by the
    # model); compare after normalising both to sum 1.
    rows, golden = evalica_case(name)
    c = _from_rows(rows)
    wins, ties = count_matrices(c.n_items, c.left, c.right, c.outcome)
    theta, nu = davidson_mle(wins, ties, alpha=alpha)
    strength = np.exp(theta) / np.exp(theta).sum()
    expected = np.array([golden["newman"][item] for item in c.items])
    np.testing.assert_allclose(strength, expected / expected.sum(), rtol=1e-4)
    assert nu > 0


@pytest.mark.parametrize("case", ["1", "2"])
@pytest.mark.parametrize("method", ["newton", "mm"])
def test_choix_ml_estimates(stats_dir, case, method):
    path = stats_dir / "choix" / "tests" / "data" / f"testcase-pairwise-{case}.json"
    data = json.loads(path.read_text())
    pairs = np.array(data["data"])
    wins, _ = count_matrices(data["n_items"], pairs[:, 0], pairs[:, 1], np.ones(len(pairs)))
    np.testing.assert_allclose(bt_mle(wins, method=method), data["ml_est"], atol=1e-8)


def test_choix_map_estimate(transcribed):
    ref = transcribed["bradley_terry"][0]
    pairs = np.array(ref["data_winner_loser"])
    wins, _ = count_matrices(ref["n_items"], pairs[:, 0], pairs[:, 1], np.ones(len(pairs)))
    np.testing.assert_allclose(bt_mle(wins, alpha=0.5), ref["expected_params"], atol=1e-7)


# ---------------------------------------------------------------- behaviour


def test_empty_rule():
    out = apply_empty_rule(
        np.array([LEFT, LEFT, RIGHT, LEFT, TIE]),
        np.array([True, False, False, True, False]),
        np.array([False, True, False, True, True]),
    )
    assert out.tolist() == [RIGHT, LEFT, RIGHT, TIE, LEFT]
    c = make_comparisons(["a", "a"], ["b", "b"], ["left", "left"], left_empty=[True, True],
                         right_empty=[False, True])
    assert c.outcome.tolist() == [RIGHT, TIE]


def test_not_identifiable_is_reported_and_ridge_fixes_it():
    c = make_comparisons(["a", "a", "b"], ["b", "c", "c"], ["left", "left", "tie"])
    with pytest.raises(NotIdentifiableError, match="never lose: \\['a'\\]"):
        bradley_terry(c)
    res = bradley_terry(c, alpha=0.1)
    assert res.items[int(np.argmax(res.theta))] == "a"


def test_bad_winner_value_names_comparison():
    with pytest.raises(ValueError, match="comparison 1"):
        make_comparisons(["a", "a"], ["b", "b"], ["left", "banana"])


def test_diagnostics_and_views():
    c = make_comparisons(
        ["a", "a", "a", "b", "b", "c", "a", "c"],
        ["b", "b", "c", "c", "a", "a", "b", "b"],
        ["left", "left", "left", "left", "left", "left", "tie", "tie"],
    )
    res = bradley_terry(c)
    # a: wins 4 (b,b,c + ... ) let the counts speak for themselves
    k = {item: i for i, item in enumerate(res.items)}
    assert res.n_wins[k["a"]] == 3 and res.n_losses[k["a"]] == 2 and res.n_ties[k["a"]] == 1
    assert res.raw_win_rate[k["a"]] == pytest.approx(3 / 6)
    assert res.tie_half_win_rate[k["a"]] == pytest.approx(3.5 / 6)
    assert res.tie_rate == pytest.approx(2 / 8)
    np.testing.assert_allclose(res.standardized.mean(), 0, atol=1e-12)
    np.testing.assert_allclose(res.standardized.std(), 1)
    np.testing.assert_allclose(res.elo, elo_scale(res.theta))
    np.testing.assert_allclose(res.rank_probabilities.sum(axis=1), 1)
    np.testing.assert_allclose(res.rank_probabilities.sum(axis=0), 1)
    # expected win rates against the population average to one half
    assert res.expected_win_rate.mean() == pytest.approx(0.5)
    rows = res.leaderboard()
    assert [r["rank"] for r in rows] == [1, 2, 3]


def test_elo_gap_means_ten_to_one_odds():
    elo = elo_scale(np.array([math.log(10.0), 0.0]))
    assert elo[0] - elo[1] == pytest.approx(400.0)


def _simulate(truth: np.ndarray, n: int, seed: int):
    """``n`` Bradley–Terry verdicts between random pairs of items ``"0"``, ``"1"``, …"""
    rng = np.random.default_rng(seed)
    left, right, win = [], [], []
    for _ in range(n):
        i, j = rng.choice(truth.size, size=2, replace=False)
        p = 1 / (1 + math.exp(-(truth[i] - truth[j])))
        left.append(str(i))
        right.append(str(j))
        win.append("left" if rng.random() < p else "right")
    return make_comparisons(left, right, win)


def test_tiers_separate_only_clear_differences():
    truth = np.array([2.0, 1.95, 0.0, -2.0])
    res = bradley_terry(_simulate(truth, 4000, seed=1))
    tier = dict(zip(res.items, res.tier.tolist(), strict=True))
    best = dict(zip(res.items, res.rank_best.tolist(), strict=True))
    worst = dict(zip(res.items, res.rank_worst.tolist(), strict=True))
    assert tier["0"] == tier["1"] == 1  # indistinguishable pair at the top
    # 1 + the number significantly better, with the range of ranks
    assert tier["2"] == 3 and tier["3"] == 4
    assert (best["0"], worst["0"]) == (1, 2) and (best["2"], worst["2"]) == (3, 3)


def test_ranks_do_not_chain_through_close_neighbours():
    # a ladder of close items: each neighbour pair indistinguishable, the ends clearly apart
    truth = np.linspace(1.5, -1.5, 7)
    res = bradley_terry(_simulate(truth, 3000, seed=2))
    order = np.argsort(-res.theta)
    top, bottom = order[0], order[-1]
    assert res.tier[top] == 1 and res.tier[bottom] > 3  # not all "tier 1"
    assert res.rank_worst[top] < res.rank_best[bottom]
    np.testing.assert_allclose(res.theta, truth - truth.mean(), atol=0.15)


def test_bootstrap_intervals_cover_estimate_and_truth():
    truth = np.array([1.0, 0.3, 0.0, -1.3])
    c = _simulate(truth, 1500, seed=7)
    res = bradley_terry(c, n_bootstrap=200, seed=3)
    assert res.bootstrap_theta.shape == (200, 4)
    assert np.all(res.ci_low <= res.theta) and np.all(res.theta <= res.ci_high)
    assert np.all(res.ci_low <= truth) and np.all(truth <= res.ci_high)
    # bootstrap spread agrees with the Wald standard errors
    np.testing.assert_allclose(res.bootstrap_theta.std(axis=0), res.se, rtol=0.25)
    assert res.rank_probabilities[0, 0] > 0.95
    # same seed, same intervals
    again = bradley_terry(c, n_bootstrap=200, seed=3)
    np.testing.assert_array_equal(again.ci_low, res.ci_low)


def test_davidson_recovers_generating_parameters():
    rng = np.random.default_rng(11)
    truth = np.array([0.8, 0.2, -0.1, -0.9])
    nu = 0.6
    left, right, win = [], [], []
    for _ in range(20000):
        i, j = rng.choice(4, size=2, replace=False)
        pi, pj = math.exp(truth[i]), math.exp(truth[j])
        tie = 2 * nu * math.sqrt(pi * pj)
        d = pi + pj + tie
        u = rng.random() * d
        left.append(str(i))
        right.append(str(j))
        win.append("left" if u < pi else ("right" if u < pi + pj else "tie"))
    res = bradley_terry(make_comparisons(left, right, win), ties="davidson")
    assert res.nu == pytest.approx(nu, rel=0.05)
    np.testing.assert_allclose(res.theta, truth - truth.mean(), atol=0.06)


def test_wald_covariance_matches_two_item_formula():
    # two items, n games, p = 0.8: Var(theta_0 - theta_1) = 1 / (n p (1 - p))
    theta = np.array([math.log(4.0) / 2, -math.log(4.0) / 2])
    cov = bt_covariance(theta, np.array([[0, 50.0], [50.0, 0]]))
    assert cov[0, 0] + cov[1, 1] - 2 * cov[0, 1] == pytest.approx(1 / (50 * 0.8 * 0.2))


def test_next_pairs_warm_start_then_uncertainty():
    counts = np.array([[0, 3, 3], [3, 0, 0], [3, 0, 0]], dtype=float)
    assert next_pairs(np.zeros(3), np.eye(3), counts, k=1, warm_start=2) == [(1, 2)]
    counts[1, 2] = counts[2, 1] = 3
    cov = np.diag([0.01, 0.5, 0.5])
    # (1, 2) has the most uncertain difference
    assert next_pairs(np.zeros(3), cov, counts, k=1, warm_start=2) == [(1, 2)]
    # far-apart pairs carry little information even when uncertain
    theta = np.array([0.0, 6.0, 0.1])
    cov = np.diag([0.1, 0.3, 0.1])
    assert next_pairs(theta, cov, counts, k=1, warm_start=2) == [(0, 2)]


def test_llmfao_adapter_reads_real_data(stats_dir):
    c = read_llmfao(stats_dir / "evalica" / "llmfao.csv")
    assert len(c) == 8931 and c.n_items == 59
    assert c.raters is not None and len(set(c.raters)) > 50
    assert {int(v) for v in np.unique(c.outcome)} == {LEFT, RIGHT, TIE}
    default = read_llmfao()
    assert len(default) == len(c)


# ---------------------------------------------------------------- properties


@st.composite
def comparison_sets(draw):
    n_items = draw(st.integers(3, 6))
    # a cycle guarantees identifiability; extra random comparisons on top
    base = [(i, (i + 1) % n_items, LEFT) for i in range(n_items)]
    base += [((i + 1) % n_items, i, LEFT) for i in range(n_items)]
    extra = draw(
        st.lists(
            st.tuples(st.integers(0, n_items - 1), st.integers(0, n_items - 1),
                      st.sampled_from([LEFT, RIGHT, TIE])),
            max_size=25,
        )
    )
    extra = [(i, j, o) for i, j, o in extra if i != j]
    return n_items, base + extra


@settings(max_examples=40, deadline=None)
@given(comparison_sets(), st.randoms(use_true_random=False),
       st.sampled_from(["exclude", "half", "davidson"]))
def test_scores_invariant_to_relabelling(data, rnd, ties):
    n_items, comps = data
    perm = list(range(n_items))
    rnd.shuffle(perm)
    names = [f"m{k}" for k in range(n_items)]
    renamed = [f"z{perm[k]}" for k in range(n_items)]
    words = {LEFT: "left", RIGHT: "right", TIE: "tie"}
    a = bradley_terry(make_comparisons([names[i] for i, _, _ in comps],
                                       [names[j] for _, j, _ in comps],
                                       [words[o] for *_, o in comps]), ties=ties)
    b = bradley_terry(make_comparisons([renamed[i] for i, _, _ in comps],
                                       [renamed[j] for _, j, _ in comps],
                                       [words[o] for *_, o in comps]), ties=ties)
    theta_a = dict(zip(a.items, a.theta, strict=True))
    theta_b = dict(zip(b.items, b.theta, strict=True))
    for k in range(n_items):
        assert theta_a[names[k]] == pytest.approx(theta_b[renamed[k]], abs=1e-7)


@settings(max_examples=40, deadline=None)
@given(comparison_sets(), st.sampled_from(["exclude", "half", "davidson"]))
def test_scores_invariant_to_swapping_sides(data, ties):
    n_items, comps = data
    words = {LEFT: "left", RIGHT: "right", TIE: "tie"}
    items = [str(k) for k in range(n_items)]
    a = bradley_terry(make_comparisons([str(i) for i, _, _ in comps], [str(j) for _, j, _ in comps],
                                       [words[o] for *_, o in comps], items=items), ties=ties)
    b = bradley_terry(make_comparisons([str(j) for _, j, _ in comps], [str(i) for i, _, _ in comps],
                                       [words[-o] for *_, o in comps], items=items), ties=ties)
    np.testing.assert_allclose(a.theta, b.theta, atol=1e-7)
    np.testing.assert_allclose(a.tie_half_win_rate, b.tie_half_win_rate)


def test_tie_policy_type_follows_the_ties_choice() -> None:
    from typing import get_args

    from creagraph.judgments.choices import Ties
    from creagraph.judgments.comparisons import _TIE_POLICIES, TiePolicy

    assert get_args(TiePolicy) == _TIE_POLICIES == tuple(t.value for t in Ties)
