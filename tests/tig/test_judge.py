"""The Ekphrasis measurement engine (`creagraph tig judge`, creagraph.tig.judge): the offline
run on the MCTB population, the LLM judge against a scripted OpenAI-compatible server on
127.0.0.1, resuming, order swaps, reply repair, and the human export/import round trip."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from creagraph.tig.checklist import SLOTS, build_checklist
from creagraph.tig.io import write_responses
from creagraph.tig.judge import JudgeSettings, parse_verdict
from tests.clirun import run
from tests.judgeserver import scripted_server
from tests.tig.conftest import calm_population


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _leaderboard(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# the offline run on the MCTB population -------------------------------------------------
@pytest.fixture(scope="module")
def mctb_run(tmp_path_factory, shared_dir) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("mctb") / "judge"
    args = ["tig", "judge", "--source", "aut", "--shared-dir", shared_dir, "--judge",
            "novelty-score", "--budget", 300, "--max-runs", 1, "--n-bootstrap", 100,
            "--out", out]
    from creagraph.cli import main

    code = main([str(a) for a in args])
    assert code == 0
    return out, [str(a) for a in args]


def test_offline_mctb_ranks_all_eight_models_with_intervals(mctb_run):
    out, _ = mctb_run
    rows = _leaderboard(out / "leaderboard.csv")
    assert len(rows) == 8
    assert {r["model"] for r in rows} >= {"gpt/gpt-5", "ollama/gemma3n:e4b"}
    for r in rows:
        low, score, high = float(r["ci_low"]), float(r["score"]), float(r["ci_high"])
        assert low <= score <= high and low < high
        assert 1 <= int(r["rank_low"]) <= int(r["rank"]) <= int(r["rank_high"]) <= 8
        assert int(r["wins"]) + int(r["losses"]) + int(r["ties"]) == int(r["comparisons"])
    assert [int(r["rank"]) for r in rows] == list(range(1, 9))
    records = _records(out / "comparisons.jsonl")
    assert len(records) == 300
    assert [r["index"] for r in records] == list(range(300))


def test_offline_mctb_l2mo_invariant_and_anchor_coverage(mctb_run):
    out, _ = mctb_run
    records = _records(out / "comparisons.jsonl")
    for r in records:
        assert r["model_a"] != r["model_b"]
        assert r["model_a"] not in r["reference_models"]
        assert r["model_b"] not in r["reference_models"]
        # the anchors' own provenance never holds a candidate's response
        for anchor in r["anchor_provenance"]:
            for rid in anchor["response_ids"]:
                assert f"|{r['model_a']}|" not in rid and f"|{r['model_b']}|" not in rid
    with_anchors = sum(1 for r in records if r["anchors"])
    assert with_anchors / len(records) >= 0.95
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["l2mo_profile_share"] >= 0.95
    assert diag["gates"]["l2mo_profile"]["pass"] is True
    assert 0 < diag["tie_rate"] < 0.5


def test_offline_mctb_warm_start_covers_every_model_on_every_task(mctb_run):
    out, _ = mctb_run
    records = _records(out / "comparisons.jsonl")
    seen = {(r["task_id"], m) for r in records for m in (r["model_a"], r["model_b"])}
    tasks = {r["task_id"] for r in records}
    assert len(tasks) == 4
    assert len(seen) == 4 * 8


def test_offline_verdict_follows_the_l2mo_novelty(mctb_run):
    out, _ = mctb_run
    for r in _records(out / "comparisons.jsonl"):
        if abs(r["novelty_a"] - r["novelty_b"]) <= 0.01:
            assert r["winner"] == "tie"
        else:
            expected = r["model_a"] if r["novelty_a"] > r["novelty_b"] else r["model_b"]
            assert r["winner"] == expected


def test_offline_rerun_resumes_without_new_comparisons(mctb_run, capsys):
    out, args = mctb_run
    before = (out / "comparisons.jsonl").read_bytes()
    code, stdout, _ = run(capsys, *args[:])
    assert code == 0
    assert "resumed: 300 comparisons already made, 0 new" in stdout
    assert (out / "comparisons.jsonl").read_bytes() == before


def test_changed_settings_are_refused(mctb_run, capsys):
    out, args = mctb_run
    changed = [a if a != "0.01" else a for a in args] + ["--margin", "0.2"]
    code, _, err = run(capsys, *changed)
    assert code == 2
    assert "other settings" in err and "margin" in err


# the LLM judge against a scripted server --------------------------------------------------
@pytest.fixture(autouse=True)
def _own_reply_cache(tmp_path, monkeypatch):
    """Each test its own LLM reply cache (never the user's, never another test's)."""
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def calm_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("calm") / "calm.jsonl"
    write_responses(path, calm_population())
    return path


def _llm_args(url: str, calm_file: Path, out: Path, budget: int, concurrency: int = 1
              ) -> list:
    return ["tig", "judge", calm_file, "--judge", "llm", "--dimension", "novelty",
            "--llm-base-url", url, "--llm-model", "scripted", "--budget", budget,
            "--swap-share", "0.25", "--batch", 4, "--concurrency", concurrency,
            "--n-bootstrap", 20, "--out", out]


def test_llm_judge_prompts_swaps_repairs_and_resume(calm_file, tmp_path, capsys):
    out = tmp_path / "llm"
    with scripted_server() as (url, script):
        code, _, err = run(capsys, *_llm_args(url, calm_file, out, 16))
        assert code == 0, err
        first = _records(out / "comparisons.jsonl")
        assert len(first) == 16 and len(script.bodies) == 16
        # every judge prompt carries the pair's anchors and the whole checklist
        by_prompt = {b["messages"][-1]["content"] for b in script.bodies}
        for r in first:
            prompt = next(p for p in by_prompt if r["brief"] in p
                          and all(item["text"] in p for item in r["checklist"]))
            assert r["anchors"], "the calm population gives every pair an L2MO anchor"
            for anchor in r["anchors"]:
                assert anchor["text"] in prompt
            for _slot, text in SLOTS["novelty"][1:]:
                assert text in prompt
            assert "not a rubric" in prompt
        # order swaps at the asked share (one re-ask per four primaries), reversed order
        swaps = [r for r in first if r["swap_of"] is not None]
        primaries = [r for r in first if r["swap_of"] is None]
        assert len(primaries) // 4 - 1 <= len(swaps) <= len(primaries) // 4
        assert len(swaps) >= 2
        for s in swaps:
            origin = first[s["swap_of"]]
            assert s["shown"] == origin["shown"][::-1]
        # the malformed reply: one repaired, one counted as a parse failure
        repaired = [r for r in first if r["repaired"]]
        failed = [r for r in first if r["parsed"] is False]
        assert len(repaired) == 1 and repaired[0]["verdict_position"] == "B"
        assert len(failed) == 1 and failed[0]["winner"] is None
        diag = json.loads((out / "diagnostics.json").read_text())
        assert diag["n_parse_failures"] == 1
        assert diag["parse_rate"] == pytest.approx(15 / 16)
        assert diag["repair_rate"] == pytest.approx(1 / 16)
        assert diag["gates"]["parsing"]["pass"] is False
        assert diag["gates"]["repair"]["pass"] is False
        assert diag["order_swap_pairs"] >= 1
        # resume: a crash lost the last two lines; a larger budget extends the schedule
        lines = (out / "comparisons.jsonl").read_text().splitlines(keepends=True)
        (out / "comparisons.jsonl").write_text("".join(lines[:-2]) + lines[-2][:10])
        sent_before = len(script.bodies)
        code, stdout, err = run(capsys, *_llm_args(url, calm_file, out, 24, concurrency=3))
        assert code == 0, err
        assert "resumed: 14 comparisons already made, 10 new" in stdout
        # the two lost ones come from the reply cache: only the 8 new ones are sent
        assert "judge requests: 8 sent, 2 from the reply cache, 0 failed" in stdout
        assert len(script.bodies) == sent_before + 8
        resumed = _records(out / "comparisons.jsonl")
        assert [r["index"] for r in resumed] == list(range(24))
        assert resumed[14:16] == first[14:16]
        # no request was sent twice (one per comparison: 16 + 8 new, none lost re-sent)
        prompts = [json.dumps(b["messages"]) for b in script.bodies]
        kept = {json.dumps(r["shown"]) for r in first[:14]}
        assert len(prompts) == 24
        assert all(r["raw_reply"] is not None or r["parsed"] is False for r in resumed)
        assert {json.dumps(r["shown"]) for r in resumed[:14]} == kept
        assert resumed[:14] == first[:14]
    # the replayed schedule is the one an uninterrupted run makes (same scripted replies)
    with scripted_server() as (url, script):
        fresh = tmp_path / "fresh"
        code, _, err = run(capsys, *_llm_args(url, calm_file, fresh, 24))
        assert code == 0, err
        again = _records(fresh / "comparisons.jsonl")
        key = [(r["task_id"], r["response_a"], r["response_b"], r["shown"]) for r in again]
        assert key == [(r["task_id"], r["response_a"], r["response_b"], r["shown"])
                       for r in resumed]


def test_rerun_into_a_new_folder_is_served_from_the_reply_cache(calm_file, tmp_path,
                                                                 capsys):
    with scripted_server() as (url, script):
        code, _, err = run(capsys, *_llm_args(url, calm_file, tmp_path / "one", 12,
                                              concurrency=3))
        assert code == 0, err
        assert len(script.bodies) == 12
        code, stdout, err = run(capsys, *_llm_args(url, calm_file, tmp_path / "two", 12,
                                                   concurrency=3))
        assert code == 0, err
        assert len(script.bodies) == 12  # no request already answered is sent again
        assert "judge requests: 0 sent, 12 from the reply cache, 0 failed" in stdout
        assert (_records(tmp_path / "two" / "comparisons.jsonl")
                == _records(tmp_path / "one" / "comparisons.jsonl"))
        # --no-cache asks the endpoint again
        code, stdout, err = run(capsys, *_llm_args(url, calm_file, tmp_path / "three", 12),
                                "--no-cache")
        assert code == 0, err
        assert len(script.bodies) == 24
        assert "judge requests: 12 sent, 0 from the reply cache" in stdout


def test_failed_requests_are_counted_and_fatal_ones_stop(calm_file, tmp_path, capsys):
    with scripted_server(status={2: 400}) as (url, script):
        code, stdout, err = run(capsys, *_llm_args(url, calm_file, tmp_path / "a", 8))
        assert code == 0, err
        assert "1 judge request(s) got no reply (http_400 1)" in err
    records = _records(tmp_path / "a" / "comparisons.jsonl")
    assert len(records) == 8
    failed = [r for r in records if r.get("error")]
    assert len(failed) == 1 and failed[0]["error_kind"] == "http_400"
    assert failed[0]["winner"] is None and failed[0]["parsed"] is False
    diag = json.loads((tmp_path / "a" / "diagnostics.json").read_text())
    assert diag["n_request_failures"] == 1
    assert diag["request_failures"] == {"http_400": 1}
    assert diag["n_parse_failures"] >= 1
    # 401: one line, the run stops; what came before is kept and the rest asked on resume
    with scripted_server(status={3: 401}) as (url, script):
        code, _, err = run(capsys, *_llm_args(url, calm_file, tmp_path / "b", 8))
        assert code == 2
        assert "HTTP 401" in err and len(err.strip().splitlines()) == 1
        kept = _records(tmp_path / "b" / "comparisons.jsonl")
        assert len(kept) == 2 and not any(r.get("error") for r in kept)
        code, stdout, err = run(capsys, *_llm_args(url, calm_file, tmp_path / "b", 8))
        assert code == 0, err
        assert "resumed: 2 comparisons already made, 6 new" in stdout
        assert len(script.bodies) == 3 + 6


def test_empty_response_beats_nothing_without_a_judge_call(tmp_path):
    # read_responses refuses an empty Core Idea; adapters and the Python API can carry one
    from dataclasses import replace

    from creagraph.core.llm import ChatClient
    from creagraph.tig.judge import run_judging

    population = [replace(r, visual_description="") if not r.core_idea else r
                  for r in calm_population({"m1": ["A fern in a jar.", ""],
                                            "m2": ["", "A still lake."],
                                            "m3": ["A cat asleep.", "A teacup storm."]})]
    settings = JudgeSettings(dimension="usefulness", judge="llm", budget=30, swap_share=0.0,
                             n_bootstrap=0, concurrency=3)
    with scripted_server() as (url, script):
        result = run_judging(population, settings, tmp_path,
                             client=ChatClient(url, model="s", retries=0))
    records = result.comparisons
    empties = [r for r in records if r["empty_rule"]]
    assert empties
    texts = {r.response_id: r.core_idea for r in population}
    for r in empties:
        ea, eb = not texts[r["response_a"]], not texts[r["response_b"]]
        assert r["raw_reply"] is None
        assert r["winner"] == ("tie" if ea and eb else r["model_b"] if ea else r["model_a"])
    assert len(script.bodies) == len(records) - len(empties)
    # usefulness checklist: the three fixed slots, no anchors
    assert all(not r["anchors"] and len(r["checklist"]) == 3 for r in records)
    assert result.diagnostics["n_empty_rule"] == len(empties)


# human calibration -----------------------------------------------------------------------
def test_export_import_round_trip_and_agreement(calm_file, tmp_path, capsys):
    judged = tmp_path / "judged"
    with scripted_server() as (url, _):
        code, _, err = run(capsys, *_llm_args(url, calm_file, judged, 12))
        assert code == 0, err
    export = tmp_path / "export"
    code, stdout, err = run(capsys, "tig", "judge-export", judged / "comparisons.jsonl",
                            "--responses", calm_file, "--out", export)
    assert code == 0, err
    pairs = list(csv.DictReader((export / "pairs.csv").open(encoding="utf-8")))
    key = [json.loads(x) for x in (export / "key.jsonl").read_text().splitlines()]
    comparisons = _records(judged / "comparisons.jsonl")
    primaries = [c for c in comparisons if c["swap_of"] is None]
    assert len(pairs) == len(key) == len(primaries)
    page = (export / "annotate.html").read_text(encoding="utf-8")
    assert "<script" in page and "http" not in page.split("<script", 1)[1]
    for row in pairs:  # anonymised: no model name shown; anchors as cues
        assert not any(m in json.dumps(row) for m in ("m1", "m2", "m3", "m4", "m5", "m6"))
        assert row["pair_id"] in page
    assert any("Does the idea" in row["cues"] for row in pairs)
    # two annotators: one agrees with the judge everywhere, one says 1 always
    by_pair = {k["pair_id"]: k for k in key}
    by_index = {c["index"]: c for c in comparisons}
    labels = tmp_path / "labels.csv"
    with labels.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["pair_id", "label", "annotator"])
        for pid, k in by_pair.items():
            c = by_index[k["index"]]
            w = c["winner"]
            label = "tie" if w in ("tie", None) else ("1" if w == k["model_1"] else "2")
            writer.writerow([pid, label, "ann1"])
            writer.writerow([pid, label, "ann2"])
            writer.writerow([pid, "1", "ann3"])
    human = tmp_path / "human.jsonl"
    code, stdout, err = run(capsys, "tig", "judge-import", labels, "--key",
                            export / "key.jsonl", "--out", human, "--comparisons",
                            judged / "comparisons.jsonl")
    assert code == 0, err
    result = json.loads(stdout.strip().splitlines()[-1])
    decided = [c for c in primaries if c["winner"] is not None]
    assert result["n_pairs"] == len(decided)
    assert result["share_agreeing"] == 1.0
    assert result["cohen_kappa"] == pytest.approx(1.0)
    # a leaderboard from the human labels
    code, _, err = run(capsys, "tig", "judge", "--judge", "human", "--human-labels", human,
                       "--n-bootstrap", 0, "--out", tmp_path / "human-board")
    assert code == 0, err
    assert len(_leaderboard(tmp_path / "human-board" / "leaderboard.csv")) == 6


def test_agreement_counts_disagreement(tmp_path):
    from creagraph.tig.judge_export import agreement_with_humans

    comparisons = [{"index": k, "model_a": "x", "model_b": "y", "winner": w}
                   for k, w in enumerate(["x", "y", "x", "tie"])]
    labels = [{"source_index": k, "winner": w} for k, w in enumerate(["x", "x", "x", "tie"])]
    result = agreement_with_humans(comparisons, labels)
    assert result["share_agreeing"] == 0.75
    assert result["cohen_kappa"] == pytest.approx(5 / 9)  # p_o .75, p_e .4375


def test_import_names_file_and_line_of_a_bad_label(tmp_path, capsys):
    key = tmp_path / "key.jsonl"
    key.write_text(json.dumps({"pair_id": "p0001", "index": 0, "task_id": "t",
                               "dimension": "novelty", "model_1": "x", "model_2": "y",
                               "response_1": "r1", "response_2": "r2"}) + "\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("pair_id,label,annotator\np0001,1,a\np0001,maybe,b\n")
    code, _, err = run(capsys, "tig", "judge-import", labels, "--key", key, "--out",
                       tmp_path / "h.jsonl")
    assert code == 2
    assert f"{labels}:3" in err and "maybe" in err
    assert not (tmp_path / "h.jsonl").exists()


def test_import_never_writes_over_an_input_or_a_users_file(tmp_path, capsys):
    key = tmp_path / "key.jsonl"
    key.write_text(json.dumps({"pair_id": "p0001", "index": 0, "task_id": "t",
                               "dimension": "novelty", "model_1": "x", "model_2": "y",
                               "response_1": "r1", "response_2": "r2"}) + "\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("pair_id,label,annotator\np0001,1,a\n")
    before = labels.read_bytes(), key.read_bytes()
    for target in (labels, key):
        code, _, err = run(capsys, "tig", "judge-import", labels, "--key", key, "--out", target)
        assert code == 2 and str(target) in err
    assert (labels.read_bytes(), key.read_bytes()) == before
    mine = tmp_path / "mine.jsonl"
    mine.write_text("a user's notes\n")
    code, _, err = run(capsys, "tig", "judge-import", labels, "--key", key, "--out", mine)
    assert code == 2 and "not made by creagraph" in err
    assert mine.read_text() == "a user's notes\n"
    out = tmp_path / "h.jsonl"
    for _ in range(2):  # its own output is replaced on a re-run
        code, _, err = run(capsys, "tig", "judge-import", labels, "--key", key, "--out", out)
        assert code == 0, err
    assert len(out.read_text().splitlines()) == 1


# units --------------------------------------------------------------------------------------
def test_parse_verdict_strict_repaired_and_unreadable():
    assert parse_verdict('{"winner": "A"}') == ("A", False)
    assert parse_verdict('{"winner": "Tie"}') == ("tie", False)
    assert parse_verdict('verdict: {"winner": "b"} because') == ("B", True)
    assert parse_verdict('{"winner": "C"}') == (None, False)
    assert parse_verdict("no json here") == (None, False)


def test_novelty_checklist_first_slot_is_the_anchor():
    class Anchor:
        text, cluster_id, item_id = "Does the idea avoid plants?", "carrier-1", "anchor-1"

    items = build_checklist("novelty", [Anchor()])
    assert items[0].text == "Does the idea avoid plants?" and items[0].cluster_id == "carrier-1"
    assert [i.slot for i in items] == ["cliche_distance", "source_domain_shift",
                                       "perspective_shift"]
    assert build_checklist("expressiveness", [Anchor()])[0].cluster_id is None
    with pytest.raises(ValueError, match="unknown dimension"):
        build_checklist("beauty")


def test_settings_refuse_novelty_score_on_other_dimensions():
    with pytest.raises(ValueError, match="novelty only"):
        JudgeSettings(dimension="usefulness", judge="novelty-score")
    with pytest.raises(ValueError, match="swap_share"):
        JudgeSettings(swap_share=1.5)


def test_bad_options_are_one_line_errors(tmp_path, capsys, monkeypatch):
    for name in ("CREAGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    code, _, err = run(capsys, "tig", "judge", "--source", "aut", "--dimension", "beauty",
                       "--out", tmp_path / "a")
    assert code == 2 and "dimension must be one of" in err
    code, _, err = run(capsys, "tig", "judge", "--source", "aut", "--judge", "llm",
                       "--dimension", "usefulness", "--out", tmp_path / "b")
    assert code == 2 and "no LLM endpoint" in err
    code, _, err = run(capsys, "tig", "judge", "--judge", "human", "--out", tmp_path / "c")
    assert code == 2 and "--human-labels" in err
    labels = tmp_path / "human.jsonl"
    labels.write_text(json.dumps({"index": 0, "dimension": "usefulness", "model_a": "x",
                                  "model_b": "y", "winner": "x", "task_id": "t"}) + "\n")
    code, _, err = run(capsys, "tig", "judge", "--judge", "human", "--human-labels", labels,
                       "--out", tmp_path / "d")
    assert code == 2 and "not --dimension novelty" in err
    assert not any((tmp_path / d).exists() for d in "abc")


def test_smaller_budget_than_made_is_refused_untouched(mctb_run, capsys):
    out, args = mctb_run
    before = (out / "comparisons.jsonl").read_bytes()
    smaller = [("100" if a == "300" else a) for a in args]
    code, _, err = run(capsys, *smaller)
    assert code == 2 and "more than --budget 100" in err
    assert (out / "comparisons.jsonl").read_bytes() == before
