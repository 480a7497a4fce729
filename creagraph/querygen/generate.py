"""CREATE query generation over any knowledge-graph backend (SPEC §3.1).

:func:`generate_queries` runs the published Algorithm 1 over the
:class:`creagraph.core.graph.KnowledgeGraph` interface, so the embedded store and a SPARQL
endpoint give the same queries for the same seed:

1. categories (r, c) of each source relation with a compact class
   (:func:`creagraph.querygen.sampling.select_categories`);
2. a pair of distinct members, one endpoint chosen uniformly, and an informative
   outgoing edge of it (:class:`~creagraph.querygen.sampling.PairSampler`,
   :func:`~creagraph.querygen.sampling.sample_expansion`);
3. filters, deduplication and balanced relation strata (:mod:`creagraph.querygen.filters`);
4. a templated question (:mod:`creagraph.querygen.phrasing`) and a JSON record.

Every relation has its own random stream, ``numpy.random.default_rng([seed, pid number])``,
so adding a relation to the catalogue does not change the draws of the others; every
collection iterated is sorted; reruns are byte-identical.

Output record (one JSON object per line; the first four names are the published ones):
``query``, ``entity_a`` (start entity label), ``entity_b`` (target label), ``rel_b``
(target relation label), ``query_id``, ``entity_a_id``, ``entity_b_id``, ``rel_b_id``,
``entity_a_description``, ``source_relation`` (PID of r), ``source_relation_label``,
``category`` (property, entity, labels, side, size), ``class_size``, ``source_path``
(triples in Wikidata's direction with ids and labels), ``bridge`` (the expanded endpoint),
``holder`` (how the query names the target's holder), ``target_holders``
(``|{x : (x, rel_b, entity_b)}|``) and ``seed``.

Examples
--------
>>> from creagraph.kg import EmbeddedKG                                   # doctest: +SKIP
>>> result = generate_queries(EmbeddedKG("store"), n=100, seed=7)          # doctest: +SKIP
>>> result.records[0]["query"]                                             # doctest: +SKIP
'What are different ways of connecting …?'
>>> print("\\n".join(result.report.lines()))                              # doctest: +SKIP
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from creagraph.core.graph import Category, Edge, KnowledgeGraph
from creagraph.core.io import atomic_write, dumps, write_jsonl
from creagraph.core.progress import progress_bar
from creagraph.core.records import make_query_id
from creagraph.querygen.catalogue import (
    CategoryRules,
    HolderType,
    Phrasing,
    SourceRelation,
    TargetPolicy,
    TargetTypes,
    load_blocklist,
    load_category_rules,
    load_demonyms,
    load_holder_types,
    load_phrasing,
    load_source_relations,
    load_target_policy,
    load_target_types,
)
from creagraph.querygen.filters import (
    FilterReport,
    source_path_quality,
    stratified_take,
    triviality,
)
from creagraph.querygen.phrasing import (
    PERSON_PROPERTIES,
    compose_query,
    condition_phrase,
    holder_phrase,
    label_problem,
    short_description,
)
from creagraph.querygen.sampling import (
    DEFAULT_MAX_SIZE,
    DEFAULT_MAX_TARGET_HOLDERS,
    DEFAULT_MIN_SIZE,
    DEFAULT_PREFER_MIN_SIZE,
    Candidate,
    PairSampler,
    TargetChecks,
    sample_expansion,
    select_categories,
)
from creagraph.querygen.specificity import size_bucket

if TYPE_CHECKING:
    from creagraph.core.llm import ChatClient

__all__ = [
    "GenerationConfig",
    "GenerationResult",
    "generate_queries",
    "build_record",
    "query_id",
    "write_queries",
    "generate_query_file",
    "EmptySelectionError",
]


@dataclass(frozen=True)
class GenerationConfig:
    """Knobs of query generation; the defaults reproduce the documented behaviour.

    Attributes
    ----------
    min_size, max_size : int
        Class sizes of the categories used (default 2–99: category triples keep σ ≥ 4).
    max_target_holders : int
        Largest ``|{x : (x, r', y)}|`` of a target condition (default 499: σ ≥ 3).
    max_per_category : int or None
        Most queries kept from one category (default 3), so one film's cast or one
        award cannot dominate a relation's stratum.
    relations : tuple of str or None
        Restrict to these PIDs of the catalogue (default: all of it).
    min_source_quality : float
        Smallest quality of a source path (default 4, a *strong* path: every category
        triple's class is smaller than 100); 0 keeps every source path.
    prefer_min_size : int or None
        Mid-size categories (class size at least this, default 5) are drawn before
        smaller ones within each relation; None draws all sizes alike.
    specific_categories : bool
        Leave out categories that are generic in the world (default True;
        :mod:`creagraph.querygen.specificity`).
    balance : bool
        Give every relation the same quota and do not hand a relation's shortfall to
        the others (the published set's even mix); the report names the relations that
        fell short.
    max_start_uses, max_target_uses : int or None
        Most queries of the set about one start entity, and with one target condition
        ``(r', y)`` (default 2 each; None: no limit), so one entity or one award cannot
        recur through the set.
    """

    min_size: int = DEFAULT_MIN_SIZE
    max_size: int = DEFAULT_MAX_SIZE
    max_target_holders: int = DEFAULT_MAX_TARGET_HOLDERS
    max_per_category: int | None = 3
    relations: tuple[str, ...] | None = None
    min_source_quality: float = 4.0
    prefer_min_size: int | None = DEFAULT_PREFER_MIN_SIZE
    specific_categories: bool = True
    balance: bool = False
    max_start_uses: int | None = 2
    max_target_uses: int | None = 2

    def __post_init__(self) -> None:
        if self.min_size < 2:
            raise ValueError(f"min_size must be at least 2, not {self.min_size}")
        if self.max_size < self.min_size:
            raise ValueError(f"max_size ({self.max_size}) is below min_size ({self.min_size})")
        if self.max_target_holders < 1:
            raise ValueError(f"max_target_holders must be positive, not {self.max_target_holders}")
        for name in ("max_per_category", "max_start_uses", "max_target_uses"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be positive or None, not {value}")


@dataclass
class GenerationResult:
    """Generated records (in output order) and the filter report."""

    records: list[dict[str, Any]]
    report: FilterReport
    categories: dict[str, int] = field(default_factory=dict)


#: Stable id of a query (:func:`creagraph.core.records.make_query_id`), under the name this
#: module gave it first.
query_id = make_query_id


class _NoBar:
    """Stands in for a progress bar when none is wanted."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class _Reuse:
    """Uses of each start entity and each target ``(r', y)`` among the queries taken."""

    max_start: int | None
    max_target: int | None
    starts: Counter = field(default_factory=Counter)
    targets: Counter = field(default_factory=Counter)

    def rejection(self, candidate: Candidate) -> str | None:
        if self.max_start is not None and self.starts[candidate.start] >= self.max_start:
            return "reused_start"
        target = (candidate.expansion.property, candidate.expansion.object)
        if self.max_target is not None and self.targets[target] >= self.max_target:
            return "reused_target"
        return None

    def take(self, candidate: Candidate) -> None:
        self.starts[candidate.start] += 1
        self.targets[(candidate.expansion.property, candidate.expansion.object)] += 1


def _relation_rng(seed: int, pid: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), int(pid[1:])])


def _candidates(
    kg: KnowledgeGraph,
    relation: SourceRelation,
    categories: Sequence[Category],
    seed: int,
    config: GenerationConfig,
    blocklist: Mapping[str, str],
    report: FilterReport,
    checks: TargetChecks | None = None,
    reuse: _Reuse | None = None,
    on_draw: Callable[[], None] | None = None,
) -> Iterator[Candidate]:
    """The lazily filtered candidates of one relation stratum."""
    rng = _relation_rng(seed, relation.pid)
    sampler = PairSampler(categories, config.max_per_category, config.prefer_min_size)
    row = report.per_relation[relation.pid]
    removed = row["removed"]

    def drop(reason: str) -> None:
        report.removed[reason] += 1
        removed[reason] += 1

    while True:
        draw = sampler.draw(rng)
        if draw is None:
            return
        category, a, b = draw
        report.drawn += 1
        row["drawn"] += 1
        if on_draw is not None:
            on_draw()
        other, start = (a, b) if int(rng.integers(2)) == 0 else (b, a)
        if not _share_a_type(kg, a, b):  # a film and a president under one award category;
            drop("mixed_types")
            continue
        found = sample_expansion(
            kg,
            other,
            rng,
            path_nodes=frozenset((start, other, category.entity)),
            blocklist=blocklist,
            max_target_holders=config.max_target_holders,
            skipped=report.edges_skipped,
            checks=checks,
        )
        if found is None:
            drop("no_informative_edge")
            continue
        edge, holders = found
        start_label = kg.label(start)
        if not start_label:
            drop("unlabelled_start")
            continue
        if checks is not None and label_problem(start_label, person=_is_human(kg, start)):
            drop("bad_start_label")
            continue
        candidate = Candidate(relation, category, start, other, edge, holders)
        if reuse is not None:  # cheapest first: no graph lookup
            reused = reuse.rejection(candidate)
            if reused is not None:
                drop(reused)
                continue
        trivial = triviality(kg, candidate)
        if trivial is not None:
            drop(trivial)
            continue
        if source_path_quality(kg, candidate) < config.min_source_quality:
            drop("weak_source_path")
            continue
        sampler.accept(category)
        yield candidate


def _share_a_type(kg: KnowledgeGraph, a: str, b: str) -> bool:
    """Whether the pair's P31 classes meet (an untyped member cannot be shown to, and
    its holder would be named "something")."""
    types_a = {e.object for e in kg.out_edges(a, "P31")}
    return bool(types_a) and any(e.object in types_a for e in kg.out_edges(b, "P31"))


# how many P279 levels above its P31 classes a holder's type is looked for
HOLDER_TYPE_DEPTH = 3


def _holder(
    kg: KnowledgeGraph, entity: str, holder_types: Sequence[HolderType], person_like: bool
) -> tuple[str, str]:
    """The holder phrase of ``entity`` from its P31 classes, else from their P279 parents
    level by level (a "2009 film" class climbs to film), else the person/thing fallback."""
    known = {h.qid for h in holder_types}
    level = {e.object for e in kg.out_edges(entity, "P31")}
    seen = set(level)
    for _ in range(HOLDER_TYPE_DEPTH + 1):
        if level & known:
            return holder_phrase(sorted(level), holder_types, person_like=person_like)
        parents = {e.object for cls in sorted(level) for e in kg.out_edges(cls, "P279")}
        level = parents - seen
        seen |= level
        if not level:
            break
    return holder_phrase([], holder_types, person_like=person_like)


def _is_human(kg: KnowledgeGraph, entity: str) -> bool:
    return kg.has_triple(entity, "P31", "Q5")


def _triple_record(edge: Edge, labels: Mapping[str, str]) -> dict[str, str | None]:
    return {
        "subject": edge.subject,
        "subject_label": labels.get(edge.subject),
        "property": edge.property,
        "property_label": labels.get(edge.property),
        "object": edge.object,
        "object_label": labels.get(edge.object),
    }


def build_record(
    kg: KnowledgeGraph,
    candidate: Candidate,
    *,
    phrasing: Mapping[str, Phrasing],
    holder_types: Sequence[HolderType],
    seed: int,
    demonyms: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON record of a kept candidate: question, ids, labels and source path.

    The start entity is named with a short descriptor: its Wikidata description cut to
    a noun phrase of at most 12 words (:func:`~creagraph.querygen.phrasing.
    short_description`), the full description kept in ``entity_a_description``.
    """
    path = candidate.source_path()
    cat = candidate.category
    edge = candidate.expansion
    ids = [candidate.start, edge.object, edge.property, cat.property, cat.entity, candidate.other]
    for triple in path:
        ids.extend(triple.as_tuple())
    labels = kg.labels(sorted(set(ids)))
    start = kg.entity(candidate.start)
    description = start.description if start is not None else None
    person_like = any(kg.count_objects(candidate.other, p) > 0 for p in PERSON_PROPERTIES)
    holder = _holder(kg, candidate.other, holder_types, person_like)
    rel_label = labels.get(edge.property) or edge.property
    condition = condition_phrase(
        edge.property, labels[edge.object], phrasing, property_label=rel_label
    )
    descriptor = short_description(description, demonyms)
    text = compose_query(labels[candidate.start], descriptor, holder, condition)
    return {
        "query_id": query_id(candidate.start, edge.property, edge.object),
        "query": text,
        "entity_a": labels[candidate.start],
        "entity_b": labels[edge.object],
        "rel_b": rel_label,
        "entity_a_id": candidate.start,
        "entity_b_id": edge.object,
        "rel_b_id": edge.property,
        "entity_a_description": description,
        "entity_a_descriptor": descriptor,
        "source_relation": cat.property,
        "source_relation_label": labels.get(cat.property) or candidate.relation.label,
        "category": {
            "property": cat.property,
            "property_label": labels.get(cat.property) or candidate.relation.label,
            "entity": cat.entity,
            "entity_label": labels.get(cat.entity),
            "side": cat.side,
            "size": cat.size,
        },
        "class_size": cat.size,
        "source_path": [_triple_record(t, labels) for t in path],
        "bridge": {"id": candidate.other, "label": labels.get(candidate.other)},
        "holder": " ".join(holder),
        "target_holders": candidate.target_holders,
        "source_quality": source_path_quality(kg, candidate),
        "seed": int(seed),
    }


# over 80 lines only for its NumPy docstring (30 lines); the body (~55 lines) is one pass
def generate_queries(
    kg: KnowledgeGraph,
    n: int,
    seed: int = 0,
    config: GenerationConfig | None = None,
    *,
    relations: Sequence[SourceRelation] | None = None,
    blocklist: Mapping[str, str] | None = None,
    phrasing: Mapping[str, Phrasing] | None = None,
    holder_types: Sequence[HolderType] | None = None,
    category_rules: CategoryRules | None = None,
    target_types: TargetTypes | None = None,
    demonyms: Mapping[str, str] | None = None,
    target_policy: TargetPolicy | None = None,
    show_progress: bool = False,
) -> GenerationResult:
    """Generate ``n`` CREATE queries from ``kg`` (SPEC §3.1), reproducibly from ``seed``.

    Parameters
    ----------
    kg : KnowledgeGraph
        Any backend (embedded store or SPARQL endpoint).
    n : int
        Queries wanted; fewer are returned (and the report says which relations ran
        out) when the graph cannot supply them.
    seed : int
        Non-negative seed; with the same graph and catalogues the output is identical.
    config : GenerationConfig, optional
        Size ranges and caps (see :class:`GenerationConfig`).
    relations, blocklist, phrasing, holder_types, category_rules, target_types, demonyms, \
target_policy : optional
        Catalogues; default the files in ``wikidata/``
        (:mod:`creagraph.querygen.catalogue`).
    show_progress : bool
        Show a progress bar of candidates kept.

    Returns
    -------
    GenerationResult
        ``records`` interleaved round-robin across relations (so any prefix stays
        balanced) and the :class:`~creagraph.querygen.filters.FilterReport`.

    Raises
    ------
    EmptySelectionError
        When ``n > 0`` and the selected relations give no query, naming why for each.
    """
    if not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be a non-negative integer, not {n!r}")
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed!r}")
    config = config or GenerationConfig()
    relations = list(relations) if relations is not None else load_source_relations()
    blocklist = dict(blocklist) if blocklist is not None else load_blocklist()
    phrasing = phrasing if phrasing is not None else load_phrasing()
    holder_types = holder_types if holder_types is not None else load_holder_types()
    relations = _selected_relations(relations, config, blocklist)
    rules = category_rules if category_rules is not None else load_category_rules()
    types = target_types if target_types is not None else load_target_types()
    demonyms = demonyms if demonyms is not None else load_demonyms()
    policy = target_policy if target_policy is not None else load_target_policy()
    checks = TargetChecks(phrasing=phrasing, types=types, rules=rules, policy=policy)
    if not relations:
        raise EmptySelectionError("no source relation selected")

    report = FilterReport(requested=int(n), balanced=bool(config.balance))
    reuse = _Reuse(config.max_start_uses, config.max_target_uses)
    bar = progress_bar(total=n, desc="queries", unit=" queries") if show_progress else _NoBar()
    try:
        streams, sizes = _relation_streams(
            kg, relations, int(seed), config, blocklist, rules, checks, report, reuse,
            bar if show_progress else None,
        )  # fmt: skip
        if n > 0 and not any(sizes.values()):
            raise EmptySelectionError(_why_empty(kg, relations, report, config))
        if config.balance and relations:
            report.quota = -(-int(n) // len(relations))
        taken = _take(streams, int(n), config, report, bar, reuse)
    finally:
        bar.close()
    records = [
        build_record(
            kg,
            c,
            phrasing=phrasing,
            holder_types=holder_types,
            seed=int(seed),
            demonyms=demonyms,
        )
        for c in _round_robin(taken)
    ]
    report.kept = len(records)
    if n > 0 and not records:
        report.empty_reason = _why_empty(kg, relations, report, config)
    return GenerationResult(records, report, sizes)


def _selected_relations(
    relations: list[SourceRelation], config: GenerationConfig, blocklist: Mapping[str, str]
) -> list[SourceRelation]:
    """The catalogue's relations restricted to ``config.relations``; none blocklisted."""
    if config.relations is not None:
        known = {r.pid for r in relations}
        unknown = sorted(set(config.relations) - known)
        if unknown:
            raise ValueError(
                f"relations not in the source-relation catalogue: {', '.join(unknown)}"
            )
        relations = [r for r in relations if r.pid in set(config.relations)]
    for rel in relations:
        if rel.pid in blocklist:
            raise ValueError(f"source relation {rel.pid} is blocklisted ({blocklist[rel.pid]})")
    return relations


def _relation_streams(
    kg: KnowledgeGraph,
    relations: Sequence[SourceRelation],
    seed: int,
    config: GenerationConfig,
    blocklist: Mapping[str, str],
    rules: CategoryRules,
    checks: TargetChecks,
    report: FilterReport,
    reuse: _Reuse | None = None,
    bar: Any = None,
) -> tuple[dict[str, Iterator[Candidate]], dict[str, int]]:
    """Step 1 per relation: its categories (and the rejected ones, in the report), and
    the lazy stream of its filtered candidates; also the number of categories per PID.
    With ``bar``, each category examined and each candidate drawn shows on it."""
    streams: dict[str, Iterator[Candidate]] = {}
    sizes: dict[str, int] = {}
    seen = {"categories": 0, "drawn": 0}
    counts: dict[str, int] | None = None

    def tick(what: str, pid: str) -> None:
        seen[what] += 1
        if bar is not None and seen[what] % 500 == 1:
            bar.set_postfix_str(f"{pid}: {seen[what]:,} {what}", refresh=True)

    for rel in relations:
        rejected: list[tuple[Category, str]] = []
        categories = select_categories(
            kg,
            rel,
            min_size=config.min_size,
            max_size=config.max_size,
            rules=rules if config.specific_categories else None,
            rejected=rejected,
            on_category=functools.partial(_ignore_first, tick, "categories", rel.pid),
        )
        sizes[rel.pid] = len(categories)
        report.categories_rejected[rel.pid] = Counter(reason for _, reason in rejected)
        labels = kg.labels([c.entity for c, _ in rejected]) if rejected else {}
        report.rejected_categories[rel.pid] = [
            {"entity": c.entity, "label": labels.get(c.entity), "size": c.size, "reason": why}
            for c, why in rejected
        ]
        report.per_relation[rel.pid] = {
            "label": rel.label,
            "side": rel.side,
            "categories": len(categories),
            "drawn": 0,
            "kept": 0,
            "exhausted": False,
            "removed": Counter(),
        }
        if not categories:  # say whether the graph has the relation at all
            if counts is None:
                counts = _property_counts(kg)
            if rel.pid not in counts and counts:
                report.per_relation[rel.pid]["statements"] = 0
        streams[rel.pid] = _candidates(
            kg, rel, categories, seed, config, blocklist, report, checks, reuse,
            on_draw=functools.partial(tick, "drawn", rel.pid),
        )  # fmt: skip
    return streams, sizes


def _ignore_first(func: Callable[..., None], *args: Any) -> None:
    """``func(*args[:-1])``: a callback that drops the value it is called with."""
    func(*args[:-1])


def _property_counts(kg: KnowledgeGraph) -> dict[str, int]:
    """Statements per property, or ``{}`` where the backend cannot count them all (a
    remote endpoint that times out)."""
    getter = getattr(kg, "property_counts", None)
    try:
        return getter() if getter is not None else {}
    except (RuntimeError, OSError):
        return {}


def _take(
    streams: dict[str, Iterator[Candidate]],
    n: int,
    config: GenerationConfig,
    report: FilterReport,
    bar: Any,
    reuse: _Reuse | None = None,
) -> dict[str, list[Candidate]]:
    """Steps 2–3: draw from the relation strata until ``n`` distinct candidates are kept
    (:func:`~creagraph.querygen.filters.stratified_take`), counting in the report."""

    def exhausted(pid: str) -> None:
        report.per_relation[pid]["exhausted"] = True

    def took(_pid: str, item: Candidate) -> None:
        if reuse is not None:
            reuse.take(item)
        bar.update(1)

    taken, duplicates = stratified_take(
        streams,
        n,
        key=lambda c: c.key,
        on_exhausted=exhausted,
        on_take=took,
        redistribute=not config.balance,
    )
    report.removed["duplicate"] += duplicates
    for pid, items in taken.items():
        report.per_relation[pid]["kept"] = len(items)
        for c in items:
            report.class_sizes[size_bucket(c.category.size)] += 1
    return taken


def _round_robin(taken: Mapping[str, Sequence[Candidate]]) -> list[Candidate]:
    """The kept candidates interleaved across relations, so any prefix stays balanced."""
    ordered: list[Candidate] = []
    longest = max((len(v) for v in taken.values()), default=0)
    for i in range(longest):
        for pid in taken:
            if i < len(taken[pid]):
                ordered.append(taken[pid][i])
    return ordered


class EmptySelectionError(ValueError):
    """The selected relations give no query at all; the message says why."""


def _why_empty(
    kg: KnowledgeGraph,
    relations: Sequence[SourceRelation],
    report: FilterReport,
    config: GenerationConfig,
) -> str:
    parts = []
    counts = kg.property_counts() if hasattr(kg, "property_counts") else None
    for rel in relations:
        row = report.per_relation.get(rel.pid, {})
        statements = counts.get(rel.pid, 0) if counts is not None else None
        rejected = report.categories_rejected.get(rel.pid) or Counter()
        if statements == 0:
            why = "the graph has no statement of it"
        elif row.get("categories", 0) == 0:
            why = f"no category with a class of {config.min_size}-{config.max_size} members"
            if rejected:
                why += (
                    " that is specific in the world (rejected: "
                    + ", ".join(f"{k} {v}" for k, v in sorted(rejected.items()))
                    + ")"
                )
        else:
            why = (
                f"{row['categories']} categories but every candidate was filtered out "
                f"({row.get('drawn', 0)} drawn)"
            )
        parts.append(f"{rel.pid} ({rel.label}): {why}")
    return "no queries can be generated: " + "; ".join(parts)


def write_queries(path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]]) -> int:
    """Atomically write query records as JSON Lines; returns the number written."""
    return write_jsonl(Path(path), records)


def generate_query_file(
    kg: KnowledgeGraph,
    out: str | os.PathLike[str],
    n: int,
    seed: int = 0,
    config: GenerationConfig | None = None,
    *,
    client: ChatClient | None = None,
    report: str | os.PathLike[str] | None = None,
    show_progress: bool = False,
) -> GenerationResult:
    """What ``creagraph queries generate`` runs: :func:`generate_queries`, the optional LLM
    rewrite (:func:`creagraph.querygen.llm.rewrite_with_graph`), the query file written
    atomically and, when ``report`` is given, the filter report as JSON there.

    Returns
    -------
    GenerationResult
        Its ``records`` are the ones written (rewritten when ``client`` is given).

    Raises
    ------
    EmptySelectionError
        When ``n > 0`` and no query can be generated; nothing is written.
    """
    result = generate_queries(kg, n, seed, config, show_progress=show_progress)
    if result.report.empty_reason is not None:
        raise EmptySelectionError(result.report.empty_reason)
    if client is not None:
        from creagraph.querygen.llm import rewrite_with_graph

        result.records = rewrite_with_graph(
            kg, result.records, client, show_progress=show_progress
        )
    write_queries(out, result.records)
    if report is not None:
        with atomic_write(report) as handle:
            handle.write(dumps(result.report.as_dict()) + "\n")
    return result
