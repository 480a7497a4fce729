"""The Typed Idea Graph of one task's population (SPEC §4.3): edges, igraph, export.

Nodes are canonical atoms. Three kinds of edges, each an :class:`EdgeList` row:

* ``cooccurrence`` — two canonical atoms in the same response; weight = number of
  responses where they co-occur;
* ``similarity`` — two canonical atoms of the same type whose labels have cosine
  similarity at least a threshold; weight = the similarity;
* ``relation`` — a typed relation between atoms of one response, following
  :data:`~creagraph.tig.schema.RELATION_RULES` (motif *supports* purpose, mechanism
  *realises* carrier, …); the edge runs from the rule's source type to its target type;
  weight = number of responses. Populations carry these only where an extractor gave a
  relation (none of the current backends does); :func:`relation_edges` derives the
  rule-typed view of co-occurrences for export, never as extra graph edges, since it would
  count each pair twice in centrality.

Edges come out sorted by (kind, source, target, relation), so equal populations give equal
graphs. :func:`to_igraph` builds an undirected igraph multigraph (edge attributes ``kind``,
``relation``, ``weight``, ``source``), exported with :func:`write_graphml` or
:func:`graph_to_json` (a node-link document); :func:`to_networkx` gives users the same
graph as a ``networkx.MultiGraph`` keyed by canonical atom id.

References
----------
SPEC §4.3. Csardi & Nepusz (2006), "The igraph software package for complex network
research", InterJournal Complex Systems 1695.

Examples
--------
>>> incidence = np.array([[1, 1, 0], [1, 1, 1]])
>>> e = cooccurrence_edges(incidence)
>>> e.source.tolist(), e.target.tolist(), e.weight.tolist()
([0, 0, 1], [1, 2, 2], [2.0, 1.0, 1.0])
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from creagraph.core.io import atomic_write
from creagraph.tig.schema import ATOM_TYPES, RELATION_RULES

if TYPE_CHECKING:
    import igraph
    import networkx

    from creagraph.tig.population import Population

__all__ = [
    "EDGE_KINDS",
    "RELATION_NAMES",
    "EdgeList",
    "cooccurrence_edges",
    "similarity_edges",
    "relation_edges",
    "concat_edges",
    "to_igraph",
    "to_networkx",
    "node_centrality",
    "write_graphml",
    "graph_to_json",
    "write_graph_json",
]

EDGE_KINDS: tuple[str, ...] = ("cooccurrence", "similarity", "relation")
#: Relation names, index 0 meaning "no relation" (co-occurrence and similarity edges).
RELATION_NAMES: tuple[str, ...] = ("",) + tuple(rule[2] for rule in RELATION_RULES)


@dataclass(frozen=True)
class EdgeList:
    """Parallel arrays of edges: kind (index into :data:`EDGE_KINDS`), source, target,
    relation (index into :data:`RELATION_NAMES`) and weight."""

    kind: np.ndarray
    source: np.ndarray
    target: np.ndarray
    relation: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return len(self.source)

    @staticmethod
    def empty() -> EdgeList:
        z = np.zeros(0, dtype=np.int64)
        return EdgeList(z, z, z, z, np.zeros(0))

    def of_kind(self, kind: str) -> EdgeList:
        mask = self.kind == EDGE_KINDS.index(kind)
        return EdgeList(self.kind[mask], self.source[mask], self.target[mask],
                        self.relation[mask], self.weight[mask])


def _edge_list(kind: str, source: ArrayLike, target: ArrayLike, weight: ArrayLike,
               relation: int = 0) -> EdgeList:
    source = np.asarray(source, dtype=np.int64)
    n = len(source)
    return EdgeList(
        np.full(n, EDGE_KINDS.index(kind), dtype=np.int64),
        source,
        np.asarray(target, dtype=np.int64),
        np.full(n, relation, dtype=np.int64),
        np.asarray(weight, dtype=np.float64),
    )


def cooccurrence_edges(incidence: Any) -> EdgeList:
    """Co-occurrence edges from a response × node incidence matrix (numpy or scipy sparse).

    Weight of (i, j), i < j = number of responses containing both nodes.
    """
    if isinstance(incidence, np.ndarray):
        binary = (incidence > 0).astype(np.float32)
        counts = binary.T @ binary
        rows, cols = np.nonzero(np.triu(counts, k=1))  # row-major: sorted by (row, col)
        return _edge_list("cooccurrence", rows, cols, counts[rows, cols].astype(np.float64))
    from scipy.sparse import triu

    binary = (incidence > 0).astype(np.float64)
    counts = triu((binary.T @ binary).tocoo(), k=1).tocoo()
    order = np.lexsort((counts.col, counts.row))
    return _edge_list("cooccurrence", counts.row[order], counts.col[order], counts.data[order])


def similarity_edges(similarity: np.ndarray, nodes: Sequence[int] | np.ndarray,
                     threshold: float) -> EdgeList:
    """Edges between ``nodes`` whose pairwise ``similarity`` (a square block in the order
    of ``nodes``) is at least ``threshold``; weight = similarity (must be positive).

    Examples
    --------
    >>> s = np.array([[1, .7, .2], [.7, 1, .6], [.2, .6, 1]])
    >>> similarity_edges(s, [10, 11, 12], 0.5).target.tolist()
    [11, 12]
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    similarity = np.asarray(similarity)
    if similarity.shape != (len(nodes), len(nodes)):
        raise ValueError("similarity must be square in the order of nodes")
    if threshold <= 0:
        raise ValueError("the similarity threshold must be positive")
    rows, cols = np.nonzero(np.triu(similarity >= threshold, k=1))
    return _edge_list("similarity", nodes[rows], nodes[cols], similarity[rows, cols])


def relation_edges(cooccurrence: EdgeList, node_type: np.ndarray) -> EdgeList:
    """Typed relation edges of :data:`RELATION_RULES`, derived from co-occurrence edges.

    Two atoms of one response are related by rule (a, b, r) when their types are a and b;
    the edge runs from the type-a node to the type-b node and its weight is the number of
    responses holding both — their co-occurrence count.

    Examples
    --------
    >>> co = EdgeList(np.array([0]), np.array([0]), np.array([1]), np.array([0]),
    ...               np.array([3.0]))
    >>> types = np.array([ATOM_TYPES.index("carrier"), ATOM_TYPES.index("mechanism")])
    >>> e = relation_edges(co, types)
    >>> e.source.tolist(), e.target.tolist(), RELATION_NAMES[int(e.relation[0])]
    ([1], [0], 'realises')
    """
    n_types = len(ATOM_TYPES)
    rule_of = np.zeros((n_types, n_types), dtype=np.int64)
    for index, (source_type, target_type, _name) in enumerate(RELATION_RULES, start=1):
        rule_of[ATOM_TYPES.index(source_type), ATOM_TYPES.index(target_type)] = index
    node_type = np.asarray(node_type, dtype=np.int64)
    tu, tv = node_type[cooccurrence.source], node_type[cooccurrence.target]
    forward, backward = rule_of[tu, tv], rule_of[tv, tu]
    fwd, bwd = forward > 0, (forward == 0) & (backward > 0)
    source = np.concatenate([cooccurrence.source[fwd], cooccurrence.target[bwd]])
    target = np.concatenate([cooccurrence.target[fwd], cooccurrence.source[bwd]])
    relation = np.concatenate([forward[fwd], backward[bwd]])
    weight = np.concatenate([cooccurrence.weight[fwd], cooccurrence.weight[bwd]])
    kind = np.full(len(source), EDGE_KINDS.index("relation"), dtype=np.int64)
    return concat_edges([EdgeList(kind, source, target, relation, weight)])


def concat_edges(parts: Sequence[EdgeList]) -> EdgeList:
    """Concatenate edge lists and sort by (kind, source, target, relation)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return EdgeList.empty()
    kind, source, target, relation, weight = (
        np.concatenate([getattr(p, f) for p in parts])
        for f in ("kind", "source", "target", "relation", "weight")
    )
    order = np.lexsort((relation, target, source, kind))
    return EdgeList(kind[order], source[order], target[order], relation[order], weight[order])


def node_centrality(n_nodes: int, edges: EdgeList, method: str = "pagerank") -> np.ndarray:
    """Node centrality on the whole graph (all edge kinds, summed weights).

    ``"pagerank"``: weighted PageRank (damping 0.85, igraph PRPACK); ``"degree"``: weighted
    degree (strength) divided by its total. Both sum to 1 over the nodes (isolated nodes
    get PageRank's teleport share, degree 0).
    """
    if n_nodes == 0:
        return np.zeros(0)
    if method == "degree":
        strength = np.bincount(edges.source, weights=edges.weight, minlength=n_nodes)
        strength += np.bincount(edges.target, weights=edges.weight, minlength=n_nodes)
        total = strength.sum()
        return strength / total if total > 0 else np.full(n_nodes, 1.0 / n_nodes)
    if method != "pagerank":
        raise ValueError(f"unknown centrality {method!r} (expected 'pagerank' or 'degree')")
    import igraph

    graph = igraph.Graph(n=n_nodes, edges=np.column_stack([edges.source, edges.target]).tolist(),
                         directed=False)
    scores = graph.pagerank(weights=edges.weight.tolist() if len(edges) else None)
    return np.asarray(scores, dtype=np.float64)


def to_igraph(population: Population) -> igraph.Graph:
    """The population's Typed Idea Graph as an undirected igraph multigraph.

    Vertex attributes: ``name`` (canonical id), ``type``, ``label``, ``aliases`` (joined
    with " | "), ``count``, ``n_models``, ``cluster``. Edge attributes: ``kind``,
    ``relation``, ``weight``, ``source`` (canonical id of the relation's source).
    """
    import igraph

    edges = population.edges
    graph = igraph.Graph(
        n=len(population.canonical),
        edges=np.column_stack([edges.source, edges.target]).tolist(),
        directed=False,
    )
    nodes = population.canonical
    graph.vs["name"] = [c.id for c in nodes]
    graph.vs["type"] = [c.type for c in nodes]
    graph.vs["label"] = [c.label for c in nodes]
    graph.vs["aliases"] = [" | ".join(c.aliases) for c in nodes]
    graph.vs["count"] = [c.count for c in nodes]
    graph.vs["n_models"] = [len({p[2] for p in c.provenance}) for c in nodes]
    graph.vs["cluster"] = [population.clusters[k].id for k in population.node_cluster.tolist()]
    if len(edges):
        graph.es["kind"] = [EDGE_KINDS[k] for k in edges.kind.tolist()]
        graph.es["relation"] = [RELATION_NAMES[r] for r in edges.relation.tolist()]
        graph.es["weight"] = edges.weight.tolist()
        graph.es["source"] = [nodes[s].id for s in edges.source.tolist()]
    graph["task_id"] = population.task_id
    graph["comparison_key"] = population.comparison_key
    return graph


def to_networkx(population: Population) -> networkx.MultiGraph:
    """The Typed Idea Graph as an undirected ``networkx.MultiGraph`` (SPEC §4.3).

    Nodes are canonical atom ids with attributes ``type``, ``label``, ``aliases`` (tuple),
    ``count``, ``n_models`` and ``cluster`` (the leaf cluster id); edges carry ``kind``
    (also the edge key, so a pair has at most one edge of each kind), ``relation`` and
    ``weight``; the graph carries ``task_id``, ``comparison_key`` and ``models``. The same
    nodes and edges as :func:`to_igraph`, for networkx's algorithms and writers.

    Examples
    --------
    >>> from creagraph.tig.population import build_atom_table, build_population
    >>> from creagraph.tig.schema import Atom, Response
    >>> rs = [Response("t", "Make calm visible.", m, 0, "A fern in a jar") for m in "ab"]
    >>> atoms = [[Atom("carrier", "fern"), Atom("setting", "jar")]] * 2
    >>> vectors = {"fern": np.array([1.0, 0.0]), "jar": np.array([0.0, 1.0])}
    >>> population = build_population(build_atom_table("t", rs, atoms, vectors))
    >>> g = to_networkx(population)
    >>> sorted((d["type"], d["label"], d["count"]) for _, d in g.nodes(data=True))
    [('carrier', 'fern', 2), ('setting', 'jar', 2)]
    >>> [(key, d["weight"]) for _, _, key, d in g.edges(keys=True, data=True)]
    [('cooccurrence', 2.0)]
    """
    import networkx

    graph = networkx.MultiGraph(task_id=population.task_id,
                                comparison_key=population.comparison_key,
                                models=tuple(population.models))
    nodes = population.canonical
    for node, cluster_index in zip(nodes, population.node_cluster.tolist(), strict=True):
        graph.add_node(
            node.id,
            type=node.type,
            label=node.label,
            aliases=tuple(node.aliases),
            count=node.count,
            n_models=len({p[2] for p in node.provenance}),
            cluster=population.clusters[cluster_index].id,
        )
    edges = population.edges
    for k, s, t, r, w in zip(edges.kind.tolist(), edges.source.tolist(), edges.target.tolist(),
                             edges.relation.tolist(), edges.weight.tolist(), strict=True):
        graph.add_edge(nodes[s].id, nodes[t].id, key=EDGE_KINDS[k], kind=EDGE_KINDS[k],
                       relation=RELATION_NAMES[r], weight=float(w))
    return graph


def write_graphml(population: Population, path: str | os.PathLike[str]) -> None:
    """Write the graph as GraphML (atomically)."""
    graph = to_igraph(population)
    with atomic_write(path) as handle:
        graph.write_graphml(handle)


def graph_to_json(population: Population) -> dict[str, Any]:
    """A node-link JSON document of the graph (nodes with full canonical records)."""
    nodes = []
    for node, cluster_index in zip(population.canonical, population.node_cluster.tolist(),
                                   strict=True):
        record = node.to_dict()
        record["cluster"] = population.clusters[cluster_index].id
        nodes.append(record)
    ids = [c.id for c in population.canonical]
    edges = population.edges
    links = [
        {
            "source": ids[s],
            "target": ids[t],
            "kind": EDGE_KINDS[k],
            "relation": RELATION_NAMES[r],
            "weight": float(w),
        }
        for k, s, t, r, w in zip(edges.kind.tolist(), edges.source.tolist(),
                                 edges.target.tolist(), edges.relation.tolist(),
                                 edges.weight.tolist(), strict=True)
    ]
    return {
        "task_id": population.task_id,
        "comparison_key": population.comparison_key,
        "models": list(population.models),
        "directed": False,
        "multigraph": True,
        "nodes": nodes,
        "links": links,
        "clusters": [c.to_dict() for c in population.clusters],
    }


def write_graph_json(population: Population, path: str | os.PathLike[str]) -> None:
    """Write :func:`graph_to_json` to ``path`` (atomically)."""
    with atomic_write(path) as handle:
        json.dump(graph_to_json(population), handle, ensure_ascii=False)
