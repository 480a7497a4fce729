"""``creagraph run briefs`` against a real scripted server; `tig build` reads the output."""

from __future__ import annotations

import json

import pytest

from creagraph.core.io import read_jsonl
from creagraph.tig.io import read_responses
from tests.chatserver import Act, ChatServer, prompt_of
from tests.clirun import run


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))


def script(body, n):
    prompt = prompt_of(body)
    if "alternative uses" in prompt.lower():
        return Act(content="1. Doorstop for a heavy door\n2) Paperweight\n- Garden edging\n\n")
    if "visual_description" in prompt:
        return Act(content='Sure: {"core_idea": "A lighthouse made of books", '
                           '"visual_description": "Stacked spines glowing at dusk"}')
    if "empty" in prompt:
        return Act("null")
    return Act(content="A story about a clock that runs backwards.")


def test_briefs_become_responses_tig_reads(capsys, tmp_path):
    briefs = tmp_path / "briefs.jsonl"
    briefs.write_text(
        "\n".join(json.dumps(b) for b in [
            {"task_id": "aut-brick", "brief": "List alternative uses for a brick.",
             "family": "Alternative Uses"},
            {"task_id": "poster", "brief": "Design a poster about reading.", "kind": "visual"},
            {"task_id": "story", "brief": "Write a one-line story idea."},
            {"task_id": "void", "brief": "Say nothing (empty)."},
        ]) + "\n"
    )
    with ChatServer(script) as server:
        code, out, err = run(capsys, "run", "briefs", briefs, "--out", tmp_path / "run",
                             "--llm-base-url", server.url, "--llm-model", "new-model",
                             "--samples", 2, "--temperature", 0.9)
        assert code == 0, err
        assert len(server.requests) == 8
    rows = read_jsonl(tmp_path / "run" / "responses.jsonl")
    aut = [r for r in rows if r["task_id"] == "aut-brick"]
    assert [r["core_idea"] for r in aut[:3]] == ["Doorstop for a heavy door", "Paperweight",
                                                   "Garden edging"]
    assert [r["sample"] for r in aut] == [0, 1, 2, 1000, 1001, 1002]
    poster = [r for r in rows if r["task_id"] == "poster"][0]
    assert poster["core_idea"] == "A lighthouse made of books"
    assert poster["visual_description"] == "Stacked spines glowing at dusk"
    story = [r for r in rows if r["task_id"] == "story"]
    assert story[0]["core_idea"] == "A story about a clock that runs backwards."
    assert not [r for r in rows if r["task_id"] == "void"]  # empty: counted, not invented
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["empty"] == 2
    assert (tmp_path / "run" / "run.json").exists()
    # the form tig reads
    responses = read_responses(tmp_path / "run" / "responses.jsonl")
    assert len(responses) == len(rows) and {r.model for r in responses} == {"new-model"}
    code, out, err = run(capsys, "tig", "build", tmp_path / "run" / "responses.jsonl",
                         "--out", tmp_path / "tig")
    assert code == 0, err
    assert (tmp_path / "tig" / "atoms.jsonl").exists()


def test_briefs_from_the_shared_aut_population(capsys, tmp_path, shared_dir):
    from creagraph.runner.briefs import shared_briefs
    from creagraph.tig.adapters import load_aut_population

    briefs = shared_briefs("aut", shared_dir)
    population = load_aut_population(shared_dir, max_runs=1)
    assert {b.task_id for b in briefs} == {r.task_id for r in population}
    assert {b.brief for b in briefs} == {r.brief for r in population}
    with ChatServer(script) as server:
        code, out, err = run(capsys, "run", "briefs", "--source", "aut", "--out",
                             tmp_path / "run", "--llm-base-url", server.url, "--llm-model", "m")
        assert code == 0, err
        assert sorted(prompt_of(b) for b in server.bodies()) == sorted(b.brief for b in briefs)
    rows = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert {r["task_id"] for r in rows} == {b.task_id for b in briefs}
    assert {r["family"] for r in rows} == {"Alternative Uses"}


def test_briefs_need_one_source(capsys, tmp_path):
    code, _, err = run(capsys, "run", "briefs", "--out", tmp_path / "x")
    assert code == 2 and "give a briefs file or --source" in err
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"task_id": "a", "brief": "x"}\n{"task_id": "a", "brief": "y"}\n')
    code, _, err = run(capsys, "run", "briefs", bad, "--out", tmp_path / "x",
                       "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m")
    assert code == 2 and "row 2: task_id 'a' appears twice" in err


def test_two_runs_scored_by_tig_score_with_a_manifest(capsys, tmp_path):
    briefs = tmp_path / "briefs.jsonl"
    briefs.write_text(json.dumps({"task_id": "aut-brick", "family": "Alternative Uses",
                                  "brief": "List alternative uses for a brick."}) + "\n")
    with ChatServer(script) as server:
        for name in ("model-a", "model-b"):
            code, _, err = run(capsys, "run", "briefs", briefs, "--out", tmp_path / name,
                               "--llm-base-url", server.url, "--llm-model", "m",
                               "--model-name", name, "--samples", 2)
            assert code == 0, err
        assert len(server.requests) == 2  # the second run came from the reply cache
    both = tmp_path / "both.jsonl"
    both.write_text("".join((tmp_path / n / "responses.jsonl").read_text()
                            for n in ("model-a", "model-b")))
    scores = tmp_path / "scores.jsonl"
    code, _, err = run(capsys, "tig", "score", both, "--out", scores)
    assert code == 0, err
    manifest = json.loads((tmp_path / "scores.jsonl.run.json").read_text())
    assert manifest["command"] == "tig score" and manifest["software"]["creagraph"]
