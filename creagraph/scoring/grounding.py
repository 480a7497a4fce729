"""Grounding free-text triples in the knowledge graph: verified / refuted / unknown (SPEC §3.4).

Entity mentions are linked by :class:`~creagraph.scoring.linking.EntityLinker` (exact
label/alias, qualifier hints, a strict fuzzy rule); relation phrases by
:class:`~creagraph.core.relations.RelationLinker` (phrasing rules, property names, inverse
phrasings, embedding similarity). Candidates are then ranked for the triple at hand: the
query's own entities first, then how well each candidate's classes (P31) fit the classes
the property's subjects or objects usually have in the graph (:meth:`property_types`).

Verdicts (field ``status``; ``factual`` 1 / 0 / ``None``):

- ``verified`` — a statement linking the two ends exists: as phrased, read the other way
  round, through a declared inverse property (``wikidata/inverse_properties.tsv``) or a
  symmetric one (``wikidata/symmetric_properties.tsv``); or an edge between the linked ends
  whose property the phrase names well enough (similarity ≥ ``edge_min_similarity``: an
  existing edge is strong evidence, so the bar is lower than for open linking); or, for a
  place-valued property, a stored value located inside the claimed place (born in Brooklyn
  verifies "born in New York City"). The evidence names the statement found and how.
  When the phrase is exactly a name of some property (label, alias, inverse phrasing or
  phrasing rule), only those properties are tried: embedding neighbours ("nominated for"
  next to "award received") and other edges serve phrases that name no property exactly.
- ``refuted`` — only with positive evidence: the triple's reading is confidently linked
  (exact relation phrase, ends with link confidence ≥ ``min_confidence``, the claimed object
  of the kind the property takes), the property is one whose values are complete once a
  subject has any (partial-completeness assumption, AMIE; ``wikidata/
  complete_properties.tsv``), the subject has values and none is the claimed object, no
  other statement links the two ends, and for places neither contains the other; or the
  statement is a known negative (e.g. the slice's ``negatives.tsv.gz``).
- ``unknown`` — everything else, with the ``reason``. Specificity σ is still computed from
  the best reading when all three parts are linked; with an end or the relation unlinked σ
  is unknown (``None``).

Verdicts can be kept between runs (``cache``: :mod:`creagraph.scoring.groundcache`, keyed
by the store's identity, every setting and the triple's text), so a warm run reads them.
"""

from __future__ import annotations

import functools
import gzip
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from creagraph.core.graph import Edge, KnowledgeGraph
from creagraph.core.io import InputError
from creagraph.core.metrics import specificity
from creagraph.core.relations import (
    Direction,
    RelationLink,
    RelationLinker,
    directional_phrase,
    implying_properties,
    inverse_properties,
    property_implications,
    read_table_rows,
    relation_phrases,
    symmetric_properties,
)
from creagraph.core.text import normalize_loose
from creagraph.scoring.linking import EntityLink, EntityLinker

if TYPE_CHECKING:
    from creagraph.scoring.groundcache import GroundingCache

__all__ = [
    "EntityLink",
    "RelationLink",
    "TripleGrounding",
    "EntityLinker",
    "RelationLinker",
    "Grounder",
    "relation_phrases",
    "inverse_properties",
    "symmetric_properties",
    "complete_properties",
    "containment_properties",
    "load_negatives",
    "property_implications",
]

Status = Literal["verified", "refuted", "unknown"]
EXACT_RELATION_METHODS = frozenset({"rule", "label", "alias", "inverse-label", "inverse-of"})


@functools.cache
def complete_properties() -> dict[str, str]:
    """PID -> value kind (``place`` or ``item``) for the properties that can refute, from
    ``wikidata/complete_properties.tsv``."""
    return {r[0]: r[1] for r in read_table_rows("complete_properties.tsv", 2)}


@functools.cache
def containment_properties() -> tuple[str, ...]:
    """PIDs that place a location inside another (``wikidata/containment_properties.tsv``)."""
    return tuple(r[0] for r in read_table_rows("containment_properties.tsv", 1))


def load_negatives(path: str | os.PathLike[str]) -> frozenset[tuple[str, str, str]]:
    """Known false statements from a TSV (optionally gzipped) of ``subject, property,
    object`` ids with a header line, like the slice's ``negatives.tsv.gz``."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    out = set()
    with opener(path, "rt", encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").split("\t")
            if lineno == 1 and not (parts[0].startswith("Q") and parts[0][1:].isdigit()):
                continue  # header
            if len(parts) < 3:
                raise InputError(f"{path}: line {lineno}: expected subject, property, object")
            out.add((parts[0], parts[1], parts[2]))
    return frozenset(out)


@dataclass
class TripleGrounding:
    """Evidence and verdict for one triple."""

    status: Status
    reason: str
    subject: str | None = None
    property: str | None = None
    object: str | None = None
    class_size_subjects: int | None = None
    class_size_objects: int | None = None
    specificity: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    factual: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.factual = {"verified": 1.0, "refuted": 0.0}.get(self.status)

    def fields(self) -> dict[str, Any]:
        """The constructor's arguments (``TripleGrounding(**g.fields())`` is a copy of ``g``)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "subject": self.subject,
            "property": self.property,
            "object": self.object,
            "class_size_subjects": self.class_size_subjects,
            "class_size_objects": self.class_size_objects,
            "specificity": self.specificity,
            "evidence": self.evidence,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "ids": [self.subject, self.property, self.object],
            "class_sizes": [self.class_size_subjects, self.class_size_objects],
            "specificity": self.specificity,
            "factual": self.factual,
            **self.evidence,
        }


@functools.cache
def _containers() -> frozenset[str]:
    """The declared inverses of the containment properties ("contains administrative
    territorial entity", "has part"), less "capital" (Michigan is not Detroit's capital)."""
    out = {i for p in containment_properties() for i in inverse_properties().get(p, ())}
    return frozenset(out - set(containment_properties()) - {"P36"})


def _canonical(pid: str, direction: Direction) -> tuple[str, Direction]:
    """``(pid, direction)`` as a reading of the first of ``pid`` and its declared inverses:
    (P150, forward) and (P131, inverse) say the same."""
    first = min((pid, *inverse_properties().get(pid, ())), key=lambda p: int(p[1:]))
    if first == pid:
        return pid, direction
    return first, "inverse" if direction == "forward" else "forward"


def _link_dict(link: EntityLink, confidence: float) -> dict[str, Any]:
    return {"qid": link.qid, "method": link.method, "confidence": round(confidence, 3)}


class Grounder:
    """Ground triples in a knowledge graph: link, look for the statement, decide, count.

    Parameters
    ----------
    kg : KnowledgeGraph
        Any backend; only protocol methods are used, so every backend gives the same verdicts.
    entities, relations : linkers
    negatives : set of (s, p, o), optional
        Known false statements (:func:`load_negatives`).
    min_confidence : float
        Link confidence both ends need before a triple can be refuted.
    edge_min_similarity : float
        How well the phrase must name the property of an existing edge between the ends.
    embedding_margin : float
        For a phrase that names no property exactly: the embedding neighbours tried are
        those whose similarity is within this of the best one's (the best link needs this
        margin over the next to be the only reading). 0.25: the smallest round margin that
        drops no embedding verification on the shared sample (the farthest was 0.235
        behind; all 11 more than 0.02 behind agree with the stored judge, so a tighter
        margin only loses right decisions: benchmarks/RESULTS.md, issue 28).
    cache : GroundingCache, optional
        Verdicts kept between runs (:mod:`creagraph.scoring.groundcache`): a triple
        grounded before under the same graph and settings is read, not grounded again.
        Shared with ``entities`` when that has no cache of its own, and keeps the links
        of ``relations`` when that has no memo of its own
        (:class:`~creagraph.scoring.groundcache.RelationLinkMemo`).
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        entities: EntityLinker,
        relations: RelationLinker,
        *,
        negatives: Iterable[tuple[str, str, str]] = (),
        min_confidence: float = 0.9,
        edge_min_similarity: float = 0.6,
        embedding_margin: float = 0.25,
        candidates: int = 3,
        cache: GroundingCache | None = None,
    ):
        self.kg = kg
        self.entities = entities
        self.relations = relations
        self.negatives = frozenset(negatives)
        self.min_confidence = min_confidence
        self.edge_min_similarity = edge_min_similarity
        self.embedding_margin = embedding_margin
        self.candidates = candidates
        self._cache: dict[tuple, TripleGrounding] = {}
        self._types: dict[tuple[str, str], dict[str, int]] = {}
        self._classes: dict[str, tuple[str, ...]] = {}
        self._up: dict[str, frozenset[str]] = {}
        self._held: dict[str, bool] = {}
        self.cache = cache
        self._cache_context: str | None = None  # computed on first use (needs the settings)
        # run key -> cache key of the verdicts prefetch found missing from the cache
        self._absent: dict[tuple, bytes] = {}
        if cache is not None and getattr(entities, "cache", False) is None:
            entities.cache = cache  # its links are kept too (see the groundcache module)
        if cache is not None and getattr(relations, "memo", False) is None:
            from creagraph.scoring.groundcache import RelationLinkMemo

            relations.memo = RelationLinkMemo(cache, relations)  # and the relation linker's

    # -- public ---------------------------------------------------------------------
    def ground(
        self, head: str, relation: str, tail: str, context: Mapping[str, str] | None = None
    ) -> TripleGrounding:
        """Verdict and evidence for ``(head, relation, tail)``.

        ``context`` maps normalised names of the query's own entities to their QIDs
        (:func:`query_context`); a mention with that name links to that id first.
        """
        ctx = context or {}
        key = self._run_key(head, relation, tail, ctx)
        if key not in self._cache:
            self._cache[key] = self._kept(head, relation, tail, ctx, key)
        return self._cache[key]

    @staticmethod
    def _run_key(head: str, relation: str, tail: str, ctx: Mapping[str, str]) -> tuple:
        """The key a verdict is remembered by within a run: the normalised texts and the
        query entities the ends are tied to."""
        hk, rk, tk = normalize_loose(head), normalize_loose(relation), normalize_loose(tail)
        return (hk, rk, tk, ctx.get(hk), ctx.get(tk))

    def prefetch(
        self, triples: Iterable[Sequence[str]], context: Mapping[str, str] | None = None
    ) -> int:
        """Read the kept verdicts of ``triples`` from :attr:`cache` in one query (per 500),
        before :meth:`ground` asks for them one by one (issue 31: a warm run made one
        ``SELECT`` per triple).

        Writes what the cache holds pending first (:meth:`GroundingCache.flush`): a run
        prefetches once per answer, so each answer's verdicts are written together.

        ``triples`` in the order :meth:`ground` will meet them, so that the first spelling
        of a normalised triple names its cache entry, as it does without this. Malformed
        triples (not three non-empty texts) are skipped. What :meth:`ground` returns is
        the same with or without this call.

        Returns
        -------
        int
            Number of verdicts read from the cache.
        """
        context_key = self._context_key()
        if self.cache is None or not context_key:
            return 0
        self.cache.flush()  # a new answer: what the last one computed is written now
        ctx = context or {}
        wanted: dict[tuple, bytes] = {}
        for t in triples:
            if len(t) != 3 or not all(t):
                continue
            head, relation, tail = t
            key = self._run_key(head, relation, tail, ctx)
            if key not in self._cache and key not in wanted:
                wanted[key] = self.cache.triple_key((head, relation, tail), key[3:])
        found = self.cache.get_verdicts(context_key, wanted.values())
        for key, cache_key in wanted.items():
            fields = found.get(cache_key)
            if fields is None:
                self._absent[key] = cache_key  # ground() computes it without asking again
            else:
                self._cache[key] = TripleGrounding(**fields)
        return len(found)

    def _context_key(self) -> str:
        """The :func:`~creagraph.scoring.groundcache.grounding_context` of this grounder
        (computed once), ``""`` without a cache or for a graph without a store."""
        if self.cache is None:
            return ""
        if self._cache_context is None:
            from creagraph.scoring.groundcache import grounding_context

            self._cache_context = grounding_context(self) or ""
        return self._cache_context

    def _kept(
        self, head: str, relation: str, tail: str, ctx: Mapping[str, str], run_key: tuple
    ) -> TripleGrounding:
        """The verdict from :attr:`cache` when it holds it, else grounded (and kept);
        ``run_key`` is :meth:`_run_key`'s."""
        context_key = self._context_key()
        if self.cache is None or not context_key:  # no store: nothing identifies the graph
            return self._ground(head, relation, tail, ctx)
        key = self._absent.pop(run_key, None)  # prefetch asked already (and counted the miss)
        if key is None:
            key = self.cache.triple_key((head, relation, tail), run_key[3:])
            fields = self.cache.get_verdicts(context_key, (key,)).get(key)
            if fields is not None:
                return TripleGrounding(**fields)
        grounding = self._ground(head, relation, tail, ctx)
        self.cache.put_verdict(context_key, key, grounding.fields())
        return grounding

    # -- graph facts, cached --------------------------------------------------------
    def property_profile(self, pid: str, side: str) -> dict[str, int]:
        if (pid, side) not in self._types:
            self._types[(pid, side)] = self.kg.property_types(pid, side, limit=20)  # type: ignore[arg-type]
        return self._types[(pid, side)]

    def classes(self, qid: str) -> tuple[str, ...]:
        if qid not in self._classes:
            self._classes[qid] = tuple(e.object for e in self.kg.out_edges(qid, "P31"))
        return self._classes[qid]

    def type_fit(self, qid: str, pid: str, side: str) -> float:
        """How typical ``qid``'s classes are for the ``side`` of ``pid``: the count of its
        most common matching class over the property's most common class (0–1)."""
        profile = self.property_profile(pid, side)
        if not profile:
            return 0.0
        top = max(profile.values())
        return max((profile.get(c, 0) / top for c in self.classes(qid)), default=0.0)

    def _ancestors(self, qid: str, hops: int = 3) -> frozenset[str]:
        """Places that contain ``qid`` (containment properties, capital of included, and
        their declared inverses followed up to ``hops``)."""
        if qid not in self._up:
            seen: set[str] = set()
            frontier = {qid}
            for _ in range(hops):
                nxt: set[str] = set()
                for q in sorted(frontier):
                    for p in containment_properties():
                        nxt.update(e.object for e in self.kg.out_edges(q, p))
                        # stored the other way: (New York City, contains, Brooklyn)
                        for inv in inverse_properties().get(p, ()):
                            nxt.update(e.subject for e in self.kg.in_edges(q, inv))
                frontier = nxt - seen - {qid}
                seen |= frontier
            self._up[qid] = frozenset(seen)
        return self._up[qid]

    def holds(self, qid: str) -> bool:
        """Whether the graph knows ``qid`` (a query's entity outside it is not linked to:
        its claims would read "absent" where they are only "not in the graph")."""
        if qid not in self._held:
            self._held[qid] = self.kg.entity(qid) is not None or bool(self.kg.out_edges(qid))
        return self._held[qid]

    # -- linking --------------------------------------------------------------------
    def _link(self, mention: str, ctx: Mapping[str, str]) -> list[EntityLink]:
        links = list(self.entities.link(mention))
        qid = ctx.get(normalize_loose(mention))
        if qid is not None and self.holds(qid):
            links = [EntityLink(qid, None, "query", 100.0, 1.0)] + [
                link for link in links if link.qid != qid
            ]
        return links[: self.candidates]

    def _rank(
        self, links: list[EntityLink], pid: str, side: str
    ) -> list[tuple[EntityLink, float]]:
        """Order candidates for one end of a reading; return ``[(link, confidence)]``."""
        if not links:
            return []
        keyed = [
            (link.method == "query", link.confidence, round(self.type_fit(link.qid, pid, side), 3))
            for link in links
        ]
        order = sorted(
            range(len(links)), key=lambda i: (keyed[i][0], keyed[i][2], keyed[i][1]), reverse=True
        )
        out = []
        for rank, i in enumerate(order):
            conf = links[i].confidence
            if rank == 0 and len(order) > 1 and links[i].method != "fuzzy":
                second = keyed[order[1]]
                # a candidate singled out by the query or by its type is confidently linked
                if keyed[i][0] and not second[0]:
                    conf = 1.0
                elif keyed[i][2] >= 0.5 and second[2] < 0.5 * keyed[i][2]:
                    conf = max(conf, 0.9)
            out.append((links[i], conf))
        return out

    # -- finding statements ---------------------------------------------------------
    def _find(self, s: str, pid: str, o: str, either_way: bool) -> tuple[Edge, str] | None:
        """A statement saying ``(s, pid, o)``: as stated, symmetric, through an inverse;
        read the other way round only when ``either_way`` (a phrase that does not say
        which end is which, :func:`~creagraph.core.relations.directional_phrase`)."""
        kg = self.kg
        if kg.has_triple(s, pid, o):
            return Edge(s, pid, o), "stated"
        if pid in symmetric_properties() and kg.has_triple(o, pid, s):
            return Edge(o, pid, s), "symmetric"
        for inv in inverse_properties().get(pid, ()):
            if kg.has_triple(o, inv, s):
                return Edge(o, inv, s), f"inverse:{inv}"
        if not either_way:
            return None
        if kg.has_triple(o, pid, s):
            return Edge(o, pid, s), "reversed"
        for inv in inverse_properties().get(pid, ()):
            if kg.has_triple(s, inv, o):
                return Edge(s, inv, o), f"reversed-inverse:{inv}"
        return None

    def _implied(self, s: str, pid: str, o: str, either_way: bool) -> tuple[Edge, str] | None:
        """A statement that implies ``(s, pid, o)`` (``wikidata/property_implications.tsv``:
        "located in the administrative territorial entity" for "part of"), stored as such
        or through its declared inverse; the other way round only when ``either_way``."""
        readings = [(s, o, "")] + ([(o, s, "reversed-")] if either_way else [])
        for a, b, prefix in readings:
            for source, direction in implying_properties().get(pid, ()):
                x, y = (a, b) if direction == "forward" else (b, a)
                if self.kg.has_triple(x, source, y):
                    return Edge(x, source, y), f"{prefix}implied:{source}"
                for inv in inverse_properties().get(source, ()):
                    if self.kg.has_triple(y, inv, x):
                        return Edge(y, inv, x), f"{prefix}implied:{source}:inverse:{inv}"
        return None

    def _contained(self, s: str, pid: str, o: str, either_way: bool) -> tuple[Edge, str] | None:
        """For a containment claim (``wikidata/containment_properties.tsv``: "located in",
        "country", "part of"), ``o`` among the places that contain ``s`` through a chain of
        containment statements (Brooklyn, New York City, New York: "Brooklyn is located in
        New York"); for their inverses ("contains", "has part") ``s`` among those that
        contain ``o``; the other way round only when ``either_way``."""
        readings = [(s, o, "")] + ([(o, s, "reversed-")] if either_way else [])
        if pid in _containers():  # "contains", "has part": the chain read from the part
            readings = [(b, a, prefix) for a, b, prefix in readings]
        elif pid not in containment_properties() or pid == "P1376":
            return None
        for part, whole, prefix in readings:
            if whole in self._ancestors(part):
                claim = Edge(whole, pid, part) if pid in _containers() else Edge(part, pid, whole)
                return claim, f"{prefix}contained:chain"
        return None

    def related_properties(self, rels: Iterable[RelationLink]) -> frozenset[str]:
        """The candidate properties, their declared inverses and the properties that imply
        them or that they imply: the statements that bear on a claim with these links."""
        out: set[str] = set()
        for r in rels:
            out.add(r.pid)
            out.update(inverse_properties().get(r.pid, ()))
            out.update(p for p, _ in implying_properties().get(r.pid, ()))
            out.update(p for p, _ in property_implications().get(r.pid, ()))
        return frozenset(out)

    def _ends(self, h: str, t: str, r: RelationLink) -> tuple[str, str]:
        return (h, t) if r.direction == "forward" else (t, h)

    # -- the verdict ----------------------------------------------------------------
    def _ground(
        self, head: str, relation: str, tail: str, ctx: Mapping[str, str]
    ) -> TripleGrounding:
        heads, tails = self._link(head, ctx), self._link(tail, ctx)
        rels = self.relations.link(relation)
        evidence: dict[str, Any] = {
            "backend": f"kg:{getattr(self.kg, 'backend', type(self.kg).__name__)}",
            "head_candidates": [h.qid for h in heads],
            "tail_candidates": [t.qid for t in tails],
            "relation_candidates": [f"{r.pid}:{r.direction}" for r in rels],
        }
        if not heads or not tails:
            missing = [n for n, c in (("head", heads), ("tail", tails)) if not c]
            evidence["unlinked"] = missing + ([] if rels else ["relation"])
            return TripleGrounding(
                "unknown", f"{' and '.join(missing)} not linked", evidence=evidence
            )
        # an exact name of a property is authoritative: embedding neighbours ("nominated
        # for" for "award received") and other edges are only tried for phrases without one
        exact = [r for r in rels if r.method in EXACT_RELATION_METHODS]
        top = 0.0
        if not exact:
            # embedding neighbours may name a property both ways ("member of" and its
            # inverse phrasing, or P131 forward next to its inverse P150 forward for "has
            # state"): only the better-scoring reading is the phrase's
            first: dict[str, str] = {}
            for r in rels:
                first.setdefault(*_canonical(r.pid, r.direction))
            rels = [r for r in rels if first[(c := _canonical(r.pid, r.direction))[0]] == c[1]]
            # a neighbour far behind the best one is not what the phrase names: only the
            # links within ``embedding_margin`` of the best are tried
            top = max((r.score for r in rels), default=0.0)
            rels = [r for r in rels if top - r.score <= self.embedding_margin]
        # a directional phrase ("father of", "directed") is matched only the way it reads;
        # a bare property name ("father", "doctoral advisor") either way, said so
        either_way = bool(exact) and not directional_phrase(relation)
        if either_way:
            evidence["direction"] = "ambiguous phrase: either reading accepted"
        # 1. the statement, through inverses or symmetry; then statements implying it;
        # then, for a containment claim, a chain of containment statements
        for finder in (self._find, self._implied, self._contained):
            for r in exact or rels:
                for h in heads:
                    for t in tails:
                        s, o = self._ends(h.qid, t.qid, r)
                        found = finder(s, r.pid, o, either_way and r.method != "embedding")
                        if found is not None:
                            edge, via = found
                            if r.method == "embedding":  # how far behind the best link
                                evidence["relation_behind"] = round(top - r.score, 3)
                            return self._verified(edge, via, r.method, h, t, evidence, ctx)
        # 2. an edge between the linked ends whose property the phrase names well enough,
        # read the way the phrase reads: the property must be among the phrase's own
        # candidates (or bear on them), so "bordering state history" is never P17
        own = self.related_properties(rels)
        best: tuple[float, Edge, EntityLink, EntityLink] | None = None
        for h in heads if not exact else ():
            for t in tails:
                for edge in self.kg.edges_between(h.qid, t.qid):
                    if edge.property not in own:
                        continue
                    direction: Direction = "forward" if edge.subject == h.qid else "inverse"
                    sim = self.relations.similarity(relation, edge.property, direction)
                    if sim >= self.edge_min_similarity and (best is None or sim > best[0]):
                        best = (sim, edge, h, t)
        if best is not None:
            sim, edge, h, t = best
            evidence["relation_similarity"] = round(sim, 3)
            return self._verified(edge, "edge", "edge", h, t, evidence, ctx)
        if not rels:
            evidence["unlinked"] = ["relation"]
            return TripleGrounding("unknown", "relation not linked", evidence=evidence)
        # 3. the best reading: refuted with positive evidence, else unknown
        r, (h, hc), (t, tc) = self._reading(heads, tails, rels)
        s, o = self._ends(h.qid, t.qid, r)
        sc, oc = (hc, tc) if r.direction == "forward" else (tc, hc)
        evidence["links"] = {
            "head": _link_dict(h, hc),
            "relation": {
                "pid": r.pid,
                "direction": r.direction,
                "method": r.method,
                "score": round(r.score, 3),
            },
            "tail": _link_dict(t, tc),
        }
        # place-valued claims at another granularity
        kind = complete_properties().get(r.pid)
        values = [e.object for e in self.kg.out_edges(s, r.pid)] if kind else []
        objects = [link.qid for link in (tails if r.direction == "forward" else heads)]
        if kind == "place":
            for cand in objects:
                for v in values:
                    if cand in self._ancestors(v):
                        edge = Edge(s, r.pid, v)
                        evidence["contained_in"] = cand
                        return self._verified(edge, "contained", r.method, h, t, evidence, ctx)
        if (s, r.pid, o) in self.negatives:
            return self._scored("refuted", "a known negative statement", s, r, o, evidence)
        reason = self._refutation(s, r, o, sc, oc, values, kind, objects, rels)
        if reason is not None:
            evidence["values"] = values
            return self._scored("refuted", reason, s, r, o, evidence)
        why = (
            f"{r.pid} is not a property whose values are complete"
            if kind is None
            else "not in the graph, without evidence against it"
        )
        return self._scored("unknown", f"absent: {why}", s, r, o, evidence)

    def _reading(
        self, heads: list[EntityLink], tails: list[EntityLink], rels: list[RelationLink]
    ) -> tuple[RelationLink, tuple[EntityLink, float], tuple[EntityLink, float]]:
        """The most plausible (relation, head, tail) reading: exact relation links first,
        then the type fit of both ends."""
        scored = []
        for i, r in enumerate(rels):
            s_side, o_side = (
                ("subject", "object") if r.direction == "forward" else ("object", "subject")
            )
            hr, tr = self._rank(heads, r.pid, s_side), self._rank(tails, r.pid, o_side)
            fit = self.type_fit(hr[0][0].qid, r.pid, s_side) * self.type_fit(
                tr[0][0].qid, r.pid, o_side
            )
            scored.append(
                ((r.method in EXACT_RELATION_METHODS, round(fit, 3), -i), r, hr[0], tr[0])
            )
        scored.sort(key=lambda x: x[0], reverse=True)
        _, r, h, t = scored[0]
        return r, h, t

    def _refutation(
        self,
        s: str,
        r: RelationLink,
        o: str,
        sc: float,
        oc: float,
        values: list[str],
        kind: str | None,
        objects: list[str],
        rels: list[RelationLink],
    ) -> str | None:
        """Why the reading ``(s, r, o)`` is refuted, or ``None``. Every candidate of the
        claimed object must be contradicted too (a homonymous place is no refutation), and
        no statement of a property the phrase may mean may join the ends (a residence
        edge says nothing about a birthplace)."""
        related = self.related_properties(rels)
        if kind is None or not values or r.method not in EXACT_RELATION_METHODS:
            return None
        if min(sc, oc) < self.min_confidence:
            return None
        if self.type_fit(o, r.pid, "object") < 0.5:
            return None  # the claimed object is not the kind of thing the property takes
        for cand in [o, *objects]:
            if any(e.property in related for e in self.kg.edges_between(s, cand)):
                return None  # the ends are related as the phrase may mean: it may be mislinked
            if kind == "place" and any(v in self._ancestors(cand) for v in values):
                return None  # the claim is more precise than the graph
        return (
            f"{r.pid} has complete values for {s} (partial-completeness assumption): "
            f"{', '.join(values)}, not {o}"
        )

    def _verified(
        self,
        edge: Edge,
        via: str,
        method: str,
        h: EntityLink,
        t: EntityLink,
        evidence: dict[str, Any],
        ctx: Mapping[str, str],
    ) -> TripleGrounding:
        heads = self._rank([h], edge.property, "subject")
        tails = self._rank([t], edge.property, "object")
        evidence = {
            **evidence,
            "statement": list(edge.as_tuple()),
            "via": via,
            "links": {
                "head": _link_dict(h, heads[0][1]),
                "relation": {"pid": edge.property, "method": method},
                "tail": _link_dict(t, tails[0][1]),
            },
        }
        r = RelationLink(edge.property, "forward", method, 1.0)
        return self._scored(
            "verified", f"statement found ({via})", edge.subject, r, edge.object, evidence
        )

    def _scored(
        self,
        status: Status,
        reason: str,
        s: str,
        r: RelationLink,
        o: str,
        evidence: dict[str, Any],
    ) -> TripleGrounding:
        n_subjects = self.kg.count_subjects(r.pid, o)
        n_objects = self.kg.count_objects(s, r.pid)
        return TripleGrounding(
            status,
            reason,
            s,
            r.pid,
            o,
            n_subjects,
            n_objects,
            specificity(max(n_subjects, n_objects)),
            evidence,
        )


def query_context(
    extra: Mapping[str, Any], entity_a: str | None, entity_b: str | None
) -> dict[str, str]:
    """Normalised names of a query's own entities -> QIDs: generated queries'
    ``entity_a_id``/``entity_b_id``, or the published rows' source path
    (``triple1``… with ``triple1_labels``…)."""
    out: dict[str, str] = {}
    for name, key in ((entity_a, "entity_a_id"), (entity_b, "entity_b_id")):
        qid = extra.get(key)
        if name and isinstance(qid, str):
            out.setdefault(normalize_loose(name), qid)
    for i in range(1, 6):
        ids, labels = extra.get(f"triple{i}"), extra.get(f"triple{i}_labels")
        if not (
            isinstance(ids, list) and isinstance(labels, list) and len(ids) == len(labels) == 3
        ):
            continue
        for pos in (0, 2):
            qid, label = ids[pos], labels[pos]
            if isinstance(qid, str) and qid.startswith("Q") and isinstance(label, str) and label:
                out.setdefault(normalize_loose(label), qid)
    return out
