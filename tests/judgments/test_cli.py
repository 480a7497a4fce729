from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from creagraph.core.io import InputError
from creagraph.judgments.cli import app
from tests.judgments.csvfiles import write_csv

runner = CliRunner()


def test_bt_on_evalica_food_matches_golden_and_writes(stats_dir, evalica_case, tmp_path):
    out = tmp_path / "board.jsonl"
    result = runner.invoke(
        app, ["bt", str(stats_dir / "evalica" / "food.csv"), "--ties", "half", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "Tacos" in result.output.splitlines()[1]  # best item first
    _, golden = evalica_case("food")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for r in rows:
        assert r["strength"] == pytest.approx(golden["bradley_terry"][r["item"]], rel=1e-4)


def test_bt_model_a_b_chosen_columns_and_csv_out(tmp_path):
    path = write_csv(tmp_path / "c.csv", ["model_a", "model_b", "chosen"],
                  [["x", "y", "x"], ["y", "z", "y"], ["z", "x", "x"], ["y", "x", "tie"],
                   ["z", "y", "z"], ["x", "z", "z"]])
    out = tmp_path / "lb.csv"
    result = runner.invoke(app, ["bt", str(path), "--bootstrap", "20", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with out.open(newline="") as handle:
        board = list(csv.DictReader(handle))
    assert [r["item"] for r in board][0] == "x"
    assert {"rank", "tier", "theta", "ci_low", "ci_high", "elo", "expected_win_rate",
            "raw_win_rate", "tie_half_win_rate"} <= set(board[0])


def test_bt_bad_winner_names_line_and_column(tmp_path):
    path = write_csv(tmp_path / "bad.csv", ["left", "right", "winner"],
                  [["a", "b", "left"], ["b", "a", "banana"]])
    result = runner.invoke(app, ["bt", str(path)])
    assert isinstance(result.exception, InputError)
    assert "bad.csv:3: column 'winner'" in str(result.exception)
    result = runner.invoke(app, ["bt", str(path), "--winner", "verdict"])
    assert "missing winner column 'verdict'" in str(result.exception)


def test_agreement_command(tmp_path):
    rows = [[u, r, v] for u, vals in enumerate([[1, 1, 2], [3, 3, 3], [5, 4, 5], [2, 2, 1]])
            for r, v in zip("abc", vals, strict=True)]
    path = write_csv(tmp_path / "r.csv", ["item", "judge", "score"], rows)
    out = tmp_path / "agree.csv"
    result = runner.invoke(app, ["agreement", str(path), "--unit", "item", "--rater", "judge",
                                 "--value", "score", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with out.open(newline="") as handle:
        stats = {r["statistic"]: r for r in csv.DictReader(handle)}
    assert float(stats["krippendorff_alpha_interval"]["value"]) > 0.8
    assert {"fleiss_kappa", "ICC2", "kendalls_w", "friedman_p"} <= set(stats)


def test_swap_command(tmp_path):
    path = write_csv(tmp_path / "s.csv", ["left", "right", "winner"],
                  [["a", "b", "left"], ["b", "a", "right"], ["a", "c", "left"],
                   ["c", "a", "left"]])
    result = runner.invoke(app, ["swap", str(path)])
    assert result.exit_code == 0, result.output
    assert "consistency: 0.5000" in result.output


def test_hcb_synth_then_report(tmp_path):
    data_dir, out = tmp_path / "hcb", tmp_path / "report"
    result = runner.invoke(app, ["hcb-synth", "--out", str(data_dir), "--prompts-per-cell", "2"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["hcb-report", str(data_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "convergence.md").exists() and (out / "bradley_terry.csv").exists()
    assert "visual_appeal" in result.output


def test_hcb_synth_positional_out_is_a_deprecated_alias(tmp_path):
    result = runner.invoke(app, ["hcb-synth", str(tmp_path / "old"), "--prompts-per-cell", "1"])
    assert result.exit_code == 0, result.output
    assert "deprecated" in result.output and (tmp_path / "old" / "prompts_workflow.csv").exists()
    result = runner.invoke(app, ["hcb-synth", "--prompts-per-cell", "1"])
    assert result.exit_code != 0 and "--out" in result.output
    assert "Deprecated" not in runner.invoke(app, ["hcb-synth", "--help"]).output


def test_registered_under_main_cli(capsys):
    from creagraph.cli import main

    assert main(["judge", "--help"]) == 0
    assert "hcb-report" in capsys.readouterr().out
