"""Issue 23: the SPARQL response cache never serves answers of other data: an endpoint that
names its dataset (`creagraph kg serve`: X-Creagraph-Dataset) is asked which data it serves
before a cached answer is reused; an endpoint that names none gets a TTL the user sets
(CREAGRAPH_SPARQL_CACHE_TTL; one day by default, never forever)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from creagraph.kg.server import open_oxigraph, serve_in_thread
from creagraph.kg.sparql import SparqlKG

from ..clirun import run


def _dump(path, n):
    path.write_text("".join(
        f"<http://www.wikidata.org/entity/Q{i}> <http://www.wikidata.org/prop/direct/P31> "
        "<http://www.wikidata.org/entity/Q5> .\n" for i in range(1, n + 1)))
    return path


def _statements(capsys, url) -> int:
    code, out, err = run(capsys, "kg", "info", "--endpoint", url, "--json")
    assert code == 0, err
    return int(json.loads(out)["statements"])


def _restart(server, store, dataset):
    port = server.server_port
    server.shutdown()
    server.server_close()
    return serve_in_thread(store, port=port, dataset=dataset)


def test_restarted_server_with_other_data_is_not_answered_from_the_cache(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    one = open_oxigraph([_dump(tmp_path / "one.nt", 3)], None)
    two = open_oxigraph([_dump(tmp_path / "two.nt", 5)], None)
    server, url = serve_in_thread(one, dataset="one")
    try:
        assert _statements(capsys, url) == 3
        assert _statements(capsys, url) == 3  # cached (same dataset)
        server, url2 = _restart(server, two, "two")  # same port, other data
        assert url2 == url
        assert _statements(capsys, url) == 5
    finally:
        server.shutdown()
        server.server_close()


def test_an_endpoint_without_identity_gets_a_ttl(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    one = open_oxigraph([_dump(tmp_path / "one.nt", 3)], None)
    two = open_oxigraph([_dump(tmp_path / "two.nt", 5)], None)
    server, url = serve_in_thread(one)  # declares no dataset
    try:
        assert _statements(capsys, url) == 3
        server, _ = _restart(server, two, None)
        assert _statements(capsys, url) == 3  # within the default TTL: the cached answer
        monkeypatch.setenv("CREAGRAPH_SPARQL_CACHE_TTL", "0")
        assert _statements(capsys, url) == 5  # TTL 0: never reused
        monkeypatch.setenv("CREAGRAPH_SPARQL_CACHE_TTL", "soon")
        code, _, err = run(capsys, "kg", "info", "--endpoint", url)
        assert code == 2 and "CREAGRAPH_SPARQL_CACHE_TTL" in err, err
    finally:
        server.shutdown()
        server.server_close()


def test_cache_entries_expire_after_the_ttl(tmp_path):
    store = open_oxigraph([_dump(tmp_path / "one.nt", 3)], None)
    server, url = serve_in_thread(store)
    try:
        cache = tmp_path / "c.sqlite"
        kg = SparqlKG(url, cache=cache, cache_ttl=3600)
        kg.count_subjects("P31", "Q5")
        sent = kg.requests_sent
        kg.count_subjects("P31", "Q5")
        assert kg.requests_sent == sent  # fresh: from the cache
        with sqlite3.connect(cache) as conn:  # make the entry two hours old
            conn.execute("UPDATE responses_v2 SET stored = ?", (time.time() - 7200,))
        kg.count_subjects("P31", "Q5")
        assert kg.requests_sent == sent + 1
    finally:
        server.shutdown()
        server.server_close()


def test_damaged_cache_row_names_the_file(tmp_path):
    store = open_oxigraph([_dump(tmp_path / "one.nt", 3)], None)
    server, url = serve_in_thread(store)
    try:
        cache = tmp_path / "c.sqlite"
        kg = SparqlKG(url, cache=cache)
        kg.count_subjects("P31", "Q5")
        with sqlite3.connect(cache) as conn:
            conn.execute("UPDATE responses_v2 SET body = '{not json'")
        with pytest.raises(Exception) as info:
            SparqlKG(url, cache=cache).count_subjects("P31", "Q5")
        assert str(cache) in str(info.value)
    finally:
        server.shutdown()
        server.server_close()
