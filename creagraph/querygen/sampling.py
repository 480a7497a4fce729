"""Category selection, pair sampling and expansion edges (SPEC §3.1 steps 1–4).

- :func:`select_categories` — every category (r, c) of a source relation with a compact
  class (size in ``[min_size, max_size]``), members sorted by id;
- :class:`PairSampler` — unordered pairs of distinct members drawn without replacement:
  a category uniformly among those with pairs left, then a pair uniformly among its
  unused pairs (so small and large classes are both represented);
- :func:`sample_expansion` — one informative outgoing edge ``(x, r', y)`` of an entity,
  uniformly among its eligible edges (:func:`edge_rejection`);
- :class:`Candidate` — a pair, the expanded endpoint and its edge: the source path.

Eligible expansion edges (the "generic target" rule): r' is not blocklisted; y is not a
node of the path already (the start entity, the category anchor c, the expanded entity);
y has a label; and the target is selective: ``|{x : (x, r', y)}| ≤ max_target_holders``
(default 499, i.e. the target condition's own specificity σ is at least 3 under the
published mapping, SPEC §3.4); and, with the target policy (``wikidata/target_policy.tsv``),
r' is no broad attribute, y is no class and no broad value of r'
(:func:`target_policy_rejection`).

All randomness comes from a ``numpy.random.Generator`` the caller seeds; iteration
orders are sorted, so a seed and a graph fix every draw.

References
----------
.. [1] Wadhwa et al., "CREATE: Testing LLMs for Associative Creativity",
   arXiv:2603.09970 (2026), Algorithm 1.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from creagraph.core.graph import Category, Edge, KnowledgeGraph
from creagraph.querygen.catalogue import (
    CategoryRules,
    Phrasing,
    SourceRelation,
    TargetPolicy,
    TargetTypes,
)
from creagraph.querygen.phrasing import is_mass_noun, label_problem
from creagraph.querygen.specificity import category_rejection, target_type_rejection

__all__ = [
    "Candidate",
    "PairSampler",
    "select_categories",
    "pair_from_index",
    "edge_rejection",
    "sample_expansion",
    "id_key",
    "DEFAULT_MIN_SIZE",
    "DEFAULT_MAX_SIZE",
    "DEFAULT_MAX_TARGET_HOLDERS",
    "DEFAULT_PREFER_MIN_SIZE",
    "TargetChecks",
    "target_policy_rejection",
]

DEFAULT_MIN_SIZE = 2
DEFAULT_MAX_SIZE = 99  # class sizes < 100 keep the category triples at σ ≥ 4 (SPEC §3.4)
DEFAULT_MAX_TARGET_HOLDERS = 499  # targets held by < 500 entities: σ ≥ 3
DEFAULT_PREFER_MIN_SIZE = 5  # mid-size classes (5–99) are drawn before small ones


@dataclass(frozen=True)
class TargetChecks:
    """Checks of an expansion target ``(x, r', y)`` beyond the graph counts (SPEC §3.1 step 6).

    ``phrasing``: r' must have a template (no guessed wording); ``types``: y must be the
    kind of thing r' is about; ``rules``: where r' is itself a relation with category
    rules (position held, award received, member of), y must be specific in the world
    ("held the position of partner" is not a condition); ``policy``: r' must not be a
    broad attribute and y not a broad value of it (``wikidata/target_policy.tsv``), and y
    must not be a class (an item with instances or subclasses: "Academy Awards").
    """

    phrasing: Mapping[str, Phrasing] | None = None
    types: TargetTypes | None = None
    rules: CategoryRules | None = None
    policy: TargetPolicy | None = None


def id_key(ident: str) -> tuple[str, int]:
    """Sort key of a QID/PID: prefix, then the number (``Q9`` before ``Q10``)."""
    return (ident[:1], int(ident[1:]) if ident[1:].isdigit() else -1)


@dataclass(frozen=True)
class Candidate:
    """One draw of Algorithm 1: a category, a pair of its members and an expansion.

    ``start`` is the endpoint the query is about; ``other`` the endpoint whose outgoing
    edge ``expansion = (other, r', y)`` sets the target condition.
    """

    relation: SourceRelation
    category: Category
    start: str
    other: str
    expansion: Edge
    target_holders: int

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two queries the same: (start entity, target relation, target entity)."""
        return (self.start, self.expansion.property, self.expansion.object)

    def category_triples(self) -> list[Edge]:
        """The two category triples in Wikidata's direction, start entity first."""
        r, c = self.category.property, self.category.entity
        if self.category.side == "subject":
            return [Edge(self.start, r, c), Edge(self.other, r, c)]
        return [Edge(c, r, self.start), Edge(c, r, self.other)]

    def source_path(self) -> list[Edge]:
        """``[(x1, r, c), (x2, r, c), (x2, r', y)]``, or for object-side categories
        ``[(c, r, x1), (c, r, x2), (x2, r', y)]``."""
        return [*self.category_triples(), self.expansion]


def select_categories(
    kg: KnowledgeGraph,
    relation: SourceRelation,
    *,
    min_size: int = DEFAULT_MIN_SIZE,
    max_size: int = DEFAULT_MAX_SIZE,
    rules: CategoryRules | None = None,
    rejected: list[tuple[Category, str]] | None = None,
    on_category: Callable[[Category], None] | None = None,
) -> list[Category]:
    """Every category of ``relation`` whose class size is in ``[min_size, max_size]``.

    Categories are sorted by anchor id and their members by id, whatever order the
    backend returns them in. With ``rules``, categories that are generic in the world
    (:func:`creagraph.querygen.specificity.category_rejection`) or whose entity label
    fails :func:`~creagraph.querygen.phrasing.label_problem` (``"bad_label"``) are left
    out, each appended to ``rejected`` with its reason. ``on_category`` is called with
    each category examined (the generation progress bar: a relation with hundreds of
    thousands of categories, or one category of 200,000 members, shows it is working).

    Examples
    --------
    >>> cast = SourceRelation("P161", "cast member", "object")
    >>> cats = select_categories(kg, cast)                    # doctest: +SKIP
    >>> cats[0].side, 2 <= cats[0].size <= 99                 # doctest: +SKIP
    ('object', True)
    """
    if min_size < 2:
        raise ValueError(f"min_size must be at least 2 (a pair needs two members), not {min_size}")
    if max_size < min_size:
        raise ValueError(f"max_size ({max_size}) is below min_size ({min_size})")
    out = []
    for cat in kg.categories(
        [relation.pid], side=relation.side, min_size=min_size, max_size=max_size
    ):
        if not min_size <= cat.size <= max_size:  # before sorting members: bounded work
            continue
        members = tuple(sorted(set(cat.members), key=id_key))
        if not min_size <= len(members) <= max_size:
            continue
        category = Category(cat.property, cat.entity, cat.side, len(members), members)
        if on_category is not None:
            on_category(category)
        if rules is not None:
            reason = category_rejection(kg, relation.pid, cat.entity, rules)
            if reason is None and relation.side == "subject":
                reason = label_problem(kg.label(cat.entity)) and "bad_label"
            if reason is not None:
                if rejected is not None:
                    rejected.append((category, reason))
                continue
        out.append(category)
    out.sort(key=lambda c: id_key(c.entity))
    if rejected is not None:
        rejected.sort(key=lambda item: id_key(item[0].entity))
    return out


def pair_from_index(n: int, index: int) -> tuple[int, int]:
    """The ``index``-th pair ``(a, b)``, ``a < b < n``, in lexicographic order.

    Examples
    --------
    >>> [pair_from_index(4, i) for i in range(6)]
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    """
    total = n * (n - 1) // 2
    if not 0 <= index < total:
        raise ValueError(f"pair index {index} out of range for {n} members")
    k = total - 1 - index
    back = (math.isqrt(8 * k + 1) - 1) // 2
    a = n - 2 - back
    offset = a * n - a * (a + 1) // 2
    return a, index - offset + a + 1


class PairSampler:
    """Draw unordered pairs of distinct class members without replacement.

    Each draw picks a category uniformly among those still open, then a pair uniformly
    among that category's unused pairs. A category closes when its pairs are used up or
    when :meth:`accept` has been called ``max_per_category`` times for it.

    Parameters
    ----------
    categories : sequence of Category
        The pool (members sorted, sizes ≥ 2).
    max_per_category : int or None
        Most queries kept from one category (None: no limit).
    prefer_min_size : int or None
        Draw categories of at least this size first; smaller ones only once every
        preferred category is closed (None: all alike).

    Examples
    --------
    >>> cats = [Category("P1", "Q1", "subject", 3, ("Q2", "Q3", "Q4"))]
    >>> sampler = PairSampler(cats)
    >>> rng = np.random.default_rng(0)
    >>> sorted(sampler.draw(rng)[1:] for _ in range(3))
    [('Q2', 'Q3'), ('Q2', 'Q4'), ('Q3', 'Q4')]
    >>> sampler.draw(rng) is None
    True
    """

    def __init__(
        self,
        categories: Iterable[Category],
        max_per_category: int | None = None,
        prefer_min_size: int | None = None,
    ):
        self.categories = list(categories)
        self.max_per_category = max_per_category
        self.prefer_min_size = prefer_min_size
        self._used: list[set[int]] = [set() for _ in self.categories]
        self._kept = [0] * len(self.categories)
        self._open = [i for i, c in enumerate(self.categories) if len(c.members) >= 2]
        # the open categories of at least prefer_min_size, in _open's order
        self._preferred = (
            [i for i in self._open if self.categories[i].size >= prefer_min_size]
            if prefer_min_size is not None
            else []
        )
        self._index = {(c.property, c.entity, c.side): i for i, c in enumerate(self.categories)}

    def _total(self, i: int) -> int:
        n = len(self.categories[i].members)
        return n * (n - 1) // 2

    def _close(self, i: int) -> None:
        self._open.remove(i)
        if i in self._preferred:
            self._preferred.remove(i)

    def draw(self, rng: np.random.Generator) -> tuple[Category, str, str] | None:
        """``(category, member a, member b)`` or ``None`` when every pair is used."""
        while self._open:
            pool = self._preferred or self._open
            i = pool[int(rng.integers(len(pool)))]
            total, used = self._total(i), self._used[i]
            if len(used) >= total:
                self._close(i)
                continue
            if len(used) < total // 2:
                index = int(rng.integers(total))
                while index in used:
                    index = int(rng.integers(total))
            else:
                left = sorted(set(range(total)) - used)
                index = left[int(rng.integers(len(left)))]
            used.add(index)
            if len(used) >= total:
                self._close(i)
            a, b = pair_from_index(len(self.categories[i].members), index)
            members = self.categories[i].members
            return self.categories[i], members[a], members[b]
        return None

    def accept(self, category: Category) -> None:
        """Record that a query was kept from ``category`` (closes it at the cap)."""
        i = self._index[(category.property, category.entity, category.side)]
        self._kept[i] += 1
        if (
            self.max_per_category is not None
            and self._kept[i] >= self.max_per_category
            and i in self._open
        ):
            self._close(i)


def edge_rejection(
    kg: KnowledgeGraph,
    edge: Edge,
    *,
    path_nodes: frozenset[str],
    blocklist: Mapping[str, str],
    max_target_holders: int = DEFAULT_MAX_TARGET_HOLDERS,
    checks: TargetChecks | None = None,
) -> tuple[str | None, int]:
    """Why ``edge`` cannot be an expansion (or ``None``), and its target's holder count.

    Reasons, checked in this order: ``"blocklisted"`` (r' in the blocklist),
    ``"no_template"`` (with ``checks.phrasing``: r' has no phrasing template),
    ``"target_on_path"`` (y already a node of the source path), ``"generic_target"``
    (``|{x : (x, r', y)}| > max_target_holders``), ``"unlabelled_target"``, and with
    ``checks``: ``"bad_target_label"`` (:func:`~creagraph.querygen.phrasing.label_problem`),
    ``"wrong_target_type"`` (:func:`~creagraph.querygen.specificity.target_type_rejection`),
    ``"generic_target_category"`` (y is generic in the world for r', e.g. a position
    type), ``"ungrammatical_target"`` (an activity such as "acting" after *is a*), and
    with ``checks.policy``: ``"broad_attribute"`` (checked first, before counting),
    ``"class_target"``, ``"broad_value"`` (:func:`target_policy_rejection`).
    The holder count is 0 when it was not needed.
    """
    if edge.property in blocklist:
        return "blocklisted", 0
    if checks is not None and checks.phrasing is not None and edge.property not in checks.phrasing:
        return "no_template", 0
    if checks is not None and checks.policy is not None and edge.property in checks.policy.drop:
        return "broad_attribute", 0
    if edge.object in path_nodes:
        return "target_on_path", 0
    holders = kg.count_subjects(edge.property, edge.object)
    if holders > max_target_holders:
        return "generic_target", holders
    label = kg.label(edge.object)
    if not label:
        return "unlabelled_target", holders
    if checks is not None:
        if label_problem(label) is not None:
            return "bad_target_label", holders
        if checks.types is not None and target_type_rejection(
            kg, edge.property, edge.object, label, checks.types
        ):
            return "wrong_target_type", holders
        if (
            checks.rules is not None
            and checks.rules.covers(edge.property)
            and category_rejection(kg, edge.property, edge.object, checks.rules) is not None
        ):
            return "generic_target_category", holders
        entry = checks.phrasing.get(edge.property) if checks.phrasing is not None else None
        if entry is not None and "{a y}" in entry.active and is_mass_noun(label):
            return "ungrammatical_target", holders
        if checks.policy is not None:
            reason = target_policy_rejection(kg, edge.property, edge.object, checks.policy)
            if reason is not None:
                return reason, holders
    return None, holders


def target_policy_rejection(
    kg: KnowledgeGraph, pid: str, entity: str, policy: TargetPolicy
) -> str | None:
    """Why the target ``(x, pid, entity)`` is broad in the world, or ``None``.

    ``"broad_attribute"``: ``pid`` is dropped as a target by the policy;
    ``"class_target"``: ``entity`` is a class (it has instances or subclasses in the
    graph: "Academy Awards" is the class of the Academy Award categories);
    ``"denied_label"``: the label matches a ``deny_label`` pattern of ``pid`` (an award
    ceremony, "56th Academy Awards", is not an award); ``"broad_value"``: one of
    ``entity``'s P31 classes is a broad class of ``pid`` (a city of millions as a
    birthplace).

    Examples
    --------
    >>> from creagraph.querygen.catalogue import load_target_policy
    >>> target_policy_rejection(kg, "P106", "Q33999", load_target_policy())  # doctest: +SKIP
    'broad_attribute'
    """
    if pid in policy.drop:
        return "broad_attribute"
    patterns = {**policy.deny_label.get("*", {}), **policy.deny_label.get(pid, {})}
    if patterns:
        label = kg.label(entity) or ""
        if any(re.search(pattern, label) for pattern in patterns):
            return "denied_label"
    if kg.count_subjects("P31", entity) > 0 or kg.count_subjects("P279", entity) > 0:
        return "class_target"
    broad = policy.broad_classes(pid)
    if broad and any(e.object in broad for e in kg.out_edges(entity, "P31")):
        return "broad_value"
    return None


def sample_expansion(
    kg: KnowledgeGraph,
    entity: str,
    rng: np.random.Generator,
    *,
    path_nodes: frozenset[str],
    blocklist: Mapping[str, str],
    max_target_holders: int = DEFAULT_MAX_TARGET_HOLDERS,
    skipped: Counter | None = None,
    checks: TargetChecks | None = None,
) -> tuple[Edge, int] | None:
    """One eligible outgoing edge of ``entity``, uniformly at random, with its holder count.

    The edges (sorted) are visited in a random permutation and the first eligible one
    is returned, which is a uniform draw among the eligible edges while testing only as
    many as needed. Rejections are counted into ``skipped`` by reason.
    """
    edges = kg.out_edges(entity)
    if not edges:
        return None
    for i in rng.permutation(len(edges)).tolist():
        edge = edges[i]
        reason, holders = edge_rejection(
            kg,
            edge,
            path_nodes=path_nodes,
            blocklist=blocklist,
            max_target_holders=max_target_holders,
            checks=checks,
        )
        if reason is None:
            return edge, holders
        if skipped is not None:
            skipped[reason] += 1
    return None
