"""The SPARQL backend against a real SPARQL server holding the slice: same answers as the
embedded backend on hundreds of random look-ups of every kind."""

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.kg.server import open_oxigraph, serve_in_thread
from creagraph.kg.sparql import SparqlError, SparqlKG, sparql_string

N = 200


@pytest.fixture(scope="module")
def sample(kg):
    statements = kg.random_statements(N, seed=11)
    rng = random.Random(5)
    entities = sorted({q for e in statements for q in (e.subject, e.object)})
    return statements, rng.sample(entities, N)


def test_stats_agree(kg, sparql_kg):
    assert sparql_kg.stats() == {k: kg.stats()[k] for k in ("statements", "entities", "properties")}


def test_records_agree(kg, sparql_kg, sample):
    _, entities = sample
    for q in entities:
        assert sparql_kg.entity(q) == kg.entity(q)
    for p in ["P31", "P69", "P161", "P166", "P2175", "P57"]:
        assert sparql_kg.property(p) == kg.property(p)
    assert sparql_kg.entity("Q999999999") is None


def test_edges_agree(kg, sparql_kg, sample):
    statements, entities = sample
    for q in entities:
        assert sparql_kg.out_edges(q) == kg.out_edges(q)
        assert sparql_kg.in_edges(q) == kg.in_edges(q)
    for e in statements:
        assert sparql_kg.out_edges(e.subject, e.property) == kg.out_edges(e.subject, e.property)
        assert sparql_kg.in_edges(e.object, e.property) == kg.in_edges(e.object, e.property)


def test_edges_between_property_types_and_counts_agree(kg, sparql_kg, sample):
    statements, _ = sample
    for e in statements[:60]:
        both = kg.edges_between(e.object, e.subject)
        assert e in both and sparql_kg.edges_between(e.object, e.subject) == both
        assert both == kg.edges_between(e.subject, e.object)
    assert kg.edges_between("Q179051", "Q999999999") == []
    for p in ("P161", "P19", "P47", "P69"):
        for side in ("subject", "object"):
            profile = kg.property_types(p, side, limit=10)
            assert profile and sparql_kg.property_types(p, side, limit=10) == profile
            assert list(profile.values()) == sorted(profile.values(), reverse=True)
    assert kg.property_types("P161", "object", limit=1) == {"Q5": 4839}  # cast are humans
    assert sparql_kg.property_counts() == {p: n for p, n in kg.property_counts().items() if n}
    with pytest.raises(ValueError):
        kg.property_types("P161", "both")


def test_triples_and_class_sizes_agree(kg, sparql_kg, sample, negatives_path):
    import gzip

    statements, _ = sample
    with gzip.open(negatives_path, "rt") as handle:
        negatives = [line.split() for line in handle][1:]
    for e in statements:
        assert sparql_kg.has_triple(*e.as_tuple())
        assert sparql_kg.count_subjects(e.property, e.object) == kg.count_subjects(
            e.property, e.object
        )
        assert sparql_kg.count_objects(e.subject, e.property) == kg.count_objects(
            e.subject, e.property
        )
    for s, p, o in random.Random(2).sample(negatives, N):
        assert sparql_kg.has_triple(s, p, o) is kg.has_triple(s, p, o) is False


@pytest.mark.slow  # ~32 s measured: label search over SPARQL for every sampled name
def test_search_agrees(kg, sparql_kg, sample):
    _, entities = sample
    labels = kg.labels(entities)
    for q in entities[:N]:
        text = labels[q]
        for variant in (text, text.lower()):
            got = sparql_kg.search(variant, limit=5, fuzzy=False)
            assert got == kg.search(variant, limit=5, fuzzy=False), variant
            assert q in {h.id for h in got}


def test_fuzzy_search_finds_target(sparql_kg):
    hits = sparql_kg.search("Kareem Abdul Jabar", limit=3)
    assert hits[0].id == "Q179051" and not hits[0].exact
    assert sparql_kg.search("Lew Alcindor")[0].id == "Q179051"


def test_categories_agree(kg, sparql_kg):
    for side, prop, lo, hi in (("subject", "P166", 3, 15), ("object", "P57", 2, 4)):
        a = list(sparql_kg.categories([prop], side=side, min_size=lo, max_size=hi))
        b = list(kg.categories([prop], side=side, min_size=lo, max_size=hi))
        assert a == b and len(a) > 10
        assert [c.members for c in a] == [c.members for c in b]


NASTY = 'He said "hi" \\ {braces} }\n SELECT * WHERE { ?s ?p ?o } #'


@pytest.fixture(scope="module")
def nasty_graphs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nasty")
    e = "http://www.wikidata.org/entity/"
    escaped = NASTY.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    dump = folder / "nasty.nt"
    dump.write_text(
        f'<{e}Q1> <http://www.w3.org/2000/01/rdf-schema#label> "{escaped}"@en .\n'
        f'<{e}Q1> <http://www.w3.org/2004/02/skos/core#altLabel> "{escaped} alias"@en .\n'
        f'<{e}Q1> <http://schema.org/description> "{escaped}"@en .\n'
        f'<{e}Q2> <http://www.w3.org/2000/01/rdf-schema#label> "plain"@en .\n'
        f"<{e}Q1> <http://www.wikidata.org/prop/direct/P31> <{e}Q2> .\n"
    )
    import_dumps([dump], folder / "store", show_progress=False)
    server, url = serve_in_thread(open_oxigraph([dump], None))
    yield EmbeddedKG(folder / "store"), SparqlKG(url, cache=False)
    server.shutdown()


def test_nasty_label_through_every_query_path(nasty_graphs):
    embedded, remote = nasty_graphs
    for graph in (embedded, remote):
        record = graph.entity("Q1")
        assert record.label == NASTY and record.description == NASTY
        assert record.aliases == (NASTY + " alias",)
        exact = graph.search(NASTY, fuzzy=False)
        assert [h.id for h in exact] == ["Q1"] and exact[0].matched == NASTY
        assert graph.search(NASTY + " alias")[0].kind == "alias"
        assert graph.search(NASTY[:-3] + "x")[0].id == "Q1"
        assert graph.labels(["Q1", "Q2"]) == {"Q1": NASTY, "Q2": "plain"}
        assert graph.search('"} UNION { ?s ?p ?o } #', fuzzy=False) == []
    assert remote.search(NASTY) == embedded.search(NASTY)


def test_sparql_string_escapes_everything():
    assert sparql_string('a"b\\c\nd\re\tf\x01') == '"a\\"b\\\\c\\nd\\re\\tf\\u0001"'
    with pytest.raises(ValueError):
        sparql_string("x", 'en" . } #')
    with pytest.raises(ValueError):
        SparqlKG("http://localhost:1/q", cache=False).out_edges("Q1> } #")


class Flaky(BaseHTTPRequestHandler):
    failures = 2
    seen_agents: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        type(self).seen_agents.append(self.headers.get("User-Agent"))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if type(self).failures > 0:
            type(self).failures -= 1
            self.send_response(429 if type(self).failures else 503)
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        body = json.dumps({"head": {}, "boolean": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_retries_backoff_user_agent_and_cache(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    waits = []
    url = f"http://127.0.0.1:{server.server_port}/query"
    try:
        graph = SparqlKG(
            url, cache=tmp_path / "c.sqlite", retries=3, backoff=0.5, sleep=waits.append
        )
        assert graph.has_triple("Q1", "P31", "Q5") is True
        assert waits == [0.5, 1.0]
        assert graph.requests_sent == 3
        assert all(a.startswith("creagraph/") for a in Flaky.seen_agents)
        assert graph.has_triple("Q1", "P31", "Q5") is True
        assert graph.requests_sent == 3  # answered from the on-disk cache
        Flaky.failures = 10
        fresh = SparqlKG(url, cache=False, retries=1, sleep=waits.append)
        with pytest.raises(SparqlError, match="giving up after 2 attempts"):
            fresh.has_triple("Q1", "P31", "Q6")
    finally:
        server.shutdown()
