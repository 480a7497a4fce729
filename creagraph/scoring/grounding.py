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

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.metrics import specificity
from creagraph.core.paths import inverse_labels, wikidata_dir
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

Direction = Literal["forward", "inverse"]


@functools.cache
def relation_phrases() -> dict[str, list[tuple[str, Direction]]]:
    """Normalised phrase -> [(PID, direction)] from ``wikidata/relation_phrases.tsv``."""
    path = wikidata_dir() / "relation_phrases.tsv"
    out: dict[str, list[tuple[str, Direction]]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[2] not in ("forward", "inverse"):
            raise ValueError(f"{path}:{lineno}: expected 'phrase<TAB>PID<TAB>forward|inverse'")
        out.setdefault(normalize_loose(parts[0]), []).append((parts[1], parts[2]))  # type: ignore[arg-type]
    return out


@dataclass(frozen=True)
class EntityLink:
    qid: str
    label: str | None
    method: str  # "label", "alias", "fuzzy"
    score: float


@dataclass(frozen=True)
class RelationLink:
    pid: str
    direction: Direction
    method: str  # "rule", "label", "alias", "inverse-label", "embedding"
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


class RelationLinker:
    """Link relation phrases to (PID, direction) candidates.

    Exact matches (phrasing rules, property labels, aliases, inverse phrasings) come
    first; then the ``top_k`` most similar property names by embedding, when the cosine
    similarity is at least ``min_similarity``.
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        embedder=None,
        *,
        properties: Sequence[str] | None = None,
        top_k: int = 4,
        min_similarity: float = 0.6,
    ):
        self.kg = kg
        self.embedder = embedder
        self.top_k = top_k
        self.min_similarity = min_similarity
        self._cache: dict[str, list[RelationLink]] = {}
        self._names: list[tuple[str, str, Direction, str]] = []  # (text, pid, dir, method)
        props = properties
        if props is None:
            counts = getattr(kg, "property_counts", None)
            props = sorted(counts()) if counts is not None else sorted(inverse_labels())
        inverse = inverse_labels()
        for pid in props:
            record = kg.property(pid)
            if record is None:
                continue
            if record.label:
                self._names.append((record.label, pid, "forward", "label"))
            for alias in record.aliases:
                self._names.append((alias, pid, "forward", "alias"))
            if pid in inverse:
                self._names.append((inverse[pid], pid, "inverse", "inverse-label"))
        for phrase, targets in relation_phrases().items():
            for pid, direction in targets:
                self._names.append((phrase, pid, direction, "rule"))
        self._exact: dict[str, list[RelationLink]] = {}
        for text, pid, direction, method in self._names:
            self._exact.setdefault(normalize_loose(text), []).append(
                RelationLink(pid, direction, method, 1.0)
            )
        self._vectors: np.ndarray | None = None

    def _name_vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self.embedder.encode([t for t, *_ in self._names])
        return self._vectors

    def link(self, phrase: str) -> list[RelationLink]:
        key = normalize_loose(phrase)
        if key in self._cache:
            return self._cache[key]
        links = list(dict.fromkeys(self._exact.get(key, [])))
        if self.embedder is not None and key:
            sims = self._name_vectors() @ self.embedder.encode([phrase.lower()])[0]
            seen = {(link.pid, link.direction) for link in links}
            for i in np.argsort(-sims, kind="stable"):
                if sims[i] < self.min_similarity or len(links) >= self.top_k + len(seen):
                    break
                _, pid, direction, _ = self._names[i]
                if (pid, direction) not in seen:
                    seen.add((pid, direction))
                    links.append(RelationLink(pid, direction, "embedding", float(sims[i])))
        self._cache[key] = links
        return links

    def same_property(self, phrase: str, other: str) -> bool:
        """Whether two phrases share an exactly-linked property (used by validity)."""
        a = {(link.pid, link.direction) for link in self.link(phrase) if link.score >= 0.8}
        b = {(link.pid, link.direction) for link in self.link(other) if link.score >= 0.8}
        return bool(a & b)


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
