"""Filters of query generation and the report of what each removed (SPEC §3.1 step 5).

Candidates are filtered in this order; each step counts what it removed:

0. ``mixed_types`` — the two members share no P31 class (a film and a president under one
   award category), or one has none;
1. ``no_informative_edge`` — the expanded endpoint has no eligible outgoing edge
   (see :func:`creagraph.querygen.sampling.edge_rejection`);
2. ``unlabelled_start`` — the start entity has no label, so no question can name it;
   ``bad_start_label`` — its label fails the sanity checks (mixed scripts, repeated
   tokens, vandalism: :func:`creagraph.querygen.phrasing.label_problem`);
3. ``trivial_one_hop`` — the start entity already satisfies the target, ``(x_start, r', y)``
   holds; ``trivial_inverse`` — it does through a declared inverse or symmetric property
   (``wikidata/inverse_properties.tsv``, ``symmetric_properties.tsv``, the tables grounding
   reads); ``trivial_implied`` — through a statement that implies it
   (``wikidata/property_implications.tsv``: Jeremy Renner is in the cast of The Avengers,
   so he is "known for" it); ``trivial_linked`` — the start entity and y are linked by any
   other edge, a one-hop connection; ``incomplete_career`` — a "played for" target of a
   start entity whose career the graph records as one team or none (it may well have
   played there) (:func:`triviality`);
4. ``weak_source_path`` — the source path's quality (SPEC §3.4: the smallest σ of its
   two category triples; the final triple is the imposed target) is below the threshold
   (default 4), so it would not prove that a *strong* connection exists
   (:func:`source_path_quality`);
5. ``duplicate`` — the same (start, r', y) as a query already kept (:func:`stratified_take`).

Strata (one per source relation) are balanced by :func:`stratified_take`: an equal quota
per relation, the quota of a relation that runs out of candidates handed to the others.

Examples
--------
>>> streams = {"P1": iter([1, 2, 3, 4, 5]), "P2": iter([10]), "P3": iter([20, 21, 22, 23])}
>>> taken, dups = stratified_take(streams, 7)
>>> {k: len(v) for k, v in taken.items()}, dups
({'P1': 3, 'P2': 1, 'P3': 3}, 0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.metrics import path_quality, specificity, triple_class_size
from creagraph.querygen.sampling import Candidate

__all__ = [
    "FilterReport",
    "FILTER_ORDER",
    "is_trivial",
    "triviality",
    "source_path_quality",
    "stratified_take",
]

T = TypeVar("T")

_END: Any = object()

FILTER_ORDER = (
    "mixed_types",
    "no_informative_edge",
    "unlabelled_start",
    "bad_start_label",
    "trivial_one_hop",
    "trivial_inverse",
    "trivial_implied",
    "trivial_linked",
    "incomplete_career",
    "weak_source_path",
    "reused_start",
    "reused_target",
    "duplicate",
)


@dataclass
class FilterReport:
    """Counts of one generation run.

    Attributes
    ----------
    drawn : int
        Candidates drawn (pairs with a chosen endpoint).
    removed : Counter
        Candidates removed, by filter (keys of :data:`FILTER_ORDER`).
    edges_skipped : Counter
        Expansion edges passed over while sampling, by reason (``blocklisted``,
        ``target_on_path``, ``generic_target``, ``unlabelled_target``, and the target
        checks: ``broad_attribute``, ``class_target``, ``broad_value``, ``denied_label``,
        ``wrong_target_type``, …; :func:`creagraph.querygen.sampling.edge_rejection`).
    per_relation : dict
        ``pid -> {"categories", "drawn", "kept", "exhausted", "removed"}`` (``removed``:
        that relation's candidates removed, by filter; ``statements``: 0 when the graph
        has no statement of the relation).
    kept : int
        Queries written.
    categories_rejected : dict
        ``pid -> Counter(reason)``: categories left out as generic in the world
        (:func:`creagraph.querygen.specificity.category_rejection`).
    rejected_categories : dict
        ``pid -> [{"entity", "label", "size", "reason"}]``, every rejected category.
    class_sizes : Counter
        Class-size band (:func:`~creagraph.querygen.specificity.size_bucket`) -> queries kept.
    balanced, quota : bool, int
        Whether ``--balance`` was on, and the queries asked of each relation then.
    empty_reason : str or None
        Why no query at all came out, per relation (set only then).
    """

    drawn: int = 0
    removed: Counter = field(default_factory=Counter)
    edges_skipped: Counter = field(default_factory=Counter)
    per_relation: dict[str, dict[str, Any]] = field(default_factory=dict)
    kept: int = 0
    requested: int = 0
    categories_rejected: dict[str, Counter] = field(default_factory=dict)
    rejected_categories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    class_sizes: Counter = field(default_factory=Counter)
    balanced: bool = False
    quota: int | None = None
    empty_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain, ordered data for JSON."""
        return {
            "requested": self.requested,
            "drawn": self.drawn,
            "removed": {k: int(self.removed.get(k, 0)) for k in FILTER_ORDER},
            "edges_skipped": {k: int(v) for k, v in sorted(self.edges_skipped.items())},
            "kept": self.kept,
            "per_relation": {k: _plain_row(v) for k, v in self.per_relation.items()},
            "categories_rejected": {
                pid: {k: int(v) for k, v in sorted(c.items())}
                for pid, c in self.categories_rejected.items()
            },
            "rejected_categories": {k: list(v) for k, v in self.rejected_categories.items()},
            "class_sizes": _ordered_sizes(self.class_sizes),
            "balanced": self.balanced,
            "quota": self.quota,
            "shortfall": self.shortfall(),
            "shortfall_reasons": {pid: self.why_short(pid) for pid in self.shortfall()},
            "empty_reason": self.empty_reason,
        }

    def shortfall(self) -> dict[str, int]:
        """With ``balance``: ``pid -> queries missing`` for relations below their quota."""
        if not self.balanced or self.quota is None:
            return {}
        return {
            pid: self.quota - row["kept"]
            for pid, row in self.per_relation.items()
            if row["kept"] < self.quota
        }

    def why_short(self, pid: str) -> str:
        """Why relation ``pid`` gave fewer queries than asked: its usable categories (and
        those rejected as generic), the pairs drawn and what removed them."""
        row = self.per_relation[pid]
        rejected = self.categories_rejected.get(pid) or Counter()
        parts = [f"{row['categories']} usable categories"]
        if rejected:
            parts[0] += " (rejected as generic: " + _counts(rejected) + ")"
        if row.get("statements") == 0:
            return "the graph has no statement of it"
        if row["categories"] == 0:
            return parts[0]
        parts.append(
            f"ran out after {row['drawn']} pairs drawn (each category used up or at its cap)"
            if row.get("exhausted")
            else f"{row['drawn']} pairs drawn"
        )
        removed = Counter({k: v for k, v in (row.get("removed") or {}).items() if v})
        if removed:
            parts.append("removed: " + _counts(removed, top=4))
        return "; ".join(parts)

    def lines(self) -> list[str]:
        """A human-readable report; with ``balance``, the shortfall first."""
        out = [f"requested {self.requested}, candidates drawn {self.drawn}, kept {self.kept}"]
        short = self.shortfall()
        if self.balanced and self.quota is not None:
            filled = sum(1 for row in self.per_relation.values() if row["kept"] >= self.quota)
            out.append(
                f"balance: {self.quota} queries asked of each of {len(self.per_relation)} "
                f"relations; {filled} filled, {len(short)} short by {sum(short.values())} in all"
            )
        out.append("removed by filter:")
        out.extend(f"  {k:<22}{int(self.removed.get(k, 0)):>8}" for k in FILTER_ORDER)
        if self.edges_skipped:
            out.append("expansion edges passed over:")
            out.extend(f"  {k:<22}{v:>8}" for k, v in sorted(self.edges_skipped.items()))
        out.append("per source relation (categories, drawn, kept):")
        for pid, row in self.per_relation.items():
            note = "  (ran out)" if row.get("exhausted") else ""
            out.append(
                f"  {pid:<8}{row.get('label', ''):<26}{row['categories']:>7}"
                f"{row['drawn']:>8}{row['kept']:>7}{note}"
            )
        if any(self.categories_rejected.values()):
            out.append("categories rejected as generic in the world:")
            for pid, counts in self.categories_rejected.items():
                if counts:
                    detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                    out.append(f"  {pid:<8}{detail}")
        if self.class_sizes:
            out.append("class sizes of the queries kept:")
            out.extend(f"  {k:<22}{v:>8}" for k, v in _ordered_sizes(self.class_sizes).items())
        for pid, missing in short.items():
            row = self.per_relation[pid]
            out.append(
                f"balance: {pid} {row.get('label', '')} gave {row['kept']} of {self.quota} "
                f"({missing} short): {self.why_short(pid)}"
            )
        return out


def _counts(counts: Mapping[str, int], top: int | None = None) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v}" for k, v in items[:top])


def _plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    if "removed" in out:
        out["removed"] = {k: int(v) for k, v in sorted(out["removed"].items()) if v}
    return out


def _ordered_sizes(sizes: Counter) -> dict[str, int]:
    from creagraph.querygen.specificity import SIZE_BUCKETS, size_bucket

    order = [size_bucket(low) for low, _ in SIZE_BUCKETS]
    return {k: int(sizes[k]) for k in order if sizes.get(k)}


def is_trivial(kg: KnowledgeGraph, candidate: Candidate) -> bool:
    """Whether the item is trivial: :func:`triviality` gives a reason.

    Such an item has a one-hop answer and is dropped (SPEC §3.1 step 5).
    """
    return triviality(kg, candidate) is not None


# Implications that make a query item trivial but that the graph judge must not use to verify
# a claim (being in a film's cast makes "known for" it an easy target, not a true statement):
# read beside property_implications.tsv for triviality only.
TRIVIALITY_TABLE = "triviality_implications.tsv"

# a start entity whose P54 list has fewer teams than this has no recorded career
MIN_CAREER_TEAMS = 2


def triviality(kg: KnowledgeGraph, candidate: Candidate) -> str | None:
    """Why the start entity already meets (or may meet) the target condition, or ``None``.

    With the target ``(x, r', y)`` and the start entity s: ``"trivial_one_hop"`` when
    ``(s, r', y)`` is in the graph; ``"trivial_inverse"`` when ``(y, q, s)`` is, q an
    inverse of r' or r' symmetric; ``"trivial_implied"`` when a statement between s and y
    implies ``(s, r', y)`` (:func:`creagraph.core.relations.property_implications`, and
    ``wikidata/triviality_implications.tsv`` for looser implications that only make an item easy);
    ``"trivial_linked"`` when any other edge joins s and y (``kg.edges_between``);
    ``"incomplete_career"`` when r' is P54 (member of sports team) and s has fewer than
    :data:`MIN_CAREER_TEAMS` teams in the graph.
    """
    from creagraph.core.relations import (
        inverse_properties,
        property_implications,
        read_implication_table,
        symmetric_properties,
    )

    start = candidate.start
    pid, target = candidate.expansion.property, candidate.expansion.object
    edges = kg.edges_between(start, target)
    if edges:
        inverses = set(inverse_properties().get(pid, ()))
        if pid in symmetric_properties():
            inverses.add(pid)
        implied_by = {
            (q, direction)
            for table in (property_implications(), read_implication_table(TRIVIALITY_TABLE))
            for q, implied in table.items()
            for p, direction in implied
            if p == pid
        }
        reasons = set()
        for e in edges:
            forward = e.subject == start
            if forward and e.property == pid:
                return "trivial_one_hop"
            if not forward and e.property in inverses:
                reasons.add("trivial_inverse")
            elif (e.property, "forward" if forward else "inverse") in implied_by:
                reasons.add("trivial_implied")
            else:
                reasons.add("trivial_linked")
        for reason in ("trivial_inverse", "trivial_implied", "trivial_linked"):
            if reason in reasons:
                return reason
    if pid == "P54" and kg.count_objects(start, "P54") < MIN_CAREER_TEAMS:
        return "incomplete_career"
    return None


def source_path_quality(kg: KnowledgeGraph, candidate: Candidate) -> float:
    """Quality f of the candidate's source path, computed as scoring computes it.

    Every triple of a source path is in the graph (factual), so ``f`` is the smallest
    ``σ = specificity(triple_class_size(...))`` over all triples but the final one
    (:func:`creagraph.core.metrics.path_quality`).
    """
    sigmas = [
        specificity(triple_class_size(kg, *edge.as_tuple())) for edge in candidate.source_path()
    ]
    return path_quality(sigmas, True)


def stratified_take(
    streams: Mapping[str, Iterator[T]],
    n: int,
    *,
    key: Callable[[T], Hashable] = lambda item: item,
    on_exhausted: Callable[[str], None] | None = None,
    on_take: Callable[[str, T], None] | None = None,
    redistribute: bool = True,
) -> tuple[dict[str, list[T]], int]:
    """Take ``n`` distinct items from several streams, as evenly as they allow.

    Rounds of water-filling: the items still missing are split equally among the
    streams not yet exhausted (the remainder to those holding the fewest items); a
    stream that runs out keeps what it gave, and the next round shares its unmet quota
    among the others. Items whose ``key`` was already taken are skipped and counted.

    Parameters
    ----------
    streams : mapping of str to iterator
        One lazily evaluated stream of candidates per stratum.
    n : int
        Items wanted in total.
    key : callable
        Identity of an item for deduplication across all strata.
    on_exhausted : callable, optional
        Called with the name of each stream that ran out.
    on_take : callable, optional
        Called with the stream name and each item taken (after deduplication).
    redistribute : bool
        Hand the unmet quota of an exhausted stream to the others (default). False keeps
        every stratum at its equal share (``--balance``): fewer than ``n`` items then come
        back when a stream runs short.

    Returns
    -------
    taken : dict of str to list
        Items per stratum, in stream order.
    duplicates : int
        Items skipped because their key was taken already.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, not {n}")
    taken: dict[str, list[T]] = {name: [] for name in streams}
    active = list(streams)
    seen: set[Hashable] = set()
    duplicates = 0
    total = 0
    while active and total < n:
        share, extra = divmod(n - total, len(active))
        # the remainder goes to the strata holding the fewest items (then stream order)
        rank = {name: i for i, name in enumerate(streams)}
        favoured = set(sorted(active, key=lambda s: (len(taken[s]), rank[s]))[:extra])
        still = []
        for name in active:
            want = share + (1 if name in favoured else 0)
            got, exhausted = 0, False
            while got < want:
                item = next(streams[name], _END)
                if item is _END:
                    exhausted = True
                    break
                k = key(item)
                if k in seen:
                    duplicates += 1
                    continue
                seen.add(k)
                taken[name].append(item)
                if on_take is not None:
                    on_take(name, item)
                got += 1
            total += got
            if exhausted:
                if on_exhausted is not None:
                    on_exhausted(name)
            else:
                still.append(name)
        active = still
        if not redistribute:
            break
    return taken, duplicates
