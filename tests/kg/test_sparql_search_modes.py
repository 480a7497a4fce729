"""Entity search against an endpoint holding all of Wikidata (issue 28): the query text
each ``search_mode`` sends, recorded by a real loopback SPARQL server that answers the
search queries with one labelled item."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from creagraph.kg.sparql import SEARCH_MODES, SparqlKG

ROW = {
    "e": {"type": "uri", "value": "http://www.wikidata.org/entity/Q42"},
    "pred": {"type": "uri", "value": "http://www.w3.org/2000/01/rdf-schema#label"},
    "text": {"type": "literal", "value": "Douglas Adams", "xml:lang": "en"},
}


class _Recorder(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        query = parse_qs(body)["query"][0]
        self.server.queries.append(query)  # type: ignore[attr-defined]
        search = "?e ?pred ?text" in query
        bindings = [ROW] if search else []
        out = json.dumps({"head": {"vars": []}, "results": {"bindings": bindings}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture()
def recorder():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    httpd.queries = []  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()


def _search_query(httpd, mode: str) -> str:
    url = f"http://127.0.0.1:{httpd.server_port}/query"
    kg = SparqlKG(url, cache=False, search_mode=mode, retries=0)
    httpd.queries.clear()
    hits = kg.search("Douglas Adams", limit=5, fuzzy=False)
    assert [h.id for h in hits if h.exact] == ["Q42"], mode
    (query,) = [q for q in httpd.queries if "?e ?pred ?text" in q]
    return query


def test_each_search_mode_sends_its_own_query(recorder):
    entitysearch = _search_query(recorder, "entitysearch")
    assert 'wikibase:api "EntitySearch"' in entitysearch
    assert 'mwapi:search "Douglas Adams"' in entitysearch and "REGEX" not in entitysearch
    assert "PREFIX mwapi: <https://www.mediawiki.org/ontology#API/>" in entitysearch
    prefix = _search_query(recorder, "prefix")
    assert 'STRSTARTS(STR(?text), "Douglas")' in prefix and "REGEX" not in prefix
    assert 'STRSTARTS(STR(?text), "douglas")' in prefix
    scan = _search_query(recorder, "scan")
    assert "REGEX(LCASE(STR(?text))" in scan
    exact = _search_query(recorder, "exact")
    assert '"Douglas Adams"@en' in exact and "REGEX" not in exact
    assert set(SEARCH_MODES) == {"scan", "exact", "entitysearch", "prefix", "index"}


def test_auto_picks_the_search_each_endpoint_has(monkeypatch):
    monkeypatch.delenv("CREAGRAPH_SPARQL_SEARCH", raising=False)
    picks = {
        url: SparqlKG(url, cache=False).search_mode
        for url in (
            "https://query.wikidata.org/sparql",
            "https://qlever.cs.uni-freiburg.de/api/wikidata",
            "http://127.0.0.1:7878/query",
        )
    }
    assert list(picks.values()) == ["entitysearch", "prefix", "scan"]
    monkeypatch.setenv("CREAGRAPH_SPARQL_SEARCH", "prefix")
    assert SparqlKG("http://127.0.0.1:7878/query", cache=False).search_mode == "prefix"
    monkeypatch.setenv("CREAGRAPH_SPARQL_SEARCH", "grep")
    with pytest.raises(ValueError, match="search_mode must be auto or scan, exact"):
        SparqlKG("http://127.0.0.1:7878/query", cache=False)
