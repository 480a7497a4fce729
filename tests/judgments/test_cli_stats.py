"""CLI: missing values in `judge agreement`, Cohen's κ, ties correction,
sequential Elo and clustered bootstrap in `judge bt`."""

from __future__ import annotations

import csv

import krippendorff
import numpy as np
import pytest
from typer.testing import CliRunner

from creagraph.core.io import InputError
from creagraph.judgments.cli import app
from tests.judgments.csvfiles import write_csv

runner = CliRunner()


def _stats(path):
    with path.open(newline="") as handle:
        return {r["statistic"]: r for r in csv.DictReader(handle)}


def test_agreement_reads_na_tokens_as_missing(tmp_path):
    # 3 raters x 6 units of labels; NA-like cells are missing, not a category
    table = [["a", "b", "NA", "a", "c", "b"],
             ["a", "nan", "b", "a", "N/A", "b"],
             ["b", "b", "b", "", "c", "null"]]
    rows = [[u, f"r{r}", table[r][u]] for r in range(3) for u in range(6)]
    path = write_csv(tmp_path / "labels.csv", ["unit", "rater", "value"], rows)
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["agreement", str(path), "--level", "nominal", "--out", str(out)])
    assert result.exit_code == 0, result.output
    code = {"a": 0.0, "b": 1.0, "c": 2.0}
    ref = np.array([[code.get(v, np.nan) for v in row] for row in table])
    want = krippendorff.alpha(reliability_data=ref, level_of_measurement="nominal")
    got = float(_stats(out)["krippendorff_alpha_nominal"]["value"])
    assert got == pytest.approx(want, abs=1e-12)


def test_agreement_rejects_infinite_ratings_with_line(tmp_path):
    path = write_csv(tmp_path / "r.csv", ["unit", "rater", "value"],
                  [[1, "a", 3], [1, "b", "inf"], [2, "a", 1], [2, "b", 2]])
    result = runner.invoke(app, ["agreement", str(path)])
    assert isinstance(result.exception, InputError)
    assert "r.csv:3: column 'value'" in str(result.exception)


def test_agreement_two_raters_reports_cohens_kappa_and_uncorrected_w(tmp_path):
    from statsmodels.stats.inter_rater import cohens_kappa, to_table

    rng = np.random.default_rng(0)
    a = rng.integers(1, 5, size=30)
    b = np.clip(a + rng.integers(-1, 2, size=30), 1, 4)
    rows = [[u, "x", a[u]] for u in range(30)] + [[u, "y", b[u]] for u in range(30)]
    path = write_csv(tmp_path / "two.csv", ["unit", "rater", "value"], rows)
    out = tmp_path / "o.csv"
    result = runner.invoke(app, ["agreement", str(path), "--no-ties-correction", "--out",
                                 str(out)])
    assert result.exit_code == 0, result.output
    s = _stats(out)
    table = to_table(np.c_[a, b])[0]
    assert float(s["cohens_kappa"]["value"]) == pytest.approx(cohens_kappa(table).kappa)
    assert float(s["cohens_kappa_quadratic"]["value"]) == pytest.approx(
        cohens_kappa(table, wt="quadratic").kappa)
    assert "no ties correction" in s["kendalls_w"]["note"]
    assert "95% CI" in s["ICC2"]["note"]


def test_bt_sequential_elo_and_elo_note(stats_dir, evalica_case, tmp_path):
    _, golden = evalica_case("food")
    out = tmp_path / "b.csv"
    result = runner.invoke(app, ["bt", str(stats_dir / "evalica" / "food.csv"),
                                 "--sequential-elo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "not sequential Elo" in result.output
    with out.open(newline="") as handle:
        board = {r["item"]: r for r in csv.DictReader(handle)}
    for item, want in golden["elo"].items():
        assert float(board[item]["sequential_elo"]) == pytest.approx(want, abs=1e-6)
    assert {"elo_ci_low", "elo_ci_high"} <= set(next(iter(board.values())))


def test_bt_cluster_bootstrap_by_rater(stats_dir):
    path = stats_dir / "evalica" / "llmfao.csv"
    result = runner.invoke(app, ["bt", str(path), "--bootstrap", "20", "--cluster", "rater"])
    assert isinstance(result.exception, InputError) and "--rater" in str(result.exception)
    result = runner.invoke(app, ["bt", str(path), "--ties", "half", "--bootstrap", "20",
                                 "--cluster", "rater", "--rater", "worker"])
    assert result.exit_code == 0, result.output
    assert "bootstrap resamples of" in result.output and "raters" in result.output


def test_bt_refuses_disconnected_groups_unless_asked(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["left", "right", "winner"],
                  [["a", "b", "left"], ["b", "a", "left"], ["c", "d", "left"],
                   ["d", "c", "left"]])
    result = runner.invoke(app, ["bt", str(path)])
    assert "2 groups never compared" in str(result.exception)
    result = runner.invoke(app, ["bt", str(path), "--across-components", "--alpha", "0.1"])
    assert result.exit_code == 0, result.output
    assert "component" in result.output.splitlines()[0]


def test_hcb_synth_disjoint_then_report(tmp_path):
    data_dir, out = tmp_path / "hcb", tmp_path / "rep"
    result = runner.invoke(app, ["hcb-synth", "--out", str(data_dir), "--disjoint-models",
                                 "--prompts-per-cell", "2"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["hcb-report", str(data_dir), "--out", str(out),
                                 "--bootstrap", "10"])
    assert result.exit_code == 0, result.output
    with (out / "kendalls_w_phase.csv").open(newline="") as handle:
        phase = [r for r in csv.DictReader(handle) if r["scope"] == "phase"]
    assert phase and all(r["method"].startswith("stratified by domain") for r in phase)
    with (out / "bradley_terry.csv").open(newline="") as handle:
        assert {r["bootstrap"] for r in csv.DictReader(handle)} == {"10 × rater"}
    assert "degenerate" in result.output  # α on two prompts per model is flagged
