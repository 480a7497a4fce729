"""The report page opened in headless Chromium: what renders, and a screenshot."""

from __future__ import annotations

import json

import pytest

from creagraph.cli import main
from creagraph.core.io import read_jsonl
from tests.report.browser import check_rendered, inspect_page, screenshot, screenshot_targets

pytestmark = pytest.mark.browser  # headless Chromium

SAMPLE_MODELS = ["GPT-4.1", "GPT-5_med", "Gemini-3-pro", "Qwen_Qwen3-32B_32k"]


def test_full_report_renders(chrome, scored, tig_dir, sample_files, tmp_path, capsys):
    out = tmp_path / "report"
    argv = ["report", str(scored["score"]), "--out", str(out), "--distinct",
            str(scored["distinct"]), "--grounding", str(scored["score-kg"]), "--tig",
            str(tig_dir), "--resamples", "500"]
    for f in sample_files:
        argv += ["--queries", str(f)]
    assert main(argv) == 0
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    found = inspect_page(chrome, out / "report.html")
    image = screenshot(chrome, found["height"], screenshot_targets(tmp_path, "report-full.png"))
    check_rendered(found, SAMPLE_MODELS, image)
    assert not any(s["na"] for s in found["sections"]), "a section says 'not available'"
    assert sorted(found["grounding"]) == sorted(SAMPLE_MODELS)
    assert found["tasks"] == ["aut-brick", "aut-brick", "aut-paperclip", "aut-paperclip"]
    files = {img["file"] for img in found["images"]}
    assert files == {"leaderboard.png", "utility_curves.png", "distinctiveness.png",
                     "relations_source.png", "relations_query.png", "grounding.png"}
    for name in files:  # the same figures beside the page
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    relations = next(s for s in found["sections"] if s["id"] == "relations")["text"]
    assert "By source relation" in relations and "P166 award received" in relations
    assert "By query relation" in relations and "occupation" in relations
    cliches = next(s for s in found["sections"] if s["id"] == "cliches")["text"]
    top = max((c for c in read_jsonl(tig_dir / "clusters.jsonl")
               if c["task_id"] == "aut-brick"), key=lambda c: c["cliche_score"])
    # AUT anchors speak of uses (SPEC §4.11, issue 15)
    assert top["summary"] in cliches and "Does the answer find a use for a brick" in cliches


def test_minimal_report_says_not_available(chrome, scored, tmp_path):
    """Only stored-judge scores: the optional sections say so instead of breaking."""
    out = tmp_path / "report"
    assert main(["report", str(scored["score"]), "--out", str(out), "--resamples", "200"]) == 0
    found = inspect_page(chrome, out / "report.html")
    image = screenshot(chrome, found["height"], screenshot_targets(tmp_path, "report-min.png"))
    check_rendered(found, SAMPLE_MODELS, image)
    na = {s["id"] for s in found["sections"] if s["na"]}
    assert na == {"distinctiveness", "relations", "grounding", "cliches"}
    relations = next(s for s in found["sections"] if s["id"] == "relations")["text"]
    assert "By query relation" in relations  # carried by every scored query
    assert "no input names the queries' source relations" in relations
    grounding = next(s for s in found["sections"] if s["id"] == "grounding")["text"]
    assert "Not available" in grounding and "kg judge was not used" in grounding


def test_hostile_names_are_escaped(chrome, scored, tmp_path):
    """Model names, relations and cluster labels with markup show as text, never as markup."""
    evil = "Evil <b>bold</b> & \"co\" <script>window.__pwned = 1</script> $x^{2$"
    queries, grounding = tmp_path / "queries.jsonl", tmp_path / "kg.jsonl"
    for source, target in ((scored["score"], queries), (scored["score-kg"], grounding)):
        with target.open("w") as handle:
            for q in read_jsonl(source / "queries.jsonl"):
                if q["model"] == "GPT-4.1":
                    q["model"] = evil
                    q["rel_b"] = "<i>rel</i> & co"
                handle.write(json.dumps(q) + "\n")
    clusters = tmp_path / "clusters.jsonl"
    clusters.write_text(json.dumps({
        "id": "c1", "task_id": "<task>&", "type": "carrier", "labels": ["<b>x</b>"],
        "summary": "<b>x</b> & 'y'", "cliche_score": 0.9, "coverage": 0.5,
        "models": ["a", "b"], "comparison_key": "<a>||b&"}) + "\n")
    out = tmp_path / "report"
    assert main(["report", str(queries), "--out", str(out), "--tig", str(clusters),
                 "--grounding", str(grounding),
                 "--resamples", "200", "--title", "<h1>t</h1>"]) == 0
    found = inspect_page(chrome, out / "report.html")
    image = screenshot(chrome, found["height"], screenshot_targets(tmp_path, "report-evil.png"))
    literal = (evil, "<i>rel</i> & co", "<b>x</b> & 'y'", "<task>&", "<a>", "b&", "<h1>t</h1>")
    check_rendered(found, [evil, *SAMPLE_MODELS[1:]], image, literal)
    assert found["title"] == "<h1>t</h1>"
    assert evil in found["text"] and "<i>rel</i> & co" in found["text"]
    assert "<b>x</b> & 'y'" in found["text"] and found["tasks"] == ["<task>&"]
    assert "reference population for <a> vs b& (both left out)" in found["text"]
    assert evil in found["grounding"]


def test_report_does_not_overclaim(chrome, scored, tmp_path):
    """Tiers instead of ranks, the query × model scope stated, a model scored on other
    queries flagged, and the caveat when the kg judge decided few triples (issue 13.5)."""
    from creagraph.report.tables import kg_decided_share

    everything = read_jsonl(scored["score"] / "queries.jsonl")
    by_model: dict[str, set] = {}
    for q in everything:
        by_model.setdefault(q["model"], set()).add(q["query_key"])
    common = set.intersection(*by_model.values())  # the sample files overlap, not coincide
    kept = [q for q in everything if q["query_key"] in common]
    same = tmp_path / "same.jsonl"
    same.write_text("".join(json.dumps(q) + "\n" for q in kept))
    queries = tmp_path / "queries.jsonl"
    gemini = [q for q in kept if q["model"] == "Gemini-3-pro"]
    drop = {gemini[0]["query_key"], gemini[1]["query_key"]}
    kept = [q for q in kept if not (q["model"] == "Gemini-3-pro" and q["query_key"] in drop)]
    queries.write_text("".join(json.dumps(q) + "\n" for q in kept))
    out = tmp_path / "report"
    assert main(["report", str(queries), "--out", str(out), "--grounding",
                 str(scored["score-kg"]), "--resamples", "300"]) == 0
    found = inspect_page(chrome, out / "report.html")
    image = screenshot(chrome, found["height"], screenshot_targets(tmp_path, "report-tiers.png"))
    check_rendered(found, SAMPLE_MODELS, image)

    cells = [row["cells"][0] for row in found["leaderboard"]]
    tiers = [int(cell.split(" · ")[0].removeprefix("tier ")) for cell in cells]
    assert tiers[0] == 1 and tiers == sorted(tiers)
    assert all(b - a in (0, 1) for a, b in zip(tiers, tiers[1:]))
    flagged = [r["model"] for r in found["leaderboard"] if "⚠" in r["cells"][0]]
    assert flagged == ["Gemini-3-pro"]
    board = next(s for s in found["sections"] if s["id"] == "leaderboard")["text"]
    assert "ranked only in tiers" in board
    assert "Gemini-3-pro was scored on different queries than the other models" in board
    assert "distinct queries over 4 models" in found["text"]
    shares = kg_decided_share(read_jsonl(scored["score-kg"] / "queries.jsonl"))
    assert min(shares.values()) < 0.5  # the slice verifies few of the answers' triples
    assert "Caution: the knowledge-graph judge decided (verified or refuted) only" in board

    # every model on the same queries: the scope is stated as N queries × M models
    out2 = tmp_path / "report-same"
    assert main(["report", str(same), "--out", str(out2), "--resamples", "200"]) == 0
    page = inspect_page(chrome, out2 / "report.html")
    assert f"{len(common)} queries × 4 models" in page["text"]
    assert not any("⚠" in r["cells"][0] for r in page["leaderboard"])
    assert "Caution" not in page["text"] and "different queries" not in page["text"]
    # the published sample files themselves hold overlapping, not identical, query sets
    full = tmp_path / "report-full"
    assert main(["report", str(scored["score"]), "--out", str(full), "--resamples", "200"]) == 0
    assert "distinct queries over 4 models" in inspect_page(chrome, full / "report.html")["text"]
