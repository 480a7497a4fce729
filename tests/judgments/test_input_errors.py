"""Silent input errors of issue 26, each now a clear error or handled correctly."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from creagraph.judgments import (
    NotIdentifiableError,
    RecordError,
    bradley_terry,
    icc,
    make_comparisons,
)
from tests.clirun import run
from tests.judgments.csvfiles import write_csv


def test_integer_labels_are_labels_not_side_codes():
    # winner 1 names item 1 (the right side), not "left"
    c = make_comparisons([2, 3], [1, 1], [1, 1])
    assert c.items == ["1", "2", "3"] and c.outcome.tolist() == [-1, -1]
    c = make_comparisons([2, 3], [1, 1], [2, 3])
    assert c.outcome.tolist() == [1, 1]
    with pytest.raises(ValueError, match="ambiguous winner value 0"):
        make_comparisons([2, 3], [1, 1], [0, 1])
    # without integer labels the codes still work
    assert make_comparisons(["a"], ["b"], [-1]).outcome.tolist() == [-1]


@pytest.mark.parametrize("bad", [None, float("nan"), "  "])
def test_a_missing_item_label_is_an_error_naming_the_comparison(bad):
    with pytest.raises(RecordError, match="comparison 1: missing right item label"):
        make_comparisons(["a", "b"], ["b", bad], ["a", "b"])


def test_labels_are_stripped_and_a_collision_is_an_error():
    c = make_comparisons([" a", " a"], ["b ", "b "], ["a", "b"])
    assert c.items == ["a", "b"] and c.outcome.tolist() == [1, -1]
    with pytest.raises(ValueError, match="differ only in surrounding spaces"):
        make_comparisons(["A", "A "], ["b", "c"], ["b", "c"])


def test_duplicated_column_is_an_error(tmp_path, capsys):
    path = write_csv(tmp_path / "c.csv", ["left", "right", "winner", "winner"],
                     [["a", "b", "a", "b"], ["b", "a", "a", "b"]])
    code, _, err = run(capsys, "judge", "bt", path)
    assert code == 2 and "column 'winner' appears twice" in err and ":1:" in err


def test_json_output_writes_null_not_nan(tmp_path, capsys):
    path = write_csv(tmp_path / "r.csv", ["unit", "rater", "value"],
                     [["u1", "r1", "1"], ["u1", "r2", "1"], ["u2", "r1", "1"],
                      ["u2", "r2", "1"]])
    code, out, _ = run(capsys, "judge", "agreement", path, "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]  # json.loads accepts NaN ...
    assert "NaN" not in out  # ... so check the text: strict JSON has no NaN
    assert any(r["value"] is None for r in rows)


def test_icc_at_perfect_agreement_is_significant():
    r = icc([[1, 1, 1], [2, 2, 2], [3, 3, 3], [5, 5, 5]])
    assert r.icc1 == pytest.approx(1.0) and math.isinf(r.f1)
    assert r.p1 == 0.0 and r.p23 == 0.0


def test_swap_refuses_to_pool_over_unnamed_judge_and_prompt_columns(tmp_path, capsys):
    rows = [["a", "b", "a", "j1", "p1"], ["b", "a", "a", "j2", "p2"]]
    path = write_csv(tmp_path / "s.csv", ["left", "right", "winner", "judge", "prompt"], rows)
    code, _, err = run(capsys, "judge", "swap", path)
    assert code == 2 and "look like judges or prompts" in err
    code, out, err = run(capsys, "judge", "swap", path, "--rater", "judge", "--prompt",
                         "prompt")
    assert code == 2 and "no pair was judged in both orders" in err
    plain = write_csv(tmp_path / "p.csv", ["left", "right", "winner"], [r[:3] for r in rows])
    code, out, err = run(capsys, "judge", "swap", plain)
    assert code == 0 and "pairs judged both ways: 1" in out
    assert "matched across all judges and prompts" in err


def test_all_tie_davidson_is_refused(tmp_path, capsys):
    c = make_comparisons(["a", "b", "a"], ["b", "c", "c"], ["tie"] * 3)
    with pytest.raises(NotIdentifiableError, match="every comparison is a tie"):
        bradley_terry(c, ties="davidson")
    path = write_csv(tmp_path / "t.csv", ["left", "right", "winner"],
                     [["a", "b", "tie"], ["b", "c", "tie"], ["a", "c", "tie"]])
    code, _, err = run(capsys, "judge", "bt", path, "--ties", "davidson")
    assert code == 2 and "every comparison is a tie" in err
    np.testing.assert_allclose(bradley_terry(c, ties="half").theta, 0.0)


def test_agreement_overflow_is_a_clear_error(tmp_path, capsys):
    path = write_csv(tmp_path / "o.csv", ["unit", "rater", "value"],
                     [["u1", "r1", "1"], ["u1", "r2", "2e300"], ["u2", "r1", "3"],
                      ["u2", "r2", "1"]])
    code, _, err = run(capsys, "judge", "agreement", path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {path}:3: column 'value': rating '2e300' is too large (> 1e+150: its "
        "square overflows); rescale the ratings"]


def test_bt_by_ranks_each_group_separately(tmp_path, capsys):
    rows = [["a", "b", "a", "x"], ["b", "c", "b", "x"], ["c", "a", "a", "x"],
            ["a", "b", "b", "x"], ["b", "c", "c", "x"],
            ["p", "q", "p", "y"], ["q", "p", "q", "y"], ["p", "q", "p", "y"]]
    path = write_csv(tmp_path / "g.csv", ["left", "right", "winner", "domain"], rows)
    code, out, _ = run(capsys, "judge", "bt", path, "--by", "domain", "--json")
    assert code == 0
    board = [json.loads(line) for line in out.splitlines()]
    assert {(r["domain"], r["item"]) for r in board} == {
        ("x", "a"), ("x", "b"), ("x", "c"), ("y", "p"), ("y", "q")}
    # each group is its own fit: the same as fitting that group's rows alone
    alone = bradley_terry(make_comparisons(["p", "q", "p"], ["q", "p", "q"], ["p", "q", "p"]))
    got = {r["item"]: r["theta"] for r in board if r["domain"] == "y"}
    assert got["p"] == pytest.approx(float(alone.theta[0]))
    assert max(r["rank"] for r in board if r["domain"] == "y") == 2
    code, _, err = run(capsys, "judge", "bt", path, "--by", "nope")
    assert code == 2 and "missing --by column 'nope'" in err
