"""Distinctiveness against a population of other models' paths (SPEC §3.7).

``ν(u) = min over u' in P of g(1 − cos(u, u'))``, where the population P of a query is
the paths of every *other* model (a model's own paths never count against it), and
``ν(U) = max over u in U``. A query is identified by its query key (``query_id``, else
``index``, else the normalised query text; :func:`creagraph.scoring.inputs.query_key`),
never by row number, so files in any order pair the same queries. Each per-path record
names its nearest population path (text, model, query path index). Nearest neighbours
come from a FAISS inner-product index per query: for a model with k paths in the index,
its nearest other-model neighbour is among the k + 1 nearest hits, so one search per path
suffices.

Paths considered (as candidates and as population) are the scored paths that are kept
(valid and factual) with quality above ``min_quality`` (3 in the published analysis).
Per model we report ``avg_nu`` (mean of ν(u) over its paths), ``max_nu`` (mean over
queries of ν(U)), ``max_nu_overall`` and ``avg_sigma`` (mean quality of those paths).

``creagraph distinct`` is :func:`distinct_to_dir` and ``creagraph distance`` (raw and
transformed distance of given path pairs, SPEC §3.5) is :func:`pair_distances`.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from creagraph.core.io import InputError, read_jsonl, write_records
from creagraph.core.metrics import UtilityMode, path_string, raw_distance, transform_distance
from creagraph.scoring.config import plain
from creagraph.scoring.inputs import record_query_key

if TYPE_CHECKING:
    from creagraph.core.embeddings import Embedder

__all__ = [
    "nearest_other_distances",
    "nearest_others",
    "distinctiveness",
    "read_scored_paths",
    "distinct_to_dir",
    "pair_distances",
]


def nearest_other_distances(vectors: np.ndarray, owners: Sequence[str]) -> np.ndarray:
    """Raw distance from each vector to its nearest vector with a different owner.

    ``inf`` where no other owner exists. Uses a FAISS flat inner-product index.

    Examples
    --------
    >>> v = np.eye(3, dtype=np.float32)
    >>> nearest_other_distances(v, ["a", "a", "b"]).tolist()
    [1.0, 1.0, 1.0]
    """
    return nearest_others(vectors, owners)[0]


def nearest_others(vectors: np.ndarray, owners: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Raw distance to, and position of, each vector's nearest vector with another owner.

    Positions are ``-1`` (and distances ``inf``) where no other owner exists.

    Examples
    --------
    >>> v = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
    >>> d, j = nearest_others(v, ["a", "b", "b"])
    >>> j.tolist(), [round(float(x), 2) for x in d]
    ([1, 0, 0], [0.2, 0.2, 1.0])
    """
    from creagraph.core.extras import require

    faiss = require("faiss", "embed", "needed for nearest-neighbour search")

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(x)
    out = np.full(n, np.inf)
    where = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out, where
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
                out[i] = raw_distance(s)
                where[i] = j
                break
    return out, where


def distinctiveness(
    paths: Sequence[dict[str, Any]],
    embedder: Embedder,
    *,
    min_quality: float = 3.0,
    mode: UtilityMode = "paper",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """ν per path and per-model summary from scored path records (``paths.jsonl``).

    ``mode`` selects the distance transform g (:func:`creagraph.core.metrics.transform_distance`).

    Returns
    -------
    per_path : list of dict
        ``model, query_key, index, path_index, nu, raw_distance`` and the nearest
        population path (``nearest_model``, ``nearest_path_index``,
        ``nearest_path_string``) for each considered path.
    summary : list of dict
        Per model: ``avg_nu``, ``max_nu``, ``max_nu_overall``, ``avg_sigma``, counts.
    """
    chosen = [p for p in paths if p.get("kept") and (p.get("quality") or 0) > min_quality]
    by_query: dict[str, list[dict[str, Any]]] = {}
    for p in chosen:
        by_query.setdefault(record_query_key(p), []).append(p)
    per_path: list[dict[str, Any]] = []
    for key in sorted(by_query, key=lambda s: (len(s), s)):
        group = by_query[key]
        vectors = embedder.encode([p["path_string"] for p in group])
        raw, nearest = nearest_others(vectors, [p["model"] for p in group])
        for p, r, j in zip(group, raw, nearest):
            finite = bool(np.isfinite(r))
            other = group[int(j)] if j >= 0 else None
            per_path.append(
                {
                    "model": p["model"],
                    "query_key": key,
                    "index": p["index"],
                    "path_index": p["path_index"],
                    "path_string": p["path_string"],
                    "quality": p["quality"],
                    "raw_distance": float(r) if finite else None,
                    "nu": float(transform_distance(r, mode=mode)) if finite else None,
                    "nearest_model": other["model"] if other else None,
                    "nearest_path_index": other["path_index"] if other else None,
                    "nearest_path_string": other["path_string"] if other else None,
                }
            )
    summary = []
    for model in sorted({p["model"] for p in per_path}):
        mine = [p for p in per_path if p["model"] == model and p["nu"] is not None]
        per_query: dict[str, float] = {}
        for p in mine:
            key = p["query_key"]
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


def read_scored_paths(files: Sequence[Path]) -> list[dict[str, Any]]:
    """The path records of ``paths.jsonl`` files written by ``creagraph score``; a model
    found in two of the files is an error (each model's scores must be given once)."""
    records: list[dict[str, Any]] = []
    owner: dict[str, Path] = {}
    for path in files:
        found = read_jsonl(path)
        for model in sorted({str(r.get("model")) for r in found}):
            if model in owner:
                raise InputError(
                    f"model {model!r} is in both {owner[model]} and {path}: "
                    "give each model's scores once"
                )
            owner[model] = path
        records.extend(found)
    return records


#: The files :func:`distinct_to_dir` writes in its output folder.
DISTINCT_OUTPUTS = ("distinct_paths.jsonl", "distinct_summary.csv")


def distinct_to_dir(
    results: Sequence[Path],
    out: Path,
    *,
    min_quality: float = 3.0,
    mode: UtilityMode = "paper",
    precision: str = "fp32",
) -> list[dict[str, Any]]:
    """``creagraph distinct``: :func:`distinctiveness` of the scored paths in ``results``
    (score output folders or ``paths.jsonl`` files) written to the output folder ``out``
    (claimed, see :func:`creagraph.core.outdir.claim_output_dir`); returns the per-model
    summary."""
    from creagraph.core.embeddings import check_precision, default_embedder
    from creagraph.core.outdir import claim_output_dir

    files = [item / "paths.jsonl" if item.is_dir() else item for item in results]
    with claim_output_dir(out, "distinct", DISTINCT_OUTPUTS, inputs=files):
        records = read_scored_paths(files)
        per_path, summary = distinctiveness(
            records,
            default_embedder(precision=check_precision(precision)),
            min_quality=min_quality,
            mode=mode,
        )
        write_records(out / "distinct_paths.jsonl", per_path)
        write_records(out / "distinct_summary.csv", summary)
    return summary


def _pair_strings(pairs: str | os.PathLike[str], records: list[dict[str, Any]]) -> list[str]:
    """The path strings of each record's ``a`` and ``b`` (a path string as given, or built
    from a list of ``[h, r, t]`` triples), two per record; errors name file, line and field."""
    strings = []
    for n, record in enumerate(records, start=1):
        for side in ("a", "b"):
            path = record.get(side)
            if isinstance(path, str) and path.strip():
                strings.append(path)
                continue
            if (
                not isinstance(path, list)
                or not path
                or not all(isinstance(t, list) and len(t) == 3 for t in path)
            ):
                raise InputError(
                    f"{pairs}: line {n}: field {side!r} must be a list of [h, r, t] "
                    "or a path string"
                )
            strings.append(path_string(path))
    return strings


def pair_distances(
    pairs: str | os.PathLike[str], *, mode: UtilityMode = "paper", precision: str = "fp32"
) -> list[dict[str, Any]]:
    """``creagraph distance``: raw ``1 − cos`` and transformed g distance of each path pair
    in the JSON Lines file ``pairs`` (lines ``{"a": PATH, "b": PATH}``), SPEC §3.5.

    Returns one record per line: ``a``, ``b`` (the path strings), ``raw``,
    ``transformed`` and ``mode``.
    """
    from creagraph.core.embeddings import check_precision, default_embedder

    mode = plain(mode)
    records = read_jsonl(pairs)
    strings = _pair_strings(pairs, records)
    vectors = default_embedder(precision=check_precision(precision)).encode(strings)
    out = []
    for n, _ in enumerate(records):
        raw = raw_distance(vectors[2 * n] @ vectors[2 * n + 1])
        out.append(
            {
                "a": strings[2 * n],
                "b": strings[2 * n + 1],
                "raw": raw,
                "transformed": float(transform_distance(raw, mode=mode)),
                "mode": mode,
            }
        )
    return out
