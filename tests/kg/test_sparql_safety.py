"""User strings cannot change a SPARQL query's meaning. Labels and search text holding
quotes, backslashes, braces, ``#``, newlines, regex characters and SPARQL keywords go
through every user-string entry point of the SPARQL backend, against a real Oxigraph
server, in both search modes, and give exactly what the embedded backend gives; the
server's data is unchanged afterwards; malformed ids fail before any request is sent."""

from __future__ import annotations

import pytest

from creagraph.core.io import InputError
from creagraph.core.text import normalize_loose
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.kg.ntriples import escape_literal
from creagraph.kg.server import open_oxigraph, serve_in_thread
from creagraph.kg.sparql import SparqlKG

HOSTILE = [
    '"} ; DROP ALL ; #',
    '") } UNION { ?s ?p ?o } #',
    "'} UNION { ?s ?p ?o } #",
    'a "quoted" word',
    "back\\slash \\\" and \\\\ pairs \\u0022",
    "line one\nline two\r\ttabbed",
    "} } } { {",
    "# not a comment",
    "SELECT * WHERE { ?s ?p ?o } LIMIT 1",
    "DELETE WHERE { ?s ?p ?o }",
    '""" triple quotes \'\'\'',
    "regex .*+?()[]{}|^$ chars",
    "<http://evil.example/> wd:Q1 $values ?e",
    "Zoë Ünïcödé — ελληνικά 日本語",
]
E = "http://www.wikidata.org/entity/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
DESC = "http://schema.org/description"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Item Q(100+i) labelled HOSTILE[i] (alias and description too), in an embedded store
    and on a real SPARQL server; remote clients in both search modes."""
    folder = tmp_path_factory.mktemp("hostile")
    lines = []
    for i, text in enumerate(HOSTILE):
        q = f"<{E}Q{100 + i}>"
        lit = escape_literal(text)
        lines += [
            f'{q} <{LABEL}> "{lit}"@en .',
            f'{q} <{ALT}> "{lit} alias"@en .',
            f'{q} <{DESC}> "{lit}"@en .',
            f"{q} <http://www.wikidata.org/prop/direct/P31> <{E}Q5> .",
        ]
    lines.append(f'<{E}Q5> <{LABEL}> "human"@en .')
    dump = folder / "hostile.nt"
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_dumps([dump], folder / "store", show_progress=False)
    server, url = serve_in_thread(open_oxigraph([dump], None))
    embedded = EmbeddedKG(folder / "store")
    remotes = [SparqlKG(url, cache=False, search_mode=mode) for mode in ("scan", "exact")]
    yield embedded, remotes
    embedded.close()
    server.shutdown()


def test_hostile_labels_through_every_entry_point(hostile):
    embedded, remotes = hostile
    ids = [f"Q{100 + i}" for i in range(len(HOSTILE))]
    expected_labels = dict(zip(ids, HOSTILE))
    assert embedded.labels(ids + ["Q5"]) == {**expected_labels, "Q5": "human"}
    for remote in remotes:
        before = remote.stats()
        assert remote.labels(ids + ["Q5"]) == embedded.labels(ids + ["Q5"])
        for q, text in expected_labels.items():
            assert remote.entity(q) == embedded.entity(q)
            assert remote.entity(q).label == text and remote.label(q) == text
            assert remote.records([q])[q] == (text, (text + " alias",), text)
            for variant in (text, text + " alias"):
                got = remote.search(variant, fuzzy=False)
                local = embedded.search(variant, fuzzy=False)
                if remote.search_mode == "scan":
                    assert got == local, variant
                else:  # exact mode looks up a few spellings only: a subset, nothing extra
                    assert set(got) <= set(local), variant
                assert q in {h.id for h in got}
            if remote.search_mode == "scan":  # scan sees every candidate, as embedded does
                assert remote.search(text) == embedded.search(text), text
        assert remote.in_edges("Q5") == embedded.in_edges("Q5")
        assert remote.stats() == before == {"statements": len(ids), "entities": len(ids) + 1,
                                             "properties": 1}  # fmt: skip


@pytest.mark.parametrize("kind", ["entity", "property"])
def test_injection_strings_as_search_text_on_the_slice(kg, sparql_kg, kind):
    before = sparql_kg.stats()
    for text in HOSTILE + ["", " ", "\\", '"', "}", "#", "\n", "?s", "$x", "a" * 2000]:
        got = sparql_kg.search(text, limit=5, kind=kind)
        if any(len(w) >= 2 for w in normalize_loose(text).split()):
            assert got == kg.search(text, limit=5, kind=kind), text
        else:  # scan mode does not scan for one-letter words: fewer hits, none extra
            assert set(got) <= set(kg.search(text, limit=1000, kind=kind)), text
    # a very long search text is cut to a short regex, not minutes of server time
    long_text = "Kareem Abdul-Jabbar " * 200
    assert sparql_kg.search(long_text, limit=5) == kg.search(long_text, limit=5)
    assert sparql_kg.stats() == before


BAD_IDS = [
    "Q1> } #",
    "Q1 } UNION { ?s ?p ?o }",
    "wd:Q1",
    "Q",
    "Q0",
    "Q01",
    "q1",
    "Q1 ",
    "Q1\n",
    "Q-1",
    "Q1.5",
    "Q١",
    "",
    "P31",
    '"Q1"',
]


def test_malformed_ids_fail_before_any_request(sparql_endpoint):
    graph = SparqlKG(sparql_endpoint, cache=False)
    calls = [
        lambda b: graph.entity(b),
        lambda b: graph.out_edges(b),
        lambda b: graph.in_edges(b),
        lambda b: graph.out_edges("Q1", b.replace("Q", "P", 1) if b != "P31" else "Q31"),
        lambda b: graph.has_triple(b, "P31", "Q5"),
        lambda b: graph.has_triple("Q1", "P31", b),
        lambda b: graph.count_subjects("P31", b),
        lambda b: graph.count_objects(b, "P31"),
        lambda b: graph.property(b.replace("Q", "P", 1) if b != "P31" else "Q31"),
        lambda b: graph.property_statements(b.replace("Q", "P", 1) if b != "P31" else "Q31", 5),
        lambda b: list(graph.categories([b.replace("Q", "P", 1) if b != "P31" else "Q31"],
                                        side="subject")),  # fmt: skip
    ]
    for bad in BAD_IDS:
        for call in calls:
            with pytest.raises(InputError):
                call(bad)
        if bad != "P31":  # look-ups over many ids skip non-ids, as the embedded backend does
            assert graph.labels([bad]) == {} and graph.records([bad]) == {}
            assert graph.label(bad) is None and graph.degree(bad) == 0
    assert graph.requests_sent == 0


def test_language_must_be_a_tag(sparql_endpoint):
    for bad in ('en" } #', "en)", "e n", "en\n"):
        with pytest.raises(ValueError, match="language tag"):
            SparqlKG(sparql_endpoint, cache=False, language=bad)
