"""The knowledge-graph interface every algorithm talks to (SPEC §2).

Backends (``creagraph.kg.EmbeddedKG``, ``creagraph.kg.SparqlKG``) implement the
:class:`KnowledgeGraph` protocol over Wikidata-style ids: entities are QIDs (``"Q42"``),
properties PIDs (``"P69"``); triples keep Wikidata's direction (subject, property, object).

Class sizes follow SPEC §3.4: ``count_subjects(p, o) = |{x : (x, p, o)}|`` and
``count_objects(s, p) = |{y : (s, p, y)}|``; both are exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from creagraph.core.io import InputError

__all__ = [
    "EntityRecord",
    "PropertyRecord",
    "Edge",
    "SearchHit",
    "Category",
    "KnowledgeGraph",
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
class EntityRecord:
    """An item: QID, English label, aliases and short description."""

    id: str
    label: str | None
    aliases: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True)
class PropertyRecord:
    """A property: PID, label, aliases, description and (where known) inverse phrasing."""

    id: str
    label: str | None
    aliases: tuple[str, ...] = ()
    description: str | None = None
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
    """Operations every knowledge-graph backend provides (SPEC §2)."""

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

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        """Labels of many items/properties at once (ids without a label are left out)."""
        ...

    def stats(self) -> dict[str, int]:
        """At least ``statements``, ``entities`` and ``properties``."""
        ...
