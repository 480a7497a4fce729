"""A real loopback HTTP server speaking the OpenAI chat-completions protocol with scripted
replies, for the client, runner and judge tests (and ``benchmarks/runner.py``).

``ChatServer(script)``: ``script(body, n)`` gets each request's decoded JSON body and its
arrival number (0, 1, …) and returns an :class:`Act` — what to answer:

- ``Act("ok", content=…, finish="stop", delay=s)``: a chat-completions reply (with usage);
- ``Act("status", code=429, headers={"Retry-After": "1"})``: an error status;
- ``Act("redirect", location=URL)``: a 302;
- ``Act("huge", size=bytes)``: 200 with a body of ``size`` bytes, streamed;
- ``Act("trickle", delay=s)``: 200, then one byte every ``delay`` seconds (for ever);
- ``Act("malformed")``: 200 with a body that is not JSON;
- ``Act("drop")``: the connection closed without a reply;
- ``Act("null")``: a reply whose message content is ``null``.

The server records every request (``requests``: path, headers, body, arrival time) and the
most requests it had in flight at once (``max_in_flight``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Act:
    kind: str = "ok"
    content: str | None = "hello"
    finish: str = "stop"
    delay: float = 0.0
    code: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    location: str = ""
    size: int = 0


def reply_body(content: str | None, finish: str = "stop", model: str = "m") -> bytes:
    words = len((content or "").split())
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content},
                 "finish_reason": finish}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": words,
                      "total_tokens": 10 + words},
        }
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        server: ChatServer = self.server.chat  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        with server.lock:
            n = len(server.requests)
            server.requests.append(
                {"path": self.path, "headers": dict(self.headers), "body": body,
                 "at": time.monotonic()}
            )
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            act = server.script(body, n)
            if act.delay and act.kind != "trickle":
                time.sleep(act.delay)
            if act.kind == "ok":
                model = body.get("model", "m") if isinstance(body, dict) else "m"
                self._send(200, reply_body(act.content, act.finish, model))
                with server.lock:
                    server.completed.append(body)
            elif act.kind == "null":
                self._send(200, reply_body(None))
            elif act.kind == "status":
                self._send(act.code, b'{"error": "scripted"}', act.headers)
            elif act.kind == "redirect":
                self._send(302, b"", {"Location": act.location})
            elif act.kind == "drop":  # close the connection without a reply
                self.close_connection = True
            elif act.kind == "malformed":
                self._send(200, b"<html>not json")
            elif act.kind == "huge":
                self.send_response(200)
                self.send_header("Content-Length", str(act.size))
                self.end_headers()
                block = b" " * 65536
                left = act.size
                while left > 0:
                    chunk = block[: min(left, len(block))]
                    self.wfile.write(chunk)
                    server.sent += len(chunk)
                    left -= len(chunk)
            elif act.kind == "trickle":
                self.send_response(200)
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                while not server.closing:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(act.delay)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with server.lock:
                server.in_flight -= 1


class ChatServer:
    """See the module docstring; use as a context manager (``url`` ends in ``/v1``)."""

    def __init__(self, script: Callable[[Any, int], Act] | None = None):
        self.script = script or (lambda body, n: Act())
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.sent = 0
        self.completed: list[Any] = []  # bodies whose reply was written in full
        self.closing = False
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.chat = self  # type: ignore[attr-defined]
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def bodies(self) -> list[Any]:
        with self.lock:
            return [r["body"] for r in self.requests]

    def close(self) -> None:
        self.closing = True
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def prompt_of(body: Any) -> str:
    """The last message's text of a request body."""
    return body["messages"][-1]["content"] if isinstance(body, dict) else ""
