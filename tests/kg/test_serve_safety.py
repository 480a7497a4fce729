"""Issue 12, item 13: `creagraph kg serve` does not run federated (SERVICE) queries for any
client unless started with --allow-federated, and warns when bound beyond loopback.

The server is the real command in a subprocess; the "remote" SPARQL service is a real
loopback HTTP server that records whether it was contacted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from creagraph.kg.server import is_federated, is_loopback
from tests.faultserver import fault_server

ROOT = Path(__file__).resolve().parents[2]
TRIPLES = (
    "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P31> "
    "<http://www.wikidata.org/entity/Q5> .\n"
    '<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> '
    '"customer service"@en .\n'
)


def _serve(tmp_path: Path, *extra: str):
    source = tmp_path / "g.nt"
    source.write_text(TRIPLES)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "creagraph.cli", "kg", "serve", str(source), "--port", "0",
         *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    line = proc.stdout.readline()  # "SPARQL endpoint ready at http://HOST:PORT/query"
    assert "ready at" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
    port = int(line.rsplit(":", 1)[1].split("/")[0])
    return proc, f"http://127.0.0.1:{port}/query"


def _stop(proc) -> str:
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def _post(url: str, query: str) -> tuple[int, bytes]:
    data = urllib.parse.urlencode({"query": query}).encode()
    try:
        with urllib.request.urlopen(url, data=data, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_federated_query_refused_by_default(tmp_path):
    with fault_server("record") as remote:
        proc, url = _serve(tmp_path)
        try:
            for query in (
                f"SELECT * WHERE {{ SERVICE <{remote.url}> {{ ?s ?p ?o }} }}",
                f"select * where {{ service silent <{remote.url}> {{ ?s ?p ?o }} }}",
                f"SELECT * WHERE {{ \\u0053ERVICE <{remote.url}> {{ ?s ?p ?o }} }}",
            ):
                status, body = _post(url, query)
                assert status == 403, (status, body)
                assert b"--allow-federated" in body
            # a plain query, with "service" in a string, still works
            status, body = _post(url, 'SELECT ?s WHERE { ?s ?p "customer service"@en }')
            assert status == 200
            assert json.loads(body)["results"]["bindings"][0]["s"]["value"].endswith("Q1")
        finally:
            err = _stop(proc)
        assert remote.requests == []  # the server never fetched the URL
        assert "warning" not in err  # loopback: no warning


def test_allow_federated_and_warning_off_loopback(tmp_path):
    with fault_server("record") as remote:
        proc, url = _serve(tmp_path, "--allow-federated", "--host", "0.0.0.0")
        try:
            status, _ = _post(url, f"SELECT * WHERE {{ SERVICE <{remote.url}> {{ ?s ?p ?o }} }}")
            assert status == 200
        finally:
            err = _stop(proc)
        assert len(remote.requests) == 1  # allowed: the remote service was asked
    assert "warning: serving on '0.0.0.0', not a loopback address" in err
    assert "warning: --allow-federated" in err


@pytest.mark.parametrize(
    ("query", "federated"),
    [
        ("SELECT * { SERVICE <http://x> { ?s ?p ?o } }", True),
        ("SELECT * {?a ?b ?c FILTER(?a<?b)SERVICE<http://x>{?s ?p ?o}}", True),
        ('SELECT * { ?s ?p "unterminated SERVICE <http://x> { } }', True),
        ("SELECT * { ?s ?p '''a\nSERVICE b''' }", False),
        ('SELECT * { ?s <http://example.org/SERVICE> ?o } # SERVICE <http://x>', False),
        ("SELECT ?SERVICE { ?SERVICE ?p ex:SERVICE }", False),
    ],
)
def test_is_federated(query, federated):
    assert is_federated(query) is federated


def test_is_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("") and not is_loopback("10.1.2.3")


def test_server_refusal_is_fast(tmp_path):
    proc, url = _serve(tmp_path)
    try:
        start = time.monotonic()
        status, _ = _post(url, "SELECT * { SERVICE <http://192.0.2.1/sparql> { ?s ?p ?o } }")
        assert status == 403 and time.monotonic() - start < 5  # no attempt to reach it
    finally:
        _stop(proc)
