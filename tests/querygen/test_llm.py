"""Optional LLM rewrite against a tiny local server speaking the OpenAI chat-completions format."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from creagraph.core.relations import RelationLinker
from creagraph.querygen import ChatClient, LLMError, rewrite_queries, rewrite_query
from creagraph.querygen.llm import REJECTION_REASONS, relation_windows, rewrite_rejection

RECORD = {
    "query_id": "cq-1",
    "query": "What are different ways of connecting Robbie Vinton, an American actor, "
    "and someone who is a painter?",
    "entity_a": "Robbie Vinton",
    "entity_b": "painter",
    "rel_b_id": "P106",
    "bridge": {"id": "Q1", "label": "Bobby Vinton"},
}


@pytest.fixture(scope="module")
def linker(kg):
    """The relation linker of the scoring job over the shared slice (exact links only)."""
    return RelationLinker(kg)


class ChatServer:
    """Answers POST /v1/chat/completions; the reply depends on ``self.mode``."""

    def __init__(self):
        self.mode = "rewrite"
        self.requests: list[dict] = []
        self.failures_left = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):
                pass

            def do_POST(self):  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": "not found"})
                if outer.failures_left > 0:
                    outer.failures_left -= 1
                    return self._send(503, {"error": "busy"})
                if outer.mode == "bad_request":
                    return self._send(400, {"error": "bad"})
                prompt = body["messages"][-1]["content"]
                question = prompt.split("Question: ", 1)[1]
                rest = question.removeprefix("What are different ways of connecting ")
                if outer.mode == "rewrite":
                    content = f" In what ways could one link {rest}\n"
                elif outer.mode == "drops_name":
                    content = "How are an actor and a painter linked?"
                elif outer.mode == "leaks_bridge":
                    content = f"Through Bobby Vinton, how could one link {rest}"
                elif outer.mode == "changes_relation":
                    content = (
                        "How could Robbie Vinton, an American actor, be linked to someone "
                        "who once painted a portrait of a painter?"
                    )
                elif outer.mode == "works_as":
                    content = (
                        "How might Robbie Vinton, an American actor, connect to someone "
                        "who works as a painter?"
                    )
                else:
                    content = "Sure! Here it is:\nHow is Robbie Vinton linked to a painter?"
                self._send(
                    200,
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                    },
                )

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


def test_rewrite_is_kept_when_it_names_both_entities(server, linker):
    client = ChatClient(server.url, model="tiny", api_key="k-123", sleep=lambda s: None)
    out = rewrite_query(RECORD, client, linker=linker)
    assert out["query"] == (
        "In what ways could one link Robbie Vinton, an American actor, "
        "and someone who is a painter?"
    )
    assert out["query_template"] == RECORD["query"]
    assert out["query_rewritten"] is True
    assert RECORD["query"].startswith("What are")  # the input record is untouched
    sent = server.requests[0]
    assert sent["body"]["model"] == "tiny" and sent["body"]["temperature"] == 0.0
    assert sent["auth"] == "Bearer k-123"
    assert "Robbie Vinton" in sent["body"]["messages"][0]["content"]


@pytest.mark.parametrize("mode", ["drops_name", "chatty"])
def test_unusable_rewrites_fall_back_to_the_template(server, mode, linker):
    server.mode = mode
    client = ChatClient(server.url, model="tiny", sleep=lambda s: None)
    out = rewrite_query(RECORD, client, linker=linker)
    assert out["query"] == RECORD["query"]
    assert out["query_rewritten"] is False
    assert server.requests[0]["auth"] is None


def test_retries_on_server_errors_then_succeeds(server, linker):
    server.failures_left = 2
    waits = []
    client = ChatClient(server.url, model="tiny", retries=2, backoff=0.5, sleep=waits.append)
    out = rewrite_queries([RECORD], client, linker=linker)
    assert out[0]["query_rewritten"] is True
    assert waits == [0.5, 1.0]
    assert client.requests_sent == 3


def test_errors_are_reported(server, linker):
    server.mode = "bad_request"
    client = ChatClient(server.url, model="tiny", sleep=lambda s: None)
    with pytest.raises(LLMError, match="HTTP 400"):
        rewrite_query(RECORD, client, linker=linker)
    server.mode = "rewrite"
    server.failures_left = 5
    with pytest.raises(LLMError, match="giving up after 2 attempts"):
        rewrite_query(
            RECORD,
            ChatClient(server.url, model="tiny", retries=1, sleep=lambda s: None),
            linker=linker,
        )
    with pytest.raises(ValueError):
        ChatClient("ftp://example.org", model="tiny")
    with pytest.raises(ValueError):
        ChatClient(server.url, model="")
    with pytest.raises(ValueError, match="entity_b"):
        rewrite_query(
            {"query": "x", "entity_a": "a"}, ChatClient(server.url, model="tiny"), linker=linker
        )


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("drops_name", "missing_start"),
        ("chatty", "not_one_question"),
        ("leaks_bridge", "names_bridge"),
        ("changes_relation", "relation_changed"),
    ],
)
def test_rejected_rewrites_record_the_reason(server, linker, mode, reason):
    server.mode = mode
    client = ChatClient(server.url, model="tiny", sleep=lambda s: None)
    out = rewrite_query(RECORD, client, linker=linker)
    assert out["query"] == RECORD["query"]
    assert out["query_rewritten"] is False
    assert out["rewrite_rejected"] == reason


def test_rewrite_with_another_phrase_of_the_same_property_is_kept(server, linker):
    server.mode = "works_as"  # "works as" links to P106 (occupation) in the relation linker
    client = ChatClient(server.url, model="tiny", sleep=lambda s: None)
    out = rewrite_query(RECORD, client, linker=linker)
    assert out["query_rewritten"] is True, out["rewrite_rejected"]
    assert out["query"].endswith("who works as a painter?")
    assert out["rewrite_rejected"] is None


def test_rewrite_checks_against_the_embedding_linker(kg):
    """With the real embedder, a changed relation (nominated vs received) is still caught."""
    from creagraph.core.embeddings import default_embedder

    linker = RelationLinker(kg, default_embedder())
    record = {
        "query": "What are different ways of connecting Max von Laue, a German physicist, "
        "and someone who received the Nobel Prize in Chemistry?",
        "entity_a": "Max von Laue",
        "entity_b": "Nobel Prize in Chemistry",
        "rel_b_id": "P166",
        "bridge": {"id": "Q1", "label": "Albert Einstein"},
    }
    ok = "How is Max von Laue linked to someone who won the Nobel Prize in Chemistry?"
    assert rewrite_rejection(ok, record, linker) is None
    nominated = "How is Max von Laue linked to someone nominated for the Nobel Prize in Chemistry?"
    assert rewrite_rejection(nominated, record, linker) == "relation_changed"
    leak = "How is Max von Laue, via Albert Einstein, tied to a Nobel Prize in Chemistry winner?"
    assert rewrite_rejection(leak, record, linker) == "names_bridge"
    assert relation_windows(ok, "Nobel Prize in Chemistry") == ["won"]


def test_faithful_rewrites_of_generated_queries_are_kept(server, kg, linker):
    """A server that keeps each template's wording: every relation's phrase maps back."""
    from creagraph.querygen import generate_queries

    records = generate_queries(kg, 120, seed=3).records
    client = ChatClient(server.url, model="tiny", sleep=lambda s: None)
    out = rewrite_queries(records, client, linker=linker)
    rejected = [
        (r["rel_b_id"], r["rewrite_rejected"], r["query"]) for r in out if not r["query_rewritten"]
    ]
    assert not rejected, rejected[:5]
    assert {r["rewrite_rejected"] for r in out} == {None}
    assert set(REJECTION_REASONS) >= {"relation_changed", "names_bridge"}
