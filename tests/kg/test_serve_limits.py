"""Issue 23: `creagraph kg serve` is bounded and answers only loopback names: Host/Origin
checks (--allow-host), a reply for every malformed request, request and result caps, a
query deadline, header and body deadlines; --db never reuses a store loaded from another
source, never merges two sources, never writes into a user's folder. The server is the
real command in a subprocess (or the real server object for the deadlines)."""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
from pathlib import Path

from creagraph.kg.server import Limits, open_oxigraph, serve_in_thread

from ..clirun import run
from .test_serve_safety import _post, _serve, _stop


def _raw(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                piece = sock.recv(65536)
            except TimeoutError:
                break
            if not piece:
                break
            chunks.append(piece)
    return b"".join(chunks)


def _port(url: str) -> int:
    return int(urllib.parse.urlparse(url).port or 0)


def _chain(path: Path, n: int) -> Path:
    path.write_text("".join(
        f"<http://www.wikidata.org/entity/Q{i}> <http://www.wikidata.org/prop/direct/P31> "
        f"<http://www.wikidata.org/entity/Q{i + 1}> .\n" for i in range(n)))
    return path


def test_foreign_host_and_origin_refused_loopback_and_allowed_hosts_answered(tmp_path):
    proc, url = _serve(tmp_path, "--allow-host", "lab.example")
    try:
        port = _port(url)
        ask = b"GET /query?query=ASK%7B%7D HTTP/1.1\r\n"
        assert _raw(port, ask + b"Host: evil.example\r\n\r\n").startswith(b"HTTP/1.0 403")
        assert _raw(port, ask + b"Host: 127.0.0.1\r\nOrigin: http://evil.example\r\n\r\n"
                    ).startswith(b"HTTP/1.0 403")
        assert _raw(port, ask + b"Host: 127.0.0.1\r\nSec-Fetch-Site: cross-site\r\n\r\n"
                    ).startswith(b"HTTP/1.0 403")
        for host in (b"localhost:1", b"127.0.0.1", b"[::1]:8", b"lab.example"):
            reply = _raw(port, ask + b"Host: " + host + b"\r\n\r\n")
            assert reply.startswith(b"HTTP/1.0 200"), (host, reply[:80])
            assert b"X-Creagraph-Dataset: " in reply
    finally:
        _stop(proc)


def test_malformed_and_oversized_requests_get_a_reply(tmp_path):
    proc, url = _serve(tmp_path, "--max-request-kb", "4")
    try:
        port = _port(url)
        head = b"POST /query HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        assert _raw(port, head + b"Content-Length: abc\r\n\r\n").startswith(b"HTTP/1.0 400")
        assert _raw(port, head + b"\r\n").startswith(b"HTTP/1.0 411")
        started = time.monotonic()
        reply = _raw(port, head + b"Content-Length: 419430400\r\n\r\n")
        assert reply.startswith(b"HTTP/1.0 413") and b"--max-request-kb" in reply
        assert time.monotonic() - started < 5  # refused without reading 400 MiB
        body = b"query=" + b"%20" * 3000  # 9 KB over a 4 KiB cap
        reply = _raw(port, head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        assert reply.startswith(b"HTTP/1.0 413")
        assert _raw(port, head + b"Content-Length: 2\r\n\r\n\xff\xfe").startswith(b"HTTP/1.0 400")
        status, _ = _post(url, "ASK {}")  # still serving
        assert status == 200
    finally:
        err = _stop(proc)
    assert "Traceback" not in err, err


def test_result_cap_and_query_deadline(tmp_path):
    import os
    import subprocess
    import sys

    from .test_serve_safety import ROOT

    source = _chain(tmp_path / "chain.nt", 3000)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0"}

    def start(*extra: str):
        p = subprocess.Popen(
            [sys.executable, "-m", "creagraph.cli", "kg", "serve", str(source), "--port", "0",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = p.stdout.readline()
        assert "ready at" in line, line
        return p, f"http://127.0.0.1:{int(line.rsplit(':', 1)[1].split('/')[0])}/query"

    proc, url = start("--max-result-mb", "1", "--query-timeout", "60")
    try:
        started = time.monotonic()
        status, body = _post(url, "SELECT * { ?a ?b ?c . ?d ?e ?f } LIMIT 30000000")
        assert status == 413 and b"--max-result-mb" in body, body
        assert time.monotonic() - started < 20
    finally:
        _stop(proc)
    proc, url = start("--max-result-mb", "100000", "--query-timeout", "1")
    try:
        started = time.monotonic()
        status, body = _post(url, "SELECT * { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        assert status == 503 and b"--query-timeout" in body, body
        assert time.monotonic() - started < 15  # stopped at the deadline, not run on
    finally:
        _stop(proc)


def test_header_and_body_deadlines_and_connection_cap(tmp_path):
    store = open_oxigraph([_chain(tmp_path / "g.nt", 10)], None)
    server, url = serve_in_thread(store, limits=Limits(header_timeout=0.5, body_timeout=1.0,
                                                       max_connections=2))
    try:
        port = _port(url)
        started = time.monotonic()
        reply = _raw(port, b"POST /query HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
        assert reply.startswith(b"HTTP/1.0 408") and time.monotonic() - started < 5
        started = time.monotonic()
        reply = _raw(port, b"POST /query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                     b"100\r\n\r\nquery=")  # half-sent body
        assert reply.startswith(b"HTTP/1.0 408") and time.monotonic() - started < 5
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        time.sleep(0.1)
        try:
            reply = _raw(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert reply.startswith(b"HTTP/1.0 503")  # a third connection: refused at once
        finally:
            for sock in held:
                sock.close()
        time.sleep(1.0)
        assert _raw(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").startswith(
            b"HTTP/1.0 200")
    finally:
        server.shutdown()
        server.server_close()


def test_db_only_for_the_same_source_never_merged_never_a_users_folder(tmp_path, capsys):
    db = tmp_path / "db"
    proc, url = _serve(tmp_path, "--db", str(db))
    status, body = _post(url, "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
    _stop(proc)
    assert status == 200 and json.loads(body)["results"]["bindings"][0]["n"]["value"] == "2"
    proc, url = _serve(tmp_path, "--db", str(db))  # the same file: reused
    status, body = _post(url, "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
    _stop(proc)
    assert json.loads(body)["results"]["bindings"][0]["n"]["value"] == "2"
    source = tmp_path / "g.nt"
    source.write_text(source.read_text() + '<http://x/a> <http://x/b> "c" .\n')  # changed
    code, _, err = run(capsys, "kg", "serve", source, "--db", db, "--port", "0")
    assert code == 2 and err.count("\n") == 1 and "other settings" in err, err
    other = _chain(tmp_path / "other.nt", 3)
    code, _, err = run(capsys, "kg", "serve", other, "--db", db, "--port", "0")
    assert code == 2 and "other settings" in err, err  # a second source is not merged in
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    code, _, err = run(capsys, "kg", "serve", other, "--db", mine, "--port", "0")
    assert code == 2 and "not made by creagraph" in err, err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
