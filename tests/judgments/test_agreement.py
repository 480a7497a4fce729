from __future__ import annotations

import csv

import numpy as np
import pytest

from creagraph.judgments import (
    LEFT,
    RIGHT,
    TIE,
    category_counts,
    fleiss_kappa,
    friedman,
    icc,
    kendalls_w,
    krippendorff_alpha,
    make_comparisons,
    order_swap_consistency,
    ratings_matrix,
    swapped_pairs,
)

# ---------------------------------------------------------------- Krippendorff's alpha


def _alpha_cases(transcribed):
    for entry in transcribed["krippendorff_alpha"]:
        if "data" not in entry:
            continue
        for level, expected in entry["expected"].items():
            yield entry, level, expected


def test_krippendorff_reference_values(transcribed):
    checked = 0
    for entry, level, expected in _alpha_cases(transcribed):
        data = entry["data"]
        if level == "custom_abs_distance":
            got = krippendorff_alpha(data, distance=lambda a, b: np.abs(a - b))
        else:
            got = krippendorff_alpha(data, level)
        digits = 3 if entry.get("rounding", "").startswith("ordinal/ratio") and level in (
            "ordinal", "ratio") else 6
        tol = 10.0**-digits
        assert round(got, digits) == pytest.approx(expected, abs=tol), (entry["source"], level)
        checked += 1
    assert checked >= 12


def test_krippendorff_files(stats_dir, transcribed):
    with (stats_dir / "evalica" / "gcl.csv").open(newline="") as handle:
        gcl = list(csv.reader(handle))
    assert krippendorff_alpha(gcl, "nominal") == pytest.approx(0.0833333, abs=1e-7)
    with (stats_dir / "evalica" / "codings.csv").open(newline="") as handle:
        codings = list(csv.reader(handle))
    assert krippendorff_alpha(codings, "nominal") == pytest.approx(904 / 1216, abs=1e-9)
    assert round(krippendorff_alpha(codings, "ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(codings, "ratio"), 3) == 0.797


def _alpha_by_pairs(data: np.ndarray, metric) -> float:
    """Independent textbook computation (Krippendorff 2011, pairable values per unit)."""
    values: list[float] = []
    d_o_num = 0.0
    n_total = 0.0
    for col in data.T:
        vals = col[~np.isnan(col)]
        m = len(vals)
        if m < 2:
            continue
        n_total += m
        for i in range(m):
            for j in range(m):
                if i != j:
                    d_o_num += metric(vals[i], vals[j]) / (m - 1)
        values.extend(vals.tolist())
    vals = np.array(values)
    d_o = d_o_num / n_total
    diffs = metric(vals[:, None], vals[None, :])
    d_e = diffs.sum() / (n_total * (n_total - 1))
    return 1 - d_o / d_e


@pytest.mark.parametrize("seed", range(4))
def test_krippendorff_package_agrees_with_textbook_formula(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 6, size=(4, 15)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    assert krippendorff_alpha(data, "interval") == pytest.approx(
        _alpha_by_pairs(data, lambda a, b: (a - b) ** 2), abs=1e-9)
    assert krippendorff_alpha(data, "nominal") == pytest.approx(
        _alpha_by_pairs(data, lambda a, b: (a != b).astype(float)), abs=1e-9)


def test_krippendorff_bad_input():
    with pytest.raises(ValueError, match="rectangular"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(ValueError, match="nominal"):
        krippendorff_alpha([["a", "b"], ["a", "c"]], "interval")
    with pytest.raises(ValueError, match="two or more"):
        krippendorff_alpha([[1, None], [None, 2]])


# ---------------------------------------------------------------- Friedman / Kendall


def test_friedman_and_kendalls_w_reference(transcribed):
    ref = transcribed["friedman_and_kendalls_w"][0]
    res = friedman(ref["data"])
    exp = ref["expected"]
    assert res.statistic == pytest.approx(exp["friedman_Q_chisq"], abs=1e-7)
    assert res.pvalue == pytest.approx(exp["p_value"], abs=1e-7)
    assert res.df == exp["ddof1"]
    assert res.kendalls_w == pytest.approx(exp["kendalls_W_tie_corrected"], abs=1e-8)
    kw = kendalls_w(ref["data"])
    assert kw.chi2 == pytest.approx(res.statistic, abs=1e-9)
    assert kw.pvalue == pytest.approx(res.pvalue, abs=1e-9)


def test_kendalls_w_perfect_and_opposed_and_missing():
    assert kendalls_w([[1, 2, 3, 4]] * 5).w == pytest.approx(1.0)
    assert kendalls_w([[1, 2, 3, 4], [4, 3, 2, 1]]).w == pytest.approx(0.0)
    with pytest.raises(ValueError, match="missing"):
        kendalls_w([[1, 2, 3], [1, np.nan, 3]])
    assert kendalls_w([[1, 2, 3], [1, np.nan, 3], [1, 2, 3]], nan_policy="omit").n_blocks == 2


# ---------------------------------------------------------------- Fleiss, ICC


def test_fleiss_kappa_published_example():
    # Fleiss (1971) style worked example (10 subjects, 14 raters, 5 categories): 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
             [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
             [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert round(fleiss_kappa(table), 3) == 0.210


def test_fleiss_from_labels_and_validation():
    counts, cats = category_counts([["a", "a", "b"], ["b", "b", "b"], ["a", "b", None]])
    assert cats == ["a", "b"]
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa(counts)
    counts, _ = category_counts([["a", "a"], ["b", "b"], ["a", "a"]])
    assert fleiss_kappa(counts) == pytest.approx(1.0)


def test_icc_shrout_fleiss_table():
    # Shrout & Fleiss (1979), Table 2 data; Table 4 values (two decimals)
    data = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    r = icc(data).as_dict()
    expected = {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62,
                "ICC3k": 0.91}
    for key, value in expected.items():
        assert round(r[key], 2) == value, key


# ---------------------------------------------------------------- swaps, pivot


def test_order_swap_consistency_and_matching():
    c = make_comparisons(
        ["a", "b", "a", "c", "c", "a"],
        ["b", "a", "c", "a", "a", "c"],
        ["left", "right", "left", "left", "tie", "tie"],
        raters=["j", "j", "j", "j", "k", "k"],
        prompts=["p", "p", "p", "p", "p", "p"],
    )
    orig, swap = swapped_pairs(c)
    assert orig.tolist() == [LEFT, LEFT, TIE] and swap.tolist() == [RIGHT, LEFT, TIE]
    res = order_swap_consistency(orig, swap)
    assert res.n_pairs == 3 and res.consistency == pytest.approx(2 / 3)
    assert res.first_position_rate == 1.0 and res.second_position_rate == 0.0


def test_ratings_matrix_averages_repeats():
    m, units, raters = ratings_matrix(["u1", "u1", "u2", "u1"], ["r1", "r2", "r1", "r1"],
                                      [2, 4, 5, 4])
    assert units == ["u1", "u2"] and raters == ["r1", "r2"]
    assert m[0].tolist() == [3.0, 5.0] and m[1, 0] == 4.0 and np.isnan(m[1, 1])
