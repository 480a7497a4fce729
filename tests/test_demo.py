"""The quick start's main job (`creagraph demo`) runs end to end."""

from creagraph.cli import main


def test_demo_runs_every_job(store_dir, slice_path, capsys):
    assert main(["demo", "--store", str(store_dir), "--slice", str(slice_path)]) == 0
    out = capsys.readouterr().out
    assert "statements: 413,419" in out and "reused store" in out
    assert "Q179051 Kareem Abdul-Jabbar (alias match" in out
    assert "What are different ways of connecting" in out and "graph ceiling at k=3" in out
    assert "GPT-5_med" in out and "verified; class sizes" in out
    assert "comparing claude/claude-sonnet-4-20250514 vs gpt/gpt-5" in out
