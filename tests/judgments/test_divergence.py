"""The divergence tests (rater x model interaction) and the verdict rule."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from creagraph.judgments.divergence import (
    Profiles,
    _group_permutations,
    convergence_verdict,
    interaction_test,
    model_effect_test,
    tournament_profiles,
)


def _profiles(taste_sd, rng, n_raters=5, per_rater=6, quality=(0.6, 0.2, -0.2, -0.6),
              crossed=True, unit_sd=0.8):
    """Ratings = quality + rater taste + prompt x model + noise, as long-format rows."""
    q = np.asarray(quality)
    taste = rng.normal(0, taste_sd, size=(n_raters, q.size))
    unit = rng.normal(0, unit_sd, size=(per_rater if crossed else n_raters * per_rater, q.size))
    vals, raters, tours, models, prompts = [], [], [], [], []
    for r in range(n_raters):
        for k in range(per_rater):
            p = k if crossed else r * per_rater + k
            x = np.clip(np.round(3 + q + unit[p] + taste[r] + rng.normal(0, 1.0, q.size)), 1, 5)
            for m in range(q.size):
                vals.append(x[m])
                raters.append(f"r{r}")
                tours.append((r, p))
                models.append(f"m{m}")
                prompts.append(p)
    return tournament_profiles(vals, raters, tours, models, prompts)


def test_pseudo_f_with_two_models_is_the_one_way_anova_f():
    rng = np.random.default_rng(0)
    d = rng.normal(size=30) + np.repeat([0.0, 1.0, -0.5], 10)
    raters = np.repeat(np.arange(3), 10)
    p = Profiles(np.c_[-d / 2, d / 2], raters)
    res = interaction_test([p], n_permutations=99)
    groups = [d[raters == g] for g in range(3)]
    assert res.statistic == pytest.approx(stats.f_oneway(*groups).statistic, rel=1e-10)


def test_group_permutations_move_indices_only_within_groups():
    rng = np.random.default_rng(0)
    groups = np.array([2, 0, 1, 0, 2, 2, 1])
    perm = _group_permutations(rng, groups, 200)
    assert np.all(groups[perm] == groups[None, :])
    assert np.all(np.sort(perm, axis=1) == np.arange(7))
    assert len({tuple(row) for row in perm.tolist()}) > 20


@pytest.mark.parametrize("crossed", [True, False])
def test_no_taste_is_rarely_divergence_and_planted_taste_is_found(crossed):
    # HCB-sized cells: 4 models, 5 evaluators, 6 tournaments each
    rng = np.random.default_rng(7)
    null = [interaction_test([_profiles(0.0, rng, crossed=crossed)], n_permutations=199,
                             seed=s).pvalue for s in range(60)]
    taste = [interaction_test([_profiles(1.0, rng, crossed=crossed)], n_permutations=199,
                              seed=s).pvalue for s in range(30)]
    assert np.mean(np.array(null) < 0.05) <= 0.12  # nominal 0.05; 60 runs
    assert np.mean(np.array(taste) < 0.05) >= 0.8


def test_model_effect_found_and_not_invented():
    rng = np.random.default_rng(3)
    strong = _profiles(0.0, rng, quality=(1.0, 0.3, -0.3, -1.0))
    # no quality and no prompt x model effect: the outputs do not differ
    none = [model_effect_test([_profiles(0.0, rng, quality=(0, 0, 0, 0), unit_sd=0.0)],
                              n_permutations=199, seed=s).pvalue for s in range(40)]
    assert model_effect_test([strong], n_permutations=199).pvalue < 0.01
    assert np.mean(np.array(none) < 0.05) <= 0.125


def test_nothing_testable_gives_none():
    one = Profiles(np.array([[1.0, -1.0]]), np.array([0]))
    assert model_effect_test([one]) is None and interaction_test([one]) is None
    # two raters with one tournament each: no within-rater variation to compare with
    two = Profiles(np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([0, 1]))
    assert interaction_test([two]) is None


def test_incomplete_tournaments_are_dropped_and_counted():
    p = tournament_profiles([3, 5, 2, 4, 1], ["r", "r", "s", "s", "s"],
                            ["t1", "t1", "t2", "t2", "t3"], ["a", "b", "a", "b", "a"])
    assert p.values.shape == (2, 2) and p.n_dropped == 1


def test_verdict_rule():
    v = convergence_verdict
    assert v(0.2, 0.5, 0.01) == "divergent"
    assert v(0.8, 0.001, 0.01) == "convergent"  # an interaction too small to lower alpha
    assert v(0.8, 0.001, 0.5) == "convergent"
    assert v(0.2, 0.5, 0.5) == "no_difference"
    assert v(0.5, 0.001, 0.5) == "mixed"
    assert v(0.8, 0.5, 0.01) == "mixed"
    assert v(None, 0.5, 0.5) == "undetermined" and v(0.5, None, 0.5) == "undetermined"
