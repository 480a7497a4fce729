"""Slice builder: extract a Wikidata slice from a SPARQL endpoint as truthy-dump N-Triples.

The output uses exactly the vocabulary :func:`creagraph.kg.import_dumps` reads, so a pulled
slice can be imported into an embedded store (``creagraph kg pull`` then ``kg import``).
"""

from __future__ import annotations

import gzip
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from creagraph.core.graph import Edge, check_pid, check_qid
from creagraph.core.io import atomic_write
from creagraph.core.progress import progress_bar
from creagraph.kg.common import id_number
from creagraph.kg.ntriples import (
    RDFS_LABEL,
    SCHEMA_DESCRIPTION,
    SKOS_ALT,
    WD_ENTITY,
    WDT,
    escape_literal,
)
from creagraph.kg.sparql import SparqlKG

__all__ = ["PullResult", "pull_slice", "write_ntriples"]


@dataclass
class PullResult:
    """What :func:`pull_slice` wrote."""

    path: Path
    statements: int
    entities: int
    properties: int


def pull_slice(
    kg: SparqlKG,
    out: str | os.PathLike[str],
    *,
    properties: Sequence[str] = (),
    seeds: Sequence[str] = (),
    hops: int = 1,
    per_property_limit: int = 1000,
    max_edges_per_entity: int = 500,
    max_entities: int = 50_000,
    show_progress: bool = True,
) -> PullResult:
    """Extract a slice: seed entities expanded ``hops`` steps along (chosen) properties.

    Parameters
    ----------
    kg : SparqlKG
        The endpoint to read from.
    out : path
        Output N-Triples file (``.nt``, or ``.nt.gz`` to compress), written atomically.
    properties : sequence of PIDs
        Only follow these properties (all item-to-item properties when empty). With no
        seeds, up to ``per_property_limit`` statements of each property seed the slice.
    seeds : sequence of QIDs
        Entities to start from.
    hops : int
        Breadth-first expansion depth from the seeds (out- and in-edges).
    max_edges_per_entity, max_entities : int
        Bounds that keep hub entities (e.g. "human") from exploding the slice.

    Returns
    -------
    PullResult
    """
    props = [check_pid(p) for p in properties]
    if not props and not seeds:
        raise ValueError("give at least one --property or --seed")
    wanted = set(props)
    statements: set[Edge] = set()
    frontier: deque[tuple[str, int]] = deque()
    seen: set[str] = set()
    for q in seeds:
        check_qid(q)
        if q not in seen:
            seen.add(q)
            frontier.append((q, 0))
    if not seeds:
        for pid in props:
            for edge in kg.property_statements(pid, per_property_limit):
                statements.add(edge)
                for q in (edge.subject, edge.object):
                    if q not in seen:
                        seen.add(q)
                        frontier.append((q, 1))
    bar = progress_bar(total=len(frontier), desc="pull", unit="entity") if show_progress else None
    while frontier:
        qid, depth = frontier.popleft()
        if bar is not None:
            bar.update(1)
        if depth >= hops:
            continue
        edges = kg.out_edges(qid) + kg.in_edges(qid)
        edges = [e for e in edges if not wanted or e.property in wanted][:max_edges_per_entity]
        for edge in edges:
            statements.add(edge)
            for q in (edge.subject, edge.object):
                if q not in seen and len(seen) < max_entities:
                    seen.add(q)
                    frontier.append((q, depth + 1))
                    if bar is not None:
                        bar.total += 1
    if bar is not None:
        bar.close()
    entities = sorted({q for e in statements for q in (e.subject, e.object)} | seen, key=id_number)
    used_props = sorted({e.property for e in statements}, key=id_number)
    records = kg.records(list(entities) + used_props)
    path = write_ntriples(out, statements, records, kg.language)
    return PullResult(path, len(statements), len(entities), len(used_props))


def write_ntriples(
    out: str | os.PathLike[str],
    statements: set[Edge] | Sequence[Edge],
    records: dict[str, tuple[str | None, tuple[str, ...], str | None]],
    language: str = "en",
) -> Path:
    """Write statements and text records in Wikidata truthy-dump N-Triples (atomically)."""
    path = Path(out)
    lines: list[str] = []
    for ident in sorted(records, key=lambda i: (i[0] != "P", id_number(i))):
        label, aliases, description = records[ident]
        node = f"<{WD_ENTITY}{ident}>"
        if label is not None:
            lines.append(f'{node} <{RDFS_LABEL}> "{escape_literal(label)}"@{language} .')
        if description is not None:
            lines.append(
                f'{node} <{SCHEMA_DESCRIPTION}> "{escape_literal(description)}"@{language} .'
            )
        for alias in aliases:
            lines.append(f'{node} <{SKOS_ALT}> "{escape_literal(alias)}"@{language} .')
    for e in sorted(
        statements, key=lambda e: (id_number(e.subject), id_number(e.property), id_number(e.object))
    ):
        lines.append(f"<{WD_ENTITY}{e.subject}> <{WDT}{e.property}> <{WD_ENTITY}{e.object}> .")
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_write(path, mode="wb") as handle:
        handle.write(data)
    return path
