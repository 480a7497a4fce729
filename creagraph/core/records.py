"""The records CREATE scoring and the query generator's oracle write, typed (SPEC §3.2–3.8).

One dataclass per record kind, each with the one ``to_dict`` that gives its JSON form and
the one ``from_dict`` that reads it back; every writer and reader of these files goes
through them, so each field name is spelled once, here:

- :class:`PathRecord`: one line of ``paths.jsonl`` (``creagraph score``), one per parsed path;
- :class:`QueryRecord`: one line of ``queries.jsonl``, one per (model, query);
- :class:`SummaryRow`: one row of ``summary.csv``, one per model;
- :class:`OracleRecord`: one line of ``creagraph queries paths`` output (the graph's ceiling);
- :class:`QueryIds`: the ids a query is asked about, and :func:`parse_query_ids`, the one
  parser of them (generated-query fields or the published ``triple1``… source path), with
  :func:`make_query_id`, the id a generated query gets;
- :class:`ReadingResult`: one path set's utilities under one reading of unknown triples.

The JSON form is unchanged from the dict literals these classes replace (same keys, same
order, same values), and the readers accept files written by earlier versions: fields
added later (``query_key``, ``utility_strict``/``_lenient``, ``decided_share``,
``judge_errors``, …) may be missing and read as ``None``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from creagraph.core.io import InputError

if TYPE_CHECKING:
    from creagraph.core.metrics import PathSetDistances

__all__ = [
    "Reading",
    "READINGS",
    "ABSENT",
    "PathRecord",
    "QueryRecord",
    "QueryLike",
    "SummaryRow",
    "OracleRecord",
    "QueryIds",
    "ReadingResult",
    "QUERY_ID_FIELDS",
    "parse_query_ids",
    "require_query_ids",
    "make_query_id",
]

#: How a triple the judge leaves unknown is read (SPEC §3.4): ``strict`` counts it as not
#: factual, ``lenient`` as factual (the values of
#: :class:`creagraph.scoring.config.UnknownReading`).
Reading = Literal["strict", "lenient"]
#: The readings, in the order they are computed.
READINGS: tuple[Reading, ...] = ("strict", "lenient")


class _Absent(Enum):
    """A field left out of a record's JSON form (not the same as ``null``)."""

    ABSENT = "absent"


#: The value of an optional field a record does not carry (left out of its JSON form).
ABSENT = _Absent.ABSENT

_R = TypeVar("_R", bound="_Record")


class _Record:
    """``to_dict``/``from_dict`` for a dataclass record: the fields in declaration order,
    :data:`ABSENT` ones left out; reading takes the fields it knows (others are ignored)
    and needs those in ``REQUIRED``."""

    REQUIRED: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON form."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is not ABSENT:
                out[f.name] = value
        return out

    @classmethod
    def from_dict(
        cls: type[_R],
        record: Mapping[str, Any],
        where: str = "record",
        *,
        required: Sequence[str] | None = None,
    ) -> _R:
        """Read a record's JSON form; ``where`` names it in the error when a required
        field (``REQUIRED``, or ``required`` when given) is missing."""
        for name in cls.REQUIRED if required is None else required:
            if name not in record:
                raise InputError(f"{where}: field {name!r} is missing")
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in record.items() if k in names})


@dataclass(frozen=True, kw_only=True)
class PathRecord(_Record):
    """One parsed path of one answer, scored (a line of ``paths.jsonl``; SPEC §3.3–3.4).

    ``strength``, ``factual_fraction``, ``factual`` and ``quality`` are under the reading
    of unknown triples the run chose (``--unknown``); ``kept_strict``/``kept_lenient``
    whether each reading keeps the path.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("model",)

    model: str
    index: Any = None
    query_key: str | None = None
    path_index: int | None = None
    key: str | None = None
    triples: list[list[str]] = field(default_factory=list)
    parse_issues: list[str] = field(default_factory=list)
    valid: bool = False
    validity_reasons: list[str] = field(default_factory=list)
    path_string: str | None = None
    judgments: list[dict[str, Any]] = field(default_factory=list)
    specificities: list[int | None] = field(default_factory=list)
    strength: float | None = None
    factual_fraction: float | None = None
    factual: bool | None = None
    quality: float | None = None
    kept: bool | None = None
    kept_strict: bool | None = None
    kept_lenient: bool | None = None


@dataclass(frozen=True, kw_only=True)
class QueryRecord(_Record):
    """One model's answer to one query, scored (a line of ``queries.jsonl``; SPEC §3.4–3.6).

    ``utility``, ``utility_curve``, ``n_kept``, ``max_quality`` and the distances are under
    the reading of unknown triples the run chose (``unknown``); ``utility_strict`` and
    ``utility_lenient`` under each. The per-γ fields are keyed by
    :func:`creagraph.scoring.pipeline.gamma_key`. ``query_set``/``query_set_size`` are there
    when the answer names its query set, ``ceiling`` when the run had a ceiling hook
    (``--ceiling``; ``None`` for a query without ids).
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("model", "utility")

    index: Any = None
    query_key: str | None = None
    model: str
    query: str | None = None
    entity_a: str | None = None
    entity_b: str | None = None
    rel_b: str | None = None
    mode: str | None = None
    judge: str | None = None
    unknown: str | None = None
    creagraph_version: str | None = None
    n_paths: int | None = None
    n_valid: int | None = None
    n_kept: int | None = None
    n_kept_strict: int | None = None
    n_kept_lenient: int | None = None
    parse_failures: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    utility: dict[str, float] = field(default_factory=dict)
    utility_strict: dict[str, float] | None = None
    utility_lenient: dict[str, float] | None = None
    utility_curve: dict[str, float] | None = None
    max_quality: float | None = None
    mean_pairwise_distance: float | None = None
    mean_pairwise_raw_distance: float | None = None
    triple_status: dict[str, int] | None = None
    judge_errors: dict[str, int] | None = None
    n_triples: int | None = None
    decided_share: float | None = None
    source: str | None = None
    issues: list[str] = field(default_factory=list)
    query_set: str | None | _Absent = ABSENT
    query_set_size: int | None | _Absent = ABSENT
    ceiling: dict[str, Any] | None | _Absent = ABSENT

    @classmethod
    def of(cls, value: QueryRecord | Mapping[str, Any]) -> QueryRecord:
        """``value`` when it is a record, else its JSON form read with only ``model``
        required (the report's tables take partial records too)."""
        if isinstance(value, QueryRecord):
            return value
        return cls.from_dict(value, required=("model",))

    def utility_under(self, reading: Reading) -> dict[str, float]:
        """``utility_strict`` or ``utility_lenient``; ``utility`` for a record written
        before both readings were reported."""
        value = self.utility_strict if reading == "strict" else self.utility_lenient
        return self.utility if value is None else value


#: A query record or its JSON form (what the report's tables take).
QueryLike = QueryRecord | Mapping[str, Any]

#: The summary columns averaged per model (mean and sd over queries), in ``summary.csv``
#: order, and the ceiling columns added with ``--ceiling``.
SUMMARY_COLUMNS = (
    "s_0.7", "s_0.9", "max_quality", "mean_pairwise_distance", "mean_pairwise_raw_distance",
    "n_kept", "n_paths", "s_0.7_strict", "s_0.9_strict", "s_0.7_lenient", "s_0.9_lenient",
    "decided_share",
)
CEILING_COLUMNS = ("ceiling_fraction_0.7", "ceiling_fraction_0.9", "graph_path_recall")
#: What a comparison of models must share (issue 24), the summary's identity columns.
SUMMARY_IDENTITY = ("judge", "mode", "creagraph_version")


@dataclass(frozen=True)
class SummaryRow:
    """One model's row of ``summary.csv`` (like the published Table 1).

    ``columns`` maps each averaged column (:data:`SUMMARY_COLUMNS`, then
    :data:`CEILING_COLUMNS` when the run had the ceiling) to its (mean, sd) over queries;
    ``identity`` the judge, mode and version the queries were scored with (several joined
    by ``+``); ``query_set`` the set the model answered (:mod:`creagraph.core.manifest`).
    """

    model: str
    n_queries: int
    columns: dict[str, tuple[float | None, float | None]]
    judge_unparsed: int = 0
    judge_failed: int = 0
    identity: dict[str, str] = field(default_factory=dict)
    query_set: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The row as ``summary.csv`` holds it."""
        entry: dict[str, Any] = {"model": self.model, "n_queries": self.n_queries}
        for name, (mean, sd) in self.columns.items():
            entry[f"{name}_mean"], entry[f"{name}_sd"] = mean, sd
        entry["judge_unparsed"] = self.judge_unparsed
        entry["judge_failed"] = self.judge_failed
        entry.update(self.identity)
        entry.update(self.query_set)
        return entry

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], where: str = "summary row") -> SummaryRow:
        """Read a row of ``summary.csv`` (values as text, empty for none) or of
        :func:`creagraph.scoring.pipeline.summarize`."""
        if not row.get("model"):
            raise InputError(f"{where}: field 'model' is empty")
        columns = {
            name: (_number(row, f"{name}_mean", where), _number(row, f"{name}_sd", where))
            for name in (*SUMMARY_COLUMNS, *CEILING_COLUMNS)
            if f"{name}_mean" in row
        }
        query_set = {k: row[k] for k in ("query_set", "query_set_size") if k in row}
        return cls(
            model=str(row["model"]),
            n_queries=int(_number(row, "n_queries", where) or 0),
            columns=columns,
            judge_unparsed=int(_number(row, "judge_unparsed", where) or 0),
            judge_failed=int(_number(row, "judge_failed", where) or 0),
            identity={k: str(row[k]) for k in SUMMARY_IDENTITY if k in row},
            query_set=query_set,
        )

    def mean(self, name: str) -> float | None:
        """The mean of column ``name`` (``None`` when empty or not in the row)."""
        return self.columns.get(name, (None, None))[0]


def _number(row: Mapping[str, Any], key: str, where: str) -> float | None:
    """A numeric field of a summary row (text in a CSV), ``None`` when empty."""
    value = row.get(key)
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: field {key!r} is not a number: {value!r}") from None


@dataclass(frozen=True, kw_only=True)
class OracleRecord(_Record):
    """The graph's answer paths and ceiling utility of one query (a line of
    ``creagraph queries paths`` output; SPEC §3.8). ``ceiling`` is keyed by γ written
    ``f"{γ:g}"``; ``paths`` (the best paths, each an oracle path's plain form) is left out
    when the run lists none."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("n_strong", "ceiling", "truncated", "source_path_found")

    query_id: str | None = None
    entity_a_id: str | None = None
    rel_b_id: str | None = None
    entity_b_id: str | None = None
    k: int | None = None
    n_paths: int | None = None
    n_strong: int
    strong_threshold: float | None = None
    ceiling: dict[str, float]
    mode: str | None = None
    holders: int | None = None
    expansions: int | None = None
    truncated: bool
    scored: int | None = None
    source_path_found: bool | None
    paths: list[dict[str, Any]] | _Absent = ABSENT


@dataclass(frozen=True)
class ReadingResult:
    """One kept path set under one reading of unknown triples (SPEC §3.4–3.6): its
    utilities at the reported γ and along the curve, its paths' qualities and its greedy
    order and distance statistics (a :class:`creagraph.core.metrics.PathSetDistances`)."""

    utility: list[float]
    curve: list[float]
    quality: list[float]
    stats: PathSetDistances


#: The fields that name a query's start entity, target relation and target entity.
QUERY_ID_FIELDS = ("entity_a_id", "rel_b_id", "entity_b_id")


@dataclass(frozen=True)
class QueryIds:
    """The ids a CREATE query is asked about (SPEC §3.1): start entity ``a``, target
    relation ``r_b``, target entity ``b``, its id and, when known, its source path in the
    oracle's form (``subject``/``property``/``object`` ids, with labels when known)."""

    entity_a_id: str
    rel_b_id: str
    entity_b_id: str
    query_id: Any = None
    source_path: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ids as a query record holds them (``source_path`` only when known)."""
        out: dict[str, Any] = {
            "entity_a_id": self.entity_a_id,
            "rel_b_id": self.rel_b_id,
            "entity_b_id": self.entity_b_id,
            "query_id": self.query_id,
        }
        if self.source_path is not None:
            out["source_path"] = self.source_path
        return out


def make_query_id(start: str, rel: str, target: str) -> str:
    """Stable id of a query: a hash of (start entity, target relation, target entity).

    The same question gets the same id whatever the seed or run.

    Examples
    --------
    >>> make_query_id("Q1", "P106", "Q2") == make_query_id("Q1", "P106", "Q2")
    True
    >>> make_query_id("Q1", "P106", "Q2")
    'cq-54fbc9256673'
    """
    digest = hashlib.sha1(f"{start}|{rel}|{target}".encode()).hexdigest()
    return f"cq-{digest[:12]}"


def _numbered_triples(fields: Mapping[str, Any]) -> list[tuple[list[str], Any]]:
    """The published source path: ``triple1``… id lists (each three strings) with their
    ``tripleN_labels``."""
    triples = [fields.get(f"triple{i}") for i in range(1, 6)]
    return [
        (t, fields.get(f"triple{i}_labels"))
        for i, t in enumerate(triples, start=1)
        if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)
    ]


def _source_path(
    fields: Mapping[str, Any], numbered: Sequence[tuple[list[str], Any]]
) -> list[dict[str, Any]] | None:
    """The source path in the oracle's form: generated queries' ``source_path`` records,
    else the published ``triple1``… id lists with ``triple1_labels``… (a published row's
    ``source_path`` field holds labels only)."""
    generated = fields.get("source_path")
    if (
        isinstance(generated, list)
        and generated
        and all(
            isinstance(t, dict) and {"subject", "property", "object"} <= t.keys() for t in generated
        )
    ):
        return generated
    if not numbered:
        return None
    source = []
    for ids, labels in numbered:
        record = {"subject": ids[0], "property": ids[1], "object": ids[2]}
        if isinstance(labels, list) and len(labels) == 3:
            record.update(subject_label=labels[0], property_label=labels[1], object_label=labels[2])
        source.append(record)
    return source


def parse_query_ids(fields: Mapping[str, Any], default_id: Any = None) -> QueryIds | None:
    """The query's start/relation/target ids, from generated-query fields
    (``entity_a_id``/``rel_b_id``/``entity_b_id``, ``query_id``) or the published source
    path (``triple1`` holds the start entity, the last ``tripleN`` the relation and the
    target); ``None`` when the fields have neither. ``default_id`` is the query id when the
    fields name none. The one parser of query ids: scoring's ceiling and the oracle use it.

    Examples
    --------
    >>> parse_query_ids({"entity_a_id": "Q1", "rel_b_id": "P2", "entity_b_id": "Q3"}, "k")
    QueryIds(entity_a_id='Q1', rel_b_id='P2', entity_b_id='Q3', query_id='k', source_path=None)
    >>> ids = parse_query_ids({"triple1": ["Q1", "P5", "Q9"], "triple2": ["Q9", "P2", "Q3"]})
    >>> ids.entity_a_id, ids.rel_b_id, ids.entity_b_id, len(ids.source_path)
    ('Q1', 'P2', 'Q3', 2)
    >>> parse_query_ids({"query": "text only"}) is None
    True
    """
    numbered = _numbered_triples(fields)
    if all(fields.get(k) for k in QUERY_ID_FIELDS):
        a, rel, b = (fields[k] for k in QUERY_ID_FIELDS)
        query_id = fields.get("query_id", default_id)
    elif numbered:
        a, rel, b = numbered[0][0][0], numbered[-1][0][1], numbered[-1][0][2]
        query_id = default_id
    else:
        return None
    return QueryIds(a, rel, b, query_id, _source_path(fields, numbered))


def require_query_ids(fields: Mapping[str, Any]) -> QueryIds:
    """The ids of a query the oracle runs on: a generated query's ``entity_a_id``,
    ``rel_b_id`` and ``entity_b_id`` (all three needed), read by :func:`parse_query_ids`
    and each checked (a QID, a PID, a QID).

    Raises
    ------
    InputError
        Naming the query and the missing or malformed field.
    """
    from creagraph.core.graph import check_pid, check_qid

    query_id = fields.get("query_id")
    where = f"query {query_id!r}" if query_id else "query record"
    for name in QUERY_ID_FIELDS:
        if not fields.get(name):
            raise InputError(
                f"{where}: field {name!r} is missing "
                "(generate queries with `creagraph queries generate`)"
            )
    ids = parse_query_ids(fields, query_id)
    assert ids is not None  # the three fields are there
    checked = []
    for name, check in zip(QUERY_ID_FIELDS, (check_qid, check_pid, check_qid)):
        try:
            checked.append(check(str(getattr(ids, name))))
        except ValueError as exc:
            raise InputError(f"{where}: field {name!r}: {exc}") from exc
    return QueryIds(checked[0], checked[1], checked[2], ids.query_id, ids.source_path)
