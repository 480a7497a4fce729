"""The LLM judge fails soft (issue 13.3): a real OpenAI-compatible HTTP server in a thread
returns each bad reply shape and error, and `creagraph score --judge llm` reads what can be
read, asks once more with a repair prompt, records the rest as `unknown` with the raw reply,
and never aborts."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from creagraph.cli import main
from creagraph.core.io import read_jsonl, read_records
from creagraph.core.metrics import specificity

GOOD = {
    "triples": [
        {"explanation": "x", "class_a": 50, "class_b": 3, "judgment": "not hallucinated"},
        {"explanation": "y", "class_a": 2, "class_b": 1, "judgment": "not hallucinated"},
    ]
}
SHAPES = {
    # shape: (first reply, reply to the repair prompt)
    "think": ('<think>maybe {"triples": []}</think>\n' + json.dumps(GOOD), None),
    "prose": (json.dumps(GOOD) + "\nI judged {these} carefully.", None),
    "strings": (
        json.dumps(
            {
                "triples": [
                    {"explanation": "", "class_a": "about 7", "class_b": "1,200",
                     "judgment": "yes"},
                    {"explanation": "", "class_a": "~40", "class_b": "3", "factual": "no"},
                ]
            }
        ),
        None,
    ),
    "scale": (  # numbers keep their scale words (issue 28: "2 billion" was read as 2)
        json.dumps(
            {
                "triples": [
                    {"explanation": "", "class_a": "2 billion", "class_b": "10^6",
                     "judgment": "yes"},
                    {"explanation": "", "class_a": "1.2M", "class_b": "10⁶", "factual": "yes"},
                ]
            }
        ),
        None,
    ),
    "truncated": (json.dumps(GOOD)[:-40], json.dumps(GOOD)),
    "garbage": ("I cannot answer in JSON, sorry.", json.dumps(GOOD)),
    "hopeless": ("No.", "Still no."),
    "http400": ("HTTP 400", None),
    "null": (None, None),
}
SEEN: list[dict] = []


class Judge(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        SEEN.append({"auth": self.headers.get("Authorization"), "body": body})
        prompt = body["messages"][0]["content"]
        if '"shape forbidden"' in prompt:
            self.send_response(403)
            self.end_headers()
            return
        shape = next(s for s in SHAPES if f'"shape {s}"' in prompt)
        first, repaired = SHAPES[shape]
        if first == "HTTP 400":
            self.send_response(400)
            self.end_headers()
            return
        content = first if len(body["messages"]) == 1 else repaired
        out = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture()
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    httpd.shutdown()


def test_every_bad_reply_shape_through_the_cli(server, tmp_path, monkeypatch, capsys):
    rows = []
    for shape in SHAPES:
        path = [["Ann", f"shape {shape}", "Bob"], ["Bob", "r", "Y"]]
        rows.append(
            {
                "model": "m",
                "query_id": shape,
                "query": f"How are Ann and Y connected ({shape})?",
                "entity_a": "Ann",
                "entity_b": "Y",
                "rel_b": "r",
                "path_prediction": json.dumps({"1": path}),
            }
        )
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("MY_JUDGE_KEY", "sekret")
    out = tmp_path / "out"
    SEEN.clear()
    args = ["score", str(src), "--judge", "llm", "--llm-base-url", server, "--llm-model", "j"]
    assert main([*args, "--llm-api-key-env", "MY_JUDGE_KEY", "--out", str(out)]) == 0

    assert {s["auth"] for s in SEEN} == {"Bearer sekret"}
    prompt = SEEN[0]["body"]["messages"][0]["content"]
    assert "Query: How are Ann and Y connected" in prompt  # the published judge's context
    assert prompt.index("explanation") < prompt.index("judgment")
    paths = {p["query_key"]: p for p in read_jsonl(out / "paths.jsonl")}
    status = {k[3:]: [j["status"] for j in p["judgments"]] for k, p in paths.items()}
    for shape in ("think", "prose", "strings", "scale", "truncated", "garbage"):
        assert status[shape] == ["llm", "llm"], shape
    strings = paths["id:strings"]["judgments"]
    assert [(j["class_size"], j["factual"]) for j in strings] == [(1200, 1.0), (40, 0.0)]
    scale = paths["id:scale"]["judgments"]
    assert [j["class_size"] for j in scale] == [2_000_000_000, 1_200_000]
    assert [j["specificity"] for j in scale] == [specificity(2e9), specificity(1.2e6)] != [5, 5]
    assert paths["id:think"]["kept"] and paths["id:think"]["quality"] == 4.0
    assert status["hopeless"] == status["http400"] == status["null"] == ["unknown"] * 2
    hopeless = paths["id:hopeless"]["judgments"][0]
    assert hopeless["error"] == "unparsed" and "No." in hopeless["raw"]
    assert "Still no." in hopeless["raw"]  # the repair prompt was sent and its reply kept
    assert paths["id:http400"]["judgments"][0]["error"] == "failed"
    assert "HTTP 400" in paths["id:http400"]["judgments"][0]["detail"]
    assert paths["id:null"]["judgments"][0]["error"] == "failed"

    queries = {q["query_key"]: q for q in read_jsonl(out / "queries.jsonl")}
    assert queries["id:hopeless"]["judge_errors"] == {"unparsed": 2, "failed": 0}
    (row,) = read_records(out / "summary.csv")
    assert (int(row["judge_unparsed"]), int(row["judge_failed"])) == (2, 4)
    assert "judge: 2 unparsed, 4 failed triples" in capsys.readouterr().out


def test_a_missing_key_variable_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    src = tmp_path / "a.jsonl"
    src.write_text("")
    args = ["score", str(src), "--judge", "llm", "--llm-base-url", "http://127.0.0.1:9/v1"]
    args += ["--llm-model", "j", "--llm-api-key-env", "NO_SUCH_KEY_VAR", "--out", str(tmp_path)]
    assert main(args) == 2
    assert "--llm-api-key-env: environment variable NO_SUCH_KEY_VAR is not set" in (
        capsys.readouterr().err
    )


def test_a_refused_key_or_unreachable_endpoint_stops_the_run(server, tmp_path, capsys):
    """401/403/404 and a connection refused would fail every path alike: one line, exit 2."""
    row = {
        "model": "m", "query": "q?", "entity_a": "Ann", "entity_b": "Y", "rel_b": "r",
        "path_prediction": json.dumps({"1": [["Ann", "shape forbidden", "Y"]]}),
    }
    src = tmp_path / "answers.jsonl"
    src.write_text(json.dumps(row) + "\n")
    for n, (url, expected) in enumerate(
        ((server, "HTTP 403"), ("http://127.0.0.1:9/v1", "giving up"))
    ):
        args = ["score", str(src), "--judge", "llm", "--llm-base-url", url, "--llm-model", "j"]
        assert main([*args, "--out", str(tmp_path / f"out{n}")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and expected in err and err.count("\n") == 1
