"""A knowledge graph held in memory: a few statements and names, no store or server.

:class:`MemoryKG` implements the :class:`~creagraph.core.graph.KnowledgeGraph` protocol
(SPEC §2) over plain Python containers, with the same answers an embedded store imported
from the same statements gives (``tests/kg/test_memory.py`` compares them). It is meant for
examples, tests and small hand-made graphs; a real slice belongs in the embedded store
(:class:`creagraph.kg.EmbeddedKG`), which is indexed and persistent.

Examples
--------
>>> kg = MemoryKG(
...     [("Q1", "P166", "Q10"), ("Q2", "P166", "Q10"), ("Q2", "P106", "Q20")],
...     labels={"Q1": "Ada", "Q2": "Bea", "Q10": "Prize", "Q20": "poet",
...             "P166": "award received", "P106": "occupation"},
... )
>>> kg.count_subjects("P166", "Q10"), kg.count_objects("Q2", "P106")
(2, 1)
>>> [e.as_tuple() for e in kg.in_edges("Q10")]
[('Q1', 'P166', 'Q10'), ('Q2', 'P166', 'Q10')]
>>> kg.search("bea")[0].id, kg.property("P166").label
('Q2', 'award received')
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence

from creagraph.core.graph import (
    Category,
    Edge,
    EntityRecord,
    FuzzyStep,
    NameQuery,
    NameSearch,
    PropertyRecord,
    SearchHit,
    Side,
    check_pid,
    check_qid,
    id_number,
    is_pid,
)
from creagraph.core.io import InputError
from creagraph.core.text import normalize, normalize_loose

__all__ = ["MemoryKG"]


def _id_key(ident: str) -> tuple[int, str]:
    return (id_number(ident), ident)


class MemoryKG(NameSearch):
    """A :class:`~creagraph.core.graph.KnowledgeGraph` over statements given in memory.

    Parameters
    ----------
    triples : iterable of (subject QID, property PID, object QID)
        Item-to-item statements in Wikidata's direction; repeats count once.
    labels, descriptions : mapping of id to str, optional
        English label and description of items and properties.
    aliases : mapping of id to sequence of str, optional
        Other names of items and properties.
    inverse_labels : mapping of PID to str, optional
        Inverse phrasing of properties (``"P161"`` → ``"appeared in"``).

    Raises
    ------
    InputError
        A malformed id, naming the statement.
    """

    backend = "memory"

    def __init__(
        self,
        triples: Iterable[Sequence[str]],
        *,
        labels: Mapping[str, str] | None = None,
        aliases: Mapping[str, Sequence[str]] | None = None,
        descriptions: Mapping[str, str] | None = None,
        inverse_labels: Mapping[str, str] | None = None,
    ):
        statements: set[tuple[str, str, str]] = set()
        for i, triple in enumerate(triples):
            if len(triple) != 3:
                raise InputError(f"statement {i}: expected (subject, property, object)")
            s, p, o = (str(part) for part in triple)
            try:
                statements.add((check_qid(s), check_pid(p), check_qid(o)))
            except InputError as err:
                raise InputError(f"statement {i}: {err}") from None
        # ordered as the embedded store orders them: by property, then the other end (ids
        # compared by number)
        self._edges = sorted(
            (Edge(*t) for t in statements),
            key=lambda e: (_id_key(e.subject), _id_key(e.property), _id_key(e.object)),
        )
        self._out: dict[str, list[Edge]] = defaultdict(list)
        self._in: dict[str, list[Edge]] = defaultdict(list)
        for edge in self._edges:
            self._out[edge.subject].append(edge)
            self._in[edge.object].append(edge)
        for edges in self._in.values():
            edges.sort(key=lambda e: (_id_key(e.property), _id_key(e.subject)))
        self._labels = dict(labels or {})
        self._aliases = {k: tuple(v) for k, v in (aliases or {}).items()}
        self._descriptions = dict(descriptions or {})
        self._inverse = dict(inverse_labels or {})
        self._properties = {e.property for e in self._edges} | {
            i for i in (*self._labels, *self._aliases) if is_pid(i)
        }
        self._entities = {e.subject for e in self._edges} | {e.object for e in self._edges}
        self._entities |= {i for i in (*self._labels, *self._aliases) if not is_pid(i)}

    # -- records and names -------------------------------------------------------------

    def entity(self, qid: str) -> EntityRecord | None:
        """The item's record, or ``None`` when the graph does not know it."""
        if qid not in self._entities:
            return None
        return EntityRecord(
            qid, self._labels.get(qid), self._aliases.get(qid, ()), self._descriptions.get(qid)
        )

    def property(self, pid: str) -> PropertyRecord | None:
        """The property's record, or ``None``."""
        if pid not in self._properties:
            return None
        return PropertyRecord(
            pid,
            self._labels.get(pid),
            self._aliases.get(pid, ()),
            self._descriptions.get(pid),
            self._inverse.get(pid),
        )

    def label(self, ident: str) -> str | None:
        """The label of one item or property, or ``None``."""
        return self._labels.get(ident)

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        """Labels of many items/properties at once (ids without a label are left out)."""
        return {i: self._labels[i] for i in idents if i in self._labels}

    def _names(self, prefix: str) -> Iterator[tuple[str, str, str]]:
        """(id, name, "label" | "alias") of every item (``"Q"``) or property (``"P"``)."""
        for ident, name in self._labels.items():
            if ident.startswith(prefix):
                yield ident, name, "label"
        for ident, names in self._aliases.items():
            if ident.startswith(prefix):
                for name in names:
                    yield ident, name, "alias"

    def _name_matches(self, query: NameQuery) -> tuple[list[SearchHit], FuzzyStep]:
        names = list(self._names(query.prefix))
        exact = [
            SearchHit(i, None, name, kind, 100.0, True)  # type: ignore[arg-type]
            for i, name, kind in names
            if normalize(name) == query.key
        ]

        def fuzzy(limit: int, min_score: float) -> list[SearchHit]:
            from rapidfuzz import fuzz

            hits = []
            for i, name, kind in names:
                score = float(fuzz.token_sort_ratio(query.loose, normalize_loose(name)))
                if score >= min_score:
                    hits.append(SearchHit(i, None, name, kind, score, False))  # type: ignore[arg-type]
            return sorted(hits, key=lambda h: -h.score)[:limit]

        return exact, fuzzy

    def _popularity(self, ids: list[str]) -> dict[str, int]:
        return {i: self.degree(i) if not is_pid(i) else 0 for i in ids}

    # -- statements ----------------------------------------------------------------------

    def out_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        """Statements with ``qid`` as subject (optionally only property ``prop``), sorted."""
        return [e for e in self._out.get(qid, []) if prop is None or e.property == prop]

    def in_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        """Statements with ``qid`` as object (optionally only property ``prop``), sorted."""
        return [e for e in self._in.get(qid, []) if prop is None or e.property == prop]

    def has_triple(self, subject: str, prop: str, obj: str) -> bool:
        """Whether the statement exists."""
        return Edge(subject, prop, obj) in self.out_edges(subject, prop)

    def count_subjects(self, prop: str, obj: str) -> int:
        """``|{x : (x, prop, obj)}|``."""
        return len(self.in_edges(obj, prop))

    def count_objects(self, subject: str, prop: str) -> int:
        """``|{y : (subject, prop, y)}|``."""
        return len(self.out_edges(subject, prop))

    def edges_between(self, a: str, b: str) -> list[Edge]:
        """Statements linking ``a`` and ``b`` in either direction, sorted."""
        found = [e for e in self._out.get(a, []) if e.object == b]
        found += [e for e in self._out.get(b, []) if e.object == a]
        return sorted(set(found), key=lambda e: tuple(map(_id_key, e.as_tuple())))

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
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        for prop in sorted(set(properties), key=_id_key):
            groups: dict[str, list[str]] = defaultdict(list)
            for e in self._edges:
                if e.property == prop:
                    if side == "subject":
                        groups[e.object].append(e.subject)
                    else:
                        groups[e.subject].append(e.object)
            for entity in sorted(groups, key=_id_key):
                members = tuple(sorted(groups[entity], key=_id_key))
                if len(members) >= min_size and (max_size is None or len(members) <= max_size):
                    yield Category(prop, entity, side, len(members), members)

    def property_types(self, prop: str, side: Side, *, limit: int = 20) -> dict[str, int]:
        """Classes (P31) of the entities on one side of ``prop``: class QID -> number of
        distinct entities of that side that are instances of it; the ``limit`` largest,
        ties broken by id."""
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        ends = {e.subject if side == "subject" else e.object for e in self._edges
                if e.property == prop}  # fmt: skip
        counts: Counter[str] = Counter()
        for entity in ends:
            counts.update({e.object for e in self.out_edges(entity, "P31")})
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], _id_key(kv[0])))[:limit]
        return dict(ranked)

    def degree(self, qid: str) -> int:
        """Number of statements with ``qid`` as subject or object."""
        return len(self._out.get(qid, [])) + len(self._in.get(qid, []))

    def property_counts(self) -> dict[str, int]:
        """Statements per property."""
        return dict(sorted(Counter(e.property for e in self._edges).items(),
                           key=lambda kv: _id_key(kv[0])))  # fmt: skip

    def stats(self) -> dict[str, int]:
        """``statements``, ``entities`` and ``properties``."""
        return {
            "statements": len(self._edges),
            "entities": len(self._entities),
            "properties": len(self._properties),
        }

    def close(self) -> None:
        """Nothing to release."""
