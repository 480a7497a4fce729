"""Oracle paths and the graph's ceiling utility for a CREATE query (SPEC §3.8).

For a query (start entity a, target relation r_b, target entity b) the oracle enumerates
the knowledge graph's valid answer paths: simple chains from a to some holder h with
``(h, r_b, b)`` in the graph, walking edges in either direction, at most ``k`` triples long
counting the final ``(h, r_b, b)`` (so the source path of a generated query, three
triples, is within ``k = 3``). It scores them exactly as CREATE scoring scores a model's
paths (SPEC §3.4–3.6, the formulas of :mod:`creagraph.core.metrics`):

- σ of each triple: ``specificity(triple_class_size(kg, s, p, o))``;
- factual: every oracle triple exists in the graph, so ``f = path_strength(σ)``;
- the path string :func:`~creagraph.core.metrics.path_string` over labels, each step read
  from the node it leaves (a step against Wikidata's direction reads with its inverse
  phrase, e.g. "appeared in");
- embeddings from :func:`creagraph.core.embeddings.default_embedder` (all-MiniLM-L6-v2),
  transformed distances, greedy utility at γ = 0.7 and 0.9 through
  :func:`~creagraph.core.metrics.set_utilities`, the path CREATE scoring uses too.

Public API (what the scoring job calls)
---------------------------------------
``enumerate_paths(kg, start, rel_b, target, *, k=3, budget=OracleBudget()) -> Enumeration``
    The graph paths, no scoring (fast; used to check that source paths are found).
``oracle_paths(kg, query, *, k=3, budget=OracleBudget(), embedder=None, gammas=(0.7, 0.9),
mode="paper", strong_threshold=4.0) -> OracleResult``
    Enumerate and score; ``query`` is a generated query record (needs ``entity_a_id``,
    ``rel_b_id``, ``entity_b_id``).
``oracle_paths_many(kg, queries, *, batch_size=32, cache=None, **same options) -> Iterator``
    The same results for many queries, faster (what ``creagraph queries paths`` runs):
    neighbour lists, degrees, class sizes (σ of each edge computed once per run) and labels
    are shared by all queries through a :class:`GraphCache`, and the path strings of
    ``batch_size`` queries are embedded in one call. Each query still counts its own
    expansions against its budget, so the cache changes no result.
``ceiling_fraction(model_utility, oracle, gamma=0.7) -> float``
    A model's utility as a fraction of the graph's ceiling at γ (NaN when the ceiling is 0;
    above 1 when the model found better-spread paths than the graph's best).
``graph_path_recall(model_paths, oracle, *, strong_only=True) -> float``
    Fraction of the oracle's (strong) paths that a model's grounded paths reproduce; a
    grounded path is a sequence of ``(subject, property, object)`` id triples in Wikidata's
    direction, matched to an oracle path when their triple sets are equal.

Budget (:class:`OracleBudget`, documented defaults): at most ``max_paths = 5000`` paths are
enumerated and ``max_expansions = 5000`` neighbour lists fetched; nodes with more than
``max_degree = 2000`` statements are not expanded (they still appear as middle nodes when
a holder's neighbour list reaches them); the ceiling is computed over the
``max_scored = 256`` best paths by quality (ties: enumeration order); the holders' neighbour
lists are fetched for the last hop when there are at most ``max_holders = 2500`` of them
(and at most half the expansion budget), else the search runs forward only. Enumeration is
depth-first from the start entity, its first hops ordered by triple class size (most
specific first), with a meet-in-the-middle last hop: the holders' neighbour lists are
fetched once, so k = 3 costs one fetch for the start and one per holder. When a budget
stops the enumeration, ``truncated`` is set; the weakest first hops are the ones lost.

A path is *strong* when its quality is at least ``strong_threshold = 4``: every triple but
the final one has a class smaller than 100 (SPEC §3.4), the level the published analysis
keeps ("quality > 3").

Examples
--------
A tiny in-memory graph (a real store: ``creagraph.kg.EmbeddedKG("store")``) and the
hashing embedder (the default is all-MiniLM-L6-v2):

>>> from creagraph.core.embeddings import HashingEmbedder
>>> from creagraph.kg.memory import MemoryKG
>>> kg = MemoryKG(
...     [("Q1", "P166", "Q10"), ("Q2", "P166", "Q10"), ("Q2", "P106", "Q20"),
...      ("Q1", "P26", "Q3"), ("Q3", "P106", "Q20")],
...     labels={"Q1": "Ada", "Q2": "Bea", "Q3": "Cy", "Q10": "Prize", "Q20": "poet",
...             "P166": "award received", "P106": "occupation", "P26": "spouse"},
... )
>>> query = {"entity_a_id": "Q1", "rel_b_id": "P106", "entity_b_id": "Q20"}
>>> oracle = oracle_paths(kg, query, k=3, embedder=HashingEmbedder(64))
>>> [p.labelled for p in oracle.paths]  # doctest: +NORMALIZE_WHITESPACE
[(('Ada', 'spouse', 'Cy'), ('Cy', 'occupation', 'poet')),
 (('Ada', 'award received', 'Prize'), ('Prize', 'was awarded to', 'Bea'),
  ('Bea', 'occupation', 'poet'))]
>>> oracle.n_strong, oracle.ceiling
(2, {0.7: 8.5, 0.9: 9.5})
>>> round(ceiling_fraction(model_utility=4.0, oracle=oracle, gamma=0.9), 3)
0.421

References
----------
.. [1] Wadhwa et al., "CREATE: Testing LLMs for Associative Creativity",
   arXiv:2603.09970 (2026), §3 and App. D.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from creagraph.core.graph import Edge, KnowledgeGraph, check_pid, check_qid
from creagraph.core.io import InputError
from creagraph.core.metrics import (
    path_quality,
    path_string,
    set_utilities,
    specificity,
    triple_class_size,
)
from creagraph.core.records import ABSENT, QUERY_ID_FIELDS, OracleRecord, require_query_ids
from creagraph.querygen.catalogue import Phrasing, load_phrasing
from creagraph.querygen.phrasing import relation_phrase

if TYPE_CHECKING:
    from creagraph.core.embeddings import Embedder

__all__ = [
    "OracleBudget",
    "GraphPath",
    "Enumeration",
    "OraclePath",
    "OracleResult",
    "enumerate_paths",
    "oracle_paths",
    "oracle_paths_many",
    "GraphCache",
    "ceiling_fraction",
    "graph_path_recall",
    "path_key",
    "read_query_records",
    "write_oracle_records",
    "oracle_summary",
    "STRONG_THRESHOLD",
]

STRONG_THRESHOLD = 4.0

Triple = tuple[str, str, str]


@dataclass(frozen=True)
class OracleBudget:
    """Bounds of the path enumeration (see the module docstring for the defaults' meaning)."""

    max_paths: int = 5000
    max_expansions: int = 5000
    max_degree: int = 2000
    max_scored: int = 256
    max_holders: int = 2500

    def __post_init__(self) -> None:
        for name in ("max_paths", "max_expansions", "max_degree", "max_scored", "max_holders"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")


@dataclass(frozen=True)
class GraphPath:
    """One enumerated path: triples in Wikidata's direction, the final one ``(h, r_b, b)``.

    ``nodes`` is the walk ``(a, …, h, b)``; ``forward[i]`` tells whether step i goes from
    ``nodes[i]`` to ``nodes[i + 1]`` along Wikidata's direction (the final step always does).
    """

    triples: tuple[Edge, ...]
    nodes: tuple[str, ...]
    forward: tuple[bool, ...]

    @property
    def key(self) -> frozenset[Triple]:
        """The set of id triples, the identity used to match paths."""
        return frozenset(t.as_tuple() for t in self.triples)

    def __len__(self) -> int:
        return len(self.triples)


@dataclass
class Enumeration:
    """What :func:`enumerate_paths` found and what it spent."""

    paths: list[GraphPath]
    holders: int
    expansions: int
    truncated: bool
    skipped_hubs: int = 0
    class_sizes: dict[Triple, int] = field(default_factory=dict)  # of the paths' triples


@dataclass(frozen=True)
class OraclePath:
    """A scored oracle path."""

    path: GraphPath
    class_sizes: tuple[int, ...]
    specificities: tuple[int, ...]
    quality: float
    text: str
    labelled: tuple[tuple[str, str, str], ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "triples": [list(t.as_tuple()) for t in self.path.triples],
            "nodes": list(self.path.nodes),
            "forward": list(self.path.forward),
            "labelled": [list(t) for t in self.labelled],
            "class_sizes": list(self.class_sizes),
            "specificities": list(self.specificities),
            "quality": self.quality,
            "text": self.text,
        }


@dataclass
class OracleResult:
    """The graph's answer paths for one query and its ceiling utility.

    Attributes
    ----------
    paths : list of OraclePath
        Every enumerated path, sorted by quality (best first, ties in enumeration order).
    n_paths, n_strong : int
        Paths found; paths with quality ≥ ``strong_threshold``.
    ceiling : dict
        γ → creative utility of the best ``max_scored`` paths (the graph's ceiling).
    source_path_found : bool or None
        Whether the query's source path is among the paths (None without one).
    """

    query_id: str | None
    start: str
    rel_b: str
    target: str
    k: int
    paths: list[OraclePath]
    n_paths: int
    n_strong: int
    strong_threshold: float
    ceiling: dict[float, float]
    mode: str
    holders: int
    expansions: int
    truncated: bool
    scored: int
    source_path_found: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def strong_paths(self) -> list[OraclePath]:
        return [p for p in self.paths if p.quality >= self.strong_threshold]

    def as_dict(
        self, *, include_paths: bool = True, max_listed: int | None = None
    ) -> dict[str, Any]:
        """Plain data for JSON (γ keys as strings such as ``"0.7"``): its
        :class:`~creagraph.core.records.OracleRecord`'s form."""
        return self.record(include_paths=include_paths, max_listed=max_listed).to_dict()

    def record(
        self, *, include_paths: bool = True, max_listed: int | None = None
    ) -> OracleRecord:
        """The record ``creagraph queries paths`` writes (the ``max_listed`` best paths
        listed, all when ``None``; none without ``include_paths``)."""
        listed = self.paths if max_listed is None else self.paths[:max_listed]
        return OracleRecord(
            query_id=self.query_id,
            entity_a_id=self.start,
            rel_b_id=self.rel_b,
            entity_b_id=self.target,
            k=self.k,
            n_paths=self.n_paths,
            n_strong=self.n_strong,
            strong_threshold=self.strong_threshold,
            ceiling={f"{g:g}": round(v, 6) for g, v in self.ceiling.items()},
            mode=self.mode,
            holders=self.holders,
            expansions=self.expansions,
            truncated=self.truncated,
            scored=self.scored,
            source_path_found=self.source_path_found,
            paths=[p.as_dict() for p in listed] if include_paths else ABSENT,
        )


def path_key(triples: Iterable[Sequence[str] | Edge]) -> frozenset[Triple]:
    """The identity of a path as the set of its ``(s, p, o)`` triples.

    Examples
    --------
    >>> a = path_key([("Q1", "P1", "Q2"), Edge("Q3", "P1", "Q2")])
    >>> a == path_key([("Q3", "P1", "Q2"), ("Q1", "P1", "Q2")])
    True
    """
    out = set()
    for t in triples:
        tup = t.as_tuple() if isinstance(t, Edge) else tuple(t)
        if len(tup) != 3:
            raise ValueError(f"a triple has three parts, got {tup!r}")
        out.add((str(tup[0]), str(tup[1]), str(tup[2])))
    return frozenset(out)


class GraphCache:
    """Neighbour lists, degrees, class sizes and labels shared by the queries of one run.

    Queries of a generated set share much of their neighbourhoods (the same targets such
    as "actor", the same holders, the same hubs), so :func:`oracle_paths_many` fetches each
    from the graph once. The cache changes no result: every query still counts its own
    expansions against its budget as if it had fetched them. ``max_nodes`` bounds the
    neighbour lists held (the cache is emptied when it is reached).
    """

    def __init__(self, kg: KnowledgeGraph, max_nodes: int = 100_000) -> None:
        self.kg = kg
        self.max_nodes = int(max_nodes)
        self._neighbours: dict[str, list[list[Any]]] = {}
        self._degree: dict[str, int | None] = {}
        self.sizes: dict[Triple, int] = {}
        self._labels: dict[str, str | None] = {}
        self._inverse: dict[str, str | None] = {}
        self._holders: dict[tuple[str, str], list[str]] = {}

    def neighbours(self, node: str) -> list[list[Any]]:
        """``[edge, other node, forward, σ]`` for every statement of ``node``, both directions.

        σ (the edge's specificity) is ``-1`` until :meth:`sigma` computes it, once per run.
        """
        found = self._neighbours.get(node)
        if found is None:
            if len(self._neighbours) >= self.max_nodes:
                self._neighbours.clear()
            kg = self.kg
            found = [[e, e.object, True, -1] for e in kg.out_edges(node) if e.object != node]
            found += [[e, e.subject, False, -1] for e in kg.in_edges(node) if e.subject != node]
            self._neighbours[node] = found
        return found

    def sigma(self, entry: list) -> int:
        """Specificity σ of a neighbour entry's edge (SPEC §3.4), computed once."""
        value = entry[3]
        if value < 0:
            value = entry[3] = specificity(self.class_size(entry[0].as_tuple()))
        return value

    def holders(self, rel_b: str, target: str) -> list[str]:
        """Holders h of ``(h, rel_b, target)``, by QID number, the target left out."""
        key = (rel_b, target)
        found = self._holders.get(key)
        if found is None:
            if len(self._holders) >= self.max_nodes:
                self._holders.clear()
            subjects = {e.subject for e in self.kg.in_edges(target, rel_b)} - {target}
            found = self._holders[key] = sorted(subjects, key=lambda q: int(q[1:]))
        return found

    def back_index(
        self, holders: Sequence[str], wanted: set[str] | None = None
    ) -> dict[str, list[list]]:
        """Reverse index ``node -> [[edge, h, forward from node, σ]]`` over the holders'
        neighbour lists (only nodes in ``wanted`` when given), in holder order."""
        index: dict[str, list[list]] = {}
        for h in holders:
            for entry in self.neighbours(h):
                other = entry[1]
                if wanted is None or other in wanted:
                    index.setdefault(other, []).append([entry[0], h, not entry[2], entry[3]])
        return index

    def degree(self, node: str) -> int | None:
        if node not in self._degree:
            self._degree[node] = _degree(self.kg, node)
        return self._degree[node]

    def class_size(self, key: Triple) -> int:
        size = self.sizes.get(key)
        if size is None:
            size = self.sizes[key] = triple_class_size(self.kg, *key)
        return size

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        missing = sorted({i for i in idents if i not in self._labels})
        if missing:
            found = self.kg.labels(missing)
            for ident in missing:
                self._labels[ident] = found.get(ident)
        return {i: v for i in idents if (v := self._labels.get(i)) is not None}

    def inverse_label(self, pid: str) -> str | None:
        if pid not in self._inverse:
            rec = self.kg.property(pid)
            self._inverse[pid] = rec.inverse_label if rec is not None else None
        return self._inverse[pid]


def _degree(kg: KnowledgeGraph, node: str) -> int | None:
    getter = getattr(kg, "degree", None)
    return int(getter(node)) if getter is not None else None


def enumerate_paths(
    kg: KnowledgeGraph,
    start: str,
    rel_b: str,
    target: str,
    *,
    k: int = 3,
    budget: OracleBudget | None = None,
    cache: GraphCache | None = None,
) -> Enumeration:
    """Valid paths from ``start`` to a holder h of ``(h, rel_b, target)``, at most ``k`` triples.

    Paths are simple (no node twice; the target only as the final node), may walk any
    edge in either direction, and end with the triple ``(h, rel_b, target)``; the start
    entity itself is never a holder (that would be the trivial one-hop answer).

    Parameters
    ----------
    kg : KnowledgeGraph
    start, rel_b, target : str
        Start entity QID, target relation PID, target entity QID.
    k : int
        Most triples in a path, the final one included (≥ 2).
    budget : OracleBudget, optional
        Enumeration bounds (default :class:`OracleBudget`).
    cache : GraphCache, optional
        Neighbourhoods shared with other queries of the same graph (same result, fewer
        graph reads).

    Examples
    --------
    >>> found = enumerate_paths(kg, "Q1", "P106", "Q2", k=3)                # doctest: +SKIP
    >>> [len(p) for p in found.paths][:3]                                    # doctest: +SKIP
    [2, 3, 3]
    """
    check_qid(start)
    check_pid(rel_b)
    check_qid(target)
    if k < 2:
        raise ValueError(f"k must be at least 2 (a hop and the target triple), not {k}")
    shared = cache if cache is not None else GraphCache(kg)
    search = _PathSearch(shared, budget or OracleBudget(), start, rel_b, target, hops=k - 1)
    for level in (5, 4, 3, 2, 1):
        if not search.dfs(start, [], [start], level):
            break
    paths = search.paths
    keys = {t.as_tuple() for p in paths for t in p.triples}
    sizes = {key: shared.class_size(key) for key in keys}
    return Enumeration(
        paths, len(search.holders), search.expansions, search.truncated, search.hubs, sizes
    )


class _PathSearch:
    """The state of one :func:`enumerate_paths` call: the budget spent, the neighbour lists
    fetched for this query, the holders' reverse index and the paths found.

    The search runs once per specificity level, 5 down to 1: the pass of a level follows
    only edges with σ ≥ level and records only paths whose weakest step has σ = level, so
    paths come out strongest first without sorting and the weakest first hops are the ones
    a budget cuts off. Neighbour entries are ``[edge, other node, forward, σ]`` as in
    :meth:`GraphCache.neighbours`.
    """

    def __init__(
        self,
        shared: GraphCache,
        budget: OracleBudget,
        start: str,
        rel_b: str,
        target: str,
        *,
        hops: int,
    ):
        self.shared = shared
        self.budget = budget
        self.start = start
        self.rel_b = rel_b
        self.target = target
        self.hops = hops  # triples before the final (h, rel_b, target)
        self.holders = [h for h in shared.holders(rel_b, target) if h != start]
        self.holder_set = set(self.holders)
        self.sigma = shared.sigma
        self.expansions = 0
        self.truncated = False
        self.hubs = 0
        self.paths: list[GraphPath] = []
        self.fetched: dict[str, list[list]] = {}  # neighbour lists counted for this query
        self.back = self._back_index()

    def _back_index(self) -> dict[str, list[list]] | None:
        """The meet-in-the-middle index of the last hop, when the holders are few enough."""
        holders, budget, shared = self.holders, self.budget, self.shared
        if self.hops < 2 or len(holders) > min(budget.max_holders, budget.max_expansions // 2):
            return None
        # every holder's neighbour list is read (and counted) once, endpoints never
        # skipped as hubs; the lists are cached across queries, the reverse index over them
        # is built per query (only this start's neighbours with k = 3)
        for h in holders:
            self.fetched[h] = shared.neighbours(h)
        self.expansions += len(holders)
        # with k = 3 only the start's neighbours are looked up in the index
        wanted = {entry[1] for entry in shared.neighbours(self.start)} if self.hops == 2 else None
        return shared.back_index(holders, wanted)

    def neighbours(self, node: str) -> list[list] | None:
        """``node``'s neighbour list, or ``None`` when the budget is spent or it is a hub."""
        found = self.fetched.get(node)
        if found is not None:
            return found
        if self.expansions >= self.budget.max_expansions:
            self.truncated = True
            return None
        if node != self.start:
            degree = self.shared.degree(node)
            if degree is not None and degree > self.budget.max_degree:
                self.hubs += 1
                return None
        self.expansions += 1
        found = self.fetched[node] = self.shared.neighbours(node)
        return found

    def record(self, steps: list[list], nodes: list[str], level: int) -> bool:
        """Add the path ``steps`` + the target triple; ``False`` when the budget is full."""
        if min(self.sigma(entry) for entry in steps) != level:
            return True  # found in the pass of its own level
        if len(self.paths) >= self.budget.max_paths:
            self.truncated = True
            return False
        h = nodes[-1]
        triples = tuple(entry[0] for entry in steps) + (Edge(h, self.rel_b, self.target),)
        forward = tuple(entry[2] for entry in steps) + (True,)
        self.paths.append(GraphPath(triples, (*nodes, self.target), forward))
        return True

    def dfs(self, node: str, steps: list[list], nodes: list[str], level: int) -> bool:
        """Depth-first from ``node`` along edges with σ ≥ ``level``; ``False`` to stop."""
        depth = len(steps)
        if depth >= 1 and node in self.holder_set and not self.record(steps, nodes, level):
            return False
        if depth == self.hops:
            return True
        sigma, target = self.sigma, self.target
        if self.back is not None and self.hops - depth == 1:
            for entry in self.back.get(node, ()):
                h = entry[1]
                if h in nodes or h == target or sigma(entry) < level:
                    continue
                if not self.record([*steps, entry], [*nodes, h], level):
                    return False
            return True
        nbrs = self.neighbours(node)
        if nbrs is None:
            return True
        for entry in nbrs:
            other = entry[1]
            if other in nodes or other == target or sigma(entry) < level:
                continue
            if not self.dfs(other, [*steps, entry], [*nodes, other], level):
                return False
        return True


def oracle_paths(
    kg: KnowledgeGraph,
    query: Mapping[str, Any],
    *,
    k: int = 3,
    budget: OracleBudget | None = None,
    embedder: Embedder | None = None,
    gammas: Sequence[float] = (0.7, 0.9),
    mode: str = "paper",
    strong_threshold: float = STRONG_THRESHOLD,
    phrasing: Mapping[str, Phrasing] | None = None,
) -> OracleResult:
    """Enumerate and score the graph's answer paths of a query (SPEC §3.8).

    Parameters
    ----------
    kg : KnowledgeGraph
    query : mapping
        A query record with ``entity_a_id``, ``rel_b_id``, ``entity_b_id`` (and optionally
        ``query_id`` and ``source_path``).
    k : int
        Most triples per path, the final target triple included (default 3).
    budget : OracleBudget, optional
        Enumeration and scoring bounds.
    embedder : Embedder, optional
        Default :func:`creagraph.core.embeddings.default_embedder` (all-MiniLM-L6-v2).
    gammas : sequence of float
        Patience values of the ceiling (default 0.7 and 0.9).
    mode : {"paper", "published"}
        Utility formula (:func:`creagraph.core.metrics.creative_utility`).
    strong_threshold : float
        Quality at or above which a path counts as strong (default 4).

    Returns
    -------
    OracleResult
    """
    (result,) = oracle_paths_many(
        kg,
        [query],
        k=k,
        budget=budget,
        embedder=embedder,
        gammas=gammas,
        mode=mode,
        strong_threshold=strong_threshold,
        phrasing=phrasing,
    )
    return result


def oracle_paths_many(
    kg: KnowledgeGraph,
    queries: Iterable[Mapping[str, Any]],
    *,
    k: int = 3,
    budget: OracleBudget | None = None,
    embedder: Embedder | None = None,
    gammas: Sequence[float] = (0.7, 0.9),
    mode: str = "paper",
    strong_threshold: float = STRONG_THRESHOLD,
    phrasing: Mapping[str, Phrasing] | None = None,
    batch_size: int = 32,
    cache: GraphCache | None = None,
) -> Iterator[OracleResult]:
    """:func:`oracle_paths` over many queries, in order, sharing the work between them.

    The same results as one :func:`oracle_paths` call per query, faster: neighbour lists,
    degrees, class sizes and labels are read from the graph once for the whole run
    (:class:`GraphCache`, the queries' shared neighbourhoods), and the path strings of
    ``batch_size`` queries are embedded in one call, each distinct string once.

    Yields
    ------
    OracleResult
        One per query, in input order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, not {batch_size}")
    budget = budget or OracleBudget()
    phrasing = phrasing if phrasing is not None else load_phrasing()
    cache = cache if cache is not None else GraphCache(kg)
    batch: list[_Prepared] = []

    def flush() -> Iterator[OracleResult]:
        nonlocal embedder
        texts = list(dict.fromkeys(p.text for item in batch for p in item.best))
        vectors: dict[str, np.ndarray] = {}
        if texts:
            if embedder is None:
                from creagraph.core.embeddings import default_embedder

                embedder = default_embedder()
            encoded = np.asarray(embedder.encode(texts), dtype=np.float64)
            vectors = dict(zip(texts, encoded))
        for item in batch:
            rows = np.asarray([vectors[p.text] for p in item.best]) if item.best else None
            yield _finish(item, rows, gammas, mode)
        batch.clear()

    for query in queries:
        batch.append(_prepare(kg, query, k, budget, phrasing, strong_threshold, cache))
        if len(batch) >= batch_size:
            yield from flush()
    if batch:
        yield from flush()


@dataclass
class _Prepared:
    query: Mapping[str, Any]
    start: str
    rel_b: str
    target: str
    k: int
    found: Enumeration
    scored: list[OraclePath]
    best: list[OraclePath]
    strong_threshold: float


def _prepare(
    kg: KnowledgeGraph,
    query: Mapping[str, Any],
    k: int,
    budget: OracleBudget,
    phrasing: Mapping[str, Phrasing],
    strong_threshold: float,
    cache: GraphCache,
) -> _Prepared:
    """Enumerate and score the paths of a query up to (not including) the embeddings."""
    asked = require_query_ids(query)
    start, rel_b, target = asked.entity_a_id, asked.rel_b_id, asked.entity_b_id
    found = enumerate_paths(kg, start, rel_b, target, k=k, budget=budget, cache=cache)
    sizes = found.class_sizes
    ids = {x for p in found.paths for x in p.nodes} | {
        t.property for p in found.paths for t in p.triples
    }
    labels = cache.labels(ids)
    phrases: dict[tuple[str, bool], str] = {}

    def phrase_of(pid: str, fwd: bool) -> str:
        got = phrases.get((pid, fwd))
        if got is None:
            got = phrases[(pid, fwd)] = relation_phrase(
                pid,
                fwd,
                phrasing,
                property_label=labels.get(pid, pid),
                inverse_label=None if fwd else cache.inverse_label(pid),
            )
        return got

    scored: list[OraclePath] = []
    for p in found.paths:
        class_sizes = tuple(sizes[t.as_tuple()] for t in p.triples)
        sigmas = tuple(specificity(s) for s in class_sizes)
        quality = path_quality(sigmas, True)
        labelled = tuple(
            (
                labels.get(p.nodes[i], p.nodes[i]),
                phrase_of(t.property, fwd),
                labels.get(p.nodes[i + 1], p.nodes[i + 1]),
            )
            for i, (t, fwd) in enumerate(zip(p.triples, p.forward))
        )
        scored.append(OraclePath(p, class_sizes, sigmas, quality, path_string(labelled), labelled))
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].quality, i))
    scored = [scored[i] for i in order]
    return _Prepared(
        query, start, rel_b, target, k, found, scored, scored[: budget.max_scored], strong_threshold
    )


def _finish(
    prepared: _Prepared,
    vectors: np.ndarray | None,
    gammas: Sequence[float],
    mode: str,
) -> OracleResult:
    """The ceiling utility and the result record of a prepared query."""
    best, scored, found, query = prepared.best, prepared.scored, prepared.found, prepared.query
    rows = np.zeros((0, 1)) if vectors is None else np.asarray(vectors, dtype=np.float64)
    curve, _ = set_utilities([p.quality for p in best], rows, list(gammas), mode)  # type: ignore[arg-type]
    ceiling = {float(g): float(v) for g, v in zip(gammas, curve)}

    source_found: bool | None = None
    source = query.get("source_path")
    if source:
        try:
            want = path_key((t["subject"], t["property"], t["object"]) for t in source)
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"query {query.get('query_id')!r}: malformed source_path ({exc})"
            ) from exc
        source_found = any(p.path.key == want for p in scored)

    strong_threshold = prepared.strong_threshold
    n_strong = sum(1 for p in scored if p.quality >= strong_threshold)
    return OracleResult(
        query_id=query.get("query_id"),
        start=prepared.start,
        rel_b=prepared.rel_b,
        target=prepared.target,
        k=prepared.k,
        paths=scored,
        n_paths=len(scored),
        n_strong=n_strong,
        strong_threshold=float(strong_threshold),
        ceiling=ceiling,
        mode=mode,
        holders=found.holders,
        expansions=found.expansions,
        truncated=found.truncated,
        scored=len(best),
        source_path_found=source_found,
        extra={"skipped_hubs": found.skipped_hubs},
    )


def read_query_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The query records of a JSON Lines file (``creagraph queries generate``'s output),
    each checked for the ids the oracle needs.

    Raises
    ------
    InputError
        Naming the file, line and field of the first record without an id.
    """
    from creagraph.core.io import iter_jsonl

    records = list(iter_jsonl(path))
    for lineno, record in enumerate(records, start=1):
        for name in QUERY_ID_FIELDS:
            if not record.get(name):
                raise InputError(f"{path}:{lineno}: field {name!r} is missing")
    return records


def write_oracle_records(
    kg: KnowledgeGraph,
    records: Sequence[Mapping[str, Any]],
    out: str | os.PathLike[str],
    *,
    k: int = 3,
    budget: OracleBudget | None = None,
    mode: str = "paper",
    list_paths: int = 20,
    show_progress: bool = False,
    precision: str | None = None,
) -> list[dict[str, Any]]:
    """What ``creagraph queries paths`` runs: :func:`oracle_paths_many` over ``records``,
    one JSON Lines record per query written atomically to ``out`` (with the ``list_paths``
    best paths listed, none when 0); returns the rows written.

    ``precision`` (``"fp32"`` or ``"bf16"``, see :mod:`creagraph.core.embeddings`) is the
    arithmetic of the default embedder; ``None``: ``$CREAGRAPH_PRECISION`` or fp32. bf16
    embeds the path strings 2–3× faster where the processor has native bf16 (refused
    elsewhere); fp32 results are unchanged by this option."""
    from creagraph.core.embeddings import check_precision, default_embedder
    from creagraph.core.io import write_jsonl
    from creagraph.core.progress import progress

    embedder = default_embedder(
        precision=check_precision(precision) if precision is not None else None
    )
    results: Iterable[OracleResult] = oracle_paths_many(
        kg, records, k=k, budget=budget, mode=mode, embedder=embedder
    )
    if show_progress:
        results = progress(results, total=len(records), desc="oracle", unit=" queries")
    rows = [
        result.as_dict(include_paths=list_paths > 0, max_listed=list_paths)
        for result in results
    ]
    write_jsonl(out, rows)
    return rows


def oracle_summary(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The lines ``creagraph queries paths`` prints about its oracle records (none for
    no rows): median strong paths, queries without one, mean ceilings, truncations and
    how many source paths were found."""
    if not rows:
        return []
    records = [OracleRecord.from_dict(r, f"oracle record {n}") for n, r in enumerate(rows, 1)]
    strong = sorted(r.n_strong for r in records)
    found = [r.source_path_found for r in records if r.source_path_found is not None]
    ceil7 = sum(r.ceiling["0.7"] for r in records) / len(records)
    ceil9 = sum(r.ceiling["0.9"] for r in records) / len(records)
    lines = [
        f"queries: {len(records)}",
        f"median strong paths: {strong[len(strong) // 2]}",
        f"queries without a strong path: {sum(1 for s in strong if s == 0)}",
        f"mean ceiling utility: γ=0.7 {ceil7:.3f}, γ=0.9 {ceil9:.3f}",
        f"truncated by the budget: {sum(1 for r in records if r.truncated)}",
    ]
    if found:
        lines.append(f"source path found: {sum(found)}/{len(found)}")
    return lines


def ceiling_fraction(model_utility: float, oracle: OracleResult, gamma: float = 0.7) -> float:
    """A model's creative utility as a fraction of the graph's ceiling at ``gamma``.

    NaN when the graph has no path (ceiling 0). Values above 1 are possible: a model may
    spread its paths more widely than the graph's best ``max_scored`` paths.

    Examples
    --------
    >>> r = OracleResult(
    ...     None, "Q1", "P1", "Q2", 3, [], 0, 0, 4.0, {0.7: 8.0}, "paper", 0, 0, False, 0
    ... )
    >>> ceiling_fraction(2.0, r, 0.7)
    0.25
    """
    key = float(gamma)
    if key not in oracle.ceiling:
        raise KeyError(
            f"the oracle has no ceiling at gamma={gamma:g} (it has {sorted(oracle.ceiling)})"
        )
    ceiling = oracle.ceiling[key]
    if ceiling <= 0:
        return float("nan")
    return float(model_utility) / ceiling


def graph_path_recall(
    model_paths: Iterable[Iterable[Sequence[str] | Edge] | None],
    oracle: OracleResult,
    *,
    strong_only: bool = True,
) -> float:
    """Fraction of the oracle's paths that a model's grounded paths reproduce.

    Parameters
    ----------
    model_paths : iterable
        The model's paths grounded to ids: each a sequence of ``(subject, property,
        object)`` triples in Wikidata's direction (or ``None`` / a path with a ``None``
        part when grounding failed: such paths match nothing).
    oracle : OracleResult
    strong_only : bool
        Count only the oracle's strong paths (default), else all of them.

    Returns
    -------
    float
        Matched oracle paths / oracle paths considered; NaN when there are none.

    Examples
    --------
    >>> triples = (Edge("Q1", "P1", "Q3"), Edge("Q3", "P2", "Q2"))
    >>> gp = GraphPath(triples, ("Q1", "Q3", "Q2"), (True, True))
    >>> op = OraclePath(gp, (5, 5), (5, 5), 5.0, " [p1] c", ())
    >>> r = OracleResult(
    ...     None, "Q1", "P2", "Q2", 3, [op], 1, 1, 4.0, {0.7: 5.0}, "paper", 1, 1, False, 1
    ... )
    >>> graph_path_recall([[("Q3", "P2", "Q2"), ("Q1", "P1", "Q3")], None], r)
    1.0
    """
    considered = oracle.strong_paths() if strong_only else oracle.paths
    if not considered:
        return float("nan")
    keys = set()
    for path in model_paths:
        if path is None:
            continue
        triples = list(path)
        if not triples or any(
            t is None or (not isinstance(t, Edge) and None in tuple(t)) for t in triples
        ):
            continue
        keys.add(path_key(triples))
    matched = sum(1 for p in considered if p.path.key in keys)
    return matched / len(considered)
