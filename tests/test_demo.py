"""The quick start's main job (`creagraph demo`) runs the whole pipeline end to end and
writes a report that renders in a browser."""

import contextlib
import io
import os

import pytest

from creagraph.cli import main
from creagraph.core.io import read_jsonl
from creagraph.report import SECTIONS
from tests.report.browser import (
    check_rendered,
    inspect_page,
    screenshot,
    screenshot_targets,
    start_chromium,
)

pytestmark = pytest.mark.slow  # the whole pipeline, end to end


@pytest.fixture(scope="module")
def demo(store_dir, slice_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    argv = ["demo", "--store", str(store_dir), "--slice", str(slice_path), "--out", str(out),
            "--kg-queries", "2", "--tig-runs", "1"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    return code, buffer.getvalue(), out


def test_demo_runs_every_job(demo):
    code, out, root = demo
    assert code == 0
    assert "statements: 413,419" in out and "reused store" in out
    assert "Q179051 Kareem Abdul-Jabbar (alias match" in out
    assert "What are different ways of connecting" in out and "graph ceiling at k=3" in out
    assert "GPT-5_med" in out and "distinctiveness avg ν" in out
    assert "grounding 8 answers (2 per model)" in out and "verified; class sizes" in out
    assert "comparing claude/claude-sonnet-4-20250514 vs gpt/gpt-5" in out
    report = (root / "report" / "report.html").resolve()
    assert out.rstrip().endswith(f"report: {report}")
    assert len(read_jsonl(root / "queries" / "generated.jsonl")) == 4
    assert len(read_jsonl(root / "score" / "queries.jsonl")) == 80
    kg = read_jsonl(root / "score-kg" / "queries.jsonl")
    assert len(kg) == 8 and all(q["judge"] == "kg" for q in kg)
    assert read_jsonl(root / "distinct" / "distinct_paths.jsonl")
    clusters = read_jsonl(root / "tig" / "clusters.jsonl")
    assert {c["task_id"] for c in clusters} == {"aut-bottle", "aut-box", "aut-brick",
                                                "aut-paperclip"}
    assert len(read_jsonl(root / "tig" / "anchors.jsonl")) == 12
    page = report.read_text()
    for sid, _ in SECTIONS:
        assert f"<section id='{sid}'>" in page
    assert "Not available" not in page
    assert "src='data:image/png;base64," in page and "src='leaderboard.png'" not in page


def test_demo_rerun_resumes(demo, store_dir, slice_path):
    """A second run into the same directory reuses the scores and rewrites the report."""
    _, _, root = demo
    before = (root / "score" / "queries.jsonl").read_bytes()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["demo", "--store", str(store_dir), "--slice", str(slice_path), "--out",
                     str(root), "--kg-queries", "2", "--tig-runs", "1"]) == 0
    assert (root / "score" / "queries.jsonl").read_bytes() == before
    assert "report: " in buffer.getvalue()


@pytest.mark.browser
def test_demo_report_renders(demo, tmp_path):
    _, _, root = demo
    chrome = start_chromium()
    try:
        found = inspect_page(chrome, root / "report" / "report.html")
        targets = screenshot_targets(tmp_path, "demo-report.png")
        image = screenshot(chrome, found["height"], targets)
    finally:
        chrome.quit()
    models = sorted({q["model"] for q in read_jsonl(root / "score" / "queries.jsonl")})
    check_rendered(found, models, image)
    assert not any(s["na"] for s in found["sections"])
    assert sorted(found["grounding"]) == models
    assert sorted(set(found["tasks"])) == ["aut-bottle", "aut-box", "aut-brick",
                                           "aut-paperclip"]
    assert len(found["images"]) == 6
    if os.environ.get("CREAGRAPH_SCREENSHOT_DIR"):
        assert targets[1].exists()
