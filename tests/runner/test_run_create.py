"""``creagraph run create`` / ``run template`` / ``score`` end to end against a real
scripted OpenAI-protocol server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from creagraph.core.io import read_jsonl, read_records
from tests.chatserver import Act, ChatServer, prompt_of
from tests.clirun import run

PUBLISHED = "GPT-4.1_model_name_gpt-4.1_variation_original.jsonl"


@pytest.fixture
def published(shared_dir) -> Path:
    return shared_dir / "external" / "create-leaderboard" / "sample_outputs" / PUBLISHED


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test its own reply cache (the counts of requests sent depend on it)."""
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))


def answer_for(rows):
    """A server script answering each query with one valid path from entity_a to entity_b."""

    def script(body, n):
        prompt = prompt_of(body)
        row = next(r for r in rows if r["query"] in prompt)
        a, b, rel = row["entity_a"], row["entity_b"], row["rel_b"]
        paths = {"1": [[a, "collaborated with", "X"], ["X", rel, b]]}
        return Act(content=f"<answer>{json.dumps(paths)}</answer>", delay=0.15)

    return script


def test_run_create_writes_answers_score_reads(capsys, tmp_path, published, store_dir):
    rows = read_records(published)
    with ChatServer(answer_for(rows)) as server:
        code, out, err = run(
            capsys, "run", "create", published, "--out", tmp_path / "run",
            "--llm-base-url", server.url, "--llm-model", "tiny-model", "--concurrency", 4,
            "--temperature", 0.5, "--max-tokens", 300, "--seed", 3,
        )
        assert code == 0, err
        assert server.max_in_flight == 4  # concurrency observed at the server
        assert len(server.requests) == 20
        body = server.requests[0]["body"]
        assert body["model"] == "tiny-model" and body["temperature"] == 0.5
        assert body["max_tokens"] == 300 and body["seed"] == 3
    answers = read_jsonl(tmp_path / "run" / "answers.jsonl")
    assert [a["index"] for a in answers] == [r["index"] for r in rows]  # input order
    first = answers[0]
    assert first["model"] == "tiny-model" and first["finish_reason"] == "stop"
    assert first["usage"]["total_tokens"] > 0 and first["sample"] == 0
    assert first["sampling"] == {"temperature": 0.5, "max_tokens": 300, "seed": 3}
    assert first["prompt"].startswith(rows[0]["query"])  # creagraph's own template
    assert "paths_0" not in first and "factuality_scores_0" not in first  # no stored scores
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["endpoint_model"] == "tiny-model" and manifest["software"]["httpx"]
    assert manifest["sampling"]["seed"] == 3 and manifest["requests"]["sent"] == 20
    # the answers are read by `creagraph score` unchanged
    code, out, err = run(capsys, "score", tmp_path / "run" / "answers.jsonl", "--judge",
                         "kg", "--store", store_dir, "--out", tmp_path / "score")
    assert code == 0, err
    queries = read_jsonl(tmp_path / "score" / "queries.jsonl")
    assert len(queries) == 20 and {q["model"] for q in queries} == {"tiny-model"}
    assert all(q["n_paths"] == 1 for q in queries)


def test_429_is_waited_out_and_cut_off_and_empty_replies_are_recorded(capsys, tmp_path,
                                                                      published):
    rows = read_records(published)[:4]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = answer_for(rows)

    def script(body, n):
        if n == 0:
            return Act("status", code=429, headers={"Retry-After": "1"})
        prompt = prompt_of(body)
        if rows[1]["query"] in prompt:
            return Act(content='<answer>{"1": [["a", "b"', finish="length")
        if rows[2]["query"] in prompt:
            return Act("null")
        return base(body, n)

    with ChatServer(script) as server:
        start = time.monotonic()
        code, out, err = run(capsys, "run", "create", queries, "--out", tmp_path / "run",
                             "--llm-base-url", server.url, "--llm-model", "m",
                             "--concurrency", 1)
        assert code == 0, err
        assert time.monotonic() - start >= 1.0 and len(server.requests) == 5
    answers = read_jsonl(tmp_path / "run" / "answers.jsonl")
    assert len(answers) == 4  # nothing dropped
    assert answers[1]["finish_reason"] == "length"
    assert answers[2]["path_prediction"] == ""
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["cut_off"], summary["empty"], summary["failed"]) == (1, 1, 0)
    assert "1 empty, 1 cut off" in out


def test_failed_requests_are_listed_and_a_rerun_asks_only_them(capsys, tmp_path, published):
    rows = read_records(published)[:5]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = answer_for(rows)
    broken = {"on": True}

    def script(body, n):
        if broken["on"] and rows[3]["query"] in prompt_of(body):
            return Act("status", code=500)
        return base(body, n)

    args = ("run", "create", queries, "--out", tmp_path / "run", "--llm-base-url")
    with ChatServer(script) as server:
        code, out, err = run(capsys, *args, server.url, "--llm-model", "m")
        assert code == 0, err
        assert "1 requests got no reply (http_500 1)" in err
        failures = read_jsonl(tmp_path / "run" / "failures.jsonl")
        assert [f["index"] for f in failures] == [rows[3]["index"]]
        assert len(read_jsonl(tmp_path / "run" / "answers.jsonl")) == 4
        broken["on"] = False
        before = len(server.requests)
        code, out, err = run(capsys, *args, server.url, "--llm-model", "m")
        assert code == 0, err
        assert len(server.requests) - before == 1  # only the one that failed
        assert len(read_jsonl(tmp_path / "run" / "answers.jsonl")) == 5
        assert not (tmp_path / "run" / "failures.jsonl").exists()


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_missing_endpoints_stop_with_one_line(capsys, tmp_path, published, status):
    with ChatServer(lambda b, n: Act("status", code=status)) as server:
        code, out, err = run(capsys, "run", "create", published, "--out", tmp_path / "run",
                             "--llm-base-url", server.url, "--llm-model", "m")
    assert code == 2 and err.count("\n") == 1 and f"HTTP {status}" in err
    assert len(server.requests) <= 4  # the K requests in flight, nothing after


def test_unreachable_endpoint_and_redirect_stop_with_one_line(capsys, tmp_path, published):
    code, _, err = run(capsys, "run", "create", published, "--out", tmp_path / "a",
                       "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    with ChatServer() as other, ChatServer(
        lambda b, n: Act("redirect", location=other.url + "/chat/completions")
    ) as server:
        os.environ["SECRET_FOR_TEST"] = "k-secret"
        code, _, err = run(capsys, "run", "create", published, "--out", tmp_path / "b",
                           "--llm-base-url", server.url, "--llm-model", "m",
                           "--llm-api-key-env", "SECRET_FOR_TEST")
        assert code == 2 and "redirect" in err and other.requests == []


def test_derived_template_reproduces_every_stored_prompt(capsys, tmp_path, published):
    rows = read_records(published)
    code, out, err = run(capsys, "run", "template", published, "--out", tmp_path / "t.txt",
                         "--row", 5)
    assert code == 0, err
    assert "template from row 5 reproduces all 20 stored prompts" in out
    template = (tmp_path / "t.txt").read_text(encoding="utf-8")
    assert "{query}" in template and rows[4]["entity_a"] not in template
    with ChatServer(answer_for(rows)) as server:
        code, _, err = run(capsys, "run", "create", published, "--out", tmp_path / "run",
                           "--llm-base-url", server.url, "--llm-model", "m",
                           "--prompt-template", tmp_path / "t.txt")
        assert code == 0, err
        sent = sorted(prompt_of(b) for b in server.bodies())
    assert sent == sorted(r["prompt"] for r in rows)  # byte for byte
    # a template that does not reproduce the rows is refused, naming the row
    other = tmp_path / "other.jsonl"
    changed = [dict(r) for r in rows[:3]]
    changed[2]["prompt"] = changed[2]["prompt"].replace("Task:", "TASK:")
    other.write_text("".join(json.dumps(r) + "\n" for r in changed))
    code, _, err = run(capsys, "run", "template", other, "--out", tmp_path / "t2.txt")
    assert code == 2 and "the template from row 1 reproduces 2 of 3 stored prompts" in err
    assert not (tmp_path / "t2.txt").exists()


def test_template_never_writes_over_its_input_or_a_users_file(capsys, tmp_path, published):
    before = published.read_bytes()
    code, _, err = run(capsys, "run", "template", published, "--out", published)
    assert code == 2 and str(published) in err
    assert published.read_bytes() == before
    mine = tmp_path / "t.txt"
    mine.write_text("my own template\n")
    code, _, err = run(capsys, "run", "template", published, "--out", mine)
    assert code == 2 and "not made by creagraph" in err
    assert mine.read_text() == "my own template\n"
    out = tmp_path / "derived.txt"
    for _ in range(2):  # its own output is replaced on a re-run
        code, _, err = run(capsys, "run", "template", published, "--out", out)
        assert code == 0, err
    assert "{query}" in out.read_text(encoding="utf-8")


def test_samples_are_separate_model_rows(capsys, tmp_path, published):
    rows = read_records(published)[:2]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ChatServer(answer_for(rows)) as server:
        code, _, err = run(capsys, "run", "create", queries, "--out", tmp_path / "run",
                           "--llm-base-url", server.url, "--llm-model", "m", "--samples", 3,
                           "--seed", 10, "--temperature", 1.0)
        assert code == 0, err
        assert sorted(b["seed"] for b in server.bodies()) == [10, 10, 11, 11, 12, 12]
    answers = read_jsonl(tmp_path / "run" / "answers.jsonl")
    assert [a["model"] for a in answers] == ["m#s0", "m#s1", "m#s2"] * 2
    from creagraph.scoring.inputs import read_answers

    keys = [a.key for a in read_answers([tmp_path / "run" / "answers.jsonl"])]
    assert len(set(keys)) == 6  # score's reader: one answer per (model, query)


def test_bad_queries_name_the_row(capsys, tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"query": "Q?", "entity_a": "A", "entity_b": "B", "rel_b": "r"}\n'
                   '{"query": "Q2?", "entity_a": "A"}\n')
    code, _, err = run(capsys, "run", "create", bad, "--out", tmp_path / "run",
                       "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m")
    assert code == 2 and "row 2: field 'entity_b' is missing or empty" in err


def test_resume_after_kill_9_sends_only_the_missing_requests(tmp_path, published):
    rows = read_records(published)

    base = answer_for(rows)

    def slow(body, n):
        act = base(body, n)
        act.delay = 0.4
        return act

    env = {**os.environ, "CREAGRAPH_PROGRESS": "0"}
    with ChatServer(slow) as server:
        cmd = [sys.executable, "-m", "creagraph.cli", "run", "create", str(published),
               "--out", str(tmp_path / "run"), "--llm-base-url", server.url,
               "--llm-model", "m", "--concurrency", "2"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(server.completed) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.5)  # let the server finish writing what was in flight
        first = [prompt_of(b) for b in server.completed]
        assert 6 <= len(first) < 20
        before = len(server.requests)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        again = [prompt_of(r["body"]) for r in server.requests[before:]]
    # only what had no reply was sent again (a reply in flight at the kill may be re-asked)
    assert len(again) <= 20 - len(first) + 2
    assert len(set(again) & set(first)) <= 2
    assert sorted(set(first) | set(again)) == sorted(r["prompt"] for r in rows) or len(
        set(first) | set(again)) == 20
    assert len(read_jsonl(tmp_path / "run" / "answers.jsonl")) == 20


def test_eval_create_runs_scores_and_reports(capsys, tmp_path, published, store_dir):
    rows = read_records(published)[:3]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    compare = tmp_path / "GPT-4.1_model_name_gpt-4.1.jsonl"
    compare.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ChatServer(answer_for(rows)) as server:
        code, out, err = run(capsys, "eval", "create", queries, "--out", tmp_path / "eval",
                             "--llm-base-url", server.url, "--llm-model", "mine",
                             "--store", store_dir, "--compare", compare)
        assert code == 0, err
    assert (tmp_path / "eval" / "report" / "report.html").exists()
    board = {r["model"]: r for r in read_records(tmp_path / "eval" / "report" / "leaderboard.csv")}
    assert set(board) == {"mine", "GPT-4.1"}
    assert {r["judge"] for r in board.values()} == {"kg"}
    assert board["mine"]["query_set"] == board["GPT-4.1"]["query_set"]
    assert {r["comparison_group"] for r in board.values()} == {"1"}
    assert board["mine"]["query_set_size"] == "3"
    answers = read_jsonl(tmp_path / "eval" / "run" / "answers.jsonl")
    assert answers[0]["query_set"] == board["mine"]["query_set"]  # declared by the run
    marker = json.loads((tmp_path / "eval" / "score" / ".creagraph-out.json").read_text())
    assert marker["fingerprint"]["run"]["model_name"] == "mine"
    summary = read_records(tmp_path / "eval" / "score" / "summary.csv")
    assert {r["mode"] for r in summary} == {"paper"} and all(r["creagraph_version"]
                                                              for r in summary)


def test_eval_create_claims_its_out(capsys, tmp_path, published, store_dir):
    """--out is claimed like every command's: never a user's folder, resumable with the
    same settings (no request sent again), other settings refused, --fresh starts over;
    a --compare file answering a query outside QUERIES is refused."""
    rows = read_records(published)[:2]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me\n")
    with ChatServer(answer_for(rows)) as server:
        args = ("eval", "create", queries, "--llm-base-url", server.url, "--llm-model", "m",
                "--store", store_dir)
        code, _, err = run(capsys, *args, "--out", mine)
        assert code == 2 and "not made by creagraph" in err
        assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"] and not server.requests
        code, _, err = run(capsys, *args, "--out", tmp_path / "eval")
        assert code == 0, err
        assert len(server.requests) == 2
        code, _, err = run(capsys, *args, "--out", tmp_path / "eval")  # resumes: nothing new
        assert code == 0, err
        assert len(server.requests) == 2
        code, _, err = run(capsys, *args, "--temperature", 0.7, "--out", tmp_path / "eval")
        assert code == 2 and "other settings" in err and "sampling" in err
        assert len(server.requests) == 2
        code, _, err = run(capsys, *args, "--temperature", 0.7, "--fresh", "--no-cache",
                           "--out", tmp_path / "eval")
        assert code == 0, err
        assert len(server.requests) == 4
        run_json = json.loads((tmp_path / "eval" / "run" / "run.json").read_text())
        assert run_json["sampling"]["temperature"] == 0.7
        outside = tmp_path / "GPT-4.1_model_name_gpt-4.1.jsonl"
        outside.write_text(json.dumps(read_records(published)[5]) + "\n")
        code, _, err = run(capsys, *args, "--compare", outside, "--out", tmp_path / "eval2")
        assert code == 2 and f"{outside}: row 1: query " in err
        assert f"is not in the query set {queries}" in err
        assert len(server.requests) == 4 and not (tmp_path / "eval2").exists()


def test_a_huge_reply_is_capped_and_listed_as_a_failure(capsys, tmp_path, published):
    """A reply over the 16 MiB cap is refused as too_large (not read whole); the run goes
    on and lists it in failures.jsonl."""
    rows = read_records(published)[:3]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = answer_for(rows)

    def script(body, n):
        if rows[1]["query"] in prompt_of(body):
            return Act("huge", size=64 * 1024 * 1024)
        return base(body, n)

    with ChatServer(script) as server:
        code, out, err = run(capsys, "run", "create", queries, "--out", tmp_path / "run",
                             "--llm-base-url", server.url, "--llm-model", "m")
        assert code == 0, err
        assert server.sent < 64 * 1024 * 1024  # never read whole
    assert "too_large" in err
    failures = read_jsonl(tmp_path / "run" / "failures.jsonl")
    assert [f["index"] for f in failures] == [rows[1]["index"]]
    assert failures[0]["error_kind"] == "too_large"
    assert len(read_jsonl(tmp_path / "run" / "answers.jsonl")) == 2


def test_several_query_files_are_one_set_matching_the_published_files_scored_together(
        capsys, tmp_path, shared_dir):
    """`run create $S/*.jsonl`: each of the 22 published queries asked once; the answers
    name the set the published files share when scored together (one comparison group)."""
    from creagraph.core.manifest import QuerySetTally

    files = sorted((shared_dir / "external" / "create-leaderboard" / "sample_outputs")
                   .glob("*.jsonl"))
    published = [r for f in files for r in read_records(f)]
    with ChatServer(answer_for(published)) as server:
        code, out, err = run(capsys, "run", "create", *files, "--out", tmp_path / "run",
                             "--llm-base-url", server.url, "--llm-model", "mine",
                             "--concurrency", 8)
        assert code == 0, err
        assert len(server.requests) == 22  # 80 rows, 22 distinct queries
    answers = read_jsonl(tmp_path / "run" / "answers.jsonl")
    tally = QuerySetTally()
    for record in [*answers, *published]:  # as `score` sees them in one run
        tally.add(record)
    sets = tally.resolve()
    assert len({s["query_set"] for s in sets.values()}) == 1
    assert sets["mine"]["query_set_size"] == 22


USER_JUDGE = '''
from creagraph.scoring.judges import TripleJudgment


class EveryTripleJudge:
    """A user's judge: every triple factual, at the specificity it is given."""
    name = "every-triple"

    def __init__(self, specificity=1):
        self.specificity = specificity

    def judge(self, row, path_index, triples):
        return [TripleJudgment(self.specificity, 1.0, "every-triple") for _ in triples]
'''


def test_eval_create_takes_a_users_judge_and_its_arguments(capsys, tmp_path, published,
                                                          monkeypatch):
    """``--judge MODULE:ATTR --judge-arg K=V`` reach the scoring step as ``score``'s do, and
    the arguments are part of the folder's settings (another value is refused)."""
    folder = tmp_path / "userpkg"
    folder.mkdir()
    (folder / "userjudges.py").write_text(USER_JUDGE)
    monkeypatch.syspath_prepend(str(folder))
    rows = read_records(published)[:2]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ChatServer(answer_for(rows)) as server:
        args = ("eval", "create", queries, "--llm-base-url", server.url, "--llm-model", "m",
                "--judge", "userjudges:EveryTripleJudge", "--out", tmp_path / "eval")
        code, _, err = run(capsys, *args, "--judge-arg", "specificity=7")
        assert code == 0, err
        paths = read_jsonl(tmp_path / "eval" / "score" / "paths.jsonl")
        judgments = [j for p in paths for j in p["judgments"]]
        assert judgments and {(j["status"], j["specificity"]) for j in judgments} == {
            ("every-triple", 7)}
        code, _, err = run(capsys, *args, "--judge-arg", "specificity=3")
        assert code == 2 and "other settings" in err and "judge_args" in err
    sys.modules.pop("userjudges", None)
