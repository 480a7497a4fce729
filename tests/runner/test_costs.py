"""Cost estimates from the user's prices (issue 24): the run's and the LLM judge's, printed
and recorded in run.json; never guessed without prices."""

from __future__ import annotations

import json
import re

import pytest

from creagraph.core.io import InputError, read_records
from creagraph.core.llm import Prices, cost_estimate
from tests.chatserver import Act, ChatServer, prompt_of
from tests.clirun import run
from tests.runner.test_run_create import answer_for


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def two_queries(shared_dir, tmp_path):
    src = (shared_dir / "external" / "create-leaderboard" / "sample_outputs"
           / "GPT-4.1_model_name_gpt-4.1_variation_original.jsonl")
    rows = read_records(src)[:2]
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_run_cost_is_priced_from_the_users_prices_and_only_for_requests_sent(
        capsys, tmp_path, two_queries):
    queries, rows = two_queries
    with ChatServer(answer_for(rows)) as server:
        args = ("run", "create", queries, "--llm-base-url", server.url, "--llm-model", "m")
        code, out, err = run(capsys, *args, "--out", tmp_path / "a")
        assert code == 0, err
        assert "cost: not computed (no prices given" in out
        summary = json.loads((tmp_path / "a" / "summary.json").read_text())
        assert summary["cost"]["cost"] is None
        code, out, err = run(capsys, *args, "--no-cache", "--price-input", 1000,
                             "--price-output", 2000, "--out", tmp_path / "b")
        assert code == 0, err
        summary = json.loads((tmp_path / "b" / "summary.json").read_text())
        tokens = summary["sent_tokens"]
        expected = (tokens["prompt_tokens"] * 1000 + tokens["completion_tokens"] * 2000) / 1e6
        assert tokens["prompt_tokens"] == 20 and summary["cost"]["cost"] == pytest.approx(expected)
        assert f"cost: {expected:.6g} (20 input tokens at 1000 + " in out
        manifest = json.loads((tmp_path / "b" / "run.json").read_text())
        assert manifest["cost"]["prices_per_million_tokens"] == {"input": 1000.0,
                                                                 "output": 2000.0}
        # every reply from the cache: nothing sent, nothing spent
        code, out, err = run(capsys, *args, "--price-input", 1000, "--price-output", 2000,
                             "--out", tmp_path / "c")
        assert code == 0, err
        summary = json.loads((tmp_path / "c" / "summary.json").read_text())
        assert summary["cached"] == 2 and summary["cost"]["cost"] == 0.0
        code, _, err = run(capsys, *args, "--price-input", 1, "--out", tmp_path / "d")
        assert code == 2 and "give both" in err


def test_llm_judge_cost_is_printed_and_recorded(capsys, tmp_path, two_queries):
    queries, rows = two_queries

    def verdicts(body, n):
        k = len(re.findall(r"^\d+\. \[", prompt_of(body), flags=re.M))
        items = [{"explanation": "e", "class_a": 3, "class_b": 2,
                  "judgment": "not hallucinated"} for _ in range(k)]
        return Act(content=json.dumps({"triples": items}))

    with ChatServer(verdicts) as server:
        code, out, err = run(capsys, "score", queries, "--model", "pub", "--judge", "llm",
                             "--llm-base-url",
                             server.url, "--llm-model", "j", "--price-input", 1,
                             "--price-output", 1, "--out", tmp_path / "s")
        assert code == 0, err
        sent = len(server.requests)
    assert sent > 0
    manifest = json.loads((tmp_path / "s" / "run.json").read_text())
    cost = manifest["llm_judge"]["cost"]
    assert cost["tokens_priced"]["prompt_tokens"] == 10 * sent  # the server's usage
    assert cost["cost"] == pytest.approx(sum(cost["tokens_priced"].values()) / 1e6)
    assert "llm judge cost: " in out


def test_prices_are_checked():
    with pytest.raises(InputError, match="--price-output: must be a number"):
        Prices(1.0, -2.0)
    assert Prices.from_options(None, None) is None
    estimate = cost_estimate({"prompt_tokens": 5, "completion_tokens": 5, "no_usage": 2},
                             Prices(1.0, 1.0))
    assert estimate["no_usage"] == 2
