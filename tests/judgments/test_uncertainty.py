"""Covariances and intervals of Bradley–Terry fits: the fitted model's information,
cluster-robust t intervals, significance ranks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from creagraph.judgments import bradley_terry, generate_hcb, hcb_comparisons
from creagraph.judgments.comparisons import DegenerateClustersWarning, _check_arrays, count_matrices
from creagraph.judgments.fit import _davidson_nll
from creagraph.judgments.uncertainty import model_covariance, sandwich_covariance

CELL = {"models": ("a", "b", "c", "d"), "theta": (0.6, 0.2, -0.2, -0.6), "domains": ("x",),
        "stages": ("ideation",), "prompts_per_cell": 6, "empty_rate": 0.0, "theme_rate": 0.0}


def _comps(seed, n_raters, taste=0.0):
    data, _ = generate_hcb(seed=seed, n_evaluators=n_raters, raters_per_prompt=n_raters,
                           pairwise_taste=taste, **CELL)
    return hcb_comparisons(data)


def _arrays(c):
    return _check_arrays(c.n_items, c.left, c.right, c.outcome, c.weight)


def test_davidson_covariance_is_the_inverse_hessian_of_its_likelihood():
    c = _comps(0, 10)
    res = bradley_terry(c, ties="davidson")
    wins, ties = count_matrices(c.n_items, c.left, c.right, c.outcome)
    x0 = np.r_[res.theta, np.log(res.nu)]
    h = np.empty((x0.size, x0.size))
    for k in range(x0.size):  # central differences of the analytic gradient
        e = np.zeros(x0.size)
        e[k] = 1e-5
        h[:, k] = (_davidson_nll(x0 + e, wins, ties, 0.0)[1]
                   - _davidson_nll(x0 - e, wins, ties, 0.0)[1]) / 2e-5
    # expected information ~ observed Hessian at the MLE; compare the constrained inverses
    n = c.n_items
    u = np.r_[np.ones(n) / np.sqrt(n), 0.0]
    ref = (np.linalg.inv(h + np.outer(u, u)) - np.outer(u, u))[:n, :n]
    li, ri, oc, w = _arrays(c)
    got = model_covariance(res.theta, res.nu, li, ri, oc, w, "davidson")
    np.testing.assert_allclose(np.sqrt(np.diag(got)), np.sqrt(np.diag(ref)), rtol=0.05)
    np.testing.assert_allclose(res.covariance, got)


def test_half_ties_use_the_robust_covariance():
    c = _comps(1, 10)
    res = bradley_terry(c, ties="half")
    li, ri, oc, w = _arrays(c)
    robust, g = sandwich_covariance(res.theta, None, li, ri, oc, w, "half", None)
    assert g == len(c)
    np.testing.assert_allclose(res.covariance, robust)
    assert res.interval_method == "wald (robust to half-ties)"


def test_cluster_intervals_use_t_with_clusters_minus_one_df():
    from scipy import stats

    c = _comps(2, 5, taste=0.5)
    res = bradley_terry(c, cluster="rater")
    assert res.interval_method == "cluster-robust t (5 raters, 4 df)"
    assert res.n_clusters == 5
    np.testing.assert_allclose(res.ci_high - res.theta, stats.t.ppf(0.975, 4) * res.se)


def test_cluster_t_intervals_cover_at_five_raters_with_rater_effects():
    truth = np.array([0.6, 0.2, -0.2, -0.6])
    covered = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(60):
            r = bradley_terry(_comps(seed, 5, taste=0.5), cluster="rater")
            covered.append((r.ci_low <= truth) & (truth <= r.ci_high))
    plain = []
    for seed in range(60):
        r = bradley_terry(_comps(seed, 5, taste=0.5))
        plain.append((r.ci_low <= truth) & (truth <= r.ci_high))
    assert 0.88 <= np.mean(covered) <= 0.99  # nominal 0.95; 240 intervals
    assert np.mean(plain) < np.mean(covered)  # independent-comparison intervals under-cover


def test_too_few_clusters_warn_and_say_so():
    data, _ = generate_hcb(seed=0, n_evaluators=2, raters_per_prompt=2, **CELL)
    with pytest.warns(DegenerateClustersWarning, match="too few clusters"):
        res = bradley_terry(hcb_comparisons(data), cluster="rater")
    assert res.interval_method == "wald (too few raters: 2)"


def test_rank_probability_draws_follow_the_covariance():
    from creagraph.judgments.leaderboard import _normal_draws

    res = bradley_terry(_comps(3, 10))
    draws = _normal_draws(res.theta, res.covariance, np.random.default_rng(0), 20000)
    np.testing.assert_allclose(draws.mean(axis=0), res.theta, atol=0.01)
    np.testing.assert_allclose(np.cov(draws.T), res.covariance,
                               atol=0.03 * np.abs(res.covariance).max())
    penalised = bradley_terry(_comps(3, 10), alpha=0.5)
    draws = _normal_draws(penalised.theta, penalised.covariance, np.random.default_rng(0),
                          20000)
    np.testing.assert_allclose(np.cov(draws.T), penalised.covariance,
                               atol=0.03 * np.abs(penalised.covariance).max())
