"""A real loopback HTTP server that misbehaves in one chosen way, for the endpoint tests.

Modes (``server.mode``):

- ``"trickle"``: answers 200 with a large Content-Length, then one byte every 0.2 s;
- ``"stream"``: answers 200 without a length and streams 64 KiB blocks as fast as it can;
- ``"forbidden"``: answers HTTP 403;
- ``"record"``: answers an empty SPARQL result (and records the request).

``server.sent`` counts body bytes written, ``server.requests`` the paths requested.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EMPTY_RESULT = b'{"head": {"vars": ["x"]}, "results": {"bindings": []}}'


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _answer(self) -> None:
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        with server.lock:
            server.requests.append(self.path)
        mode = server.mode
        try:
            if mode == "forbidden":
                body = b"access denied"
                self.send_response(403)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif mode == "record":
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(EMPTY_RESULT)))
                self.end_headers()
                self.wfile.write(EMPTY_RESULT)
            elif mode == "trickle":
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                deadline = time.monotonic() + server.trickle_for
                while time.monotonic() < deadline and not server.stopping:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    server.sent += 1
                    time.sleep(0.2)
                self.close_connection = True
            elif mode == "stream":
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Connection", "close")
                self.end_headers()
                block = b'{"head": {}, "results": {"bindings": [' + b" " * 65_000
                while server.sent < server.stream_limit and not server.stopping:
                    self.wfile.write(block)
                    server.sent += len(block)
                self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = _answer
    do_POST = _answer


@contextmanager
def fault_server(mode: str, *, trickle_for: float = 30.0, stream_limit: int = 2**31) -> Iterator:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.lock = threading.Lock()
    srv.mode = mode
    srv.requests = []
    srv.sent = 0
    srv.stopping = False
    srv.trickle_for = trickle_for
    srv.stream_limit = stream_limit
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    srv.url = f"http://127.0.0.1:{srv.server_port}/query"
    try:
        yield srv
    finally:
        srv.stopping = True
        srv.shutdown()
        srv.server_close()
