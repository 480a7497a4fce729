import sys

import numpy as np
import pytest

from creagraph.tig.cluster import cluster_nodes, leiden_available, resolve_method

# two dense groups joined by one weak edge, plus an isolated node
RING = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [2, 3]])
RING_W = np.array([0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.51])


@pytest.mark.parametrize("method", ["leidenalg", "igraph"])
def test_leiden_methods_find_the_two_groups(method):
    clustering = cluster_nodes(7, RING, RING_W, method=method, seed=1)
    assert clustering.method == method
    assert clustering.membership.tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert clustering.paths == ((0,), (1,), (2,))


def test_leiden_is_deterministic_and_resolution_matters():
    rng = np.random.default_rng(3)
    n = 60
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.15])
    weights = rng.uniform(0.5, 1.0, len(edges))
    first = cluster_nodes(n, edges, weights, method="leidenalg", seed=7)
    again = cluster_nodes(n, edges, weights, method="leidenalg", seed=7)
    assert np.array_equal(first.membership, again.membership)
    fine = cluster_nodes(n, edges, weights, method="leidenalg", seed=7, resolution=4.0)
    assert fine.n_clusters > first.n_clusters


def test_components_method_uses_the_weight_cut():
    loose = cluster_nodes(7, RING, RING_W, method="components")
    assert loose.membership.tolist() == [0, 0, 0, 0, 0, 0, 1]
    cut = cluster_nodes(7, RING, RING_W, method="components", min_component_weight=0.6)
    assert cut.membership.tolist() == [0, 0, 0, 1, 1, 1, 2] and cut.method == "components"


def test_auto_uses_igraph_leiden():
    # igraph's community_leiden reaches leidenalg's modularity on TIG graphs, faster
    # (benchmarks/leiden.py); leidenalg stays available by name
    assert resolve_method("auto") == "igraph"
    assert cluster_nodes(7, RING, RING_W).method == "igraph"
    assert leiden_available()
    assert resolve_method("leidenalg") == "leidenalg"


def test_auto_falls_back_to_components_when_igraph_cannot_be_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "igraph", None)  # makes `import igraph` fail
    assert not leiden_available()
    clustering = cluster_nodes(7, RING, RING_W, min_component_weight=0.6)
    assert clustering.method == "components"
    assert clustering.membership.tolist() == [0, 0, 0, 1, 1, 1, 2]


def test_igraph_and_leidenalg_reach_the_same_modularity():
    import igraph

    rng = np.random.default_rng(3)
    # four noisy communities of 25 nodes
    pairs = [(i, j) for i in range(100) for j in range(i + 1, 100)
             if rng.random() < (0.3 if i // 25 == j // 25 else 0.02)]
    edges = np.array(pairs)
    weights = rng.uniform(0.5, 1.0, len(pairs))
    graph = igraph.Graph(n=100, edges=pairs)
    q = {
        method: graph.modularity(
            cluster_nodes(100, edges, weights, method=method, seed=1).membership.tolist(),
            weights=weights.tolist(),
        )
        for method in ("igraph", "leidenalg")
    }
    assert q["igraph"] > 0.5
    assert abs(q["igraph"] - q["leidenalg"]) < 0.01


def test_hierarchical_splits_large_clusters():
    # two 6-cliques strongly tied to each other: one cluster at the top level
    # at low resolution; the second level separates the cliques
    edges, weights = [], []
    for group in (range(0, 6), range(6, 12)):
        for i in group:
            for j in group:
                if i < j:
                    edges.append((i, j))
                    weights.append(1.0)
    for i in range(6):
        edges.append((i, i + 6))
        weights.append(0.6)
    edges, weights = np.array(edges), np.array(weights)
    flat = cluster_nodes(12, edges, weights, method="leidenalg", resolution=0.2)
    assert flat.n_clusters == 1
    tree = cluster_nodes(12, edges, weights, method="leidenalg", resolution=0.2,
                         hierarchical=True, min_split_size=4, max_levels=3)
    assert tree.n_clusters == 2
    assert len(set(tree.membership[:6])) == 1 and len(set(tree.membership[6:])) == 1
    assert all(len(p) >= 2 and p[:-1] == (0,) for p in tree.paths)


def test_edge_cases_and_validation():
    assert cluster_nodes(0, np.zeros((0, 2)), np.zeros(0)).n_clusters == 0
    assert cluster_nodes(3, np.zeros((0, 2)), np.zeros(0)).membership.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown cluster method"):
        cluster_nodes(2, np.array([[0, 1]]), np.array([1.0]), method="louvain")
    with pytest.raises(ValueError, match="endpoints"):
        cluster_nodes(2, np.array([[0, 2]]), np.array([1.0]))
    with pytest.raises(ValueError, match="positive"):
        cluster_nodes(2, np.array([[0, 1]]), np.array([0.0]))
