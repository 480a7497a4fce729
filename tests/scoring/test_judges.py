import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from creagraph.core.embeddings import default_embedder
from creagraph.core.io import InputError
from creagraph.core.metrics import path_strength
from creagraph.scoring.grounding import EntityLinker, Grounder, RelationLinker
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.judges import HybridJudge, KgJudge, LlmJudge, StoredJudge
from creagraph.scoring.parse import parse_answer


def test_stored_judge_reproduces_published_path_strengths(sample_files):
    judge = StoredJudge()
    total = 0
    for row in read_answers(sample_files):
        stored = row.extra["min_salience_scores_0"]
        for i, path in enumerate(parse_answer(row.answer).paths):
            sigmas = [j.specificity for j in judge.judge(row, i, path.triples)]
            assert path_strength(sigmas) == stored[i]
            total += 1
    assert total > 1000


def test_stored_judge_names_missing_field(tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text(
        json.dumps(
            {
                "query": "q",
                "entity_a": "a",
                "entity_b": "b",
                "rel_b": "r",
                "path_prediction": "{}",
                "model": "m",
            }
        )
        + "\n"
    )
    row = read_answers([src])[0]
    with pytest.raises(InputError, match="raw_salience_scores_0"):
        StoredJudge().judge(row, 0, [("a", "r", "b")])


@pytest.fixture(scope="module")
def grounder(kg):
    return Grounder(kg, EntityLinker(kg), RelationLinker(kg, default_embedder()))


def test_kg_grounding_verified_with_exact_class_sizes(kg, grounder):
    g = grounder.ground(
        "Kareem Abdul-Jabbar", "educated at", "University of California, Los Angeles"
    )
    assert g.status == "verified" and (g.subject, g.property, g.object) == (
        "Q179051",
        "P69",
        "Q174710",
    )
    assert g.class_size_subjects == kg.count_subjects("P69", "Q174710") == 97
    assert g.specificity == 4 and g.factual == 1.0
    alias = grounder.ground("Lew Alcindor", "attended", "UCLA")
    assert alias.subject == "Q179051" and alias.property == "P69"


def test_kg_grounding_inverse_relation_phrase(grounder):
    g = grounder.ground("Kareem Abdul-Jabbar", "appeared in", "Scrubs")
    assert g.status == "verified"
    assert (g.subject, g.property, g.object) == ("Q485668", "P161", "Q179051")
    assert g.evidence["links"]["relation"]["pid"] == "P161"


class OpenAIChat(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    asked: list[str] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.asked.append(body["messages"][0]["content"])
        n = body["messages"][0]["content"].count("\n1. ") + body["messages"][0]["content"].count(
            "\n2. "
        )
        content = (
            "```json\n"
            + json.dumps({"triples": [{"class_a": 50, "class_b": 3, "factual": 1}] * max(n, 1)})
            + "\n```"
        )
        out = json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": content}}]}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def test_llm_and_hybrid_judges_against_an_openai_format_server(grounder, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), OpenAIChat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llm = LlmJudge(f"http://127.0.0.1:{server.server_port}/v1", "test-model")
        out = llm.judge(None, 0, [("A", "r", "B"), ("B", "s", "C")])
        assert [(j.specificity, j.factual, j.status) for j in out] == [(4, 1.0, "llm")] * 2
        hybrid = HybridJudge(KgJudge(grounder), llm)
        mixed = hybrid.judge(
            None,
            0,
            [
                ("Kareem Abdul-Jabbar", "educated at", "University of California, Los Angeles"),
                ("Zzyzx Qwertyuiop", "frobnicated", "Nowhere"),
            ],
        )
        assert [j.status for j in mixed] == ["verified", "llm"]
        assert mixed[0].evidence["backend"].startswith("kg:")
        # only the triple the graph left unknown went to the LLM; the graph's evidence stays
        assert "Zzyzx" in OpenAIChat.asked[-1] and "Kareem" not in OpenAIChat.asked[-1]
        assert mixed[1].evidence["graph_status"] == "unknown"
        assert mixed[1].evidence["second_judge"]["backend"] == "llm:test-model"
        assert mixed[1].as_dict()["status"] == "llm" and mixed[1].factual == 1.0
        n_asked = len(OpenAIChat.asked)
        hybrid.judge(None, 0, [("Minnesota", "shares border with", "Iowa")])
        assert len(OpenAIChat.asked) == n_asked  # all decided by the graph: no LLM call
    finally:
        server.shutdown()
    with pytest.raises(InputError, match="OpenAI-compatible endpoint"):
        LlmJudge(None, None)
