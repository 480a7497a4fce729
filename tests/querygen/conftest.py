"""Fixtures of the query-generation tests: tiny hand-built graphs and a generated query set."""

from __future__ import annotations

from pathlib import Path

import pytest

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DESC = "http://schema.org/description"

PROPERTY_LABELS = {
    "P21": "sex or gender",
    "P26": "spouse",
    "P27": "country of citizenship",
    "P31": "instance of",
    "P40": "child",
    "P54": "member of sports team",
    "P69": "educated at",
    "P106": "occupation",
    "P166": "award received",
    "P463": "member of",
}


def build_store(
    root: Path,
    triples: list[tuple[str, str, str]],
    labels: dict[str, str],
    descriptions: dict[str, str] | None = None,
):
    """An embedded store over ``triples`` (QID, PID, QID) with English labels and descriptions."""
    from creagraph.kg import EmbeddedKG, import_dumps
    from creagraph.kg.ntriples import escape_literal

    lines = [f"<{WD}{s}> <{WDT}{p}> <{WD}{o}> ." for s, p, o in triples]
    for ident, text in {**PROPERTY_LABELS, **labels}.items():
        lines.append(f'<{WD}{ident}> <{LABEL}> "{escape_literal(text)}"@en .')
    for ident, text in (descriptions or {}).items():
        lines.append(f'<{WD}{ident}> <{DESC}> "{escape_literal(text)}"@en .')
    root.mkdir(parents=True, exist_ok=True)
    source = root / "graph.nt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_dumps([source], root / "store", show_progress=False)
    return EmbeddedKG(root / "store")


@pytest.fixture
def tiny_graph(tmp_path):
    """Build a tiny embedded store: ``tiny_graph(triples, labels, descriptions)``."""
    opened = []

    def make(triples, labels, descriptions=None):
        kg = build_store(tmp_path / f"g{len(opened)}", triples, labels, descriptions)
        opened.append(kg)
        return kg

    yield make
    for kg in opened:
        kg.close()


@pytest.fixture(scope="session")
def generated(kg):
    """1,000 queries generated from the shared slice with seed 7 (the acceptance setting)."""
    from creagraph.querygen import generate_queries

    return generate_queries(kg, 1000, seed=7)
