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
