"""The HCB paper's other views (hcb_views), the divergence test's power per cell, and
the report page (hcb_figures / ``judge hcb-report`` writing report.html)."""

from __future__ import annotations

import base64
import math
import re
import sys
import warnings

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from creagraph.judgments import DegenerateDesignWarning, HCBData, generate_hcb, write_hcb
from creagraph.judgments.cli import app
from creagraph.judgments.divergence import Profiles, interaction_power
from creagraph.judgments.hcb import hcb_report
from creagraph.judgments.hcb_views import (
    VIEW_TABLES,
    head_to_head_by_phase,
    phase_leaders,
    rating_vs_win_rate,
    scalar_rank_link,
    themes_by_phase,
)

runner = CliRunner()


def _hand_data() -> HCBData:
    """Two phases of one domain; models a, b, c; two evaluators."""
    prompts = [{"prompt_id": "p1", "domain": "poster", "stage": "ideation", "prompt": "x"},
               {"prompt_id": "p2", "domain": "poster", "stage": "mockup", "prompt": "y"}]
    outputs = [{"prompt_id": p, "model": m, "output": "o", "empty": (p, m) == ("p2", "c")}
               for p in ("p1", "p2") for m in "abc"]

    def pw(p, e, a, b, chosen):
        return {"prompt_id": p, "evaluator_id": e, "model_a": a, "model_b": b,
                "chosen": chosen, "dimension": "", "evaluator_core_skill": ""}

    pairwise = [
        pw("p1", "e1", "a", "b", "a"), pw("p1", "e1", "a", "c", "a"),
        pw("p1", "e1", "b", "c", "tie"),
        pw("p1", "e2", "a", "b", "b"), pw("p1", "e2", "a", "c", "a"), pw("p1", "e2", "b", "c", "b"),
        # p2: c's output is empty, so c loses whatever was recorded
        pw("p2", "e1", "a", "b", "a"), pw("p2", "e1", "a", "c", "c"), pw("p2", "e1", "b", "c", "c"),
    ]
    ratings = {("p1", "e1"): (5, 3, 1), ("p1", "e2"): (4, 4, 2), ("p2", "e1"): (3, 2, 1)}
    scalar = [{"prompt_id": p, "evaluator_id": e, "model": m, "prompt_adherence": float(v),
               "usability": float(v), "visual_appeal": float(6 - v)}
              for (p, e), vals in ratings.items() for m, v in zip("abc", vals, strict=True)]
    qualitative = [
        {"prompt_id": "p1", "evaluator_id": "e1", "model": "a", "theme": "colour",
         "sentiment": s, "quote": ""} for s in ("positive", "positive", "negative")
    ] + [{"prompt_id": "p1", "evaluator_id": "e2", "model": "b", "theme": "layout",
          "sentiment": "neutral", "quote": ""}]
    return HCBData(prompts, outputs, pairwise, scalar, qualitative)


def test_rating_vs_win_rate_is_figure_3a_arithmetic():
    rows = {r["model"]: r for r in rating_vs_win_rate(_hand_data())}
    # a: p1 wins 3 of 4, p2 beats b and loses to c?  c is empty on p2 -> a wins: 5 of 6
    assert rows["a"]["comparisons"] == 6
    assert rows["a"]["pairwise_win_rate"] == pytest.approx(5 / 6)
    # b: p1 vs a 1 win 1 loss, vs c tie + win; p2 loses to a, beats empty c: (3 + 0.5) / 6
    assert rows["b"]["pairwise_win_rate"] == pytest.approx(3.5 / 6)
    # mean over the three axes and both phases: a rated 5, 4, 3 (pa, us) and 1, 2, 3 (va)
    assert rows["a"]["mean_rating"] == pytest.approx(np.mean([5, 4, 3, 5, 4, 3, 1, 2, 3]))
    assert rows["a"]["mean_visual_appeal"] == pytest.approx(2.0)
    assert rows["a"]["n_ratings"] == 9


def test_head_to_head_by_phase_counts_each_pair_both_ways():
    rows = {(r["stage"], r["model"], r["opponent"]): r for r in head_to_head_by_phase(_hand_data())}
    ab = rows[("ideation", "a", "b")]
    assert (ab["wins"], ab["losses"], ab["ties"], ab["pairwise_win_rate"]) == (1, 1, 0, 0.5)
    bc = rows[("ideation", "b", "c")]
    assert (bc["wins"], bc["ties"], bc["pairwise_win_rate"]) == (1, 1, 0.75)
    assert rows[("ideation", "c", "b")]["pairwise_win_rate"] == 0.25
    assert rows[("mockup", "a", "c")]["wins"] == 1  # empty output rule applied
    assert ("mockup", "a", "a") not in rows


def test_themes_by_phase_share_and_net_sentiment():
    rows = {r["theme"]: r for r in themes_by_phase(_hand_data())}
    assert rows["colour"]["mentions"] == 3 and rows["colour"]["share_of_mentions"] == 0.75
    assert rows["colour"]["net_sentiment"] == pytest.approx(1 / 3)
    assert rows["layout"]["net_sentiment"] == 0.0 and rows["layout"]["neutral"] == 1


def test_scalar_rank_link_and_phase_leaders_from_the_report_tables():
    data = _hand_data()
    tables = {"scalar_means": [
        {"domain": "poster", "stage": "ideation", "axis": "prompt_adherence", "model": m,
         "mean": v} for m, v in (("a", 4.5), ("b", 3.5), ("c", 1.5))],
        "win_rates": [
            {"domain": "poster", "stage": "ideation", "dimension": "overall", "model": m,
             "tournament_win_rate": t, "pairwise_win_rate": p}
            for m, t, p in (("a", 0.5, 0.75), ("b", 0.5, 0.5), ("c", 0.0, 0.25))]}
    link = scalar_rank_link(data, tables)
    cell = next(r for r in link if r["scope"] == "cell")
    # ideation pairwise win rates: a 0.75, b 0.625, c 0.125 -> same order as the means
    assert cell["n"] == 3 and cell["spearman_rho"] == pytest.approx(1.0)
    leaders = {r["criterion"]: r for r in phase_leaders(tables)}
    assert leaders["tournament_win_rate"]["leader"] == "a / b"  # joint first place
    assert leaders["tournament_win_rate"]["runner_up"] == "c"
    assert leaders["pairwise_win_rate"]["gap"] == pytest.approx(0.25)
    assert leaders["mean_prompt_adherence"]["leader"] == "a"


def test_scalar_rank_link_pooled_is_spearman_of_within_cell_centred_values():
    data, _ = generate_hcb(seed=3, prompts_per_cell=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDesignWarning)
        report = hcb_report(data, n_bootstrap=0, n_permutations=99)
    for name in VIEW_TABLES:
        assert report.tables[name], name
    link = report.tables["scalar_rank_link"]
    cells = [r for r in link if r["scope"] == "cell" and r["axis"] == "usability"
             and r["spearman_rho"] is not None]
    pooled = next(r for r in link if r["scope"] == "pooled" and r["axis"] == "usability")
    assert pooled["n"] == sum(r["n"] for r in cells)
    # the generator's ratings and preferences share the models' quality: positive link
    assert pooled["spearman_rho"] > 0.5


def test_interaction_power_has_the_right_size_and_grows_with_the_design():
    raters = np.repeat(np.arange(5), 6)
    design = [Profiles(np.zeros((30, 4)), raters)]
    null = interaction_power(design, taste_ratio=0.0, n_simulations=300, seed=1)
    # an exact permutation test: size ≤ 0.05 up to Monte Carlo error (s.e. 0.013)
    assert null <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)
    small = interaction_power(design, taste_ratio=0.5, n_simulations=200, seed=1)
    bigger = interaction_power([Profiles(np.zeros((60, 4)), np.repeat(np.arange(5), 12))],
                               taste_ratio=0.5, n_simulations=200, seed=1)
    assert 0.3 < small < bigger
    # one evaluator per stratum: no test, no power
    assert interaction_power([Profiles(np.zeros((6, 4)), np.zeros(6, np.int64))]) is None
    with pytest.raises(ValueError, match="n_simulations"):
        interaction_power(design, n_simulations=0)


def test_convergence_tables_carry_the_power_at_each_design():
    data, _ = generate_hcb(seed=0, prompts_per_cell=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDesignWarning)
        report = hcb_report(data, n_bootstrap=0, n_permutations=99)
    for name in ("convergence", "convergence_phase"):
        for r in report.tables[name]:
            assert 0.0 <= r["interaction_power"] <= 1.0
            assert r["power_taste_ratio"] == 0.5
            if r["interaction_p"] >= 0.05 and r["interaction_power"] < 0.8:
                assert "low power" in r["note"]
    assert "| power |" in report.summary


def test_hcb_report_writes_report_html_with_every_figure(tmp_path, monkeypatch):
    data, _ = generate_hcb(seed=1, prompts_per_cell=2)
    write_hcb(data, tmp_path / "in")
    res = runner.invoke(app, ["hcb-report", str(tmp_path / "in"), "--out",
                              str(tmp_path / "out"), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "out" / "report.html").read_text()
    images = re.findall(r'alt="(\w+)" src="data:image/png;base64,([^"]+)"', page)
    assert [n for n, _ in images] == ["verdicts", "rating_vs_win_rate", "tournament_win_rates",
                                      "head_to_head", "axis_correlations", "themes"]
    assert all(base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n" for _, b in images)
    assert "Phase leaders" in page and "<script" not in page
    for name in VIEW_TABLES:
        assert (tmp_path / "out" / f"{name}.csv").is_file()

    # without the report extra: the CSVs are written, the page is skipped and said so
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    res = runner.invoke(app, ["hcb-report", str(tmp_path / "in"), "--out",
                              str(tmp_path / "out2"), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert "figures skipped" in res.output and "report" in res.output
    assert not (tmp_path / "out2" / "report.html").exists()
    assert (tmp_path / "out2" / "rating_vs_win_rate.csv").is_file()


def test_axis_correlations_by_domain_match_scipy():
    data, _ = generate_hcb(seed=4, prompts_per_cell=2)
    from creagraph.judgments.hcb_views import axis_correlations_by_domain

    prompts = data.prompt_index()
    rows = axis_correlations_by_domain(data)
    r = rows[0]
    recs = [s for s in data.scalar if prompts[s["prompt_id"]]["domain"] == r["domain"]]
    x = np.array([s[r["axis_a"]] for s in recs])
    y = np.array([s[r["axis_b"]] for s in recs])
    ok = ~np.isnan(x) & ~np.isnan(y)
    assert r["pearson_r"] == pytest.approx(stats.pearsonr(x[ok], y[ok]).statistic, abs=1e-12)
    assert r["spearman_rho"] == pytest.approx(stats.spearmanr(x[ok], y[ok]).statistic, abs=1e-12)
    assert len(rows) == 3 * len({prompts[s["prompt_id"]]["domain"] for s in data.scalar})
