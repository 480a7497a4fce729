"""CSV injection: every CSV creagraph writes keeps formula-like text inert (OWASP)."""

from __future__ import annotations

import csv

import pytest

from creagraph.cli import main
from creagraph.core.io import csv_cell_text, csv_safe_cell, iter_records, write_csv, write_records

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "@SUM(A1:A9)",
           "-2+3", "\tTAB", "\rCR", "'=already quoted"]


def _raw_cells(path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [cell for row in csv.reader(handle) for cell in row]


def _is_formula(cell: str) -> bool:
    return cell[:1] in ("=", "+", "@", "\t", "\r") or (
        cell.startswith("-") and not cell[1:].replace(".", "", 1).replace("e-", "").isdigit()
    )


@pytest.mark.parametrize("text", [*HOSTILE, "plain", "-1.5", "1e-3", "'", "", "a=b"])
def test_cells_round_trip_exactly(text):
    safe = csv_safe_cell(text)
    assert csv_cell_text(safe) == text
    assert not _is_formula(safe) or text in ("-1.5",)


def test_numbers_are_not_touched(tmp_path):
    path = tmp_path / "t.csv"
    write_csv(path, [{"a": -1.5, "b": "-2", "c": "-x", "d": None, "e": [1, "=x"]}])
    assert _raw_cells(path)[5:] == ["-1.5", "-2", "'-x", "", '[1,"=x"]']
    assert list(iter_records(path)) == [
        {"a": "-1.5", "b": "-2", "c": "-x", "d": "", "e": '[1,"=x"]'}
    ]


def test_write_records_csv_reads_back_identically(tmp_path):
    rows = [{"name": text, "n": i} for i, text in enumerate(HOSTILE)]
    path = tmp_path / "rows.csv"
    write_records(path, rows)
    assert not any(_is_formula(c) for c in _raw_cells(path))
    assert [r["name"] for r in iter_records(path)] == HOSTILE


def test_every_csv_the_cli_writes_is_inert(shared_dir, tmp_path):
    """Through the real CLI: score summary, report leaderboard, BT table, audit export."""
    evil = HOSTILE[0]
    samples = shared_dir / "external" / "create-leaderboard" / "sample_outputs"
    source = sorted(samples.glob("*.jsonl"))[0]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(source.read_text().splitlines(keepends=True)[:2]))
    score = tmp_path / "score"
    assert main(["score", str(answers), "--model", evil, "--judge", "stored",
                 "--out", str(score)]) == 0
    report = tmp_path / "report"
    assert main(["report", str(score), "--out", str(report), "--resamples", "50"]) == 0
    comparisons = tmp_path / "c.csv"
    with comparisons.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model_a", "model_b", "chosen"])
        writer.writerows([[HOSTILE[1], "y", HOSTILE[1]], ["y", HOSTILE[2], "y"],
                          [HOSTILE[2], HOSTILE[1], HOSTILE[2]], ["y", HOSTILE[1], "tie"]])
    board = tmp_path / "bt.csv"
    assert main(["judge", "bt", str(comparisons), "--out", str(board)]) == 0

    from creagraph.tig.io import write_responses

    from ..tig.conftest import calm_population

    responses = tmp_path / "responses.jsonl"
    write_responses(responses, calm_population())
    anchors = tmp_path / "anchors.jsonl"
    assert main(["tig", "anchors", str(responses), "--out", str(anchors), "--top-k", "2",
                 "--concept", "calm"]) == 0
    audit = tmp_path / "audit.csv"
    assert main(["tig", "audit-export", str(anchors), "--out", str(audit), "--annotator",
                 HOSTILE[2]]) == 0

    for path, column, expected in [
        (score / "summary.csv", "model", {evil}),
        (report / "leaderboard.csv", "model", {evil}),
        (board, "item", {HOSTILE[1], HOSTILE[2], "y"}),
        (audit, "annotator_id", {HOSTILE[2]}),
    ]:
        cells = _raw_cells(path)
        assert not [c for c in cells if _is_formula(c)], path
        assert {r[column] for r in iter_records(path)} == expected, path
    from creagraph.tig.audit import read_audit

    assert {r.annotator_id for r in read_audit(audit)} == {HOSTILE[2]}
