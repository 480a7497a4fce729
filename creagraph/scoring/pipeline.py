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
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from creagraph import __version__ as _VERSION
from creagraph.core.io import (
    InputError,
    JsonlAppender,
    atomic_write,
    iter_jsonl,
    truncate_partial_line,
    write_jsonl,
    write_records,
)
from creagraph.core.manifest import QuerySetTally, declared_query_set
from creagraph.core.metrics import (
    UtilityMode,
    path_strength,
    path_string,
    quality_from_strength,
    set_utilities,
)
from creagraph.core.progress import progress_bar
from creagraph.core.records import (
    ABSENT,
    CEILING_COLUMNS,
    READINGS,
    SUMMARY_COLUMNS,
    SUMMARY_IDENTITY,
    PathRecord,
    QueryRecord,
    Reading,
    ReadingResult,
    SummaryRow,
    parse_query_ids,
)
from creagraph.scoring.inputs import AnswerRow, record_query_key
from creagraph.scoring.judges import Judge, StoredJudge, TripleJudgment, judge_errors
from creagraph.scoring.parse import ParsedPath, ParseResult
from creagraph.scoring.validity import Validity, check_validity, check_validity_published

if TYPE_CHECKING:
    from creagraph.core.embeddings import Embedder
    from creagraph.core.graph import KnowledgeGraph
    from creagraph.core.relations import RelationLinker
    from creagraph.scoring.linking import EntityLinker

__all__ = [
    "Scorer",
    "ScoreResult",
    "score_files",
    "summarize",
    "REPORTED_GAMMAS",
    "CURVE_GAMMAS",
    "gamma_key",
]

REPORTED_GAMMAS = (0.7, 0.9)
#: Paths scored per answer by default (``creagraph score --max-paths``); the rest of an
#: answer's paths are dropped and the query record says so. Scoring memory is O(n·d) in
#: the number of paths, time O(n²·d) for the distances.
MAX_PATHS_PER_ANSWER = 20_000
CURVE_GAMMAS = tuple(round(0.1 * i, 1) for i in range(11))


def query_ids(row: AnswerRow) -> dict[str, Any] | None:
    """The query's start/relation/target ids and source path in the oracle's form
    (:func:`creagraph.core.records.parse_query_ids` of the row's fields; its query id
    defaults to the row's query key), or ``None`` when the row has none."""
    ids = parse_query_ids(row.extra, row.query_key)
    return None if ids is None else ids.to_dict()


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def gamma_key(gamma: float) -> str:
    """The key of patience ``γ`` in a scored record's per-γ fields (``utility``,
    ``utility_strict``/``_lenient``, ``utility_curve``, the ceiling's ``utility`` and
    ``fraction``): the shortest text that reads back as the same float.

    Every γ of :data:`REPORTED_GAMMAS` and :data:`CURVE_GAMMAS` has one decimal, so its key
    is also ``f"{γ:.1f}"`` (the curve's keys were written that way before).

    Examples
    --------
    >>> [gamma_key(g) for g in REPORTED_GAMMAS]
    ['0.7', '0.9']
    >>> gamma_key(CURVE_GAMMAS[0]), gamma_key(CURVE_GAMMAS[3]), gamma_key(1)
    ('0.0', '0.3', '1.0')
    """
    return repr(float(gamma))


def _by_gamma(gammas: Sequence[float], values: Sequence[float]) -> dict[str, float]:
    """``{gamma_key(γ): value}`` for parallel sequences of γ and values."""
    return {gamma_key(g): v for g, v in zip(gammas, values)}


@dataclass
class ScoreResult:
    paths: list[dict[str, Any]]
    query: dict[str, Any]


#: The scorer's ceiling hook (:func:`creagraph.scoring.api.ceiling_hook`): the query's ids,
#: its utility per γ key and the grounded ids of its verified kept paths → the ceiling record.
CeilingHook = Callable[[dict[str, Any], dict[str, float], list[Any]], dict[str, Any]]


@dataclass
class _PathReading:
    """One path under one reading of unknown triples: its factual fraction, whether it is
    factual, its strength (``None``: unknown) and its quality."""

    fraction: float
    factual: bool
    strength: float | None
    quality: float


@dataclass
class _AnswerTally:
    """What scoring one answer's paths gathers for its query record."""

    kept: dict[Reading, list[int]] = field(default_factory=lambda: {r: [] for r in READINGS})
    quality_of: dict[Reading, dict[int, float]] = field(
        default_factory=lambda: {r: {} for r in READINGS}
    )
    texts: list[str | None] = field(default_factory=list)
    kept_grounded: list[list[list[str]] | None] = field(default_factory=list)
    status_counts: dict[str, int] = field(default_factory=dict)
    error_counts: dict[str, int] = field(default_factory=lambda: {"unparsed": 0, "failed": 0})
    n_triples: int = 0
    n_decided: int = 0

    def count(self, judgments: Sequence[TripleJudgment]) -> None:
        """Add a path's judgments to the status, error and decided counts."""
        for j in judgments:
            self.status_counts[j.status] = self.status_counts.get(j.status, 0) + 1
        for kind, n in judge_errors(judgments).items():
            self.error_counts[kind] += n
        self.n_triples += len(judgments)
        self.n_decided += sum(1 for j in judgments if j.factual is not None)


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
    kg : KnowledgeGraph, optional
        The graph the entity linker links into (for the aliases of the query's entities).
    ceiling : CeilingHook, optional
        The graph's oracle ceiling of each query (SPEC §3.8).
    max_paths : int
        Paths scored per answer; the rest are dropped with a recorded issue.
    unknown : {"strict", "lenient"}
        Which reading of unknown triples fills ``utility`` (both are reported).
    """

    judge: Judge
    embedder: Embedder
    mode: UtilityMode = "paper"
    factuality_threshold: float = 1.0
    entity_linker: EntityLinker | None = None
    relation_linker: RelationLinker | None = None
    kg: KnowledgeGraph | None = None
    ceiling: CeilingHook | None = None
    max_paths: int = MAX_PATHS_PER_ANSWER
    unknown: Reading = "strict"
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

    def _validity(self, row: AnswerRow, triples: Sequence[Sequence[str]]) -> Validity:
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

    def _published_stored(
        self, row: AnswerRow, i: int, n_triples: int
    ) -> tuple[list[Any], list[Any]] | None:
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

    def _readings(
        self, row: AnswerRow, i: int, n_triples: int, judgments: Sequence[TripleJudgment]
    ) -> dict[Reading, _PathReading]:
        """Path ``i`` under each reading of unknown triples (SPEC §3.4)."""
        sigmas = [j.specificity for j in judgments]
        flags = [j.factual for j in judgments]
        stored = self._published_stored(row, i, n_triples)
        readings: dict[Reading, _PathReading] = {}
        for reading in READINGS:
            if stored is not None:  # SPEC §3.6 quirk e: average the judgments stored
                stored_sigmas, stored_facts = stored
                facts = [float(f) for f in stored_facts if f is not None]
                fraction = sum(facts) / len(facts) if facts else 0.0
                factual = bool(facts) and fraction >= self.factuality_threshold
                sal = [int(x) for x in stored_sigmas if x is not None]
                strength = path_strength(sal) if len(sal) == len(stored_sigmas) else None
            else:
                fraction = _factual_fraction(flags, reading)
                factual = bool(flags) and fraction >= self.factuality_threshold
                strength = _strength(sigmas, reading)
            quality = quality_from_strength(strength, factual)
            readings[reading] = _PathReading(fraction, factual, strength, quality)
        return readings

    def _score_path(
        self, row: AnswerRow, i: int, path: ParsedPath, tally: _AnswerTally
    ) -> PathRecord:
        """Validate, judge and weigh path ``i`` of ``row``: its record, with what the query
        record needs added to ``tally``."""
        validity = self._validity(row, path.triples)
        judgments = self.judge.judge(row, i, path.triples) if path.triples else []
        tally.count(judgments)
        readings = self._readings(row, i, len(path.triples), judgments)
        for reading, r in readings.items():
            if validity.valid and r.factual:
                tally.kept[reading].append(i)
                tally.quality_of[reading][i] = r.quality
        chosen = readings[self.unknown]
        text = path_string(path.triples) if validity.valid else None
        tally.texts.append(text)
        if validity.valid and chosen.factual:
            verified = all(j.status == "verified" for j in judgments)
            tally.kept_grounded.append(
                [j.evidence["ids"] for j in judgments] if verified and judgments else None
            )
        return PathRecord(
            model=row.model,
            index=row.index,
            query_key=row.query_key,
            path_index=i,
            key=path.key,
            triples=path.as_lists(),
            parse_issues=path.issues,
            valid=validity.valid,
            validity_reasons=list(validity.reasons),
            path_string=text,
            judgments=[j.as_dict() for j in judgments],
            specificities=[j.specificity for j in judgments],
            strength=chosen.strength,
            factual_fraction=chosen.fraction,
            factual=chosen.factual,
            quality=chosen.quality,
            kept=validity.valid and chosen.factual,
            kept_strict=readings["strict"].factual and validity.valid,
            kept_lenient=readings["lenient"].factual and validity.valid,
        )

    def _set_utilities(self, tally: _AnswerTally) -> dict[Reading, ReadingResult]:
        """Per reading, the kept set's utilities, curve, qualities and distance statistics
        (:func:`creagraph.core.metrics.set_utilities`); the paths either reading keeps are
        embedded once (the lenient set holds the strict one)."""
        union = sorted(set(tally.kept["strict"]) | set(tally.kept["lenient"]))
        texts = [tally.texts[i] for i in union]
        vectors = self.embedder.encode(texts) if union else np.zeros((0, 1))  # type: ignore[arg-type]
        position = {i: n for n, i in enumerate(union)}
        gammas = (*REPORTED_GAMMAS, *CURVE_GAMMAS)
        results: dict[Reading, ReadingResult] = {}
        for reading in READINGS:
            idx = [position[i] for i in tally.kept[reading]]
            quality = [tally.quality_of[reading][i] for i in tally.kept[reading]]
            sub = vectors[idx] if idx else np.zeros((0, vectors.shape[1] if union else 1))
            values, stats = set_utilities(quality, sub, gammas, self.mode)
            reported = len(REPORTED_GAMMAS)
            results[reading] = ReadingResult(values[:reported], values[reported:], quality, stats)
        return results

    def score(self, row: AnswerRow) -> ScoreResult:
        """Score one answer row: one record per parsed path and one for the query."""
        parsed = row.parsed()  # once per row: prepare_run may have parsed it (issue 31)
        issues = list(getattr(row, "issues", ()))
        paths = parsed.paths
        if len(paths) > self.max_paths:
            issues.append(
                f"the answer has {len(paths):,} paths; only the first {self.max_paths:,} "
                "were scored (--max-paths)"
            )
            paths = paths[: self.max_paths]
        tally = _AnswerTally()
        prefetch = getattr(self.judge, "prefetch", None)
        if prefetch is not None:  # an LLM judge asks all the answer's paths at once
            prefetch(row, [path.triples for path in paths])
        path_records = [self._score_path(row, i, path, tally) for i, path in enumerate(paths)]
        flush = getattr(self.judge, "flush", None)
        if flush is not None:  # the answer's verdicts and links written together (issue 31)
            flush()
        results = self._set_utilities(tally)
        query = self._query_record(row, parsed, path_records, tally, results, issues)
        if self.ceiling is not None:
            ids = query_ids(row)
            query = replace(
                query,
                ceiling=(
                    self.ceiling(ids, query.utility, tally.kept_grounded)
                    if ids is not None
                    else None
                ),
            )
        return ScoreResult([p.to_dict() for p in path_records], query.to_dict())

    def _query_record(
        self,
        row: AnswerRow,
        parsed: ParseResult,
        path_records: list[PathRecord],
        tally: _AnswerTally,
        results: dict[Reading, ReadingResult],
        issues: list[str],
    ) -> QueryRecord:
        """The query record of a scored answer (without its ceiling)."""
        chosen = results[self.unknown]
        stats = chosen.stats
        named = declared_query_set(row.extra)  # --query-set, run create: core/manifest.py
        return QueryRecord(
            index=row.index,
            query_key=row.query_key,
            model=row.model,
            query=row.query,
            entity_a=row.entity_a,
            entity_b=row.entity_b,
            rel_b=row.rel_b,
            mode=self.mode,
            judge=self.judge.name,
            unknown=self.unknown,
            creagraph_version=_VERSION,
            n_paths=len(path_records),
            n_valid=sum(1 for p in path_records if p.valid),
            n_kept=len(tally.kept[self.unknown]),
            n_kept_strict=len(tally.kept["strict"]),
            n_kept_lenient=len(tally.kept["lenient"]),
            parse_failures=parsed.failures,
            repairs=parsed.repairs,
            utility=_by_gamma(REPORTED_GAMMAS, chosen.utility),
            utility_strict=_by_gamma(REPORTED_GAMMAS, results["strict"].utility),
            utility_lenient=_by_gamma(REPORTED_GAMMAS, results["lenient"].utility),
            utility_curve=_by_gamma(CURVE_GAMMAS, chosen.curve),
            max_quality=max(chosen.quality, default=0.0),
            mean_pairwise_distance=_finite(stats.mean_distance),
            mean_pairwise_raw_distance=_finite(stats.mean_raw_distance),
            triple_status=dict(sorted(tally.status_counts.items())),
            judge_errors=tally.error_counts,
            n_triples=tally.n_triples,
            decided_share=tally.n_decided / tally.n_triples if tally.n_triples else None,
            source=row.source,
            issues=issues,
            query_set=ABSENT if named is None else named[0],
            query_set_size=ABSENT if named is None else named[1],
        )


def _factual_fraction(flags: Sequence[float | None], reading: Reading) -> float:
    """Share of a path's triples counted factual; an unknown (``None``) counts as not
    factual under ``strict`` and as factual under ``lenient`` (SPEC §3.4)."""
    if not flags:
        return 0.0
    unknown_counts = reading == "lenient"
    good = sum(1 for f in flags if (f is None and unknown_counts) or (f is not None and f >= 1.0))
    return good / len(flags)


def _strength(sigmas: Sequence[int | None], reading: Reading) -> float | None:
    """Path strength under unknown σ: the minimum over the triples that have a σ (all but
    the final one, SPEC §3.4). Under ``strict`` a path with an unknown σ among those has no
    strength (quality 0); under ``lenient`` the known ones decide, and a path with none
    known has no strength."""
    if not sigmas:
        return path_strength(sigmas)  # type: ignore[arg-type]
    considered = list(sigmas[:-1]) if len(sigmas) > 1 else list(sigmas)
    if reading == "strict" or all(s is not None for s in considered):
        return None if any(s is None for s in considered) else path_strength(sigmas)  # type: ignore[arg-type]
    known = [s for s in considered if s is not None]
    return float(min(known)) if known else None


def _moments(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample sd (0 for one value) of ``values``, ``None`` for none: exact sums
    correctly rounded (:func:`statistics.fmean`, :func:`statistics.stdev`), so the result
    does not depend on the order of the values.

    Examples
    --------
    >>> _moments([1.0, 3.0]), _moments([2.0]), _moments([])
    ((2.0, 1.4142135623730951), (2.0, 0.0), (None, None))
    """
    if not values:
        return None, None
    mean = statistics.fmean(values)
    return mean, statistics.stdev(values) if len(values) > 1 else 0.0


#: How each summary column (:data:`creagraph.core.records.SUMMARY_COLUMNS`) is read from
#: a query record.
_SUMMARY_COLUMNS: dict[str, Callable[[QueryRecord], Any]] = dict(
    zip(
        SUMMARY_COLUMNS,
        (
            lambda q: q.utility["0.7"],
            lambda q: q.utility["0.9"],
            lambda q: q.max_quality,
            lambda q: q.mean_pairwise_distance,
            lambda q: q.mean_pairwise_raw_distance,
            lambda q: q.n_kept,
            lambda q: q.n_paths,
            lambda q: q.utility_under("strict")["0.7"],
            lambda q: q.utility_under("strict")["0.9"],
            lambda q: q.utility_under("lenient")["0.7"],
            lambda q: q.utility_under("lenient")["0.9"],
            lambda q: q.decided_share,
        ),
        strict=True,
    )
)


#: How each ceiling column (:data:`creagraph.core.records.CEILING_COLUMNS`) is read from a
#: query record's ceiling.
_CEILING_COLUMNS: dict[str, Callable[[dict[str, Any]], Any]] = dict(
    zip(
        CEILING_COLUMNS,
        (
            lambda c: (c.get("fraction") or {}).get("0.7"),
            lambda c: (c.get("fraction") or {}).get("0.9"),
            lambda c: c.get("graph_path_recall"),
        ),
        strict=True,
    )
)


def summarize(queries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-model table like the published Table 1: mean (sd) over queries.

    Also the totals of triples whose LLM judge reply could not be read
    (``judge_unparsed``) or whose request failed (``judge_failed``), and, when the queries
    carry the graph's ceiling (``--ceiling``), the mean (sd) of the ceiling fraction at
    γ = 0.7 and 0.9 and of graph path recall (over the queries where they are defined).

    ``queries`` may be any iterable (e.g. :func:`creagraph.core.io.iter_jsonl` over a
    ``queries.jsonl``): it is consumed once, keeping per model only each column's numbers
    (8 bytes per query and column, never the records), and the result does not depend on
    the order of the queries (exact sums, :func:`statistics.fmean` and
    :func:`statistics.stdev`).

    Examples
    --------
    >>> q = {"model": "m", "utility": {"0.7": 0.5, "0.9": 0.25}, "max_quality": 3.0,
    ...      "mean_pairwise_distance": None, "mean_pairwise_raw_distance": None,
    ...      "n_kept": 2, "n_paths": 3}
    >>> row = summarize([q, q])[0]
    >>> row["n_queries"], row["s_0.7_mean"], row["s_0.7_sd"], row["mean_pairwise_distance_mean"]
    (2, 0.5, 0.0, None)
    """
    by_model: dict[str, _ModelColumns] = {}
    query_sets = QuerySetTally()  # what a comparison must share (issue 24): core/manifest.py
    for number, q in enumerate(queries, start=1):
        record = QueryRecord.from_dict(q, f"query record {number}")
        by_model.setdefault(record.model, _ModelColumns()).add(record)
        query_sets.add(q)
    has_ceiling = any(m.has_ceiling for m in by_model.values())
    named = query_sets.resolve()
    return [
        by_model[model].row(model, has_ceiling, named[str(model)]).to_dict()
        for model in sorted(by_model)
    ]


def _number(value: Any) -> float | None:
    """A value a summary column averages: ``None``, NaN and infinities are left out."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return float(value)


@dataclass
class _ModelColumns:
    """One model's summary columns as they are read: each column's values (8 bytes per
    query and column) and the query and judge-error counts."""

    n_queries: int = 0
    identity: dict[str, set[str]] = field(
        default_factory=lambda: {k: set() for k in SUMMARY_IDENTITY}
    )
    judge_unparsed: int = 0
    judge_failed: int = 0
    has_ceiling: bool = False
    values: dict[str, array] = field(
        default_factory=lambda: {n: array("d") for n in (*SUMMARY_COLUMNS, *CEILING_COLUMNS)}
    )

    def add(self, q: QueryRecord) -> None:
        self.n_queries += 1
        for name, seen in self.identity.items():
            seen.add(str(getattr(q, name) or "unknown"))
        errors = q.judge_errors or {}
        self.judge_unparsed += int(errors.get("unparsed", 0))
        self.judge_failed += int(errors.get("failed", 0))
        columns = [(name, get(q)) for name, get in _SUMMARY_COLUMNS.items()]
        ceiling = q.ceiling if q.ceiling is not ABSENT else None
        if ceiling:
            self.has_ceiling = True
            columns += [(name, get(ceiling)) for name, get in _CEILING_COLUMNS.items()]
        for name, value in columns:
            number = _number(value)
            if number is not None:
                self.values[name].append(number)
            elif value is not None and name.startswith("s_"):
                # dropped from the mean while n_queries counts it: a silently wrong mean
                raise InputError(
                    f"query {q.query_key if q.query_key is not None else q.index!r} of model "
                    f"{q.model!r}: utility {name} is {value!r}, not a number (damaged "
                    "vectors or scores); the summary would leave it out of the mean while "
                    "counting the query. Re-score it (creagraph score --fresh)"
                )

    def row(self, model: str, ceiling: bool, query_set: dict[str, Any]) -> SummaryRow:
        """The model's summary row (with the ceiling columns when ``ceiling``)."""
        names = (*SUMMARY_COLUMNS, *(CEILING_COLUMNS if ceiling else ()))
        return SummaryRow(
            model=model,
            n_queries=self.n_queries,
            columns={name: _moments(self.values[name]) for name in names},
            judge_unparsed=self.judge_unparsed,
            judge_failed=self.judge_failed,
            # what a comparison must share (issue 24): judge, mode, query set, version
            identity={name: "+".join(sorted(seen)) for name, seen in self.identity.items()},
            query_set=query_set,
        )


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
    try:
        with JsonlAppender(paths_path) as paths_out, JsonlAppender(queries_path) as queries_out:
            todo = _rows_to_score(rows, done, counts, bar)
            results = run(todo) if run is not None else (scorer.score(r) for r in todo)  # type: ignore[union-attr]
            for result in results:
                for record in result.paths:
                    paths_out.write(record, flush=False)
                paths_out.flush()  # the paths reach the OS before their commit mark
                queries_out.write(result.query)
                counts["scored"] += 1
                bar.update(1)
    finally:
        bar.close()
    n_queries = _write_summary(out, queries_path)
    return {"scored": counts["scored"], "skipped": counts["skipped"], "queries": n_queries}


def _rows_to_score(
    rows: Iterable[AnswerRow], done: set[tuple[str, str]], counts: dict[str, int], bar: Any
) -> Iterator[AnswerRow]:
    """The rows not yet scored (``done`` is skipped, counted in ``counts`` and on ``bar``);
    a second row with the same key is an error when it is reached."""
    seen: set[tuple[str, str]] = set()
    for r in rows:
        key = r.key
        if key in seen:  # checked before resuming: an error on every run, not only the first
            raise InputError(
                f"{r.source}: row {r.line}: duplicate query {r.query_key!r} for model {r.model!r}"
            )
        seen.add(key)
        if key in done:
            counts["skipped"] += 1
            bar.update(1)
            continue
        yield r


def _write_summary(out: Path, queries_path: Path) -> int:
    """Write ``summary.csv`` (streaming ``queries.jsonl``) and ``README.txt``; returns the
    number of query records."""
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
    return n_queries
