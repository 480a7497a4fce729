"""End-to-end CREATE scoring: parse → validate → judge → embed → utility (SPEC §3.2–3.6).

:class:`Scorer` scores one answer row into per-path records and one per-query record;
:func:`score_files` runs it over input files with a progress bar and resumable output
(``paths.jsonl`` and ``queries.jsonl`` are appended row by row; a re-run skips rows whose
query record exists) and writes ``summary.csv``, a per-model table like the published
Table 1.

Decisions where the SPEC is silent:

- The kept set U holds paths that are structurally valid and factual, where a path is
  factual when the fraction of its triples judged factual is ≥ ``factuality_threshold``
  (default 1.0: every triple; the published default). Unknown factuality counts as not
  factual.
- Quality ``f(u)`` uses σ of all triples but the last (the published rule); a path with an
  unknown σ among those has quality 0.
- ``max_quality`` is the largest quality in U (0 when U is empty); distances are between
  the paths of U; ``mean_pairwise_distance`` is the transformed g, the raw 1 − cos is
  reported beside it.
- ``--mode published`` switches both the validity rule and the utility discount (and the
  empty-set score) to the published code's behaviour.
- With a ``ceiling`` hook (``creagraph score --ceiling``, wired to the query generator's
  oracle, SPEC §3.8), each query record also gets the graph's ceiling utility, the model's
  utility as a fraction of it, and the recall of the graph's strong paths by the model's
  kept paths whose every triple was verified in the graph. A row needs the query's ids:
  ``entity_a_id``/``rel_b_id``/``entity_b_id`` (generated queries) or the published
  ``triple1``…``triple3`` source path.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.io import JsonlAppender, atomic_write, read_jsonl, write_jsonl, write_records
from creagraph.core.metrics import (
    UtilityMode,
    distance_matrix,
    mean_pairwise_distance,
    path_strength,
    path_string,
    utility_curve,
)
from creagraph.core.progress import progress
from creagraph.scoring.inputs import AnswerRow
from creagraph.scoring.judges import Judge
from creagraph.scoring.parse import parse_answer
from creagraph.scoring.validity import check_validity, check_validity_published

__all__ = ["Scorer", "ScoreResult", "score_files", "summarize", "REPORTED_GAMMAS", "CURVE_GAMMAS"]

REPORTED_GAMMAS = (0.7, 0.9)
CURVE_GAMMAS = tuple(round(0.1 * i, 1) for i in range(11))


def query_ids(row: AnswerRow) -> dict[str, Any] | None:
    """The query's start/relation/target ids, from generated-query fields or the published
    source path (``triple1`` holds the start entity, the last ``tripleN`` the target)."""
    extra = row.extra
    if all(extra.get(k) for k in ("entity_a_id", "rel_b_id", "entity_b_id")):
        return {
            k: extra[k]
            for k in ("entity_a_id", "rel_b_id", "entity_b_id", "query_id")
            if k in extra
        }
    triples = [extra.get(f"triple{i}") for i in range(1, 6)]
    triples = [t for t in triples if isinstance(t, list) and len(t) == 3]
    if not triples:
        return None
    return {
        "entity_a_id": triples[0][0],
        "rel_b_id": triples[-1][1],
        "entity_b_id": triples[-1][2],
        "source_path": [{"ids": t} for t in triples],
    }


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


@dataclass
class ScoreResult:
    paths: list[dict[str, Any]]
    query: dict[str, Any]


@dataclass
class Scorer:
    """Scores answer rows; see the module docstring for the rules.

    Parameters
    ----------
    judge : Judge
        Source of per-triple specificity and factuality.
    embedder : Embedder
        Path-string embeddings (normalised), e.g. ``default_embedder()``.
    mode : {"paper", "published"}
        Validity rule and utility discount.
    factuality_threshold : float
        Minimum fraction of factual triples for a path to be kept.
    entity_linker, relation_linker : optional
        Used by the paper validity rule for aliases and relation equivalence.
    """

    judge: Judge
    embedder: Any
    mode: UtilityMode = "paper"
    factuality_threshold: float = 1.0
    entity_linker: Any = None
    relation_linker: Any = None
    kg: Any = None
    ceiling: Any = None
    _aliases: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    def _names(self, mention: str) -> tuple[str, ...]:
        if self.entity_linker is None or self.kg is None:
            return ()
        if mention not in self._aliases:
            names: list[str] = []
            links = self.entity_linker.link(mention)
            if links and links[0].method in ("label", "alias"):
                record = self.kg.entity(links[0].qid)
                if record is not None:
                    names = [n for n in (record.label, *record.aliases) if n]
            self._aliases[mention] = tuple(names)
        return self._aliases[mention]

    def _validity(self, row: AnswerRow, triples):
        if self.mode == "published":
            return check_validity_published(triples, row.entity_a, row.entity_b)
        same = self.relation_linker.same_property if self.relation_linker is not None else None
        return check_validity(
            triples,
            row.entity_a,
            row.entity_b,
            row.rel_b,
            aliases_a=self._names(row.entity_a),
            aliases_b=self._names(row.entity_b),
            same_relation=same,
        )

    def score(self, row: AnswerRow) -> ScoreResult:
        parsed = parse_answer(row.answer)
        path_records: list[dict[str, Any]] = []
        kept_strings: list[str] = []
        kept_quality: list[float] = []
        kept_grounded: list[list[list[str]] | None] = []
        status_counts: dict[str, int] = {}
        for i, path in enumerate(parsed.paths):
            validity = self._validity(row, path.triples)
            judgments = self.judge.judge(row, i, path.triples) if path.triples else []
            sigmas = [j.specificity for j in judgments]
            factual_flags = [j.factual for j in judgments]
            for j in judgments:
                status_counts[j.status] = status_counts.get(j.status, 0) + 1
            fraction = (
                sum(1 for f in factual_flags if f is not None and f >= 1.0) / len(factual_flags)
                if factual_flags
                else 0.0
            )
            factual = bool(factual_flags) and fraction >= self.factuality_threshold
            considered = sigmas[:-1] if len(sigmas) > 1 else sigmas
            strength = None if any(s is None for s in considered) else path_strength(sigmas)
            quality = float(strength) if factual and strength is not None else 0.0
            kept = validity.valid and factual
            text = path_string(path.triples) if validity.valid else None
            if kept:
                kept_strings.append(text)
                kept_quality.append(quality)
                verified = all(j.status == "verified" for j in judgments)
                kept_grounded.append(
                    [j.evidence["ids"] for j in judgments] if verified and judgments else None
                )
            path_records.append(
                {
                    "model": row.model,
                    "index": row.index,
                    "path_index": i,
                    "key": path.key,
                    "triples": path.as_lists(),
                    "parse_issues": path.issues,
                    "valid": validity.valid,
                    "validity_reasons": list(validity.reasons),
                    "path_string": text,
                    "judgments": [j.as_dict() for j in judgments],
                    "specificities": sigmas,
                    "strength": strength,
                    "factual_fraction": fraction,
                    "factual": factual,
                    "quality": quality,
                    "kept": kept,
                }
            )
        vectors = self.embedder.encode(kept_strings) if kept_strings else np.zeros((0, 1))
        d = distance_matrix(vectors, self.mode) if kept_strings else np.zeros((0, 0))
        raw = distance_matrix(vectors, self.mode, transformed=False) if kept_strings else d
        curve = utility_curve(kept_quality, d, CURVE_GAMMAS, self.mode)
        reported = utility_curve(kept_quality, d, REPORTED_GAMMAS, self.mode)
        query = {
            "index": row.index,
            "model": row.model,
            "query": row.query,
            "entity_a": row.entity_a,
            "entity_b": row.entity_b,
            "rel_b": row.rel_b,
            "mode": self.mode,
            "judge": self.judge.name,
            "n_paths": len(parsed.paths),
            "n_valid": sum(1 for p in path_records if p["valid"]),
            "n_kept": len(kept_strings),
            "parse_failures": parsed.failures,
            "repairs": parsed.repairs,
            "utility": {str(g): u for g, u in zip(REPORTED_GAMMAS, reported)},
            "utility_curve": {f"{g:.1f}": u for g, u in zip(CURVE_GAMMAS, curve)},
            "max_quality": max(kept_quality, default=0.0),
            "mean_pairwise_distance": _finite(mean_pairwise_distance(d)) if len(d) else None,
            "mean_pairwise_raw_distance": _finite(mean_pairwise_distance(raw)) if len(d) else None,
            "triple_status": dict(sorted(status_counts.items())),
            "source": row.source,
        }
        if self.ceiling is not None:
            ids = query_ids(row)
            query["ceiling"] = (
                self.ceiling(ids, query["utility"], kept_grounded) if ids is not None else None
            )
        return ScoreResult(path_records, query)


def _mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return None, None
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return statistics.fmean(vals), sd


def summarize(queries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-model table like the published Table 1: mean (sd) over queries."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for q in queries:
        by_model.setdefault(q["model"], []).append(q)
    table = []
    for model in sorted(by_model):
        rows = by_model[model]
        entry: dict[str, Any] = {"model": model, "n_queries": len(rows)}
        columns = {
            "s_0.7": [q["utility"]["0.7"] for q in rows],
            "s_0.9": [q["utility"]["0.9"] for q in rows],
            "max_quality": [q["max_quality"] for q in rows],
            "mean_pairwise_distance": [q["mean_pairwise_distance"] for q in rows],
            "mean_pairwise_raw_distance": [q["mean_pairwise_raw_distance"] for q in rows],
            "n_kept": [q["n_kept"] for q in rows],
            "n_paths": [q["n_paths"] for q in rows],
        }
        for name, values in columns.items():
            mean, sd = _mean_sd(values)
            entry[f"{name}_mean"] = mean
            entry[f"{name}_sd"] = sd
        table.append(entry)
    return table


def score_files(
    rows: Sequence[AnswerRow],
    scorer: Scorer | None,
    out_dir: str | os.PathLike[str],
    *,
    run: Callable[[list[AnswerRow]], Iterator[ScoreResult]] | None = None,
) -> dict[str, Any]:
    """Score rows into ``out_dir`` (resumable); returns counts of scored and skipped rows.

    ``run`` replaces the local loop (``scorer.score`` per row) with another executor that
    yields results in input order, e.g. :func:`creagraph.scoring.distributed.dask_runner`;
    outputs are written the same way either way.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    queries_path, paths_path = out / "queries.jsonl", out / "paths.jsonl"
    done: set[tuple[str, str]] = set()
    if queries_path.exists():
        existing = read_jsonl(queries_path, tolerate_truncated_tail=True)
        write_jsonl(queries_path, existing)
        done = {(q["model"], str(q["index"])) for q in existing}
    if paths_path.exists():
        kept = [
            p
            for p in read_jsonl(paths_path, tolerate_truncated_tail=True)
            if (p["model"], str(p["index"])) in done
        ]
        write_jsonl(paths_path, kept)
    todo = [r for r in rows if r.key not in done]
    seen: set[tuple[str, str]] = set()
    for r in todo:
        if r.key in seen:
            raise ValueError(
                f"{r.source}: row {r.line}: duplicate query index {r.index!r} for model {r.model!r}"
            )
        seen.add(r.key)
    with JsonlAppender(paths_path) as paths_out, JsonlAppender(queries_path) as queries_out:
        results = run(todo) if run is not None else (scorer.score(r) for r in todo)
        for result in progress(results, total=len(todo), desc="score", unit="query"):
            for record in result.paths:
                paths_out.write(record)
            queries_out.write(result.query)
    all_queries = read_jsonl(queries_path)
    write_records(out / "summary.csv", summarize(all_queries))
    with atomic_write(out / "README.txt") as handle:
        handle.write(
            "paths.jsonl: one record per parsed path; queries.jsonl: one per (model, query);\n"
            "summary.csv: per-model mean/sd over queries (see creagraph.scoring.pipeline).\n"
        )
    return {"scored": len(todo), "skipped": len(rows) - len(todo), "queries": len(all_queries)}
