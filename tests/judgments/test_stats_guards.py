"""Statistics that cannot silently mislead, each checked against a reference
library (pingouin, statsmodels, scipy, choix, evalica, krippendorff — test dependencies
only) or a constructed case."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from creagraph.judgments import (
    ConvergenceWarning,
    DegenerateDesignWarning,
    DisconnectedComparisonsError,
    bradley_terry,
    bradley_terry_by_component,
    bt_mle,
    cohens_kappa,
    comparison_components,
    correlation,
    count_matrices,
    davidson_mle,
    friedman,
    icc,
    kendalls_w,
    krippendorff_alpha,
    make_comparisons,
    sequential_elo,
)

# ---------------------------------------------------------------- 1. pandas by value


def _ratings(seed=0, shape=(12, 4)):
    return np.random.default_rng(seed).integers(1, 6, size=shape).astype(float)


@pytest.mark.parametrize("labels", [["m_a", "m_b", "m_c", "m_d"], [10, 20, 30, 40], None])
def test_dataframes_are_read_by_value_not_labels(labels):
    x = _ratings()
    df = pd.DataFrame(x, columns=labels)
    assert kendalls_w(df).w == pytest.approx(kendalls_w(x).w, abs=1e-12)
    ref = stats.friedmanchisquare(*x.T)
    assert friedman(df).statistic == pytest.approx(ref.statistic, abs=1e-9)
    assert icc(df).icc3 == pytest.approx(icc(x).icc3, abs=1e-12)
    # reliability data: rows = raters
    import krippendorff

    want = krippendorff.alpha(reliability_data=x, level_of_measurement="interval")
    assert krippendorff_alpha(df, "interval") == pytest.approx(want, abs=1e-12)


def test_dataframe_missing_values_pd_na_and_nan():
    x = _ratings(1, (3, 8))
    x[0, 2] = np.nan
    df = pd.DataFrame(x, columns=list("abcdefgh")).astype("Int64")  # NaN -> pd.NA
    import krippendorff

    want = krippendorff.alpha(reliability_data=x, level_of_measurement="ordinal")
    assert krippendorff_alpha(df, "ordinal") == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="missing"):
        kendalls_w(df)
    assert kendalls_w(df, nan_policy="omit").n_blocks == 2
    with pytest.raises(ValueError, match="2-D"):
        kendalls_w(pd.Series([1, 2, 3]))


# ---------------------------------------------------------------- 2. convergence


def _cycle_wins():
    # choix testcase-pairwise-2: ML log-strengths [0.419617624, -0.419617624, 0]
    return count_matrices(3, [0, 0, 1, 2], [1, 1, 2, 0], [1, 1, 1, 1])[0]


def test_mm_reports_non_convergence_and_converges_when_allowed():
    wins = _cycle_wins()
    with pytest.warns(ConvergenceWarning, match="MM"):
        bt_mle(wins, method="mm", max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        full = bt_mle(wins, method="mm")
    np.testing.assert_allclose(full, [0.419617624, -0.419617624, 0.0], atol=1e-8)


def test_newton_and_davidson_report_non_convergence():
    wins = _cycle_wins()
    with pytest.warns(ConvergenceWarning, match="Newton"):
        bt_mle(wins, max_iter=1)
    w, t = count_matrices(3, [0, 0, 0, 1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 2, 2, 2, 2, 2, 2, 2],
                          [1, -1, 0, 1, -1, 0, 1, 1, -1, 0])
    with pytest.warns(ConvergenceWarning, match="Davidson .*fixed-point"):
        davidson_mle(w, t, max_iter=2)
    with pytest.warns(ConvergenceWarning, match="L-BFGS"):
        davidson_mle(w, t, alpha=0.1, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        davidson_mle(w, t)
        davidson_mle(w, t, alpha=0.1)
    # an item that never loses has no Davidson ML estimate even when it ties: the
    # iteration drifts (theta and nu grow without bound) and must say so
    w, t = count_matrices(3, [0, 1, 2, 0, 1], [1, 2, 0, 1, 2], [1, 1, -1, 0, 0])
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        davidson_mle(w, t, max_iter=2000)


def test_bt_result_carries_converged_flag():
    c = make_comparisons(["a", "b", "c", "a"], ["b", "c", "a", "c"], ["left"] * 4)
    res = bradley_terry(c)
    assert res.converged and res.convergence_message == ""


# ---------------------------------------------------------------- 6. cluster bootstrap


def test_cluster_bootstrap_with_singleton_clusters_equals_plain_bootstrap():
    rng = np.random.default_rng(0)
    n = 300
    left = rng.integers(0, 4, n)
    right = (left + rng.integers(1, 4, n)) % 4
    outcome = rng.choice(["left", "right", "tie"], n, p=[0.5, 0.4, 0.1])
    names = list("abcd")
    kw = {"raters": [f"r{k}" for k in range(n)]}
    c = make_comparisons([names[i] for i in left], [names[j] for j in right], outcome, **kw)
    a = bradley_terry(c, n_bootstrap=50, seed=3)
    b = bradley_terry(c, n_bootstrap=50, seed=3, cluster="rater")
    np.testing.assert_allclose(a.bootstrap_theta, b.bootstrap_theta, atol=1e-12)
    assert b.bootstrap_cluster == "rater" and b.n_clusters == n


def test_rater_cluster_bootstrap_widens_intervals_when_raters_have_tastes():
    rng = np.random.default_rng(1)
    models = ["m0", "m1", "m2", "m3"]
    rows = []
    for r in range(12):
        taste = rng.normal(0, 1.5, size=4)  # each rater's own preferences
        for _ in range(60):
            i, j = rng.choice(4, 2, replace=False)
            p = 1 / (1 + np.exp(-(taste[i] - taste[j])))
            rows.append((models[i], models[j], "left" if rng.random() < p else "right", f"r{r}"))
    c = make_comparisons(*zip(*[(a, b, w) for a, b, w, _ in rows], strict=True),
                         raters=[r for *_, r in rows])
    iid = bradley_terry(c, n_bootstrap=200, seed=0)
    clu = bradley_terry(c, n_bootstrap=200, seed=0, cluster="rater")
    ratio = np.mean(clu.ci_high - clu.ci_low) / np.mean(iid.ci_high - iid.ci_low)
    assert ratio > 1.8
    with pytest.raises(ValueError, match="prompts recorded"):
        bradley_terry(c, n_bootstrap=5, cluster="prompt")


# ---------------------------------------------------------------- 7. disconnected graphs


def test_disconnected_graph_is_refused_with_components_named():
    c = make_comparisons(["a", "b", "c", "d", "a", "c"], ["b", "a", "d", "c", "b", "d"],
                         ["left", "left", "left", "left", "tie", "right"])
    assert comparison_components(c) == [["a", "b"], ["c", "d"]]
    with pytest.raises(DisconnectedComparisonsError, match=r"2 groups.*\['a', 'b'\]") as exc:
        bradley_terry(c, alpha=0.1)
    assert exc.value.components == [["a", "b"], ["c", "d"]]
    merged = bradley_terry(c, alpha=0.1, across_components=True)
    assert sorted(merged.component.tolist()) == [0, 0, 1, 1]
    parts = bradley_terry_by_component(c)
    assert [p.items for p in parts] == [["a", "b"], ["c", "d"]]
    # each part equals the fit on that part alone
    alone = make_comparisons(["a", "b", "a"], ["b", "a", "b"], ["left", "left", "tie"])
    np.testing.assert_allclose(parts[0].theta, bradley_terry(alone).theta, atol=1e-10)


# ---------------------------------------------------------------- 9. Elo


def test_sequential_elo_matches_evalica(evalica_case):
    for name in ("simple", "food"):
        rows, golden = evalica_case(name)
        c = make_comparisons([r["left"] for r in rows], [r["right"] for r in rows],
                             [r["winner"] for r in rows])
        got = dict(zip(c.items, sequential_elo(c), strict=True))
        for item, want in golden["elo"].items():
            assert got[item] == pytest.approx(want, abs=1e-6), (name, item)


def test_elo_intervals_are_the_theta_intervals_on_the_elo_scale():
    c = make_comparisons(["a", "b", "c", "a", "b"], ["b", "c", "a", "c", "a"], ["left"] * 5)
    res = bradley_terry(c)
    scale = 400 / np.log(10)
    np.testing.assert_allclose(res.elo_ci_high - res.elo_ci_low,
                               scale * (res.ci_high - res.ci_low))
    assert np.all(res.elo_ci_low < res.elo) and np.all(res.elo < res.elo_ci_high)
    row = res.leaderboard()[0]
    assert {"elo", "elo_ci_low", "elo_ci_high", "component"} <= set(row)


# ---------------------------------------------------------------- 9. agreement extras


def test_cohens_kappa_matches_statsmodels():
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
    from statsmodels.stats.inter_rater import to_table

    rng = np.random.default_rng(2)
    a = rng.integers(1, 5, size=80)
    b = np.clip(a + rng.integers(-1, 2, size=80), 1, 4)
    table = to_table(np.c_[a, b])[0]
    assert cohens_kappa(a, b).kappa == pytest.approx(sm_kappa(table).kappa, abs=1e-12)
    for w in ("linear", "quadratic"):
        got = cohens_kappa(a, b, weights=w).kappa
        assert got == pytest.approx(sm_kappa(table, wt=w).kappa, abs=1e-12)
    # labels, missing units dropped, pandas Series by value
    sa = pd.Series(["y", "y", "n", None, "n"], index=[5, 6, 7, 8, 9])
    sb = pd.Series(["y", "n", "n", "y", "n"])
    res = cohens_kappa(sa, sb)
    assert res.n == 4 and res.kappa == pytest.approx(0.5)


def test_kendalls_w_without_ties_correction():
    x = np.array([[1, 1, 2, 3], [2, 1, 3, 3], [1, 2, 2, 4]], dtype=float)
    m, n = x.shape
    ranks = stats.rankdata(x, axis=1)
    s = float(np.sum((ranks.sum(axis=0) - m * (n + 1) / 2) ** 2))
    assert kendalls_w(x, correction=False).w == pytest.approx(12 * s / (m**2 * (n**3 - n)))
    assert kendalls_w(x).w > kendalls_w(x, correction=False).w  # ties shrink uncorrected W
    # without ties both agree
    y = np.array([[1, 2, 3], [1, 3, 2]], dtype=float)
    assert kendalls_w(y, correction=False).w == pytest.approx(kendalls_w(y).w)


def test_icc_confidence_intervals_match_pingouin():
    import pingouin as pg

    x = _ratings(4, (15, 4))
    x[:, 1] += 1  # a rater effect separates ICC2 from ICC3
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(15) for j in range(4)],
                        columns=["t", "r", "s"])
    ref = pg.intraclass_corr(long, targets="t", raters="r", ratings="s").set_index("Type")
    names = {"ICC1": "ICC(1,1)", "ICC2": "ICC(A,1)", "ICC3": "ICC(C,1)", "ICC1k": "ICC(1,k)",
             "ICC2k": "ICC(A,k)", "ICC3k": "ICC(C,k)"}
    res = icc(x)
    for ours, theirs in names.items():
        assert res.as_dict()[ours] == pytest.approx(ref.loc[theirs, "ICC"], abs=1e-9)
        lo, hi = res.ci[ours]
        ref_lo, ref_hi = ref.loc[theirs, "CI95"]  # pingouin rounds to 2 decimals
        assert lo == pytest.approx(ref_lo, abs=0.0051) and hi == pytest.approx(ref_hi, abs=0.0051)
        assert lo <= res.as_dict()[ours] <= hi


def test_correlation_matches_scipy():
    rng = np.random.default_rng(5)
    x = rng.normal(size=40)
    y = 0.6 * x + rng.normal(size=40)
    ref = stats.pearsonr(x, y)
    got = correlation(x, y)
    assert got.r == pytest.approx(ref.statistic, abs=1e-12)
    assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval()
    assert (got.ci_low, got.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    sp = stats.spearmanr(x, y)
    got_s = correlation(x, y, method="spearman")
    assert got_s.r == pytest.approx(sp.statistic, abs=1e-12)
    assert got_s.pvalue == pytest.approx(sp.pvalue, rel=1e-9)


# ---------------------------------------------------------------- 10. degenerate designs


def test_alpha_on_two_units_warns():
    with pytest.warns(DegenerateDesignWarning, match="2 unit"):
        krippendorff_alpha([[1, 2], [1, 3]], "interval")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDesignWarning)
        krippendorff_alpha([[1, 2, 3, 4, 5], [1, 3, 3, 4, 5]], "interval")


def test_each_component_fit_matches_choix_on_that_component():
    import choix

    rng = np.random.default_rng(7)
    groups = [["a", "b", "c"], ["d", "e", "f", "g"]]
    left, right, win = [], [], []
    for g in groups:
        for _ in range(80):
            i, j = rng.choice(len(g), 2, replace=False)
            left.append(g[i])
            right.append(g[j])
            win.append("left" if rng.random() < 0.5 + 0.1 * (j - i) else "right")
    c = make_comparisons(left, right, win)
    parts = bradley_terry_by_component(c)
    for part, g in zip(parts[::-1], groups, strict=True):  # largest group first
        assert part.items == g
        idx = {x: k for k, x in enumerate(g)}
        data = [(idx[a], idx[b]) if w == "left" else (idx[b], idx[a])
                for a, b, w in zip(left, right, win, strict=True) if a in idx]
        ref = choix.ilsr_pairwise(len(g), data, tol=1e-12)
        np.testing.assert_allclose(part.theta, ref - ref.mean(), atol=1e-6)
