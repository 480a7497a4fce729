"""A persistent cache of kg-judged triple verdicts (issue 19; SPEC §3.4).

A warm run of the stored judge only reads cached vectors; a warm kg-judged run used to
ground every triple again (link both ends and the relation, look for the statement, count
the classes): ~0.8–1.7 s for 12 sample answers, where the stored judge takes ~0.05 s.
:class:`GroundingCache` keeps each :class:`~creagraph.scoring.grounding.TripleGrounding`
in an SQLite file beside the embedding cache (``grounding.sqlite`` in
:func:`~creagraph.core.embeddings.default_cache_dir`), so a warm kg-judged run reads its
verdicts the way the stored judge reads its vectors.

A verdict is kept in the typed columns of one row of the table ``triple_verdicts`` (its
evidence as JSON), under its context and its triple (issue 31: a warm run decodes only the
evidence, and the key is the triple's text, not a hash). The context is the SHA-256 of

- :data:`GROUNDING_VERSION` (bumped whenever grounding or linking logic changes),
- the graph's identity: the SHA-256 of its store's ``meta.json`` (which records every
  store file's checksum, so a re-import is another graph); a graph without a store (a
  SPARQL endpoint) is not cached,
- every grounding setting: the grounder's (``min_confidence``, ``edge_min_similarity``,
  ``candidates``, the known negatives), the entity linker's (``candidates``,
  ``min_fuzzy``), the relation linker's (``top_k``, ``min_similarity``, what its
  property-name table is made from besides the graph) and the embedder's name (model and
  precision), and the catalogues grounding reads (relation phrases, inverse, symmetric,
  complete and containment properties),

kept once in the table ``contexts`` (a row's ``context`` is its number there); the
triple's key is its text as given and the query entities its ends are tied to
(:meth:`GroundingCache.triple_key`). Verdicts kept by earlier versions (a JSON blob per
SHA-256 key in the table ``verdicts``) are not read: such a cache is read cold once.

The entity linker's links are kept too, in the table ``verdicts`` (a JSON value under the
SHA-256 of its context and the mention; the grounder shares its cache with its entity
linker), under the graph's identity, the linker's settings and the mention's text:
the scorer's validity rule links each query's own entities too, and a name without an
exact match would otherwise load the fuzzy-search tables on every warm run.

The relation linker's links are kept too (:class:`RelationLinkMemo`; the grounder gives
its linker one), under :data:`GROUNDING_VERSION`, the graph's identity, the linker's
settings and property-name table, the embedder's name and the phrase (its normalised form
and the text embedded): a warm run then reads neither the phrases' vectors nor the ~2,900
property names' (issue 31). Only beside a caching embedder, whose vector of a text stays
the one first computed, so that the links read are the links computed again.

The verdict a cold run computed is what a warm run reads: the records are identical
(``tests/scoring/test_groundcache.py``). Within a run the linkers remember each name by its
normalised form, so spellings that normalise alike share the links of the first one met;
a cached verdict carries that of the run that computed it.
``CREAGRAPH_GROUNDING_CACHE=0`` turns the cache off.

What a run computes is written in one transaction per answer (:meth:`GroundingCache.flush`,
called by the scorer after each answer, every :data:`FLUSH_EVERY` entries, at ``close`` and
when the process ends), not one commit per entry; until then the cache reads it from memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import warnings
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from creagraph.core import settings
from creagraph.core.relations import RelationLink
from creagraph.core.sqlitecache import cache_error, open_cache_tables

__all__ = [
    "GROUNDING_VERSION",
    "GroundingCache",
    "RelationLinkMemo",
    "relation_link_context",
    "default_grounding_cache",
    "grounding_context",
    "linker_context",
    "store_digest",
]

#: Bump when a change to grounding or linking can change any verdict.
GROUNDING_VERSION = 4

_TABLE = "CREATE TABLE IF NOT EXISTS verdicts (key BLOB PRIMARY KEY, verdict TEXT NOT NULL)"
#: The triple verdicts' tables (issue 31): each context once, each verdict in typed columns.
_VERDICT_TABLES = (
    "CREATE TABLE IF NOT EXISTS contexts (id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE)",
    "CREATE TABLE IF NOT EXISTS triple_verdicts (context INTEGER NOT NULL, triple BLOB NOT NULL,"
    " status TEXT NOT NULL, reason TEXT NOT NULL, subject TEXT, property TEXT, object TEXT,"
    " class_size_subjects INTEGER, class_size_objects INTEGER, specificity INTEGER,"
    " evidence TEXT NOT NULL, PRIMARY KEY (context, triple)) WITHOUT ROWID",
)
_VERDICT_COLUMNS = (
    "status, reason, subject, property, object, class_size_subjects, class_size_objects, "
    "specificity, evidence"
)
_STATUSES = frozenset({"verified", "refuted", "unknown"})
#: Evidence texts a cache keeps decoded (:func:`_verdict_fields`) before it starts over.
_DECODED_TEXTS = 20_000
#: Entries kept in memory before :meth:`GroundingCache.flush` writes them at once.
FLUSH_EVERY = 512
#: Decodes one JSON value, the end checked by the caller (``json.loads`` without its two
#: whitespace scans: a warm run decodes ~3,600 evidence records).
_DECODE = json.JSONDecoder().raw_decode

#: ``json.dumps(value, ensure_ascii=False)``, without building an encoder per call (which
#: ``json.dumps`` does for any non-default option: a third of a warm run's key cost).
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def store_digest(store: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of a graph store's ``meta.json`` (which records every store file's
    checksum), or ``None`` when it cannot be read."""
    try:
        return hashlib.sha256((Path(store) / "meta.json").read_bytes()).hexdigest()
    except OSError:
        return None


def _store_identity(kg: Any) -> str | None:
    store = getattr(kg, "store", None)
    return None if store is None else store_digest(store)


def _linker_settings(linker: Any) -> list[Any]:
    """The entity linker's settings that decide its links (part of both cache contexts)."""
    return [type(linker).__name__, linker.candidates, linker.min_fuzzy]


def _relation_settings(linker: Any) -> list[Any]:
    """The relation linker's settings that decide its links (part of the verdicts' and the
    kept links' contexts): its type, ``top_k``, ``min_similarity``, what decides its
    property-name table besides the graph (``table_identity``: the table is not built for
    this, issue 31; the graph's identity is in each context) and the embedder's name (model
    and precision)."""
    identity = getattr(linker, "table_identity", None)
    return [
        type(linker).__name__,
        linker.top_k,
        linker.min_similarity,
        identity() if identity is not None else linker._names,
        getattr(linker.embedder, "name", None),
    ]


def relation_link_context(linker: Any) -> str | None:
    """The part of the cache keys of a relation linker's kept links:
    :data:`GROUNDING_VERSION`, the graph's identity (``None`` for a graph without a store)
    and :func:`_relation_settings`."""
    store = _store_identity(linker.kg)
    if store is None:
        return None
    return _digest(
        {"version": GROUNDING_VERSION, "store": store, "relation links": _relation_settings(linker)}
    )


def linker_context(linker: Any) -> str | None:
    """The part of the cache keys of an entity linker's links: :data:`GROUNDING_VERSION`,
    the graph's identity and the linker's settings; ``None`` for a graph without a store."""
    store = _store_identity(linker.kg)
    if store is None:
        return None
    settings = _linker_settings(linker)
    return _digest({"version": GROUNDING_VERSION, "store": store, "entities": settings})


def grounding_context(grounder: Any) -> str | None:
    """The part of every cache key that ``grounder`` decides (see the module docstring),
    or ``None`` when its graph has no store to identify it by."""
    from creagraph.core.relations import directional_verbs
    from creagraph.scoring import grounding

    store = _store_identity(grounder.kg)
    if store is None:
        return None
    relations = grounder.relations
    settings = {
        "version": GROUNDING_VERSION,
        "store": store,
        "backend": getattr(grounder.kg, "backend", type(grounder.kg).__name__),
        "grounder": [
            grounder.min_confidence,
            grounder.edge_min_similarity,
            grounder.embedding_margin,
            grounder.candidates,
            sorted(grounder.negatives),
        ],
        "entities": _linker_settings(grounder.entities),
        "relations": _relation_settings(relations),
        "catalogues": [
            grounding.relation_phrases(),
            grounding.inverse_properties(),
            sorted(grounding.symmetric_properties()),
            grounding.complete_properties(),
            grounding.containment_properties(),
            grounding.property_implications(),
            sorted(directional_verbs()),
        ],
    }
    return _digest(settings)


class GroundingCache:
    """Triple verdicts in an SQLite file, shared between runs and processes.

    Parameters
    ----------
    path : path, optional
        SQLite file. Default ``default_cache_dir() / "grounding.sqlite"``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None):
        from creagraph.core.embeddings import default_cache_dir

        self.path = Path(path) if path else default_cache_dir() / "grounding.sqlite"
        self._lock = threading.RLock()
        self.hits = self.misses = 0
        #: what put/put_verdict were given and flush() has not yet written (issue 31)
        self._pending: dict[bytes, str] = {}
        self._pending_verdicts: dict[tuple[int, bytes], tuple] = {}
        self._evidence: dict[str, Any] = {}  # evidence text -> its decoded value
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=120)
        except (OSError, sqlite3.Error) as exc:
            raise self._error(exc) from exc
        self._contexts: dict[str, int] = {}
        try:
            open_cache_tables(self._conn, _TABLE, *_VERDICT_TABLES)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise self._error(exc) from exc
        # what is still pending when the process ends is written then
        self._finalizer = weakref.finalize(
            self, _write_pending, self._conn, self._lock, self._pending,
            self._pending_verdicts, self.path,
        )  # fmt: skip

    def _error(self, exc: Exception) -> Exception:
        """The error naming this file: a full disk or a lock says so, damage says delete."""
        return cache_error(self.path, exc, "grounding cache",
                           "verdicts that can be computed again")

    @staticmethod
    def key(context: str, triple: tuple[str, ...], ids: tuple[Any, ...]) -> bytes:
        """The key of one triple's verdict under ``context`` (:func:`grounding_context`),
        or of one mention's entity links (``triple``: the mention alone, no ``ids``; under
        :func:`linker_context`)."""
        text = _ENCODER.encode([context, list(triple), list(ids)])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()

    @staticmethod
    def triple_key(triple: tuple[str, str, str], ids: tuple[str | None, ...]) -> bytes:
        """The key of one triple's verdict within its context: the three texts as given,
        each after its length, and the query entities its ends are tied to (each after its
        length, or nothing for ``None``), in UTF-8 (lone surrogates kept). Unambiguous: two
        different ``(triple, ids)`` never share a key
        (``tests/scoring/test_groundcache.py``)."""
        head, relation, tail = triple
        text = f"{len(head)}:{len(relation)}:{len(tail)}:{head}{relation}{tail}" + "".join(
            "/" if i is None else f"/{len(i)}:{i}" for i in ids
        )
        return text.encode("utf-8", "surrogatepass")

    def context_id(self, context: str) -> int:
        """The number of ``context`` (:func:`grounding_context`) in the table ``contexts``,
        added there when new."""
        number = self._contexts.get(context)
        if number is None:
            find = "SELECT id FROM contexts WHERE digest = ?"
            try:
                with self._lock:
                    row = self._conn.execute(find, (context,)).fetchone()
                    if row is None:  # a new context (a warm run writes nothing here)
                        with self._conn:
                            add = "INSERT OR IGNORE INTO contexts (digest) VALUES (?)"
                            self._conn.execute(add, (context,))
                            row = self._conn.execute(find, (context,)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise self._error(exc) from exc
            if row is None or type(row[0]) is not int:
                raise self._error(ValueError(f"no number for context {context}"))
            number = self._contexts[context] = row[0]
        return number

    def get_verdicts(
        self, context: str, keys: Iterable[bytes], *, chunk: int = 500
    ) -> dict[bytes, dict[str, Any]]:
        """The fields (:meth:`~creagraph.scoring.grounding.TripleGrounding.fields`) of the
        verdicts kept under ``context`` for those of ``keys`` (:meth:`triple_key`) found,
        read in one query per ``chunk`` keys; a key absent counts as a miss, one found as a
        hit. A row that is not a verdict is reported as a damaged cache naming the file."""
        wanted = list(dict.fromkeys(keys))
        found: dict[bytes, dict[str, Any]] = {}
        if not wanted:
            return found
        number = self.context_id(context)
        try:
            if self._pending_verdicts:
                with self._lock:
                    rows = [
                        (key, *self._pending_verdicts[(number, key)][2:])
                        for key in wanted
                        if (number, key) in self._pending_verdicts
                    ]
                for row in rows:
                    found[row[0]] = _verdict_fields(row, self._evidence)
            for start in range(0, len(wanted), chunk):
                part = wanted[start : start + chunk]
                query = (
                    f"SELECT triple, {_VERDICT_COLUMNS} FROM triple_verdicts WHERE context = ?"
                    f" AND triple IN ({','.join('?' * len(part))})"
                )
                with self._lock:
                    rows = self._conn.execute(query, (number, *part)).fetchall()
                for row in rows:
                    found.setdefault(bytes(row[0]), _verdict_fields(row, self._evidence))
        except (sqlite3.DatabaseError, ValueError, TypeError, IndexError) as exc:
            raise self._error(exc) from exc
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def put_verdict(self, context: str, key: bytes, fields: Mapping[str, Any]) -> None:
        """Keep a verdict's fields under ``context`` and ``key`` (:meth:`triple_key`)."""
        number = self.context_id(context)
        row = (
            number,
            key,
            fields["status"],
            fields["reason"],
            fields["subject"],
            fields["property"],
            fields["object"],
            fields["class_size_subjects"],
            fields["class_size_objects"],
            fields["specificity"],
            _ENCODER.encode(fields["evidence"]),
        )
        with self._lock:
            self._pending_verdicts[(number, key)] = row
            if len(self._pending_verdicts) + len(self._pending) >= FLUSH_EVERY:
                self.flush()

    def flush(self) -> None:
        """Write what :meth:`put` and :meth:`put_verdict` were given since the last flush,
        in one transaction (issue 31: a cold run kept ~6,500 entries, one commit each).

        Called every :data:`FLUSH_EVERY` entries, by
        :meth:`~creagraph.scoring.grounding.Grounder.prefetch` before each answer, by
        :meth:`close` and when the process ends; until then the entries are read from
        memory. A process killed in between loses only those entries (computed again by
        the next run), never what was written."""
        try:
            _write_pending(self._conn, self._lock, self._pending, self._pending_verdicts)
        except sqlite3.DatabaseError as exc:  # "database or disk is full" is not damage
            raise self._error(exc) from exc

    def get(self, key: bytes) -> Any:
        """What :meth:`put` stored under ``key``, or ``None``."""
        try:
            with self._lock:
                pending = self._pending.get(key)
                if pending is not None:
                    row: Any = (pending,)
                else:
                    query = "SELECT verdict FROM verdicts WHERE key = ?"
                    row = self._conn.execute(query, (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            value = json.loads(row[0])
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise self._error(exc) from exc
        self.hits += 1
        return value

    def get_many(self, keys: Iterable[bytes], *, chunk: int = 500) -> dict[bytes, Any]:
        """What :meth:`put` stored under each of ``keys`` that it holds, read in one query
        per ``chunk`` keys (a warm run reads an answer's verdicts at once, not one
        ``SELECT`` per triple: issue 31). The same values :meth:`get` returns one by one;
        a key absent here counts as a miss, one found as a hit."""
        wanted = list(dict.fromkeys(keys))
        found: dict[bytes, Any] = {}
        try:
            if self._pending:
                with self._lock:
                    texts = [(k, self._pending[k]) for k in wanted if k in self._pending]
                for key, text in texts:
                    found[key] = json.loads(text)
            for start in range(0, len(wanted), chunk):
                part = wanted[start : start + chunk]
                marks = ",".join("?" * len(part))
                query = f"SELECT key, verdict FROM verdicts WHERE key IN ({marks})"
                with self._lock:
                    rows = self._conn.execute(query, part).fetchall()
                for key, text in rows:
                    if bytes(key) not in found:
                        found[bytes(key)] = json.loads(text)
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise self._error(exc) from exc
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def put(self, key: bytes, fields: Mapping[str, Any] | list) -> None:
        """Store a verdict's fields (or a mention's links, as a list) under ``key``."""
        text = _ENCODER.encode(fields)
        with self._lock:
            self._pending[key] = text
            if len(self._pending_verdicts) + len(self._pending) >= FLUSH_EVERY:
                self.flush()

    def close(self) -> None:
        """Write what is pending (:meth:`flush`) and close the file."""
        try:
            self.flush()
        finally:
            self._finalizer.detach()
            self._conn.close()


def _write_pending(
    conn: sqlite3.Connection,
    lock: Any,
    pending: dict[bytes, str],
    verdicts: dict[tuple[int, bytes], tuple],
    path: Path | None = None,
) -> None:
    """Write the pending entries of a :class:`GroundingCache` in one transaction and
    forget them. With ``path`` (at the end of the process) a failure is a warning naming
    the file: the entries are lost, nothing written is."""
    with lock:
        if not pending and not verdicts:
            return
        try:
            with conn:
                if pending:
                    conn.executemany(
                        "INSERT OR REPLACE INTO verdicts (key, verdict) VALUES (?, ?)",
                        list(pending.items()),
                    )
                if verdicts:
                    conn.executemany(
                        "INSERT OR REPLACE INTO triple_verdicts (context, triple, "
                        f"{_VERDICT_COLUMNS}) VALUES ({','.join('?' * 11)})",
                        list(verdicts.values()),
                    )
        except sqlite3.Error as exc:
            if path is None:
                raise
            warnings.warn(f"{path}: grounding verdicts not kept ({exc})", stacklevel=1)
        finally:
            pending.clear()
            verdicts.clear()


def _verdict_fields(row: tuple, decoded: dict[str, Any]) -> dict[str, Any]:
    """A ``triple_verdicts`` row (its key first) as a verdict's fields; ``ValueError`` for
    a row no verdict was written as.

    ``decoded`` maps evidence texts met before to their values: a warm run reads ~3,600
    verdicts whose evidence is one of ~2,000 texts ("nothing linked" alone ~330 times),
    so each text is decoded once; each verdict gets its own evidence dict, its nested
    values (lists of candidates, links) shared with the verdicts of the same text."""
    _, status, reason, subject, prop, obj, size_s, size_o, spec, text = row
    known = decoded.get(text)
    if known is None:
        known, end = _DECODE(text)
        if end != len(text):
            raise ValueError(f"not one JSON value: {text[:80]!r}")
        if len(decoded) >= _DECODED_TEXTS:
            decoded.clear()
        decoded[text] = known
    evidence = dict(known) if type(known) is dict else known
    if (
        status not in _STATUSES
        or type(reason) is not str
        or type(evidence) is not dict
        or not all(v is None or type(v) is str for v in (subject, prop, obj))
        or not all(v is None or type(v) is int for v in (size_s, size_o, spec))
    ):
        raise ValueError(f"not a triple verdict: {row[1:9]}")
    return {
        "status": status,
        "reason": reason,
        "subject": subject,
        "property": prop,
        "object": obj,
        "class_size_subjects": size_s,
        "class_size_objects": size_o,
        "specificity": spec,
        "evidence": evidence,
    }


def default_grounding_cache(
    beside: str | os.PathLike[str] | None = None,
) -> GroundingCache | None:
    """The cache ``grounding.sqlite`` in the folder of the embedding cache file ``beside``
    (default: in :func:`~creagraph.core.embeddings.default_cache_dir`), or ``None`` when
    ``$CREAGRAPH_GROUNDING_CACHE`` is ``0`` (off).

    Kept beside the embedding cache so that a run given its own (e.g. fresh) embedding
    cache also gets its own verdicts, not those of earlier runs.
    """
    if not settings.enabled("CREAGRAPH_GROUNDING_CACHE"):
        return None
    return GroundingCache(Path(beside).parent / "grounding.sqlite" if beside else None)


class RelationLinkMemo:
    """A relation linker's links kept in a :class:`GroundingCache` (issue 31), the
    :class:`~creagraph.core.relations.LinkMemo` a grounder gives its relation linker.

    Each phrase's links are stored as ``[[pid, direction, method, score], ...]`` under
    :func:`relation_link_context` and the phrase; nothing is kept for a graph without a
    store. A stored value of another shape is reported as a damaged cache.

    Parameters
    ----------
    cache : GroundingCache
        Where the links are kept (beside the verdicts).
    linker : RelationLinker
        The linker whose settings key the links (read when first needed).
    """

    def __init__(self, cache: GroundingCache, linker: Any):
        self.cache = cache
        self.linker = linker
        self._context: str | None = None

    def _context_key(self) -> str:
        if self._context is None:
            self._context = relation_link_context(self.linker) or ""
        return self._context

    def read(
        self, phrases: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], list[RelationLink]]:
        """The kept links of those ``phrases`` (normalised form, text) that have some."""
        context = self._context_key()
        if not context:
            return {}
        keys = {phrase: self.cache.key(context, phrase, ()) for phrase in phrases}
        found = self.cache.get_many(keys.values())
        out: dict[tuple[str, str], list[RelationLink]] = {}
        for phrase, key in keys.items():
            if key in found:
                out[phrase] = self._links(found[key])
        return out

    def _links(self, value: Any) -> list[RelationLink]:
        try:
            links = [RelationLink(pid, way, method, score) for pid, way, method, score in value]
        except (TypeError, ValueError) as exc:  # not a list of four-element lists
            raise self.cache._error(exc) from exc
        for link in links:
            if not (
                isinstance(link.pid, str)
                and link.direction in ("forward", "inverse")
                and isinstance(link.method, str)
                and type(link.score) is float
            ):
                raise self.cache._error(ValueError(f"not a relation link: {link}"))
        return links

    def write(self, phrase: tuple[str, str], links: Iterable[RelationLink]) -> None:
        """Keep ``links`` as the links of ``phrase`` (normalised form, text)."""
        context = self._context_key()
        if context:
            value = [[r.pid, r.direction, r.method, r.score] for r in links]
            self.cache.put(self.cache.key(context, phrase, ()), value)
