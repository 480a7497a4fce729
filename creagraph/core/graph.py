"""The knowledge-graph interface every algorithm talks to (SPEC §2).

Backends (``creagraph.kg.EmbeddedKG``, ``creagraph.kg.SparqlKG``) implement the
:class:`KnowledgeGraph` protocol over Wikidata-style ids: entities are QIDs (``"Q42"``),
properties PIDs (``"P69"``); triples keep Wikidata's direction (subject, property, object).

Class sizes follow SPEC §3.4: ``count_subjects(p, o) = |{x : (x, p, o)}|`` and
``count_objects(s, p) = |{y : (s, p, y)}|``; both are exact.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from creagraph.core.io import InputError
from creagraph.core.text import normalize, normalize_loose, replace_lone_surrogates

__all__ = [
    "EntityRecord",
    "PropertyRecord",
    "Edge",
    "SearchHit",
    "Category",
    "KnowledgeGraph",
    "NameQuery",
    "NameSearch",
    "id_number",
    "id_prefix",
    "rank_hits",
    "search_text",
    "is_qid",
    "is_pid",
    "check_qid",
    "check_pid",
    "UnknownIdError",
]

_QID = re.compile(r"Q[1-9][0-9]*")
_PID = re.compile(r"P[1-9][0-9]*")

Side = Literal["subject", "object"]


class UnknownIdError(KeyError):
    """An id that is well formed but not in the graph."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


def is_qid(value: str) -> bool:
    """True for a well-formed Wikidata item id such as ``"Q42"``."""
    return isinstance(value, str) and _QID.fullmatch(value) is not None


def is_pid(value: str) -> bool:
    """True for a well-formed Wikidata property id such as ``"P69"``."""
    return isinstance(value, str) and _PID.fullmatch(value) is not None


def check_qid(value: str) -> str:
    """Return ``value`` if it is a well-formed QID, else raise :class:`InputError`
    (a ``ValueError``)."""
    if not is_qid(value):
        raise InputError(f"not a Wikidata item id (Q followed by digits): {value!r}")
    return value


def check_pid(value: str) -> str:
    """Return ``value`` if it is a well-formed PID, else raise :class:`InputError`
    (a ``ValueError``)."""
    if not is_pid(value):
        raise InputError(f"not a Wikidata property id (P followed by digits): {value!r}")
    return value


@dataclass(frozen=True)
class _Record:
    """What items and properties both carry: id, English label, aliases, description."""

    id: str
    label: str | None
    aliases: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True)
class EntityRecord(_Record):
    """An item: QID, English label, aliases and short description."""


@dataclass(frozen=True)
class PropertyRecord(_Record):
    """A property: PID, label, aliases, description and (where known) inverse phrasing."""

    inverse_label: str | None = None


@dataclass(frozen=True, order=True)
class Edge:
    """One truthy statement ``(subject, property, object)``."""

    subject: str
    property: str
    object: str

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.subject, self.property, self.object)


@dataclass(frozen=True)
class SearchHit:
    """One result of a label/alias search.

    ``score`` is 100 for an exact match after normalisation, else the fuzzy score (0-100).
    """

    id: str
    label: str | None
    matched: str
    kind: Literal["label", "alias"]
    score: float
    exact: bool


@dataclass(frozen=True)
class Category:
    """A class of entities sharing relation ``property`` with ``entity`` (SPEC §3.1).

    ``side == "subject"``: members are ``{x : (x, property, entity)}``;
    ``side == "object"``: members are ``{y : (entity, property, y)}``.
    """

    property: str
    entity: str
    side: Side
    size: int
    members: tuple[str, ...] = field(default=(), compare=False, repr=False)


@runtime_checkable
class KnowledgeGraph(Protocol):
    """Operations every knowledge-graph backend provides (SPEC §2).

    Both backends (``EmbeddedKG``, ``SparqlKG``) conform, with the same signatures
    (``tests/core/test_graph.py`` checks it); the jobs call nothing else on a graph.
    """

    #: ``"embedded"`` or ``"sparql"``: which backend answers.
    backend: str

    def entity(self, qid: str) -> EntityRecord | None:
        """The entity's record, or ``None`` when the graph does not know it."""
        ...

    def property(self, pid: str) -> PropertyRecord | None:
        """The property's record, or ``None``."""
        ...

    def search(
        self,
        text: str,
        *,
        limit: int = 10,
        fuzzy: bool = True,
        kind: str = "entity",
        min_score: float = 80.0,
    ) -> list[SearchHit]:
        """Entities (``kind="entity"``) or properties (``kind="property"``) whose label or
        alias matches ``text``: exact after case/accent normalisation first, then fuzzy
        (token-sort similarity of the normalised names ≥ ``min_score``, 0–100)."""
        ...

    def out_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        """Statements with ``qid`` as subject (optionally only property ``prop``), sorted."""
        ...

    def in_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        """Statements with ``qid`` as object (optionally only property ``prop``), sorted."""
        ...

    def has_triple(self, subject: str, prop: str, obj: str) -> bool:
        """Whether the statement exists."""
        ...

    def count_subjects(self, prop: str, obj: str) -> int:
        """``|{x : (x, prop, obj)}|``."""
        ...

    def count_objects(self, subject: str, prop: str) -> int:
        """``|{y : (subject, prop, y)}|``."""
        ...

    def categories(
        self,
        properties: Iterable[str],
        *,
        side: Side,
        min_size: int = 2,
        max_size: int | None = None,
    ) -> Iterator[Category]:
        """Every category of the given properties whose size is in ``[min_size, max_size]``,
        with its members, in a deterministic order (property, then entity id)."""
        ...

    def edges_between(self, a: str, b: str) -> list[Edge]:
        """Statements linking ``a`` and ``b`` in either direction (``a → b`` and ``b → a``),
        sorted."""
        ...

    def property_types(self, prop: str, side: Side, *, limit: int = 20) -> dict[str, int]:
        """Classes (P31) of the entities on one side of ``prop``: class QID -> number of
        distinct subjects (``side="subject"``) or objects (``side="object"``) of ``prop``
        that are instances of it; the ``limit`` largest, ties broken by id (exact counts,
        the same in every backend)."""
        ...

    def degree(self, qid: str) -> int:
        """Number of statements with ``qid`` as subject or object."""
        ...

    def label(self, ident: str) -> str | None:
        """The label of one item or property, or ``None``."""
        ...

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        """Labels of many items/properties at once (ids without a label are left out)."""
        ...

    def property_counts(self) -> dict[str, int]:
        """Statements per property (item-to-item statements only)."""
        ...

    def stats(self) -> dict[str, int]:
        """At least ``statements``, ``entities`` and ``properties``."""
        ...

    def close(self) -> None:
        """Release what the backend holds open (files, connections)."""
        ...


def search_text(text: str) -> str:
    r"""Search text as a backend can use it: a lone UTF-16 surrogate (valid in JSON as
    ``"\ud800"``, and what undecodable bytes in a command line become) is no character
    and cannot be encoded; it becomes U+FFFD, which matches no name, instead of an error.

    Examples
    --------
    >>> search_text("Paris\ud800") == "Paris\ufffd"
    True
    """
    return replace_lone_surrogates(text)[0]


def id_prefix(kind: str) -> str:
    """``"Q"`` for ``kind="entity"``, ``"P"`` for ``kind="property"``; else ``ValueError``."""
    if kind not in ("entity", "property"):
        raise ValueError(f"kind must be 'entity' or 'property', not {kind!r}")
    return "Q" if kind == "entity" else "P"


def id_number(ident: str) -> int:
    """Numeric part of a QID/PID, for a stable sort order."""
    return int(ident[1:])


def rank_hits(
    hits: list[SearchHit],
    limit: int,
    popularity: Callable[[list[str]], dict[str, int]],
    labels: Callable[[list[str]], dict[str, str]],
) -> list[SearchHit]:
    """Merge hits per id and order them the same way in every backend.

    Order: exact matches first, then higher fuzzy score, label matches before alias
    matches, more statements (popularity) first, then the smaller id.
    """
    best: dict[str, SearchHit] = {}
    for hit in hits:
        current = best.get(hit.id)
        rank = (hit.exact, hit.score, hit.kind == "label", hit.matched)
        if current is None or rank > (
            current.exact,
            current.score,
            current.kind == "label",
            current.matched,
        ):
            best[hit.id] = hit
    ids = list(best)
    pop = popularity(ids) if ids else {}
    ordered = sorted(
        best.values(),
        key=lambda h: (
            not h.exact,
            -h.score,
            h.kind != "label",
            -pop.get(h.id, 0),
            id_number(h.id),
        ),
    )[:limit]
    names = labels([h.id for h in ordered])
    return [SearchHit(h.id, names.get(h.id), h.matched, h.kind, h.score, h.exact) for h in ordered]


@dataclass(frozen=True)
class NameQuery:
    """What one :meth:`NameSearch.search` looks for.

    ``prefix`` is ``"Q"`` or ``"P"`` (the kind of id wanted), ``text`` the search text made
    encodable (:func:`search_text`), ``key`` and ``loose`` its normalised forms
    (:func:`creagraph.core.text.normalize`, :func:`~creagraph.core.text.normalize_loose`);
    an empty ``loose`` (text that is all punctuation) allows no fuzzy match.
    """

    prefix: str
    text: str
    key: str
    loose: str

    @classmethod
    def of(cls, text: str, kind: str) -> NameQuery:
        """The query for ``text`` among entities (``kind="entity"``) or properties."""
        prefix = id_prefix(kind)
        text = search_text(text)
        return cls(prefix, text, normalize(text), normalize_loose(text))


#: Fuzzy hits wanted at most, and the least score (0–100): the fuzzy step of a search.
FuzzyStep = Callable[[int, float], list[SearchHit]]


class NameSearch(ABC):
    """The label/alias search every backend shares (SPEC §2): exact matches after
    normalisation, then — when they name fewer than ``limit`` ids — fuzzy ones, merged and
    ranked by :func:`rank_hits`.

    A backend provides :meth:`_name_matches` (its exact hits and its fuzzy step),
    :meth:`_popularity` and :meth:`labels`.
    """

    def search(
        self,
        text: str,
        *,
        limit: int = 10,
        fuzzy: bool = True,
        kind: str = "entity",
        min_score: float = 80.0,
    ) -> list[SearchHit]:
        """Entities (``kind="entity"``) or properties (``kind="property"``) whose label or
        alias matches ``text``: exact after case/accent normalisation first, then fuzzy
        (token-sort similarity of the normalised names ≥ ``min_score``, 0–100), at most
        ``limit``, in the order of :func:`rank_hits`."""
        query = NameQuery.of(text, kind)
        hits, fuzzy_step = self._name_matches(query)
        if fuzzy and len({h.id for h in hits}) < limit and query.loose:
            hits.extend(fuzzy_step(limit * 3, min_score))
        return rank_hits(hits, limit, self._popularity, self.labels)

    @abstractmethod
    def _name_matches(self, query: NameQuery) -> tuple[list[SearchHit], FuzzyStep]:
        """The exact hits for ``query`` (score 100), and the function giving its fuzzy hits
        (``limit``, ``min_score``) should they be too few."""

    @abstractmethod
    def _popularity(self, ids: list[str]) -> dict[str, int]:
        """Statements per id (0 for properties), to rank equal hits."""

    @abstractmethod
    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        """Labels of many ids (ids without a label are left out)."""
