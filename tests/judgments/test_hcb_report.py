"""HCB report statistics: disjoint model sets per domain, the divergence
verdict, the paper's win rate, clustered intervals, per-component ranking, input errors,
axis correlations, skill breakdowns and degenerate designs."""

from __future__ import annotations

import shutil
import warnings
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from creagraph.core.io import InputError
from creagraph.judgments import (
    AXES,
    DegenerateDesignWarning,
    HCBData,
    generate_hcb,
    hcb_report,
    read_hcb,
    write_hcb,
)
from creagraph.judgments.cli import app
from creagraph.judgments.synthetic import disjoint_design

runner = CliRunner()


def _report(data, **kw):
    kw.setdefault("n_bootstrap", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDesignWarning)
        return hcb_report(data, **kw)


@pytest.fixture(scope="module")
def disjoint():
    data, truth = generate_hcb(seed=2, **disjoint_design())
    return data, truth, _report(data)


# ---------------------------------------------------------------- 3. disjoint model sets


def test_generator_makes_disjoint_domain_model_sets(disjoint):
    data, truth, _ = disjoint
    prompts = data.prompt_index()
    seen = defaultdict(set)
    for r in data.scalar:
        seen[prompts[r["prompt_id"]]["domain"]].add(r["model"])
    assert {d: tuple(sorted(m)) for d, m in seen.items()} == {
        d: tuple(sorted(m)) for d, m in truth.domain_models.items()}
    sets = list(seen.values())
    assert all(len(s) == 4 for s in sets) and len(set().union(*sets)) == 12


def _blocks(data, stage, domain, axis):
    """Reference pivot: (prompt, evaluator) blocks x the domain's models, complete only."""
    prompts = data.prompt_index()
    rows = [r for r in data.scalar if prompts[r["prompt_id"]]["stage"] == stage
            and prompts[r["prompt_id"]]["domain"] == domain]
    models = sorted({r["model"] for r in rows})
    cells = defaultdict(dict)
    for r in rows:
        cells[(r["prompt_id"], r["evaluator_id"])][r["model"]] = r[axis]
    mat = np.array([[c.get(m, np.nan) for m in models] for c in cells.values()])
    return mat[~np.isnan(mat).any(axis=1)]


def test_kendalls_w_per_domain_and_stratified_phase_match_scipy(disjoint):
    data, truth, report = disjoint
    rows = report.tables["kendalls_w_blocks"]
    for stage in ("ideation", "mockup", "refinement"):
        for axis in AXES:
            dom_rows = [r for r in rows if r["stage"] == stage and r["axis"] == axis
                        and r["scope"] == "domain"]
            assert {r["domain"] for r in dom_rows} == set(truth.domain_models)
            chi2 = 0.0
            for r in dom_rows:
                x = _blocks(data, stage, r["domain"], axis)
                ref = stats.friedmanchisquare(*x.T)
                assert r["n_blocks"] == x.shape[0]
                assert r["chi2"] == pytest.approx(ref.statistic, rel=1e-9)
                assert r["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
                assert r["kendalls_w"] == pytest.approx(
                    ref.statistic / (x.shape[0] * (x.shape[1] - 1)), rel=1e-9)
                chi2 += ref.statistic
            (phase,) = [r for r in rows if r["stage"] == stage and r["axis"] == axis
                        and r["scope"] == "phase"]
            # no block spans two domains: the phase combines the per-domain tests
            assert phase["method"].startswith("stratified by domain")
            assert phase["chi2"] == pytest.approx(chi2, rel=1e-9)
            assert phase["pvalue"] == pytest.approx(stats.chi2.sf(chi2, 9), rel=1e-9)
    conv = report.tables["convergence_phase"]
    assert all(r["models_differ"] is not None for r in conv)


def _evaluator_means(data, stage, domain, axis):
    """Reference pivot: evaluators x the domain's models, each evaluator's mean rating."""
    prompts = data.prompt_index()
    rows = [r for r in data.scalar if prompts[r["prompt_id"]]["stage"] == stage
            and prompts[r["prompt_id"]]["domain"] == domain]
    models = sorted({r["model"] for r in rows})
    cells = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[r["evaluator_id"]][r["model"]].append(r[axis])
    mat = np.array([[np.mean(c[m]) if c[m] else np.nan for m in models] for c in cells.values()])
    return mat[~np.isnan(mat).any(axis=1)]


def test_kendalls_w_has_the_evaluators_as_judges(disjoint):
    # the HCB paper's W per domain x phase: evaluators rank the models (their mean ratings)
    data, truth, report = disjoint
    rows = report.tables["kendalls_w_phase"]
    for stage in ("ideation", "refinement"):
        for axis in AXES:
            for r in [r for r in rows if r["stage"] == stage and r["axis"] == axis
                      and r["scope"] == "domain"]:
                x = _evaluator_means(data, stage, r["domain"], axis)
                ref = stats.friedmanchisquare(*x.T)
                assert r["n_blocks"] == r["n_block_raters"] == x.shape[0]
                assert r["kendalls_w"] == pytest.approx(
                    ref.statistic / (x.shape[0] * (x.shape[1] - 1)), rel=1e-9)
    conv = {(r["stage"], r["axis"]): r for r in report.tables["convergence_phase"]}
    for r in rows:
        if r["scope"] == "phase":
            assert conv[(r["stage"], r["axis"])]["kendalls_w"] == r["kendalls_w"]


def test_models_differ_is_unknown_when_nothing_can_be_tested():
    # one evaluator per prompt and one prompt per cell: one tournament, nothing to test
    data, _ = generate_hcb(seed=0, prompts_per_cell=1, raters_per_prompt=1,
                           domains=["poster", "logo"],
                           domain_models={"poster": ["aurora", "basalt"],
                                          "logo": ["cobalt", "dune"]})
    report = _report(data)
    for r in report.tables["convergence"] + report.tables["convergence_phase"]:
        assert r["models_differ"] is None and r["interaction_p"] is None
        assert r["verdict"] == "undetermined"
    phase = [r for r in report.tables["kendalls_w_phase"] if r["scope"] == "phase"]
    assert all(r["kendalls_w"] is None and "not computable" in r["note"] for r in phase)


# ---------------------------------------------------------------- 4. divergence verdict


def test_low_alpha_without_model_differences_is_not_divergence():
    kw = {"seed": 4, "quality_scale": 0.0, "unit_sd": 0.0,
          "rater_noise": {"prompt_adherence": 0.3, "usability": 0.7, "visual_appeal": 1.8}}
    noise, _ = generate_hcb(taste_share={a: 0.0 for a in AXES}, **kw)
    taste, truth = generate_hcb(taste_share={"prompt_adherence": 0.0, "usability": 0.0,
                                             "visual_appeal": 0.9}, **kw)
    for data, want in ((noise, "no_difference"), (taste, "divergent")):
        phase = {(r["stage"], r["axis"]): r for r in _report(data).tables["convergence_phase"]}
        for stage in ("ideation", "mockup", "refinement"):
            r = phase[(stage, "visual_appeal")]
            assert r["alpha_interval"] < 0.4
            assert r["verdict"] == want, (stage, r)
            assert r["n_tournaments"] > 0 and r["rater_top_models"]
    assert truth.divergent_axes == ("visual_appeal",)


# ---------------------------------------------------------------- 5. win rates


def test_win_rates_are_tournament_shares_and_pairwise_rates(disjoint):
    data, _, report = disjoint
    by_cell = defaultdict(list)
    for r in report.tables["win_rates"]:
        by_cell[(r["domain"], r["stage"], r["dimension"])].append(r)
    for rows in by_cell.values():
        assert sum(r["tournament_win_rate"] for r in rows) == pytest.approx(1.0)
        n_tournaments = max(r["tournaments"] for r in rows)
        for r in rows:
            assert r["tournament_win_rate"] == pytest.approx(r["tournaments_won"] / n_tournaments)
            assert r["pairwise_win_rate"] == pytest.approx(
                (r["wins"] + r["ties"] / 2) / r["comparisons"])
        # the pairwise rate sums to (number of models) / 2 over a round robin, not to 1
        assert sum(r["pairwise_win_rate"] for r in rows) == pytest.approx(len(rows) / 2)
        assert "win_rate" not in rows[0]


# ---------------------------------------------------------------- 6. cluster bootstrap


def test_hcb_report_bootstraps_raters_and_intervals_widen_with_taste():
    data, _ = generate_hcb(seed=1, prompts_per_cell=6, n_evaluators=8, raters_per_prompt=4,
                           pairwise_taste=1.2, domains=["poster"])

    def width(cluster):
        rep = _report(data, n_bootstrap=150, cluster=cluster)
        rows = rep.tables["bradley_terry"]
        assert {r["bootstrap"] for r in rows} == {f"150 × {cluster}"}
        return np.mean([r["ci_high"] - r["ci_low"] for r in rows])

    assert width("rater") > 1.3 * width("comparison")
    # the default report resamples raters
    default = hcb_report(data, n_bootstrap=20)
    assert {r["bootstrap"] for r in default.tables["bradley_terry"]} == {"20 × rater"}


# ---------------------------------------------------------------- 7. components in a cell


def test_cell_with_unconnected_groups_is_ranked_per_group():
    data = HCBData(prompts=[{"prompt_id": "p1", "domain": "d", "stage": "mockup",
                             "prompt": "x", "input_image": ""}])
    pairs = [("a", "b", "a"), ("b", "a", "a"), ("a", "b", "b"),
             ("c", "d", "c"), ("d", "c", "d"), ("c", "d", "c")]
    for k, (x, y, c) in enumerate(pairs):
        data.pairwise.append({"prompt_id": "p1", "evaluator_id": f"e{k}", "model_a": x,
                              "model_b": y, "chosen": c, "evaluator_core_skill": "",
                              "dimension": "overall"})
        data.scalar.append({"prompt_id": "p1", "evaluator_id": f"e{k}", "model": x,
                            **{a: 3.0 for a in AXES}})
    rows = _report(data).tables["bradley_terry"]
    comp = {r["model"]: r["component"] for r in rows}
    assert comp["a"] == comp["b"] != comp["c"] == comp["d"]
    assert sorted(r["rank"] for r in rows) == [1, 1, 2, 2]


# ---------------------------------------------------------------- 8. input errors


@pytest.fixture
def hcb_dir(tmp_path):
    data, _ = generate_hcb(seed=0, prompts_per_cell=1)
    write_hcb(data, tmp_path / "src")
    return tmp_path / "src"


@pytest.mark.parametrize("bad", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_non_finite_ratings_name_file_line_and_column(hcb_dir, tmp_path, bad):
    d = shutil.copytree(hcb_dir, tmp_path / "x")
    path = d / "scalar_feedback.csv"
    lines = path.read_text().splitlines()
    cells = lines[3].split(",")
    cells[3] = bad  # prompt_adherence
    lines[3] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"scalar_feedback\.csv:4: column 'prompt_adherence'"):
        read_hcb(d)


@pytest.mark.parametrize("name", ["scalar_feedback.csv", "pairwise_comparisons.csv"])
def test_missing_required_file_is_an_error(hcb_dir, tmp_path, name):
    d = shutil.copytree(hcb_dir, tmp_path / "y")
    (d / name).unlink()
    with pytest.raises(InputError, match=rf"{name}: file not found"):
        read_hcb(d)
    result = runner.invoke(app, ["hcb-report", str(d), "--out", str(tmp_path / "out")])
    assert result.exit_code != 0 and isinstance(result.exception, InputError)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- 9. correlations, skills


def test_axis_correlations_match_scipy(disjoint):
    data, _, report = disjoint
    rows = {(r["stage"], r["axis_a"], r["axis_b"]): r for r in report.tables["axis_correlations"]}
    x = np.array([r["prompt_adherence"] for r in data.scalar])
    y = np.array([r["visual_appeal"] for r in data.scalar])
    ref = stats.pearsonr(x, y)
    got = rows[("all", "prompt_adherence", "visual_appeal")]
    assert got["pearson_r"] == pytest.approx(ref.statistic, abs=1e-12)
    assert got["ci_low"] == pytest.approx(ref.confidence_interval().low, abs=1e-12)
    assert got["spearman_rho"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert "Correlations between axes" in report.summary


def test_breakdown_by_evaluator_core_skill_adds_up(disjoint):
    _, _, report = disjoint
    t = report.tables
    skills = {r["evaluator_core_skill"] for r in t["win_rates_by_skill"]}
    assert len(skills) >= 2
    total = defaultdict(int)
    for r in t["win_rates_by_skill"]:
        total[(r["domain"], r["stage"], r["model"])] += r["wins"]
    for r in t["win_rates"]:
        assert total[(r["domain"], r["stage"], r["model"])] == r["wins"]
    n = defaultdict(int)
    for r in t["scalar_means_by_skill"]:
        n[(r["domain"], r["stage"], r["model"], r["axis"])] += r["n"]
    for r in t["scalar_means"]:
        assert n[(r["domain"], r["stage"], r["model"], r["axis"])] == r["n"]


# ---------------------------------------------------------------- 10. degenerate designs


def test_degenerate_designs_are_noted_and_warned():
    data, _ = generate_hcb(seed=0, prompts_per_cell=2, n_evaluators=1, raters_per_prompt=1)
    with pytest.warns(DegenerateDesignWarning, match="degenerate"):
        report = hcb_report(data, n_bootstrap=0)
    kr = report.tables["krippendorff"]
    assert all(r["note"].startswith("degenerate") for r in kr)  # 2 units per model
    fr = [r for r in report.tables["friedman"] if r["kendalls_w"] is not None]
    assert fr and all("one rater" in r["note"] for r in fr)
    assert "degenerate designs" in report.summary


def test_empty_optional_table_round_trips_as_header_only(tmp_path):
    data, _ = generate_hcb(seed=0, prompts_per_cell=1, theme_rate=0.0)
    assert not data.qualitative
    write_hcb(data, tmp_path)
    assert (tmp_path / "qualitative_feedback.csv").read_text().startswith("prompt_id,")
    back = read_hcb(tmp_path)
    assert back.qualitative == [] and len(back.scalar) == len(data.scalar)


# ---------------------------------------------------------------- Table 2 arithmetic


def _tournament_data():
    """Hand-built: one domain x phase, models a-d, 3 evaluators x 2 prompts = 6
    tournaments of six pairings each, with known winners."""
    models = ["a", "b", "c", "d"]
    prompts = [{"prompt_id": p, "domain": "poster", "stage": "ideation", "prompt": p,
                "input_image": ""} for p in ("p1", "p2")]
    # per tournament: the strength order (the earlier wins its pairing), and pairings
    # that are ties
    plan = {
        ("e1", "p1"): ("abcd", set()),  # a wins (3 points)
        ("e1", "p2"): ("bacd", set()),  # b wins
        ("e2", "p1"): ("abcd", {("a", "b")}),  # a 2.5, b 2.5: a and b share first
        ("e2", "p2"): ("cabd", set()),  # c wins
        ("e3", "p1"): ("abcd", {("a", "b"), ("a", "c"), ("b", "c")}),  # a b c 2: 3-way
        ("e3", "p2"): ("abcd", set()),  # a wins
    }
    pairwise, scalar = [], []
    for (ev, p), (order, ties) in plan.items():
        for i, x in enumerate(models):
            for y in models[i + 1:]:
                chosen = "tie" if (x, y) in ties else x if order.index(x) < order.index(y) else y
                pairwise.append({"prompt_id": p, "evaluator_id": ev, "model_a": x,
                                 "model_b": y, "chosen": chosen, "evaluator_core_skill": "",
                                 "dimension": "overall"})
        for _k, m in enumerate(models):
            scalar.append({"prompt_id": p, "evaluator_id": ev, "model": m,
                           **{a: float(4 - order.index(m)) for a in AXES}})
    return HCBData(prompts=prompts, pairwise=pairwise, scalar=scalar)


def test_table2_tournament_win_rates_by_hand():
    report = _report(_tournament_data())
    rates = {r["model"]: r for r in report.tables["win_rates"]}
    # a: 1 + 1/2 + 1/3 + 1 = 17/6; b: 1 + 1/2 + 1/3; c: 1 + 1/3; d: 0 — of 6 tournaments
    want = {"a": 17 / 6 / 6, "b": 11 / 6 / 6, "c": 8 / 6 / 6, "d": 0.0}
    for m, w in want.items():
        assert rates[m]["tournament_win_rate"] == pytest.approx(w, abs=1e-12)
        assert rates[m]["tournaments"] == 6
    assert sum(want.values()) == pytest.approx(1.0)
    # a's pairwise rate over its 18 pairings: wins 3+2+2+2+1+3, ties 1+2
    a = rates["a"]
    assert (a["wins"], a["ties"], a["comparisons"]) == (13, 3, 18)
    assert a["pairwise_win_rate"] == pytest.approx(14.5 / 18)
    table2 = {r["model"]: r for r in report.tables["table2"]}
    assert table2["a"]["tournament_win_rate"] == rates["a"]["tournament_win_rate"]
    # Friedman over the six tournaments' pairing scores
    scores = np.array([[3, 2, 1, 0], [2, 3, 1, 0], [2.5, 2.5, 1, 0], [2, 1, 3, 0],
                       [2, 2, 2, 0], [3, 2, 1, 0]])
    assert table2["a"]["friedman_p"] == pytest.approx(
        stats.friedmanchisquare(*scores.T).pvalue, rel=1e-12)
    # every rater orders the models the same on each prompt: α per model is recorded
    assert set(table2["a"]) >= {f"alpha_{a}" for a in AXES}
