"""Distinctiveness against a population of other models' paths (SPEC §3.7).

``ν(u) = min over u' in P of g(1 − cos(u, u'))``, where the population P of a query is
the paths of every *other* model (a model's own paths never count against it), and
``ν(U) = max over u in U``. Nearest neighbours come from a FAISS inner-product index per
query: for a model with k paths in the index, its nearest other-model neighbour is among
the k + 1 nearest hits, so one search per path suffices.

Paths considered (as candidates and as population) are the scored paths that are kept
(valid and factual) with quality above ``min_quality`` (3 in the published analysis).
Per model we report ``avg_nu`` (mean of ν(u) over its paths), ``max_nu`` (mean over
queries of ν(U)), ``max_nu_overall`` and ``avg_sigma`` (mean quality of those paths).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from creagraph.core.metrics import transform_distance

__all__ = ["nearest_other_distances", "distinctiveness"]


def nearest_other_distances(vectors: np.ndarray, owners: Sequence[str]) -> np.ndarray:
    """Raw distance from each vector to its nearest vector with a different owner.

    ``inf`` where no other owner exists. Uses a FAISS flat inner-product index.

    Examples
    --------
    >>> v = np.eye(3, dtype=np.float32)
    >>> nearest_other_distances(v, ["a", "a", "b"]).tolist()
    [1.0, 1.0, 1.0]
    """
    import faiss

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(x)
    out = np.full(n, np.inf)
    if n == 0:
        return out
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    owners = list(owners)
    counts: dict[str, int] = {}
    for o in owners:
        counts[o] = counts.get(o, 0) + 1
    k = min(n, max(counts.values()) + 1)
    sims, ids = index.search(x, k)
    for i in range(n):
        for s, j in zip(sims[i], ids[i]):
            if j >= 0 and owners[j] != owners[i]:
                out[i] = max(0.0, 1.0 - float(s))
                break
    return out


def distinctiveness(
    paths: Sequence[dict[str, Any]], embedder, *, min_quality: float = 3.0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """ν per path and per-model summary from scored path records (``paths.jsonl``).

    Returns
    -------
    per_path : list of dict
        ``model, index, path_index, nu, raw_distance`` for each considered path.
    summary : list of dict
        Per model: ``avg_nu``, ``max_nu``, ``max_nu_overall``, ``avg_sigma``, counts.
    """
    chosen = [p for p in paths if p.get("kept") and (p.get("quality") or 0) > min_quality]
    by_query: dict[str, list[dict[str, Any]]] = {}
    for p in chosen:
        by_query.setdefault(str(p["index"]), []).append(p)
    per_path: list[dict[str, Any]] = []
    for index in sorted(by_query, key=lambda s: (len(s), s)):
        group = by_query[index]
        vectors = embedder.encode([p["path_string"] for p in group])
        raw = nearest_other_distances(vectors, [p["model"] for p in group])
        for p, r in zip(group, raw):
            finite = bool(np.isfinite(r))
            per_path.append(
                {
                    "model": p["model"],
                    "index": p["index"],
                    "path_index": p["path_index"],
                    "quality": p["quality"],
                    "raw_distance": float(r) if finite else None,
                    "nu": float(transform_distance(r)) if finite else None,
                }
            )
    summary = []
    for model in sorted({p["model"] for p in per_path}):
        mine = [p for p in per_path if p["model"] == model and p["nu"] is not None]
        per_query: dict[str, float] = {}
        for p in mine:
            key = str(p["index"])
            per_query[key] = max(per_query.get(key, 0.0), p["nu"])
        summary.append(
            {
                "model": model,
                "n_paths": len(mine),
                "n_queries": len(per_query),
                "avg_nu": statistics.fmean(p["nu"] for p in mine) if mine else None,
                "max_nu": statistics.fmean(per_query.values()) if per_query else None,
                "max_nu_overall": max((p["nu"] for p in mine), default=None),
                "avg_sigma": statistics.fmean(p["quality"] for p in mine) if mine else None,
            }
        )
    return per_path, summary
