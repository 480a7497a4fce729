"""Issue 23: `creagraph judge` commands never write over their input or a user's file."""

from __future__ import annotations

from ..clirun import run
from .csvfiles import write_csv


def _comparisons(path):
    rows = [("a", "b", "a"), ("b", "c", "b"), ("a", "c", "c"), ("c", "a", "a"),
            ("b", "a", "b"), ("c", "b", "c"), ("a", "b", "a")]
    return write_csv(path, ["left", "right", "winner"], rows)


def test_bt_refuses_to_overwrite_its_input(tmp_path, capsys):
    comps = _comparisons(tmp_path / "s.csv")
    before = comps.read_bytes()
    code, _, err = run(capsys, "judge", "bt", comps, "--out", comps)
    assert code == 2 and "this input is also the --out file" in err, err
    assert comps.read_bytes() == before


def test_agreement_and_bt_out_only_replace_their_own_file(tmp_path, capsys):
    comps = _comparisons(tmp_path / "s.csv")
    mine = tmp_path / "board.csv"
    mine.write_text("mine\n")
    code, _, err = run(capsys, "judge", "bt", comps, "--out", mine)
    assert code == 2 and "was not made by creagraph" in err, err
    assert mine.read_text() == "mine\n"
    board = tmp_path / "b.csv"
    for _ in range(2):
        code, _, err = run(capsys, "judge", "bt", comps, "--out", board)
        assert code == 0, err
    ratings = write_csv(tmp_path / "r.csv", ["unit", "rater", "value"],
                        [(u, r, (u + r) % 3) for u in range(6) for r in range(3)])
    code, _, err = run(capsys, "judge", "agreement", ratings, "--out", board)
    assert code == 2 and "creagraph judge bt" in err, err  # another command's output


def test_hcb_report_refuses_the_input_folder(tmp_path, capsys):
    data = tmp_path / "hcb"
    code, _, err = run(capsys, "judge", "hcb-synth", "--out", data, "--prompts-per-cell", "1")
    assert code == 0, err
    before = sorted(p.name for p in data.iterdir())
    code, _, err = run(capsys, "judge", "hcb-report", data, "--out", data, "--bootstrap", "0")
    assert code == 2 and "holds the output of `creagraph judge hcb-synth`" in err, err
    assert sorted(p.name for p in data.iterdir()) == before
