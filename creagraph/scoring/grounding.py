"""Grounding free-text triples in the knowledge graph (SPEC §3.4).

Entity mentions are linked by label/alias search (exact after normalisation, then fuzzy);
relation phrases by phrasing rules (``wikidata/relation_phrases.tsv``), property labels,
aliases and inverse phrasings, then embedding similarity against all of them. A triple is
checked in both directions and across the top candidates; the combination whose statement
exists wins. Every result keeps its evidence (ids, counts, how each part was linked).

Statuses of a grounded triple:

- ``verified`` — head, relation and tail linked and the statement exists: factual = 1.
- ``absent`` — all three linked, the statement is not in the graph: factual = 0 under
  the closed-world reading of the graph (a slice is incomplete: the ``hybrid`` judge sends
  these to another judge).
- ``unlinked`` — some part could not be linked: factuality and specificity are unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.metrics import specificity
from creagraph.core.relations import (
    RelationLink,
    RelationLinker,
    relation_phrases,
)
from creagraph.core.text import normalize_loose

__all__ = [
    "EntityLink",
    "RelationLink",
    "TripleGrounding",
    "EntityLinker",
    "RelationLinker",
    "Grounder",
    "relation_phrases",
]


@dataclass(frozen=True)
class EntityLink:
    qid: str
    label: str | None
    method: str  # "label", "alias", "fuzzy"
    score: float


@dataclass
class TripleGrounding:
    """Evidence and verdict for one triple."""

    status: Literal["verified", "absent", "unlinked"]
    subject: str | None = None
    property: str | None = None
    object: str | None = None
    class_size_subjects: int | None = None
    class_size_objects: int | None = None
    specificity: int | None = None
    factual: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "ids": [self.subject, self.property, self.object],
            "class_sizes": [self.class_size_subjects, self.class_size_objects],
            "specificity": self.specificity,
            "factual": self.factual,
            **self.evidence,
        }


class EntityLinker:
    """Link entity mentions to QIDs: exact label/alias (normalised), then fuzzy ≥ ``min_fuzzy``."""

    def __init__(self, kg: KnowledgeGraph, *, candidates: int = 3, min_fuzzy: float = 90.0):
        self.kg = kg
        self.candidates = candidates
        self.min_fuzzy = min_fuzzy
        self._cache: dict[str, list[EntityLink]] = {}

    def link(self, mention: str) -> list[EntityLink]:
        """Up to ``candidates`` links, best first (empty when nothing matches)."""
        key = normalize_loose(mention)
        if key in self._cache:
            return self._cache[key]
        links: list[EntityLink] = []
        if key:
            hits = self.kg.search(
                mention, limit=self.candidates, fuzzy=True, min_score=self.min_fuzzy
            )
            exact = [h for h in hits if h.exact]
            chosen = exact or [h for h in hits if h.score >= self.min_fuzzy]
            links = [
                EntityLink(h.id, h.label, h.kind if h.exact else "fuzzy", h.score) for h in chosen
            ]
        self._cache[key] = links
        return links


class Grounder:
    """Ground triples in a knowledge graph: link, check existence, count class sizes."""

    def __init__(self, kg: KnowledgeGraph, entities: EntityLinker, relations: RelationLinker):
        self.kg = kg
        self.entities = entities
        self.relations = relations
        self._cache: dict[tuple[str, str, str], TripleGrounding] = {}

    def ground(self, head: str, relation: str, tail: str) -> TripleGrounding:
        key = (normalize_loose(head), normalize_loose(relation), normalize_loose(tail))
        if key not in self._cache:
            self._cache[key] = self._ground(head, relation, tail)
        return self._cache[key]

    def _ground(self, head: str, relation: str, tail: str) -> TripleGrounding:
        heads, tails = self.entities.link(head), self.entities.link(tail)
        rels = self.relations.link(relation)
        evidence: dict[str, Any] = {
            "backend": f"kg:{getattr(self.kg, 'backend', type(self.kg).__name__)}",
            "head_candidates": [h.qid for h in heads],
            "tail_candidates": [t.qid for t in tails],
            "relation_candidates": [f"{r.pid}:{r.direction}" for r in rels],
        }
        if not heads or not tails or not rels:
            missing = [
                n for n, c in (("head", heads), ("relation", rels), ("tail", tails)) if not c
            ]
            evidence["unlinked"] = missing
            return TripleGrounding("unlinked", evidence=evidence)
        for r in rels:
            for h in heads:
                for t in tails:
                    s, o = (h, t) if r.direction == "forward" else (t, h)
                    if self.kg.has_triple(s.qid, r.pid, o.qid):
                        return self._scored("verified", s, r, o, evidence)
        # No candidate statement exists: report the best-ranked reading as absent.
        h, t, r = heads[0], tails[0], rels[0]
        s, o = (h, t) if r.direction == "forward" else (t, h)
        return self._scored("absent", s, r, o, evidence)

    def _scored(self, status, s: EntityLink, r: RelationLink, o: EntityLink, evidence):
        n_subjects = self.kg.count_subjects(r.pid, o.qid)
        n_objects = self.kg.count_objects(s.qid, r.pid)
        evidence = {
            **evidence,
            "link_methods": [s.method, r.method, o.method],
            "relation_direction": r.direction,
        }
        return TripleGrounding(
            status,
            s.qid,
            r.pid,
            o.qid,
            n_subjects,
            n_objects,
            specificity(max(n_subjects, n_objects)),
            1.0 if status == "verified" else 0.0,
            evidence,
        )
