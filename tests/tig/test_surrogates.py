"""A lone surrogate escape in one response never aborts `creagraph tig build` (issue 12)."""

from __future__ import annotations

import json

from creagraph.cli import main
from creagraph.tig.io import read_atoms, write_responses

from .conftest import calm_population


def test_tig_build_records_a_lone_surrogate_and_goes_on(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    write_responses(good, calm_population())
    lines = good.read_text().splitlines()
    record = json.loads(lines[2])
    record["core_idea"] += " \ud800"  # json.dumps writes it as the escape "\ud800": valid JSON
    lines[2] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "built"
    assert main(["tig", "build", str(bad), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"warning: {bad}:3: field 'core_idea': 1 lone surrogate replaced by U+FFFD" in (
        captured.err
    )
    assert "18 responses" in captured.out
    assert len(read_atoms(out / "atoms.jsonl")) == 18
