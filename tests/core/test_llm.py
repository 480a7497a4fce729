import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from creagraph.core.llm import ChatClient, LLMError


class Flaky(BaseHTTPRequestHandler):
    calls: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append((self.path, self.headers.get("Authorization"), body))
        if len(type(self).calls) == 1:
            self.send_response(503)
            self.end_headers()
            return
        out = json.dumps({"choices": [{"message": {"content": "hello " + body["model"]}}]})
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out.encode())


def test_chat_client_retries_and_sends_key():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    waits = []
    try:
        client = ChatClient(
            f"http://127.0.0.1:{server.server_port}/v1/", model="m", api_key="k", sleep=waits.append
        )
        assert client.chat([{"role": "user", "content": "hi"}]) == "hello m"
        assert waits == [1.0] and client.requests_sent == 2
        path, auth, body = Flaky.calls[-1]
        assert path == "/v1/chat/completions" and auth == "Bearer k"
        assert body["messages"] == [{"role": "user", "content": "hi"}]
    finally:
        server.shutdown()
    with pytest.raises(ValueError):
        ChatClient("ftp://x", model="m")
    with pytest.raises(LLMError, match="giving up"):
        ChatClient("http://127.0.0.1:9/v1", model="m", retries=0).chat([])


def test_one_configuration_rule_argument_then_creagraph_then_openai():
    from creagraph.core.io import InputError
    from creagraph.core.llm import llm_api_key, llm_settings

    both = {
        "CREAGRAPH_LLM_BASE_URL": "http://c/v1", "OPENAI_BASE_URL": "http://o/v1",
        "CREAGRAPH_LLM_MODEL": "cm", "CREAGRAPH_LLM_API_KEY": "ck", "OPENAI_API_KEY": "ok",
    }  # fmt: skip
    assert llm_settings(environ=both) == llm_settings(None, None, None, environ=both)
    got = llm_settings(environ=both)
    assert (got.base_url, got.model, got.api_key) == ("http://c/v1", "cm", "ck")
    got = llm_settings("http://x/v1", "xm", "xk", environ=both)
    assert (got.base_url, got.model, got.api_key) == ("http://x/v1", "xm", "xk")
    openai_only = {"OPENAI_BASE_URL": "http://o/v1", "OPENAI_API_KEY": "ok",
                   "CREAGRAPH_LLM_MODEL": ""}
    got = llm_settings(environ=openai_only)
    assert (got.base_url, got.model, got.api_key) == ("http://o/v1", None, "ok")
    assert llm_settings(environ={}) == llm_settings(environ={"OPENAI_BASE_URL": ""})
    # a named key variable beats the defaults, and must be set
    assert llm_api_key(api_key_env="MINE", environ={**both, "MINE": "mk"}) == "mk"
    with pytest.raises(InputError, match="^--flag: environment variable MINE is not set$"):
        llm_api_key(api_key_env="MINE", option="--flag", environ=both)
    assert llm_api_key("xk", api_key_env="MINE", environ={}) == "xk"


def test_client_from_env(monkeypatch):
    from creagraph.core.io import InputError

    for name in ("CREAGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL", "CREAGRAPH_LLM_MODEL",
                 "CREAGRAPH_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(InputError, match="no LLM endpoint"):
        ChatClient.from_env(model="m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://o/v1")
    with pytest.raises(InputError, match="no LLM model"):
        ChatClient.from_env()
    monkeypatch.setenv("CREAGRAPH_LLM_MODEL", "cm")
    monkeypatch.setenv("OPENAI_API_KEY", "ok")
    client = ChatClient.from_env(timeout=5.0)
    assert (client.base_url, client.model, client.api_key) == ("http://o/v1", "cm", "ok")
    assert client.url == "http://o/v1/chat/completions" and client.timeout == 5.0
    client = ChatClient.from_env("http://x/v1/", "xm", retries=0)
    assert (client.url, client.model, client.retries) == ("http://x/v1/chat/completions", "xm", 0)
