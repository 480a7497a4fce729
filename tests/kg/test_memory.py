"""MemoryKG answers like an embedded store imported from the same statements."""

from __future__ import annotations

import inspect

import pytest

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.io import InputError
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.kg.memory import MemoryKG

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"

TRIPLES = [
    ("Q1", "P166", "Q10"), ("Q2", "P166", "Q10"), ("Q3", "P166", "Q10"),
    ("Q2", "P106", "Q20"), ("Q1", "P31", "Q5"), ("Q2", "P31", "Q5"), ("Q3", "P31", "Q6"),
    ("Q11", "P161", "Q1"), ("Q11", "P161", "Q3"), ("Q1", "P26", "Q2"),
]  # fmt: skip
LABELS = {
    "Q1": "Ada Lovelace", "Q2": "Bea", "Q3": "Cy", "Q10": "Prize", "Q20": "poet",
    "Q11": "Some Film", "Q5": "human", "Q6": "robot", "P166": "award received",
    "P106": "occupation", "P31": "instance of", "P161": "cast member", "P26": "spouse",
}  # fmt: skip
ALIASES = {"Q1": ["Countess of Lovelace"]}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    folder = tmp_path_factory.mktemp("memory")
    lines = [f"<{WD}{s}> <{WDT}{p}> <{WD}{o}> ." for s, p, o in TRIPLES]
    lines += [f'<{WD}{i}> <{LABEL}> "{name}"@en .' for i, name in LABELS.items()]
    lines += [f'<{WD}{i}> <{ALT}> "{a}"@en .' for i, names in ALIASES.items() for a in names]
    (folder / "tiny.nt").write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CREAGRAPH_PROPERTY_VECTORS", "0")  # no embedding model needed here
        import_dumps([folder / "tiny.nt"], folder / "store", show_progress=False)
    embedded = EmbeddedKG(folder / "store")
    yield MemoryKG(TRIPLES, labels=LABELS, aliases=ALIASES), embedded
    embedded.close()


def test_memory_kg_conforms_signature_for_signature():
    kg = MemoryKG(TRIPLES, labels=LABELS)
    assert isinstance(kg, KnowledgeGraph) and kg.backend == "memory"
    for name, value in vars(KnowledgeGraph).items():
        if name.startswith("_") or not inspect.isfunction(value):
            continue
        declared = inspect.signature(value).parameters.values()
        actual = inspect.signature(getattr(MemoryKG, name)).parameters.values()
        assert [(p.name, p.kind, p.default) for p in actual] == [
            (p.name, p.kind, p.default) for p in declared
        ], name


def test_memory_kg_answers_like_the_embedded_store(pair):
    memory, embedded = pair
    ids = sorted({t[0] for t in TRIPLES} | {t[2] for t in TRIPLES})
    for qid in ids:
        assert memory.out_edges(qid) == embedded.out_edges(qid), qid
        assert memory.in_edges(qid) == embedded.in_edges(qid), qid
        assert memory.degree(qid) == embedded.degree(qid), qid
        assert memory.entity(qid) == embedded.entity(qid), qid
        for prop in ("P166", "P161", "P31"):
            assert memory.out_edges(qid, prop) == embedded.out_edges(qid, prop)
            assert memory.count_subjects(prop, qid) == embedded.count_subjects(prop, qid)
            assert memory.count_objects(qid, prop) == embedded.count_objects(qid, prop)
    assert memory.has_triple("Q1", "P26", "Q2") and not memory.has_triple("Q2", "P26", "Q1")
    assert memory.edges_between("Q2", "Q1") == embedded.edges_between("Q2", "Q1")
    for side in ("subject", "object"):
        cats = list(memory.categories(["P166", "P161"], side=side, min_size=2))
        assert cats == list(embedded.categories(["P166", "P161"], side=side, min_size=2))
        assert [c.members for c in cats] == [
            c.members for c in embedded.categories(["P166", "P161"], side=side, min_size=2)
        ]
        assert memory.property_types("P166", side) == embedded.property_types("P166", side)
    for text in ("ada lovelace", "countess of lovelace", "Ada Lovelac", "bea"):
        assert memory.search(text) == embedded.search(text), text
    assert memory.search("award", kind="property", min_score=50) == embedded.search(
        "award", kind="property", min_score=50
    )
    assert memory.labels(["Q1", "Q99"]) == embedded.labels(["Q1", "Q99"]) == {"Q1": "Ada Lovelace"}
    counts = {p: n for p, n in embedded.property_counts().items() if n}
    assert memory.property_counts() == counts
    assert memory.stats()["statements"] == embedded.stats()["statements"] == len(TRIPLES)


def test_memory_kg_refuses_malformed_statements():
    with pytest.raises(InputError, match="statement 1: not a Wikidata property id"):
        MemoryKG([("Q1", "P1", "Q2"), ("Q1", "spouse", "Q2")])
    with pytest.raises(InputError, match="statement 0: expected"):
        MemoryKG([("Q1", "P1")])
    with pytest.raises(ValueError, match="side must be"):
        list(MemoryKG([]).categories(["P1"], side="left"))  # type: ignore[arg-type]
