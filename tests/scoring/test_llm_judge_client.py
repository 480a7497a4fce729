"""The LLM judge on the shared client: concurrent requests, the reply cache across output
folders, token accounting in the run manifest (a real scripted server on 127.0.0.1)."""

import json
import re

import pytest

from creagraph.core.io import read_jsonl
from tests.chatserver import Act, ChatServer, prompt_of
from tests.clirun import run

PUBLISHED = "GPT-4.1_model_name_gpt-4.1_variation_original.jsonl"


def verdicts(body, n):
    k = len(re.findall(r"^\d+\. \[", prompt_of(body), flags=re.M))
    items = [{"explanation": "e", "class_a": 3, "class_b": 2, "judgment": "not hallucinated"}
             for _ in range(k)]
    return Act(content=json.dumps({"triples": items}), delay=0.05)


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))


def test_llm_judge_is_concurrent_cached_and_accounted(capsys, tmp_path, shared_dir):
    src = shared_dir / "external" / "create-leaderboard" / "sample_outputs" / PUBLISHED
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()][:2]
    answers = tmp_path / "GPT-4.1_model_name_gpt-4.1.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ChatServer(verdicts) as server:
        args = ["score", answers, "--judge", "llm", "--llm-base-url", server.url,
                "--llm-model", "judge-m", "--llm-concurrency", 4]
        code, out, err = run(capsys, *args, "--out", tmp_path / "s1")
        assert code == 0, err
        sent = len(server.requests)
        assert sent >= 20 and server.max_in_flight == 4
        assert f"llm judge: {sent} requests ({sent} sent, 0 from the reply cache" in out
        manifest = json.loads((tmp_path / "s1" / "run.json").read_text())
        assert manifest["judge"] == "llm" and manifest["endpoint_model"] == "judge-m"
        assert manifest["judge_prompt_digest"].startswith("sha256:")
        assert manifest["llm_judge"]["total_tokens"] > 0
        assert manifest["embedder"]["model"].endswith("all-MiniLM-L6-v2")
        # re-scoring into a new folder sends no request already answered
        code, out, err = run(capsys, *args, "--out", tmp_path / "s2")
        assert code == 0, err
        assert len(server.requests) == sent
        assert "0 sent" in out
    first = read_jsonl(tmp_path / "s1" / "queries.jsonl")
    again = read_jsonl(tmp_path / "s2" / "queries.jsonl")
    assert [q["utility"] for q in first] == [q["utility"] for q in again]
