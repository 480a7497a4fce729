"""The KnowledgeGraph protocol: both backends conform to it, signature for signature, so
that it cannot drift from what they provide (issue 18)."""

import inspect
import json

import pytest

from creagraph.core.graph import (
    EntityRecord,
    KnowledgeGraph,
    NameQuery,
    PropertyRecord,
    SearchHit,
    rank_hits,
)
from creagraph.kg import EmbeddedKG, SparqlKG, import_dumps

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def _members() -> tuple[list[str], list[str]]:
    """The protocol's methods and its data attributes."""
    methods = [
        name
        for name, value in vars(KnowledgeGraph).items()
        if not name.startswith("_") and inspect.isfunction(value)
    ]
    return methods, list(KnowledgeGraph.__annotations__)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph")
    dump = folder / "tiny.nt"
    dump.write_text(
        f"<{WD}Q1> <{WDT}P31> <{WD}Q5> .\n"
        f"<{WD}Q2> <{WDT}P31> <{WD}Q5> .\n"
        f'<{WD}Q1> <{LABEL}> "Ada"@en .\n'
        f'<{WD}P31> <{LABEL}> "instance of"@en .\n'
    )
    import_dumps([dump], folder / "store", show_progress=False)
    kg = EmbeddedKG(folder / "store")
    yield kg
    kg.close()


@pytest.fixture
def sparql():
    return SparqlKG("http://127.0.0.1:9/sparql", cache=False)  # nothing is sent


def test_the_protocol_declares_what_the_jobs_call():
    methods, attributes = _members()
    for name in ("label", "labels", "search", "out_edges", "property_counts", "close"):
        assert name in methods
    assert attributes == ["backend"]


@pytest.mark.parametrize("backend", ["embedded", "sparql"])
def test_both_backends_conform_signature_for_signature(backend, request):
    kg = request.getfixturevalue(backend)
    assert isinstance(kg, KnowledgeGraph)
    assert kg.backend == backend
    methods, _ = _members()
    for name in methods:
        declared = inspect.signature(getattr(KnowledgeGraph, name))
        actual = inspect.signature(getattr(type(kg), name))
        assert [
            (p.name, p.kind, p.default) for p in actual.parameters.values()
        ] == [(p.name, p.kind, p.default) for p in declared.parameters.values()], name


def test_a_graph_lacking_a_method_does_not_conform(embedded):
    class Partial:
        backend = "partial"

        def __getattr__(self, name):
            if name == "label":
                raise AttributeError(name)
            return getattr(embedded, name)

    assert not isinstance(Partial(), KnowledgeGraph)
    assert not isinstance(object(), KnowledgeGraph)


def test_shared_search_and_records(embedded):
    hits = embedded.search("ada")
    assert [(h.id, h.label, h.exact) for h in hits] == [("Q1", "Ada", True)]
    assert embedded.search("instance of", kind="property")[0].id == "P31"
    assert embedded.label("Q1") == "Ada" and embedded.label("Q2") is None
    assert embedded.property_counts() == {"P31": 2}
    assert NameQuery.of("Ada\ud800", "entity") == NameQuery("Q", "Ada\ufffd", "ada\ufffd", "ada")
    with pytest.raises(ValueError, match="kind must be"):
        NameQuery.of("x", "lexeme")
    entity, prop = embedded.entity("Q1"), embedded.property("P31")
    assert entity == EntityRecord("Q1", "Ada") and not isinstance(entity, PropertyRecord)
    assert json.loads(json.dumps(prop.__dict__))["id"] == "P31"


def test_rank_hits_orders_exact_then_score_then_popularity():
    hits = [
        SearchHit("Q3", None, "b", "alias", 90.0, False),
        SearchHit("Q2", None, "a", "label", 90.0, False),
        SearchHit("Q1", None, "a", "alias", 100.0, True),
        SearchHit("Q4", None, "a", "label", 90.0, False),
    ]
    ranked = rank_hits(hits, 3, lambda ids: {"Q4": 5}, lambda ids: {"Q1": "one"})
    assert [(h.id, h.label) for h in ranked] == [("Q1", "one"), ("Q4", None), ("Q2", None)]
