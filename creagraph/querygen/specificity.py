"""Whether a category or a target is specific in the world, not just in the graph (SPEC §3.1).

A slice of Wikidata holds only some of the people who held a position or received an award,
so its class sizes are lower bounds: "chief executive officer" has three holders in the
slice and hundreds of thousands in the world. The checks here judge the category entity c
itself, so they give the same answer on a slice and on full Wikidata:

- :func:`category_rejection` — c is generic when it is listed as generic for the relation
  (``wikidata/category_rules.tsv``: honorary doctorate, ambassador, …), a hub of the graph
  (more statements than the relation's ``max_degree``), used as someone's occupation (a kind
  of job, not an office), an instance or subclass of a generic class (a position *type*, a
  profession, an academic rank) without a statement tying it to one institution, or — for
  relations that list such anchors — not tied to one institution or jurisdiction at all;
- :func:`target_type_rejection` — the object type check of a target condition
  (``wikidata/target_types.tsv``: an award relation needs an award);
- :func:`size_bucket` — the class-size bands the generation report prints.

Examples
--------
>>> size_bucket(2), size_bucket(7), size_bucket(99)
('2', '5-9', '50-99')
"""

from __future__ import annotations

import re

from creagraph.core.graph import KnowledgeGraph
from creagraph.querygen.catalogue import CategoryRules, TargetTypes

__all__ = [
    "CATEGORY_REASONS",
    "SIZE_BUCKETS",
    "category_rejection",
    "target_type_rejection",
    "size_bucket",
    "entity_classes",
]

CATEGORY_REASONS = (
    "generic_item",
    "hub",
    "used_as_occupation",
    "generic_class",
    "no_institution",
    "bad_label",
)

SIZE_BUCKETS = ((2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))


def size_bucket(size: int) -> str:
    """The class-size band of ``size``: ``"2"``, ``"3-4"``, ``"5-9"``, … ``"100+"``."""
    for low, high in SIZE_BUCKETS:
        if high is None:
            if size >= low:
                return f"{low}+"
        elif low <= size <= high:
            return str(low) if low == high else f"{low}-{high}"
    return str(size)


def entity_classes(kg: KnowledgeGraph, entity: str) -> set[str]:
    """The P31 (instance of) and P279 (subclass of) classes of ``entity``."""
    return {e.object for e in kg.out_edges(entity, "P31")} | {
        e.object for e in kg.out_edges(entity, "P279")
    }


def category_rejection(
    kg: KnowledgeGraph, pid: str, entity: str, rules: CategoryRules
) -> str | None:
    """Why the category ``(pid, entity)`` is generic in the world, or ``None`` if specific.

    Checks, in this order (the first that applies is the reason): ``generic_item`` (listed
    for the relation), ``hub`` (more statements than the relation's ``max_degree``),
    ``used_as_occupation`` (c is someone's value of a ``generic_usage`` property such as
    P106), ``generic_class`` (a P31/P279 class of c is a generic class of the relation and c
    has no anchor statement), ``no_institution`` (the relation lists anchors — P1001
    applies to jurisdiction, P2389 organisation directed, … — and c has none of them).

    Parameters
    ----------
    kg : KnowledgeGraph
    pid : str
        The relation r of the category (also used for targets ``(x, r, c)`` of r).
    entity : str
        The category entity c.
    rules : CategoryRules
        From :func:`creagraph.querygen.catalogue.load_category_rules`.
    """
    if entity in rules.rules("generic_item", pid):
        return "generic_item"
    limit = rules.degree_limit(pid)
    if limit is not None:
        getter = getattr(kg, "degree", None)
        if getter is not None and int(getter(entity)) > limit:
            return "hub"
    for prop in rules.rules("generic_usage", pid):
        if kg.count_subjects(prop, entity) > 0:
            return "used_as_occupation"
    anchors = rules.rules("anchor", pid)
    anchored = any(kg.count_objects(entity, prop) > 0 for prop in anchors)
    if not anchored:
        generic = rules.rules("generic_class", pid)
        if generic and entity_classes(kg, entity) & set(generic):
            return "generic_class"
        if anchors:
            return "no_institution"
    return None


def target_type_rejection(
    kg: KnowledgeGraph, pid: str, entity: str, label: str, types: TargetTypes
) -> str | None:
    """``"wrong_type"`` when ``entity`` is not the kind of thing ``pid`` is about, else ``None``.

    A target of a relation with required classes must have one of them among its P31
    classes or their P279 parents (an untyped target passes); it must have none of the
    denied classes; its label must not contain a denied word ("Festival" for P166).
    """
    words = types.deny_words.get(pid)
    if words and any(re.search(rf"\b{re.escape(w)}\b", label) for w in words):
        return "wrong_type"
    require = types.require.get(pid)
    deny = types.deny.get(pid)
    if not require and not deny:
        return None
    direct = {e.object for e in kg.out_edges(entity, "P31")}
    classes = set(direct)
    for cls in direct:
        classes.update(e.object for e in kg.out_edges(cls, "P279"))
    if deny and classes & set(deny):
        return "wrong_type"
    if require and direct and not classes & set(require):
        return "wrong_type"
    return None
