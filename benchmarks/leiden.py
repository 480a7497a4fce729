"""Leiden on the graphs `tig anchors` clusters: igraph's built-in ``community_leiden`` vs
the ``leidenalg`` package (issue 19, item 5).

Builds the atom tables of NoveltyBench curated prompts (offline extractor, cached
all-MiniLM-L6-v2), records every graph the whole-population clustering and the L2MO
reference populations hand to Leiden, then clusters each recorded graph with both methods
in the same run (interleaved, same machine load) and prints total time, the ratio, and
the modularity (at the graph's resolution, weighted) each method reaches: mean, and the
largest loss of igraph against leidenalg on any one graph.

Run: ``python benchmarks/leiden.py [--prompts 12] [--pairs-per-task 3]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

from creagraph.core.embeddings import default_embedder  # noqa: E402
from creagraph.tig import (  # noqa: E402
    OfflineExtractor,
    TigConfig,
    build_atom_tables,
    build_population,
    l2mo_results,
    load_noveltybench_curated,
    model_pairs,
)
from creagraph.tig import cluster as cluster_module  # noqa: E402


def modularity(n: int, edges: np.ndarray, weights: np.ndarray, labels: np.ndarray,
               resolution: float) -> float:
    import igraph

    graph = igraph.Graph(n=n, edges=edges.tolist(), directed=False)
    return graph.modularity(labels.tolist(), weights=weights.tolist(), resolution=resolution)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=12)
    parser.add_argument("--pairs-per-task", type=int, default=3)
    args = parser.parse_args()

    responses = load_noveltybench_curated()
    tasks = sorted({r.task_id for r in responses})[: args.prompts]
    responses = [r for r in responses if r.task_id in set(tasks)]
    embedder = default_embedder()
    tables = build_atom_tables(responses, OfflineExtractor(embedder), embedder,
                               show_progress=False)

    graphs: list[tuple] = []
    original = cluster_module._leiden

    def record(n, edges, weights, method, resolution, seed):
        graphs.append((n, np.array(edges), np.array(weights), resolution, seed))
        return original(n, edges, weights, method, resolution, seed)

    cluster_module._leiden = record
    try:
        config = TigConfig(cluster_method="leidenalg")
        for table in tables.values():
            build_population(table, None, config)
        pairs = sorted({p for t in tables.values()
                        for p in model_pairs(t.models)[:: max(1, len(model_pairs(t.models))
                                                              // args.pairs_per_task)]})
        for _ in l2mo_results(tables, config, pairs=pairs, show_progress=False):
            pass
    finally:
        cluster_module._leiden = original
    sizes = [g[0] for g in graphs]
    print(f"{len(graphs)} Leiden graphs from {len(tables)} prompts "
          f"(nodes: median {int(np.median(sizes))}, max {max(sizes)}; "
          f"edges: max {max(len(g[1]) for g in graphs)})")

    seconds = {"leidenalg": 0.0, "igraph": 0.0}
    quality = {"leidenalg": [], "igraph": []}
    same = 0
    for n, edges, weights, resolution, seed in graphs:
        labels = {}
        for method in ("leidenalg", "igraph"):
            start = time.perf_counter()
            labels[method] = original(n, edges, weights, method, resolution, seed)
            seconds[method] += time.perf_counter() - start
            quality[method].append(modularity(n, edges, weights, labels[method], resolution))
        same += bool(np.array_equal(labels["leidenalg"], labels["igraph"]))
    q_alg, q_ig = np.array(quality["leidenalg"]), np.array(quality["igraph"])
    print(f"leidenalg (before): {seconds['leidenalg']:.2f} s, mean modularity {q_alg.mean():.4f}")
    print(f"igraph    (after):  {seconds['igraph']:.2f} s, mean modularity {q_ig.mean():.4f}")
    print(f"speed-up ×{seconds['leidenalg'] / seconds['igraph']:.1f}; identical partitions on "
          f"{same}/{len(graphs)} graphs; igraph − leidenalg modularity: mean "
          f"{(q_ig - q_alg).mean():+.4f}, worst graph {(q_ig - q_alg).min():+.4f}, best "
          f"{(q_ig - q_alg).max():+.4f}")


if __name__ == "__main__":
    main()
