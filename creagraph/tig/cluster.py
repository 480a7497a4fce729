"""Clustering the same-type subgraphs of a Typed Idea Graph (SPEC §4.4).

:func:`cluster_nodes` partitions the nodes of one weighted undirected graph (given as an
edge array) with one of three methods:

* ``"leidenalg"`` — the Leiden algorithm of the ``leidenalg`` package on an igraph graph,
  optimising modularity with a resolution parameter (``RBConfigurationVertexPartition``);
* ``"igraph"`` — igraph's built-in ``Graph.community_leiden`` (modularity objective), same
  algorithm, much faster on large graphs;
* ``"components"`` — weighted connected components: the components of the graph keeping
  only edges of weight at least ``min_component_weight``.

``"auto"`` (the default) uses igraph's ``community_leiden`` and falls back to components
when igraph cannot be imported. On the graphs ``tig anchors`` clusters it reaches the same
modularity as leidenalg (mean difference +0.0001, worst graph −0.0003 over 83 NoveltyBench
graphs) several times faster (×6.7; ``benchmarks/leiden.py``, ``benchmarks/RESULTS.md``);
``"leidenalg"`` stays available, the implementation the design names.

With ``hierarchical=True`` each cluster with at least
``min_split_size`` nodes is re-clustered on its induced subgraph at a higher resolution,
down to ``max_levels`` levels; the leaves form the partition and each leaf records its
path (hence its parent).

Results are deterministic for a given graph and seed, and cluster labels are numbered by
first appearance (node order), so equal graphs give equal labels.

References
----------
Traag, Waltman & van Eck (2019), "From Louvain to Leiden: guaranteeing well-connected
communities", Scientific Reports 9, 5233. Reichardt & Bornholdt (2006) for the
resolution-parameter modularity.

Examples
--------
>>> edges = np.array([[0, 1], [1, 2], [3, 4]])
>>> cluster_nodes(5, edges, np.array([0.9, 0.8, 0.7]), method="components").membership.tolist()
[0, 0, 0, 1, 1]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from creagraph.tig.config import ClusterMethod

__all__ = [
    "ClusterMethod",
    "Clustering",
    "leiden_available",
    "resolve_method",
    "cluster_nodes",
    "weighted_components",
]

_METHODS = tuple(m.value for m in ClusterMethod)


@dataclass(frozen=True)
class Clustering:
    """A partition of ``n`` nodes.

    ``membership[i]`` is node i's leaf cluster (0..k−1, numbered by first appearance);
    ``paths[c]`` is leaf c's path in the hierarchy (labels from the top level down; one
    label for a flat clustering), so its parent is ``paths[c][:-1]`` when that is not
    empty; ``method`` is the method actually used.
    """

    membership: np.ndarray
    paths: tuple[tuple[int, ...], ...]
    method: str

    @property
    def n_clusters(self) -> int:
        return int(self.membership.max()) + 1 if self.membership.size else 0


def leiden_available() -> bool:
    """True when ``leidenalg`` and ``igraph`` can be imported."""
    try:
        import igraph  # noqa: F401
        import leidenalg  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_method(method: str) -> str:
    """The method ``"auto"`` stands for here (igraph, or components without it)."""
    if method not in _METHODS:
        raise ValueError(f"unknown cluster method {method!r} (expected one of {_METHODS})")
    if method == "auto":
        try:
            import igraph  # noqa: F401
        except ImportError:
            return "components"
        return "igraph"
    return method


def _relabel(labels: np.ndarray) -> np.ndarray:
    mapping: dict[int, int] = {}
    out = np.empty(len(labels), dtype=np.int64)
    for i, label in enumerate(labels.tolist()):
        out[i] = mapping.setdefault(label, len(mapping))
    return out


def weighted_components(n: int, edges: np.ndarray, weights: np.ndarray,
                        min_weight: float = 0.0) -> np.ndarray:
    """Connected components over edges with ``weight >= min_weight`` (labels by first node).

    Examples
    --------
    >>> weighted_components(3, np.array([[0, 1], [1, 2]]), np.array([0.9, 0.2]), 0.5).tolist()
    [0, 0, 1]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if n == 0:
        return np.zeros(0, dtype=np.int64)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    keep = np.asarray(weights, dtype=np.float64) >= min_weight
    kept = edges[keep]
    matrix = coo_matrix(
        (np.ones(len(kept)), (kept[:, 0], kept[:, 1])), shape=(n, n)
    ).tocsr()
    _, labels = connected_components(matrix, directed=False)
    return _relabel(labels)


def _leiden(n: int, edges: np.ndarray, weights: np.ndarray, method: str,
            resolution: float, seed: int) -> np.ndarray:
    import igraph

    graph = igraph.Graph(n=n, edges=[tuple(e) for e in edges.tolist()], directed=False)
    w = [float(x) for x in weights]
    if method == "leidenalg":
        import leidenalg

        partition = leidenalg.find_partition(
            graph,
            leidenalg.RBConfigurationVertexPartition,
            weights=w if w else None,
            resolution_parameter=resolution,
            seed=seed,
        )
        labels = np.asarray(partition.membership, dtype=np.int64)
    else:
        state = random.getstate()
        try:
            random.seed(seed)
            result = graph.community_leiden(
                objective_function="modularity",
                weights=w if w else None,
                resolution=resolution,
                n_iterations=2,
            )
        finally:
            random.setstate(state)
        labels = np.asarray(result.membership, dtype=np.int64)
    return _relabel(labels)


def _flat(n: int, edges: np.ndarray, weights: np.ndarray, method: str, resolution: float,
          seed: int, min_component_weight: float) -> np.ndarray:
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if len(edges) == 0:
        return np.arange(n, dtype=np.int64)  # no edges: every node alone
    if method == "components":
        return weighted_components(n, edges, weights, min_component_weight)
    return _leiden(n, edges, weights, method, resolution, seed)


def cluster_nodes(
    n: int,
    edges: np.ndarray,
    weights: np.ndarray,
    *,
    method: ClusterMethod | str = "auto",
    resolution: float = 1.0,
    seed: int = 0,
    hierarchical: bool = False,
    max_levels: int = 2,
    min_split_size: int = 8,
    min_component_weight: float = 0.0,
    level_resolution_factor: float = 2.0,
) -> Clustering:
    """Partition ``n`` nodes of a weighted undirected graph.

    Parameters
    ----------
    n : int
        Number of nodes (0..n−1).
    edges : ndarray of int, shape (m, 2)
        Undirected edges.
    weights : ndarray, shape (m,)
        Positive edge weights.
    method : {"auto", "leidenalg", "igraph", "components"}
        See the module docstring.
    resolution : float
        Modularity resolution (higher → smaller clusters); Leiden methods only.
    seed : int
        Random seed of the Leiden methods.
    hierarchical : bool
        Re-cluster large clusters on their induced subgraphs (see the module docstring).
    max_levels : int
        Depth limit of the hierarchy (1 = flat).
    min_split_size : int
        Only clusters with at least this many nodes are split further.
    min_component_weight : float
        Edge weight cut of the ``"components"`` method.
    level_resolution_factor : float
        Level d of the hierarchy (top = 0) uses ``resolution · factor**d``, so each level
        looks for finer structure than the one above.

    Returns
    -------
    Clustering

    Examples
    --------
    >>> ring = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [2, 3]])
    >>> c = cluster_nodes(6, ring, np.array([1, 1, 1, 1, 1, 1, 0.1]), method="leidenalg")
    >>> c.membership.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    edges, weights = _checked_graph(n, edges, weights)
    used = resolve_method(method)
    top = _flat(n, edges, weights, used, resolution, seed, min_component_weight)
    paths: list[tuple[int, ...]] = [(int(c),) for c in top]
    if hierarchical and max_levels > 1 and used != "components":
        for level in range(1, max_levels):
            if not _split_level(paths, level, edges, weights, used,
                                resolution * level_resolution_factor**level, seed,
                                min_split_size, min_component_weight):
                break
    membership, leaf_paths = _leaves(paths)
    return Clustering(membership=membership, paths=leaf_paths, method=used)


def _checked_graph(n: int, edges: np.ndarray, weights: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``edges`` as int (m, 2) and ``weights`` as float (m,), checked against ``n``."""
    if n < 0:
        raise ValueError("n must be non-negative")
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(edges) != len(weights):
        raise ValueError("edges and weights must have the same length")
    if len(edges) and (edges.min() < 0 or edges.max() >= n):
        raise ValueError("edge endpoints must lie in 0..n-1")
    if np.any(weights <= 0):
        raise ValueError("edge weights must be positive")
    return edges, weights


def _split_level(paths: list[tuple[int, ...]], level: int, edges: np.ndarray,
                 weights: np.ndarray, method: str, resolution: float, seed: int,
                 min_split_size: int, min_component_weight: float) -> bool:
    """Re-cluster every cluster of depth ``level`` with at least ``min_split_size`` nodes
    on its induced subgraph, extending the ``paths`` of its nodes when it splits; True
    when any cluster split."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for node, path in enumerate(paths):
        groups.setdefault(path, []).append(node)
    changed = False
    for path, nodes in groups.items():
        if len(nodes) < min_split_size or len(path) < level:
            continue
        local = {node: k for k, node in enumerate(nodes)}
        mask = np.array([a in local and b in local for a, b in edges.tolist()], dtype=bool)
        sub_edges = np.array(
            [[local[a], local[b]] for a, b in edges[mask].tolist()], dtype=np.int64
        ).reshape(-1, 2)
        sub = _flat(len(nodes), sub_edges, weights[mask], method, resolution, seed,
                    min_component_weight)
        if sub.max() == 0:
            continue  # not split: the cluster stays a leaf
        changed = True
        for node, label in zip(nodes, sub.tolist(), strict=True):
            paths[node] = path + (int(label),)
    return changed


def _leaves(paths: Sequence[tuple[int, ...]]) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """Leaf index of every node (leaves numbered by first node) and each leaf's path."""
    leaf_index: dict[tuple[int, ...], int] = {}
    membership = np.array([leaf_index.setdefault(p, len(leaf_index)) for p in paths],
                          dtype=np.int64)
    leaf_paths: list[tuple[int, ...]] = [()] * len(leaf_index)
    for path, leaf in leaf_index.items():
        leaf_paths[leaf] = path
    return membership, tuple(leaf_paths)
