"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the pairwise-judge tests.

Replies by turn: the third is repairable JSON in prose and a code fence, the fifth cannot
be read, every other one prefers the longer of responses A and B (a tie when equally long).
Every request body is kept in ``script.bodies``; ``scripted_server(status={n: code})``
answers turn ``n`` with that HTTP error status instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Script:
    """Replies by turn: mostly valid JSON, one repairable and one unreadable reply."""

    def __init__(self, status: dict[int, int] | None = None) -> None:
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        self.status = dict(status or {})

    def reply(self, body: dict) -> str:
        with self.lock:
            self.bodies.append(body)
            n = len(self.bodies)
        prompt = body["messages"][-1]["content"]
        if n == 3:
            return 'Sure! Here is my verdict:\n```json\n{"winner": "B",}\n```'
        if n == 5:
            return "I cannot decide, both are lovely."
        # prefer the longer response A/B text deterministically
        a = prompt.split("Response A:\n", 1)[1].split("\n\nResponse B:", 1)[0]
        b = prompt.split("Response B:\n", 1)[1].split("\n\nDimension:", 1)[0]
        winner = "A" if len(a) > len(b) else "B" if len(b) > len(a) else "tie"
        return json.dumps({"winner": winner})


@contextmanager
def scripted_server(status: dict[int, int] | None = None
                    ) -> Iterator[tuple[str, _Script]]:
    script = _Script(status)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            with script.lock:
                code = script.status.get(len(script.bodies) + 1)
                if code is not None:
                    script.bodies.append(body)
            if code is not None:
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            content = script.reply(body)
            data = json.dumps({"choices": [{"message": {"role": "assistant",
                                                        "content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", script
    finally:
        server.shutdown()
        server.server_close()
