"""End-to-end CREATE scoring: parse → validate → judge → embed → utility (SPEC §3.2–3.6).

:class:`Scorer` scores one answer row into per-path records and one per-query record;
:func:`score_files` streams rows through it with a progress bar and resumable output
(``paths.jsonl`` and ``queries.jsonl`` are appended row by row, a query's paths before
its query record; a re-run keeps the queries whose record and paths are all there and
skips their rows, so a run killed at any point and re-run gives the uninterrupted
output) and writes ``summary.csv``, a per-model table like the published Table 1,
computed by streaming ``queries.jsonl``. Memory does not grow with the number of paths.

Decisions where the SPEC is silent:

- The kept set U holds paths that are structurally valid and factual, where a path is
  factual when the fraction of its triples judged factual is ≥ ``factuality_threshold``
  (default 1.0: every triple; the published default).
- Utility under unknowns is an interval (SPEC §3.4): a triple the judge leaves unknown
  (factuality ``None``) counts as not factual in the *strict* reading and as factual in the
  *lenient* one. Both are computed: ``utility_strict`` and ``utility_lenient`` (same
  patience keys); ``Scorer.unknown`` (``--unknown``, default strict) picks which one fills
  ``utility``, ``utility_curve``, ``n_kept``, ``max_quality`` and the distances.
  ``decided_share`` is the share of the query's triples with a known factuality.
- Quality ``f(u)`` uses σ of all triples but the last (the published rule). When an end of
  a triple is unlinked its σ is unknown: strictly, a path with an unknown σ among those has
  quality 0; leniently its strength is the minimum over the triples that have a σ (0 when
  none has).
- ``max_quality`` is the largest quality in U (0 when U is empty); distances are between
  the paths of U; ``mean_pairwise_distance`` is the transformed g, the raw 1 − cos is
  reported beside it.
- ``--mode published`` switches the validity rule, the utility discount, the empty-set
  score and g of raw distances above 1 to the published code's behaviour; with the stored
  judge, a stored per-triple list of another length than the path is used as stored
  (factuality averaged over the judgments there, σ from that list; SPEC §3.6 quirk e).
- Rows are keyed by ``(model, query_key)`` (:func:`creagraph.scoring.inputs.query_key`:
  ``query_id``, else ``index``, else normalised query text); both records carry it.
- Each query record counts the triples the LLM judge could not judge (``judge_errors``:
  ``unparsed``, ``failed``); ``summary.csv`` totals them per model.
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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import numpy as np

from creagraph.core.io import (
    InputError,
    JsonlAppender,
    atomic_write,
    iter_jsonl,
    truncate_partial_line,
    write_jsonl,
    write_records,
)
from creagraph.core.metrics import (
    UtilityMode,
    path_set_distances,
    path_strength,
    path_string,
    utilities_from_order,
)
from creagraph.core.progress import progress_bar
from creagraph.scoring.inputs import AnswerRow, record_query_key
from creagraph.scoring.judges import Judge, StoredJudge, judge_errors
from creagraph.scoring.parse import parse_answer
from creagraph.scoring.validity import check_validity, check_validity_published

__all__ = ["Scorer", "ScoreResult", "score_files", "summarize", "REPORTED_GAMMAS", "CURVE_GAMMAS"]

REPORTED_GAMMAS = (0.7, 0.9)
#: Paths scored per answer by default (``creagraph score --max-paths``); the rest of an
#: answer's paths are dropped and the query record says so. Scoring memory is O(n·d) in
#: the number of paths, time O(n²·d) for the distances.
MAX_PATHS_PER_ANSWER = 20_000
CURVE_GAMMAS = tuple(round(0.1 * i, 1) for i in range(11))


def query_ids(row: AnswerRow) -> dict[str, Any] | None:
    """The query's start/relation/target ids, from generated-query fields or the published
    source path (``triple1`` holds the start entity, the last ``tripleN`` the target).

    The source path, when the row has one, is given in the oracle's form
    (``subject``/``property``/``object`` ids, with labels): generated queries carry it as
    ``source_path`` records, published rows as ``triple1``… id lists with
    ``triple1_labels``… (their ``source_path`` field holds labels only).
    """
    extra = row.extra
    triples = [extra.get(f"triple{i}") for i in range(1, 6)]
    numbered = [
        (t, extra.get(f"triple{i}_labels"))
        for i, t in enumerate(triples, start=1)
        if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)
    ]
    source: list[dict[str, Any]] | None = None
    generated = extra.get("source_path")
    if (
        isinstance(generated, list)
        and generated
        and all(
            isinstance(t, dict) and {"subject", "property", "object"} <= t.keys() for t in generated
        )
    ):
        source = generated
    elif numbered:
        source = []
        for ids, labels in numbered:
            record = {"subject": ids[0], "property": ids[1], "object": ids[2]}
            if isinstance(labels, list) and len(labels) == 3:
                record.update(
                    subject_label=labels[0], property_label=labels[1], object_label=labels[2]
                )
            source.append(record)
    if all(extra.get(k) for k in ("entity_a_id", "rel_b_id", "entity_b_id")):
        out = {
            k: extra[k]
            for k in ("entity_a_id", "rel_b_id", "entity_b_id", "query_id")
            if k in extra
        }
    elif numbered:
        out = {
            "entity_a_id": numbered[0][0][0],
            "rel_b_id": numbered[-1][0][1],
            "entity_b_id": numbered[-1][0][2],
        }
    else:
        return None
    out.setdefault("query_id", row.query_key)
    if source is not None:
        out["source_path"] = source
    return out


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
    max_paths: int = MAX_PATHS_PER_ANSWER
    unknown: UnknownReading = "strict"
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

    def _published_stored(self, row: AnswerRow, i: int, n_triples: int):
        """In published mode with the stored judge, the stored lists of path ``i`` when
        their length differs from the path's (else ``None``: the aligned judgments are
        used). The published code averages the factuality judgments it has and takes σ
        from the stored list (SPEC §3.6 quirk e)."""
        if self.mode != "published" or not isinstance(self.judge, StoredJudge):
            return None
        sigmas, facts = self.judge.stored_lists(row, i)
        if len(sigmas) == n_triples and len(facts) == n_triples:
            return None
        return sigmas, facts

    def score(self, row: AnswerRow) -> ScoreResult:
        parsed = parse_answer(row.answer)
        issues = list(getattr(row, "issues", ()))
        paths = parsed.paths
        if len(paths) > self.max_paths:
            issues.append(
                f"the answer has {len(paths):,} paths; only the first {self.max_paths:,} "
                "were scored (--max-paths)"
            )
            paths = paths[: self.max_paths]
        path_records: list[dict[str, Any]] = []
        # per reading of unknown triples: kept path indices, their qualities, texts
        kept: dict[str, list[int]] = {"strict": [], "lenient": []}
        quality_of: dict[str, dict[int, float]] = {"strict": {}, "lenient": {}}
        texts: list[str | None] = []
        kept_grounded: list[list[list[str]] | None] = []
        status_counts: dict[str, int] = {}
        error_counts = {"unparsed": 0, "failed": 0}
        n_triples = n_decided = 0
        for i, path in enumerate(paths):
            validity = self._validity(row, path.triples)
            judgments = self.judge.judge(row, i, path.triples) if path.triples else []
            sigmas = [j.specificity for j in judgments]
            factual_flags = [j.factual for j in judgments]
            for j in judgments:
                status_counts[j.status] = status_counts.get(j.status, 0) + 1
            for kind, n in judge_errors(judgments).items():
                error_counts[kind] += n
            n_triples += len(judgments)
            n_decided += sum(1 for f in factual_flags if f is not None)
            stored = self._published_stored(row, i, len(path.triples))
            readings = {}
            for reading in ("strict", "lenient"):
                fraction = _factual_fraction(factual_flags, reading)  # type: ignore[arg-type]
                factual = bool(factual_flags) and fraction >= self.factuality_threshold
                strength = _strength(sigmas, reading)  # type: ignore[arg-type]
                if stored is not None:  # SPEC §3.6 quirk e: average the judgments stored
                    stored_sigmas, stored_facts = stored
                    facts = [float(f) for f in stored_facts if f is not None]
                    fraction = sum(facts) / len(facts) if facts else 0.0
                    factual = bool(facts) and fraction >= self.factuality_threshold
                    sal = [int(x) for x in stored_sigmas if x is not None]
                    strength = path_strength(sal) if len(sal) == len(stored_sigmas) else None
                quality = float(strength) if factual and strength is not None else 0.0
                readings[reading] = (fraction, factual, strength, quality)
                if validity.valid and factual:
                    kept[reading].append(i)
                    quality_of[reading][i] = quality
            fraction, factual, strength, quality = readings[self.unknown]
            text = path_string(path.triples) if validity.valid else None
            texts.append(text)
            if validity.valid and factual:
                verified = all(j.status == "verified" for j in judgments)
                kept_grounded.append(
                    [j.evidence["ids"] for j in judgments] if verified and judgments else None
                )
            path_records.append(
                {
                    "model": row.model,
                    "index": row.index,
                    "query_key": row.query_key,
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
                    "kept": validity.valid and factual,
                    "kept_strict": readings["strict"][1] and validity.valid,
                    "kept_lenient": readings["lenient"][1] and validity.valid,
                }
            )
        # embed every path either reading keeps (the lenient set holds the strict one)
        union = sorted(set(kept["strict"]) | set(kept["lenient"]))
        vectors = self.embedder.encode([texts[i] for i in union]) if union else np.zeros((0, 1))
        position = {i: n for n, i in enumerate(union)}
        results: dict[str, dict[str, Any]] = {}
        for reading in ("strict", "lenient"):
            idx = [position[i] for i in kept[reading]]
            quality = [quality_of[reading][i] for i in kept[reading]]
            sub = vectors[idx] if idx else np.zeros((0, vectors.shape[1] if union else 1))
            stats = path_set_distances(quality, sub, self.mode)
            order, mins = stats.order, stats.min_distances
            results[reading] = {
                "utility": utilities_from_order(quality, order, mins, REPORTED_GAMMAS, self.mode),
                "curve": utilities_from_order(quality, order, mins, CURVE_GAMMAS, self.mode),
                "quality": quality,
                "stats": stats,
            }
        chosen = results[self.unknown]
        stats = chosen["stats"]
        query = {
            "index": row.index,
            "query_key": row.query_key,
            "model": row.model,
            "query": row.query,
            "entity_a": row.entity_a,
            "entity_b": row.entity_b,
            "rel_b": row.rel_b,
            "mode": self.mode,
            "judge": self.judge.name,
            "unknown": self.unknown,
            "n_paths": len(paths),
            "n_valid": sum(1 for p in path_records if p["valid"]),
            "n_kept": len(kept[self.unknown]),
            "n_kept_strict": len(kept["strict"]),
            "n_kept_lenient": len(kept["lenient"]),
            "parse_failures": parsed.failures,
            "repairs": parsed.repairs,
            "utility": {str(g): u for g, u in zip(REPORTED_GAMMAS, chosen["utility"])},
            "utility_strict": {
                str(g): u for g, u in zip(REPORTED_GAMMAS, results["strict"]["utility"])
            },
            "utility_lenient": {
                str(g): u for g, u in zip(REPORTED_GAMMAS, results["lenient"]["utility"])
            },
            "utility_curve": {f"{g:.1f}": u for g, u in zip(CURVE_GAMMAS, chosen["curve"])},
            "max_quality": max(chosen["quality"], default=0.0),
            "mean_pairwise_distance": _finite(stats.mean_distance),
            "mean_pairwise_raw_distance": _finite(stats.mean_raw_distance),
            "triple_status": dict(sorted(status_counts.items())),
            "judge_errors": error_counts,
            "n_triples": n_triples,
            "decided_share": n_decided / n_triples if n_triples else None,
            "source": row.source,
            "issues": issues,
        }
        if self.ceiling is not None:
            ids = query_ids(row)
            query["ceiling"] = (
                self.ceiling(ids, query["utility"], kept_grounded) if ids is not None else None
            )
        return ScoreResult(path_records, query)


UnknownReading = Literal["strict", "lenient"]


def _factual_fraction(flags: Sequence[float | None], reading: UnknownReading) -> float:
    """Share of a path's triples counted factual; an unknown (``None``) counts as not
    factual under ``strict`` and as factual under ``lenient`` (SPEC §3.4)."""
    if not flags:
        return 0.0
    unknown_counts = reading == "lenient"
    good = sum(1 for f in flags if (f is None and unknown_counts) or (f is not None and f >= 1.0))
    return good / len(flags)


def _strength(sigmas: Sequence[int | None], reading: UnknownReading) -> float | None:
    """Path strength under unknown σ: the minimum over the triples that have a σ (all but
    the final one, SPEC §3.4). Under ``strict`` a path with an unknown σ among those has no
    strength (quality 0); under ``lenient`` the known ones decide, and a path with none
    known has no strength."""
    if not sigmas:
        return path_strength(sigmas)
    considered = list(sigmas[:-1]) if len(sigmas) > 1 else list(sigmas)
    if reading == "strict" or all(s is not None for s in considered):
        return None if any(s is None for s in considered) else path_strength(sigmas)
    known = [s for s in considered if s is not None]
    return float(min(known)) if known else None


_SCALE = 1074  # 2**-1074 is the smallest float: every float is an integer multiple of it


class _ExactMoments:
    """Running count, sum and sum of squares kept exactly (integers scaled by 2**1074), so
    mean and sd equal :func:`statistics.fmean` / :func:`statistics.stdev` over the same
    values whatever their order, without holding the values."""

    __slots__ = ("n", "s1", "s2")

    def __init__(self) -> None:
        self.n = 0
        self.s1 = 0
        self.s2 = 0

    def add(self, value: Any) -> None:
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return
        num, den = value.as_integer_ratio()
        scaled = num * ((1 << _SCALE) // den)
        self.n += 1
        self.s1 += scaled
        self.s2 += scaled * scaled

    def mean_sd(self) -> tuple[float | None, float | None]:
        if self.n == 0:
            return None, None
        mean = float(Fraction(self.s1, 1 << _SCALE)) / self.n
        if self.n == 1:
            return mean, 0.0
        # sum of squared deviations, exactly: s2 - s1**2 / n (in units of 2**-2148)
        ss = Fraction(self.s2 * self.n - self.s1 * self.s1, self.n << (2 * _SCALE))
        var = ss / (self.n - 1)
        root = getattr(statistics, "_float_sqrt_of_frac", None)  # correctly rounded, as stdev
        sd = root(var.numerator, var.denominator) if root else math.sqrt(float(var))
        return mean, sd


_SUMMARY_COLUMNS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "s_0.7": lambda q: q["utility"]["0.7"],
    "s_0.9": lambda q: q["utility"]["0.9"],
    "max_quality": lambda q: q["max_quality"],
    "mean_pairwise_distance": lambda q: q["mean_pairwise_distance"],
    "mean_pairwise_raw_distance": lambda q: q["mean_pairwise_raw_distance"],
    "n_kept": lambda q: q["n_kept"],
    "n_paths": lambda q: q["n_paths"],
    "s_0.7_strict": lambda q: q.get("utility_strict", q["utility"])["0.7"],
    "s_0.9_strict": lambda q: q.get("utility_strict", q["utility"])["0.9"],
    "s_0.7_lenient": lambda q: q.get("utility_lenient", q["utility"])["0.7"],
    "s_0.9_lenient": lambda q: q.get("utility_lenient", q["utility"])["0.9"],
    "decided_share": lambda q: q.get("decided_share"),
}


_CEILING_COLUMNS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "ceiling_fraction_0.7": lambda c: (c.get("fraction") or {}).get("0.7"),
    "ceiling_fraction_0.9": lambda c: (c.get("fraction") or {}).get("0.9"),
    "graph_path_recall": lambda c: c.get("graph_path_recall"),
}


def summarize(queries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-model table like the published Table 1: mean (sd) over queries.

    Also the totals of triples whose LLM judge reply could not be read
    (``judge_unparsed``) or whose request failed (``judge_failed``), and, when the queries
    carry the graph's ceiling (``--ceiling``), the mean (sd) of the ceiling fraction at
    γ = 0.7 and 0.9 and of graph path recall (over the queries where they are defined).

    ``queries`` may be any iterable (e.g. :func:`creagraph.core.io.iter_jsonl` over a
    ``queries.jsonl``): it is consumed once, keeping only running sums per model, and the
    result does not depend on the order of the queries.

    Examples
    --------
    >>> q = {"model": "m", "utility": {"0.7": 0.5, "0.9": 0.25}, "max_quality": 3.0,
    ...      "mean_pairwise_distance": None, "mean_pairwise_raw_distance": None,
    ...      "n_kept": 2, "n_paths": 3}
    >>> row = summarize([q, q])[0]
    >>> row["n_queries"], row["s_0.7_mean"], row["s_0.7_sd"], row["mean_pairwise_distance_mean"]
    (2, 0.5, 0.0, None)
    """
    by_model: dict[str, tuple[list[int], dict[str, _ExactMoments]]] = {}
    has_ceiling = False
    for q in queries:
        count, moments = by_model.setdefault(
            q["model"],
            (
                [0, 0, 0],
                {name: _ExactMoments() for name in (*_SUMMARY_COLUMNS, *_CEILING_COLUMNS)},
            ),
        )
        count[0] += 1
        errors = q.get("judge_errors") or {}
        count[1] += int(errors.get("unparsed", 0))
        count[2] += int(errors.get("failed", 0))
        for name, get in _SUMMARY_COLUMNS.items():
            moments[name].add(get(q))
        if q.get("ceiling"):
            has_ceiling = True
            for name, get in _CEILING_COLUMNS.items():
                moments[name].add(get(q["ceiling"]))
    table = []
    for model in sorted(by_model):
        count, moments = by_model[model]
        entry: dict[str, Any] = {"model": model, "n_queries": count[0]}
        for name in (*_SUMMARY_COLUMNS, *(_CEILING_COLUMNS if has_ceiling else ())):
            mean, sd = moments[name].mean_sd()
            entry[f"{name}_mean"] = mean
            entry[f"{name}_sd"] = sd
        entry["judge_unparsed"] = count[1]
        entry["judge_failed"] = count[2]
        table.append(entry)
    return table


Runner = Callable[[Iterable[AnswerRow]], Iterator[ScoreResult]]


def _row_key(record: dict[str, Any], where: str = "") -> tuple[str, str]:
    """``(model, query key)`` of an output record (:func:`record_query_key`: its
    ``query_key``, or ``index:<index>`` for output written before that field); ``where``
    names it in the error when one of them is missing (a record edited or written by
    something else)."""
    model, index, key = record.get("model"), record.get("index"), record.get("query_key")
    if not isinstance(model, str) or (index is None and not (isinstance(key, str) and key)):
        field_name = "model" if not isinstance(model, str) else "index"
        raise InputError(
            f"{where}: field {field_name!r} is missing or not valid; this output folder was "
            "not written by creagraph score as it is (move it away to start fresh)"
        )
    return (model, record_query_key(record))


def _keys(path: Path) -> Iterator[tuple[tuple[str, str], dict[str, Any]]]:
    """``(key, record)`` for each record of an output file, errors naming the record."""
    for number, record in enumerate(iter_jsonl(path), start=1):
        yield _row_key(record, f"{path}: record {number}"), record


def _resume(queries_path: Path, paths_path: Path) -> set[tuple[str, str]]:
    """Make the output files consistent after an interruption; return the keys done.

    A query is done when its record is in ``queries.jsonl`` *and* exactly its ``n_paths``
    path records are in ``paths.jsonl`` (the query record is the commit mark, written after
    its paths). Partial last lines are cut; query records without all their paths and path
    records without their query are dropped (files rewritten atomically, only when
    something must go). Memory: one counter per query, never the records.
    """
    truncate_partial_line(queries_path)
    truncate_partial_line(paths_path)
    counts: Counter[tuple[str, str]] = Counter()
    if paths_path.exists():
        for key, _ in _keys(paths_path):
            counts[key] += 1
    done: set[tuple[str, str]] = set()
    drop_queries = False
    if queries_path.exists():
        for key, q in _keys(queries_path):
            if key in done or counts.get(key, 0) != q.get("n_paths"):
                drop_queries = True
            else:
                done.add(key)
    if drop_queries:
        kept: set[tuple[str, str]] = set()

        def fresh_queries() -> Iterator[dict[str, Any]]:
            for q in iter_jsonl(queries_path):
                key = _row_key(q)
                if key in done and key not in kept:
                    kept.add(key)
                    yield q

        write_jsonl(queries_path, fresh_queries())
    if any(key not in done for key in counts):
        write_jsonl(paths_path, (p for p in iter_jsonl(paths_path) if _row_key(p) in done))
    return done


def score_files(
    rows: Iterable[AnswerRow],
    scorer: Scorer | None,
    out_dir: str | os.PathLike[str],
    *,
    run: Runner | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """Score rows into ``out_dir`` (resumable, streaming); returns counts of rows.

    ``rows`` may be any iterable, e.g. :func:`creagraph.scoring.inputs.iter_answers`: it is
    consumed once, and neither rows nor results are kept, so memory does not grow with the
    number of paths (only the set of query keys is kept, for resuming and to reject
    duplicates). ``run`` replaces the local loop (``scorer.score`` per row) with another
    executor: it gets an iterable of rows and must yield their results in input order,
    e.g. :func:`creagraph.scoring.distributed.dask_runner`; outputs are written the same
    way either way. ``total`` (number of input rows, when known) sizes the progress bar;
    by default ``len(rows)`` when ``rows`` has a length.

    Interruption safety: each query's path records are written (and handed to the OS)
    before its query record, which marks it done; a re-run keeps only complete queries,
    skips their rows and scores the rest, so a run killed at any point (SIGKILL included)
    and re-run gives the same records as an uninterrupted run. ``summary.csv`` is computed
    by streaming ``queries.jsonl`` and written atomically.

    Raises
    ------
    InputError
        On a second row with the same (model, query key) pair (see
        :func:`creagraph.scoring.inputs.query_key`), when that row is reached (the rows
        before it are scored and kept).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    queries_path, paths_path = out / "queries.jsonl", out / "paths.jsonl"
    done = _resume(queries_path, paths_path)
    if total is None and isinstance(rows, Sized):
        total = len(rows)
    counts = {"scored": 0, "skipped": 0}
    bar = progress_bar(total=total, desc="score", unit="query")
    seen: set[tuple[str, str]] = set()

    def todo() -> Iterator[AnswerRow]:
        for r in rows:
            key = r.key
            if key in seen:  # checked before resuming: an error on every run, not only the first
                raise InputError(
                    f"{r.source}: row {r.line}: duplicate query {r.query_key!r} "
                    f"for model {r.model!r}"
                )
            seen.add(key)
            if key in done:
                counts["skipped"] += 1
                bar.update(1)
                continue
            yield r

    try:
        with JsonlAppender(paths_path) as paths_out, JsonlAppender(queries_path) as queries_out:
            results = run(todo()) if run is not None else (scorer.score(r) for r in todo())
            for result in results:
                for record in result.paths:
                    paths_out.write(record, flush=False)
                paths_out.flush()  # the paths reach the OS before their commit mark
                queries_out.write(result.query)
                counts["scored"] += 1
                bar.update(1)
    finally:
        bar.close()
    n_queries = 0

    def stream_queries() -> Iterator[dict[str, Any]]:
        nonlocal n_queries
        for q in iter_jsonl(queries_path):
            n_queries += 1
            yield q

    write_records(out / "summary.csv", summarize(stream_queries()))
    with atomic_write(out / "README.txt") as handle:
        handle.write(
            "paths.jsonl: one record per parsed path; queries.jsonl: one per (model, query);\n"
            "summary.csv: per-model mean/sd over queries (see creagraph.scoring.pipeline).\n"
        )
    return {"scored": counts["scored"], "skipped": counts["skipped"], "queries": n_queries}
