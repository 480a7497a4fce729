"""Anchors vetted and named by a chat model (issue 27, `tig anchors --writer llm`), against
the suite's real scripted OpenAI-compatible HTTP server (:mod:`tests.chatserver`)."""

from __future__ import annotations

import json

import pytest

from creagraph.cli import main
from creagraph.core.llm import ChatClient, LLMError, ReplyCache
from creagraph.tig.anchor_writer import (
    CANDIDATE_FACTOR,
    EXCERPT_CHARS,
    MAX_EXCERPTS,
    AnchorCandidate,
    LLMAnchorWriter,
    OfflineWriter,
    WriterCounts,
    build_writer_messages,
    check_failed_share,
    decision_from_reply,
    make_anchor_writer,
)
from creagraph.tig.anchors import (
    anchor_text,
    anchors_for_population,
    core_ideas,
    read_anchors,
    write_anchors,
)
from creagraph.tig.brief import brief_terms
from creagraph.tig.io import write_responses
from creagraph.tig.population import build_atom_tables, build_population

from ..chatserver import Act, ChatServer, prompt_of
from .conftest import CALM_BRIEF, calm_population

TOP_K = 2


def keep(label: str, reason: str = "shared idea") -> Act:
    return Act("ok", content=json.dumps({"keep": True, "label": label, "reason": reason}))


def refuse(reason: str = "restates the brief") -> Act:
    return Act("ok", content=json.dumps({"keep": False, "label": "", "reason": reason}))


def first_label(body) -> str:
    """The candidate's first cluster label, read back from the prompt sent."""
    line = next(x for x in prompt_of(body).splitlines() if x.startswith("Cluster labels"))
    return line.split(": ", 1)[1].split("; ")[0]


@pytest.fixture(scope="module")
def calm_table(offline_extractor, embedder):
    responses = calm_population()
    (table,) = build_atom_tables(responses, offline_extractor, embedder,
                                 show_progress=False).values()
    return table


def run(table, writer=None, top_k=TOP_K):
    return anchors_for_population(
        build_population(table), top_k=top_k, min_models=2, concept="calm", kind="visual",
        brief_terms=brief_terms(CALM_BRIEF, "calm", instructions=True), brief=CALM_BRIEF,
        response_texts=core_ideas(table.responses), writer=writer)


def llm(server: ChatServer, concurrency: int = 1, **options) -> LLMAnchorWriter:
    return LLMAnchorWriter(ChatClient(server.url, model="tiny", backoff=0.01, **options),
                           concurrency=concurrency)


# --------------------------------------------------------------------------- replies


@pytest.mark.parametrize("reply, status, label", [
    ('{"keep": true, "label": "potted houseplant", "reason": "r"}', "kept", "potted houseplant"),
    ('```json\n{"keep": true, "label": "still lake", "reason": "r",}\n```', "kept",
     "still lake"),  # repaired leniently
    ('<think>hm</think>{"keep": "yes", "label": " sleeping cat. "}', "kept", "sleeping cat"),
    ('{"keep": false, "label": "calm", "reason": "the brief"}', "refused", "calm"),
    ("I cannot answer that.", "failed", ""),
    ('["keep", "label"]', "failed", ""),
    ('{"keep": "maybe", "label": "x"}', "failed", ""),
    ('{"keep": true, "label": ""}', "failed", ""),
    ('{"keep": true, "label": "a very long label that is really a whole sentence here"}',
     "failed", "a very long label that is really a whole sentence here"),
])
def test_decision_from_reply(reply, status, label):
    decision = decision_from_reply(reply)
    assert decision.status == status and decision.label == label
    assert decision.keep == (status == "kept")
    assert bool(decision.detail) == (status == "failed")


def test_messages_state_the_rules_and_bound_the_excerpts():
    long = "word " * 200
    candidate = AnchorCandidate(
        task_id="t", comparison_key="a||b", brief=CALM_BRIEF, kind="visual",
        atom_type="carrier", labels=("plants",), cluster_labels=("plants", "leaves"),
        excerpts=tuple(f"{i} {long}"[:EXCERPT_CHARS] for i in range(MAX_EXCERPTS)),
        kept=("still lake",))
    system, user = build_writer_messages(candidate)
    for rule in ("concept", "instruction words", "filler", "hedge", "detail",
                 '{"keep": true or false'):
        assert rule in system["content"]
    text = user["content"]
    assert f"Prompt: {CALM_BRIEF}" in text and "Task kind: visual" in text
    assert "plants; leaves" in text and "- still lake" in text
    assert len(text) < 400 + MAX_EXCERPTS * (EXCERPT_CHARS + 4)


# --------------------------------------------------------------------------- the loop


def test_offline_writer_changes_nothing(calm_table):
    plain = run(calm_table)
    offline = OfflineWriter()
    assert run(calm_table, offline) == plain and plain
    assert offline.counts.asked == offline.counts.kept == len(plain)
    assert all(not {"writer", "writer_model", "offline_labels", "writer_reason"}
               & set(a.to_dict()) for a in plain)


def test_kept_labels_are_worded_by_kind_with_provenance(calm_table, tmp_path):
    plain = run(calm_table)
    with ChatServer(lambda body, n: keep(f"idea {n}")) as server:
        writer = llm(server)
        found = run(calm_table, writer)
        bodies = server.bodies()
    assert [a.cluster_id for a in found] == [a.cluster_id for a in plain]
    for i, (anchor, offline) in enumerate(zip(found, plain, strict=True)):
        assert anchor.labels == (f"idea {i}",)
        assert anchor.text == anchor_text(anchor.atom_type, [f"idea {i}"], concept="calm")
        assert (anchor.writer, anchor.writer_model) == ("llm", "tiny")
        assert anchor.offline_labels == offline.labels and anchor.writer_reason
    # each request lists the anchors kept before it
    assert "(none yet)" in prompt_of(bodies[0]) and "- idea 0" in prompt_of(bodies[1])
    assert writer.counts.as_dict() == {"asked": 2, "kept": 2, "refused": 0, "failed": 0,
                                       "failures": {}, "overruled": 0}
    path = tmp_path / "anchors.jsonl"
    write_anchors(path, found)
    assert read_anchors(path) == found


def test_a_refused_cluster_gives_its_rank_to_the_next(calm_table):
    plain = run(calm_table, top_k=TOP_K + 1)
    with ChatServer(lambda body, n: refuse() if n == 0 else keep(first_label(body))) as server:
        writer = llm(server)
        found = run(calm_table, writer)
    assert [a.cluster_id for a in found] == [a.cluster_id for a in plain[1:]]
    assert [a.rank for a in found] == [1, 2]
    assert (writer.counts.asked, writer.counts.refused, writer.counts.kept) == (3, 1, 2)


def test_a_label_restating_the_brief_is_overruled_by_the_rules(calm_table):
    """The model keeps the first cluster under the brief's own concept ("calm") or a
    filler ("thing"): the rules overrule it and the next cluster takes the rank."""
    plain = run(calm_table, top_k=TOP_K + 2)
    bad = {0: "calm", 1: "thing"}
    with ChatServer(lambda body, n: keep(bad[n]) if n in bad else keep(first_label(body))
                    ) as server:
        writer = llm(server)
        found = run(calm_table, writer)
    assert [a.cluster_id for a in found] == [a.cluster_id for a in plain[2:]]
    assert all(a.labels[0] not in bad.values() for a in found)
    assert (writer.counts.asked, writer.counts.kept, writer.counts.overruled) == (4, 4, 2)
    assert "2 kept label(s) overruled by the rules" in writer.counts.line()


def test_refusals_stop_at_the_candidate_bound(calm_table):
    with ChatServer(lambda body, n: refuse()) as server:
        writer = llm(server)
        assert run(calm_table, writer, top_k=1) == []
        assert len(server.requests) == writer.counts.asked == CANDIDATE_FACTOR * 1


def test_malformed_replies_fail_and_are_counted(calm_table):
    script = {0: Act("ok", content="not json at all"), 1: Act("malformed"),
              2: Act("ok", content='{"keep": true, "label": "houseplant",}')}
    with ChatServer(lambda body, n: script.get(n, keep("lake"))) as server:
        writer = llm(server, retries=0)
        found = run(calm_table, writer)
    assert writer.counts.failed == 2 and writer.counts.kept == 2
    # the reply text that is no JSON, and the HTTP body that is none
    assert writer.counts.failures == {"not_json": 2}
    assert found[0].labels == ("houseplant",)
    with pytest.raises(LLMError, match="2 of 4 clusters got no usable reply"):
        check_failed_share(writer.counts, 0.1)
    check_failed_share(writer.counts, 0.5)  # the stated share allows it


def test_429_and_5xx_are_retried(calm_table):
    script = {0: Act("status", code=429, headers={"Retry-After": "0"}),
              1: Act("status", code=503)}
    with ChatServer(lambda body, n: script.get(n, keep(f"idea {n}"))) as server:
        writer = llm(server, retries=2)
        found = run(calm_table, writer)
        assert len(server.requests) == 4
    assert writer.counts.failed == 0 and [a.labels for a in found] == [("idea 2",),
                                                                      ("idea 3",)]


def test_a_fatal_status_stops_the_run(calm_table):
    with ChatServer(lambda body, n: Act("status", code=401)) as server, \
            pytest.raises(LLMError, match="401"):
        run(calm_table, llm(server))


def test_replies_come_from_the_cache_on_a_rerun(calm_table, tmp_path):
    cache = tmp_path / "replies.sqlite"
    with ChatServer(lambda body, n: keep(first_label(body))) as server:
        first = run(calm_table, llm(server, cache=ReplyCache(cache)))
        again = llm(server, cache=ReplyCache(cache))
        assert run(calm_table, again) == first
        assert len(server.requests) == TOP_K and again.cached == TOP_K and again.sent == 0


def test_writer_registry_and_counts():
    assert make_anchor_writer("offline").name == "offline"
    writer = make_anchor_writer("tests.tig.test_anchor_writer:KeepAll")
    assert writer.name == "keep-all"
    counts = WriterCounts()
    assert counts.failed_share == 0.0 and counts.line().startswith("asked 0")


class KeepAll:
    """A user's writer (``MODULE:ATTR``): keeps every cluster, names it in capitals."""

    name = "keep-all"
    model = "rules"

    def __init__(self) -> None:
        self.counts = WriterCounts()

    def write(self, candidate):
        from creagraph.tig.anchor_writer import AnchorDecision

        decision = AnchorDecision("kept", label=candidate.labels[0].upper())
        self.counts.add(decision)
        return decision


# --------------------------------------------------------------------------- the command


@pytest.fixture()
def responses_file(tmp_path):
    path = tmp_path / "responses.jsonl"
    write_responses(path, calm_population())
    return path


def anchors_cli(responses_file, out, server, *extra):
    return main(["tig", "anchors", str(responses_file), "--out", str(out), "--whole-population",
                 "--top-k", str(TOP_K), "--concept", "calm", "--writer", "llm",
                 "--llm-base-url", server.url, "--llm-model", "tiny", "--no-cache", *extra])


def test_cli_writes_llm_anchors_and_records_counts(responses_file, tmp_path, capsys):
    out = tmp_path / "anchors.jsonl"
    with ChatServer(lambda body, n: keep(first_label(body))) as server:
        assert anchors_cli(responses_file, out, server) == 0
    printed = capsys.readouterr().out
    assert "anchor writer llm (tiny): asked 2, kept 2, refused 0, failed 0" in printed
    found = read_anchors(out)
    assert len(found) == TOP_K and all(a.writer == "llm" for a in found)
    record = json.loads((tmp_path / ".anchors.jsonl.creagraph-out.json").read_text())
    assert "asked" in json.dumps(record) and "writer_counts" in json.dumps(record)


def test_cli_refuses_to_write_when_too_many_failed(responses_file, tmp_path, capsys):
    out = tmp_path / "anchors.jsonl"

    def script(body, n):
        return Act("ok", content="no JSON here") if n == 0 else keep(first_label(body))

    with ChatServer(script) as server:
        assert anchors_cli(responses_file, out, server) != 0
    assert not out.exists()
    assert "1 of 3 clusters got no usable reply" in capsys.readouterr().err
    with ChatServer(script) as server:  # the stated share allows one failure in three
        assert anchors_cli(responses_file, out, server, "--writer-max-failed", "0.5") == 0
    assert "failed 1 (not_json 1)" in capsys.readouterr().out
    assert len(read_anchors(out)) == TOP_K


def test_cli_l2mo_runs_in_process_and_resumes_from_the_reply_cache(responses_file, tmp_path,
                                                                    capsys, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    with ChatServer(lambda body, n: keep(first_label(body))) as server:
        def anchors(out):
            return main(["tig", "anchors", str(responses_file), "--out", str(out), "--top-k",
                         "1", "--concept", "calm", "--writer", "llm", "--llm-base-url",
                         server.url, "--llm-model", "tiny", "--pair", "m1,m2", "--pair",
                         "m3,m4", "--jobs", "2", "--writer-arg", "concurrency=2"])

        assert anchors(tmp_path / "a.jsonl") == 0
        assert len(server.requests) == 2
        captured = capsys.readouterr()
        assert "--jobs 2 ignored" in captured.err and "asked 2, kept 2" in captured.out
        assert anchors(tmp_path / "b.jsonl") == 0  # a re-run asks nothing already answered
        assert len(server.requests) == 2 and server.max_in_flight <= 2
    found = read_anchors(tmp_path / "a.jsonl")
    assert read_anchors(tmp_path / "b.jsonl") == found
    assert {a.comparison_key for a in found} == {"m1||m2", "m3||m4"}
    assert all(a.writer == "llm" and a.offline_labels for a in found)


def test_comparisons_are_asked_at_once_with_the_same_anchors(calm_table, offline_extractor,
                                                             embedder):
    from creagraph.tig.anchor_writer import write_steps
    from creagraph.tig.anchors import anchor_steps

    other = calm_population(task_id="calm-2")[::-1]  # another task: its own comparison
    (other_table,) = build_atom_tables(other, offline_extractor, embedder,
                                       show_progress=False).values()

    def script(body, n):
        return Act("ok", content=json.dumps({"keep": True, "label": first_label(body)}),
                   delay=0.2)

    alone = []
    with ChatServer(script) as server:
        for table in (calm_table, other_table):
            alone.append(run(table, llm(server)))
        assert server.max_in_flight == 1
    with ChatServer(script) as server:
        writer = llm(server, concurrency=4)
        steps = [anchor_steps(
            build_population(t), top_k=TOP_K, min_models=2, concept="calm", kind="visual",
            brief_terms=brief_terms(CALM_BRIEF, "calm", instructions=True), brief=CALM_BRIEF,
            response_texts=core_ideas(t.responses), writer=writer)
            for t in (calm_table, other_table)]
        together = write_steps(steps, writer)
        assert server.max_in_flight == 2 and len(server.requests) == 2 * TOP_K
    assert together == alone and all(together)
