"""Embedded knowledge-graph store: numpy CSR edge arrays plus a SQLite text index.

Layout of a store directory (written atomically: built in a sibling temporary directory,
then renamed into place, so an interrupted import never damages an existing store)::

    meta.json        counts, sources, what the import skipped and why
    qnums.npy        sorted numeric parts of the item ids (node index -> QID)
    pnums.npy        sorted numeric parts of the statement properties (index -> PID)
    out_indptr.npy   CSR over subjects; out_prop / out_obj sorted by (subject, prop, object)
    in_indptr.npy    CSR over objects;  in_prop / in_subj  sorted by (object, prop, subject)
    text.sqlite      labels, aliases, descriptions and a normalised name index
    fuzzy.npz        the fuzzy-search name tables (token-sorted, by length) and their
                     trigram index, per kind (Q, P); stores built before it was written
                     build them on first use instead

Class sizes are two binary searches inside one CSR row, so they are exact and take
microseconds; reopening maps the arrays and opens SQLite, well under a second.

``meta.json`` also records each file's size and SHA-256. Opening a store checks sizes,
array headers, dtypes and lengths against the counts, index bounds and the SQLite tables,
and — for stores up to :data:`VERIFY_ON_OPEN_BYTES` (the slice store is ~40 MB) —
the checksums; a truncated or garbled store is refused with an :class:`InputError`
naming the file and how to re-import. A file version that already matched its checksum
(same device, inode, size, modification and status-change times) is not hashed again on
the next open: the cache folder remembers it (``store-checks.json``), and any change to the
file makes it hashed again. :meth:`EmbeddedKG.verify` checksums a store of
any size.

This module is the read side (:class:`EmbeddedKG`); a store is written by
:func:`creagraph.kg.build.import_dumps` (re-exported here), and its files, checks and atomic
replacement live in :mod:`creagraph.kg.store`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from creagraph.core import settings
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
)
from creagraph.core.io import InputError
from creagraph.kg.common import id_number, inverse_labels
from creagraph.kg.fuzzy import FuzzyIndex, length_window
from creagraph.kg.store import (
    _ARRAYS,
    _FUZZY_FILE,
    _FUZZY_PREFIXES,
    _FUZZY_QUERY,
    _OPTIONAL_FILES,
    _SQL_TABLES,
    _STORE_FILES,
    CHECKED_FILE,
    STORE_FORMAT,
    STORE_MARKER,
    _damaged,
    _first_mismatch,
    _fuzzy_table,
    _interrupted_swap,
    _read_fuzzy,
)

# registers the store writer of the property-name vectors, so that a run that only reads a
# store (a scoring run) saves them on first use; it was registered only by loading the
# importer, which reading a store no longer does (issue 31; 0.7 ms)
from creagraph.kg import propvectors as _propvectors  # noqa: E402, F401  isort: skip

__all__ = ["EmbeddedKG", "ImportResult", "import_dumps", "STORE_FORMAT", "STORE_MARKER"]

if TYPE_CHECKING:  # re-exported from the import side, loaded on first use (see __getattr__)
    from creagraph.kg.build import ImportResult, import_dumps


def __getattr__(name: str) -> Any:
    """``ImportResult`` and ``import_dumps`` from :mod:`creagraph.kg.build`, imported when
    first asked for: reading a store never loads the importer (its N-Triples parser and
    property-vector code), issue 31."""
    if name in ("ImportResult", "import_dumps"):
        from creagraph.kg import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_INT64_MAX = 2**63 - 1
#: Stores up to this many bytes are checksummed every time they are opened.
VERIFY_ON_OPEN_BYTES = 256 * 2**20


class EmbeddedKG(NameSearch):
    """The default knowledge-graph backend: an embedded store built by :func:`import_dumps`.

    Parameters
    ----------
    store : path
        Directory holding a store. Opening is cheap (arrays and SQLite are opened, nothing
        is re-imported).

    Examples
    --------
    >>> kg = EmbeddedKG("store")                            # doctest: +SKIP
    >>> kg.has_triple("Q179051", "P69", "Q174710")           # doctest: +SKIP
    True
    >>> kg.count_subjects("P69", "Q174710") > 0              # doctest: +SKIP
    True
    """

    backend = "embedded"
    # the store's arrays (see the module docstring), set from their files by __init__
    _qnums: np.ndarray
    _pnums: np.ndarray
    _out_indptr: np.ndarray
    _out_prop: np.ndarray
    _out_obj: np.ndarray
    _in_indptr: np.ndarray
    _in_prop: np.ndarray
    _in_subj: np.ndarray

    def __init__(self, store: str | os.PathLike[str]):
        self.store = Path(store)
        meta_path = self.store / "meta.json"
        if not meta_path.exists():
            previous = _interrupted_swap(self.store)
            if previous is not None:
                raise InputError(
                    f"{self.store}: an import was interrupted while replacing this store; the "
                    f"previous store is intact at {previous} (rename it back, or re-import)"
                )
            raise InputError(
                f"{self.store}: no creagraph store here (run `creagraph kg import FILE --store "
                f"{self.store}` first)"
            )
        self.meta = self._read_meta(meta_path)
        if self.meta.get("format") != STORE_FORMAT:
            raise InputError(
                f"{self.store}: store format {self.meta.get('format')} is not supported"
            )
        files = self.meta.get("files")
        #: the files this store's meta.json vouches for (older stores lack fuzzy.npz)
        self._files = _STORE_FILES + tuple(
            n for n in _OPTIONAL_FILES if isinstance(files, dict) and n in files
        )
        self._check_sizes()
        if self._total_bytes() <= VERIFY_ON_OPEN_BYTES and isinstance(self.meta.get("files"), dict):
            self._check_digests(remembered=True)
        for name in _ARRAYS:
            setattr(self, f"_{name}", self._load_array(name))
        self._check_arrays()
        self._conn = self._open_text()
        self._pindex = {int(v): i for i, v in enumerate(self._pnums.tolist())}
        self._fuzzy_choices: dict[
            str, tuple[list[str], list[tuple[str, str, str]], np.ndarray, FuzzyIndex]
        ] = {}
        self._inverse = inverse_labels()

    # -- integrity -------------------------------------------------------------------
    def _read_meta(self, path: Path) -> dict:
        try:
            meta = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise _damaged(self.store, "meta.json", f"not valid JSON ({exc})") from None
        if not isinstance(meta, dict):
            raise _damaged(self.store, "meta.json", "not a JSON object")
        for key in ("statements", "entities", "properties"):
            if not isinstance(meta.get(key), int) or meta[key] < 0:
                raise _damaged(self.store, "meta.json", f"no valid {key!r} count")
        return meta

    def _check_sizes(self) -> None:
        files = self.meta.get("files")
        for name in self._files:
            path = self.store / name
            if not path.is_file():
                raise _damaged(self.store, name, "file missing")
            expected = files.get(name, {}).get("size") if isinstance(files, dict) else None
            if expected is not None and path.stat().st_size != expected:
                raise _damaged(
                    self.store,
                    name,
                    f"{path.stat().st_size:,} bytes, the import wrote {expected:,} (truncated "
                    "or overwritten)",
                )

    def _total_bytes(self) -> int:
        return sum((self.store / name).stat().st_size for name in self._files)

    def _check_digests(self, *, remembered: bool = False) -> None:
        """Compare every store file's SHA-256 with ``meta.json``'s record.

        ``remembered`` (on open): a file whose exact version on disk (device, inode, size,
        modification and status-change times) already matched is not read again — the
        memo lives in the cache folder (:data:`~creagraph.kg.store.CHECKED_FILE`); any
        change to a file makes it hashed again (issue 31).
        """
        memo = settings.cache_dir() / CHECKED_FILE if remembered else None
        name = _first_mismatch(self.store, self._files, self.meta["files"], memo)
        if name is not None:
            raise _damaged(self.store, name, "checksum differs from the one the import wrote")

    def _load_array(self, name: str) -> np.ndarray:
        file = f"{name}.npy"
        try:
            values = np.load(self.store / file, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise _damaged(self.store, file, f"not a readable array ({exc})") from None
        if values.ndim != 1 or values.dtype.kind not in "iu":
            raise _damaged(self.store, file, f"not a 1-D integer array ({values.dtype})")
        return values

    def _check_arrays(self) -> None:
        meta = self.meta
        n_nodes, n_props, n_edges = meta["entities"], meta["properties"], meta["statements"]
        lengths = {
            "qnums": n_nodes,
            "pnums": n_props,
            "out_indptr": n_nodes + 1,
            "in_indptr": n_nodes + 1,
            "out_prop": n_edges,
            "out_obj": n_edges,
            "in_prop": n_edges,
            "in_subj": n_edges,
        }
        for name, expected in lengths.items():
            got = len(getattr(self, f"_{name}"))
            if got != expected:
                raise _damaged(
                    self.store, f"{name}.npy", f"{got:,} values, meta.json says {expected:,}"
                )
        for name, upper in (
            ("out_prop", n_props),
            ("in_prop", n_props),
            ("out_obj", n_nodes),
            ("in_subj", n_nodes),
        ):
            values = getattr(self, f"_{name}")
            if len(values) and (int(values.min()) < 0 or int(values.max()) >= upper):
                raise _damaged(self.store, f"{name}.npy", "index out of range")
        for name in ("qnums", "pnums"):
            values = getattr(self, f"_{name}")
            if len(values) and (int(values[0]) < 1 or bool(np.any(np.diff(values) <= 0))):
                raise _damaged(self.store, f"{name}.npy", "ids not sorted and positive")
        for name in ("out_indptr", "in_indptr"):
            values = getattr(self, f"_{name}")
            ends_ok = int(values[0]) == 0 and int(values[-1]) == n_edges
            if not ends_ok or bool(np.any(np.diff(values) < 0)):
                raise _damaged(self.store, f"{name}.npy", "row offsets inconsistent")

    def _open_text(self) -> sqlite3.Connection:
        path = self.store / "text.sqlite"
        conn = None
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            tables = {
                name
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            missing = ", ".join(sorted(_SQL_TABLES - tables))
            if missing:
                raise InputError(f"tables missing: {missing}")
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
            (page_size,) = conn.execute("PRAGMA page_size").fetchone()
            if pages * page_size != path.stat().st_size:
                raise InputError(
                    f"{path.stat().st_size:,} bytes, its header says {pages * page_size:,} "
                    "(truncated)"
                )
            for table in sorted(_SQL_TABLES):  # the first and last page of each table
                conn.execute(f"SELECT * FROM {table} ORDER BY rowid LIMIT 1").fetchall()
                conn.execute(f"SELECT * FROM {table} ORDER BY rowid DESC LIMIT 1").fetchall()
        except (sqlite3.Error, InputError) as exc:
            if conn is not None:
                conn.close()
            problem = str(exc) if isinstance(exc, InputError) else f"not readable ({exc})"
            raise _damaged(self.store, "text.sqlite", problem) from None
        return conn

    def verify(self) -> dict[str, str]:
        """Check every store file against the SHA-256 recorded at import, and SQLite's own
        ``quick_check``; raise :class:`InputError` naming the first damaged file.

        Opening already checks sizes, array shapes and index bounds; this also catches a
        value changed in place. Reads every file once (seconds for the slice store).

        Returns
        -------
        dict
            ``file -> "ok"``.
        """
        if not isinstance(self.meta.get("files"), dict):
            raise InputError(f"{self.store}: built before checksums were recorded; re-import it")
        self._check_digests()
        try:
            (result,) = self._conn.execute("PRAGMA quick_check").fetchone()
        except sqlite3.Error as exc:
            raise _damaged(self.store, "text.sqlite", str(exc)) from None
        if result != "ok":
            raise _damaged(self.store, "text.sqlite", f"quick_check: {result}")
        return {name: "ok" for name in self._files}

    def _sql(self, query: str, params: Sequence = ()) -> list[tuple]:
        """Run a read query on the text index; a damaged page becomes an InputError."""
        try:
            return self._conn.execute(query, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.store, "text.sqlite", f"cannot be read ({exc})") from None

    # -- ids -------------------------------------------------------------------------
    def _node(self, qid: str) -> int:
        check_qid(qid)
        num = int(qid[1:])
        if num > _INT64_MAX:  # a well-formed id too large to be stored: not in the graph
            return -1
        i = int(np.searchsorted(self._qnums, num))
        if i < len(self._qnums) and self._qnums[i] == num:
            return i
        return -1

    def _prop(self, pid: str) -> int:
        check_pid(pid)
        return self._pindex.get(int(pid[1:]), -1)

    def _qid(self, index: int) -> str:
        return f"Q{self._qnums[index]}"

    def _pid(self, index: int) -> str:
        return f"P{self._pnums[index]}"

    # -- records ---------------------------------------------------------------------
    def _record(self, ident: str) -> tuple[str | None, tuple[str, ...], str | None, bool]:
        rows = self._sql("SELECT label, description FROM records WHERE id = ?", (ident,))
        row = rows[0] if rows else None
        aliases = tuple(
            a
            for (a,) in self._sql(
                "SELECT alias FROM aliases WHERE id = ? ORDER BY rowid", (ident,)
            )
        )
        if row is None:
            return None, aliases, None, bool(aliases)
        return row[0], aliases, row[1], True

    def entity(self, qid: str) -> EntityRecord | None:
        label, aliases, description, found = self._record(check_qid(qid))
        if not found and self._node(qid) < 0:
            return None
        return EntityRecord(qid, label, tuple(sorted(aliases)), description)

    def property(self, pid: str) -> PropertyRecord | None:
        label, aliases, description, found = self._record(check_pid(pid))
        if not found and self._prop(pid) < 0:
            return None
        return PropertyRecord(
            pid, label, tuple(sorted(aliases)), description, self._inverse.get(pid)
        )

    def label(self, ident: str) -> str | None:
        """The English label of an item or property, or ``None``."""
        rows = self._sql("SELECT label FROM records WHERE id = ?", (ident,))
        return rows[0][0] if rows else None

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        """Labels of many ids in one query (ids without a label are left out)."""
        wanted = list(dict.fromkeys(idents))
        out: dict[str, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for ident, label in self._sql(
                f"SELECT id, label FROM records WHERE id IN ({marks}) AND label IS NOT NULL", chunk
            ):
                out[ident] = label
        return out

    # -- search ----------------------------------------------------------------------
    def degree(self, qid: str) -> int:
        """Number of statements with ``qid`` as subject or object."""
        i = self._node(qid)
        if i < 0:
            return 0
        return int(
            self._out_indptr[i + 1]
            - self._out_indptr[i]
            + self._in_indptr[i + 1]
            - self._in_indptr[i]
        )

    def _name_matches(self, query: NameQuery) -> tuple[list[SearchHit], FuzzyStep]:
        # an empty loose key (text that is all punctuation) would match every such name
        rows = self._sql(
            "SELECT id, kind, text FROM names "
            "WHERE (key = ? OR loose = ?) AND substr(id, 1, 1) = ?",
            (query.key, query.loose if query.loose else "\x00", query.prefix),
        )
        hits = [SearchHit(i, None, t, k, 100.0, True) for i, k, t in rows]
        return hits, lambda limit, min_score: self._fuzzy(
            query.loose, query.prefix, limit, min_score
        )

    def _popularity(self, ids: list[str]) -> dict[str, int]:
        return {i: (self.degree(i) if i[0] == "Q" else 0) for i in ids}

    def _fuzzy_names(
        self, prefix: str
    ) -> tuple[list[str], list[tuple[str, str, str]], np.ndarray, FuzzyIndex]:
        """Token-sorted names of one kind (shortest first), their (id, kind, text), lengths,
        and the q-gram index over them — loaded once per store and kind, on the first fuzzy
        search, from ``fuzzy.npz`` (written at import; tens of milliseconds), or read and built
        for stores imported before it (about a second for the slice's ~10⁵ names)."""
        if prefix not in self._fuzzy_choices:
            if _FUZZY_FILE in self._files and prefix in _FUZZY_PREFIXES:
                try:
                    with np.load(self.store / _FUZZY_FILE, allow_pickle=False) as data:
                        keys, info, index = _read_fuzzy(data, prefix)
                except (ValueError, OSError, EOFError, KeyError) as exc:
                    raise _damaged(self.store, _FUZZY_FILE, f"not readable ({exc})") from None
            else:  # a store built before fuzzy.npz: read the names and build the index
                keys, info = _fuzzy_table(self._sql(_FUZZY_QUERY, (prefix,)))
                index = FuzzyIndex(keys)
            self._fuzzy_choices[prefix] = (
                keys, info, np.array([len(k) for k in keys], dtype=np.int64), index
            )
        return self._fuzzy_choices[prefix]

    def _fuzzy(self, loose: str, prefix: str, limit: int, min_score: float) -> list[SearchHit]:
        """Token-sort similarity ≥ ``min_score`` against every name, computed as plain
        ``ratio`` over names whose tokens were sorted once. Only the candidates of the q-gram
        index (:class:`~creagraph.kg.fuzzy.FuzzyIndex`, a lossless filter: every name that
        can reach ``min_score``, in the same order) are scored, so the hits are exactly those
        of scanning every name (:meth:`_fuzzy_scan`), two orders of magnitude faster."""
        from rapidfuzz import fuzz, process

        keys, info, _, index = self._fuzzy_names(prefix)
        query = " ".join(sorted(loose.split()))
        c = min(max(float(min_score), 1.0), 100.0)
        candidates = index.candidates(query, c).tolist()
        found = process.extract(
            query,
            [keys[i] for i in candidates],
            scorer=fuzz.ratio,
            processor=None,
            limit=limit,
            score_cutoff=c,
        )
        return [
            SearchHit(
                info[candidates[idx]][0],
                None,
                info[candidates[idx]][2],
                info[candidates[idx]][1],
                float(score),
                False,
            )
            for _, score, idx in found
        ]

    def _fuzzy_scan(
        self, loose: str, prefix: str, limit: int, min_score: float
    ) -> list[SearchHit]:
        """The reference for :meth:`_fuzzy`: rapidfuzz over every name whose length allows
        the score (``2·min(a, b)/(a + b) ≥ min_score/100``), without the index. Kept for
        tests and ``benchmarks/kg.py``."""
        from rapidfuzz import fuzz, process

        keys, info, lengths, _ = self._fuzzy_names(prefix)
        query = " ".join(sorted(loose.split()))
        c = min(max(float(min_score), 1.0), 100.0)
        shortest, longest = length_window(len(query), c)
        lo = int(np.searchsorted(lengths, shortest, "left"))
        hi = int(np.searchsorted(lengths, longest, "right"))
        found = process.extract(
            query, keys[lo:hi], scorer=fuzz.ratio, processor=None, limit=limit, score_cutoff=c
        )
        return [
            SearchHit(
                info[lo + idx][0],
                None,
                info[lo + idx][2],
                info[lo + idx][1],  # type: ignore[arg-type]  # "label" or "alias"
                float(score),
                False,
            )
            for _, score, idx in found
        ]

    # -- edges -----------------------------------------------------------------------
    def _row(
        self, indptr: np.ndarray, props: np.ndarray, node: int, prop: str | None
    ) -> tuple[int, int]:
        a, b = int(indptr[node]), int(indptr[node + 1])
        if prop is None:
            return a, b
        p = self._prop(prop)
        if p < 0:
            return a, a
        block = props[a:b]
        return a + int(np.searchsorted(block, p, "left")), a + int(
            np.searchsorted(block, p, "right")
        )

    def out_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        i = self._node(qid)
        if i < 0:
            return []
        a, b = self._row(self._out_indptr, self._out_prop, i, prop)
        return [
            Edge(qid, f"P{self._pnums[p]}", f"Q{self._qnums[o]}")
            for p, o in zip(self._out_prop[a:b].tolist(), self._out_obj[a:b].tolist())
        ]

    def in_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        i = self._node(qid)
        if i < 0:
            return []
        a, b = self._row(self._in_indptr, self._in_prop, i, prop)
        edges = [
            Edge(f"Q{self._qnums[s]}", f"P{self._pnums[p]}", qid)
            for p, s in zip(self._in_prop[a:b].tolist(), self._in_subj[a:b].tolist())
        ]
        return edges

    def has_triple(self, subject: str, prop: str, obj: str) -> bool:
        s, o = self._node(subject), self._node(obj)
        if s < 0 or o < 0:
            return False
        a, b = self._row(self._out_indptr, self._out_prop, s, prop)
        block = self._out_obj[a:b]
        j = int(np.searchsorted(block, o))
        return j < len(block) and int(block[j]) == o

    def edges_between(self, a: str, b: str) -> list[Edge]:
        i, j = self._node(a), self._node(b)
        if i < 0 or j < 0:
            return []
        edges = []
        for s, o in ((i, j), (j, i)):
            lo, hi = int(self._out_indptr[s]), int(self._out_indptr[s + 1])
            for k in np.flatnonzero(self._out_obj[lo:hi] == o).tolist():
                prop = self._pid(int(self._out_prop[lo + k]))
                edges.append(Edge(self._qid(s), prop, self._qid(o)))
        return sorted(set(edges), key=lambda e: (id_number(e.property), e.subject, e.object))

    def property_types(self, prop: str, side: Side, *, limit: int = 20) -> dict[str, int]:
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        p, p31 = self._prop(prop), self._prop("P31")
        if p < 0 or p31 < 0:
            return {}
        if getattr(self, "_out_subj", None) is None:
            self._out_subj = np.repeat(
                np.arange(len(self._out_indptr) - 1, dtype=np.int64), np.diff(self._out_indptr)
            )
            typed = self._out_prop == p31  # the P31 statements, once: (subject, class)
            self._typed_subj, self._typed_obj = self._out_subj[typed], self._out_obj[typed]
            # the statements grouped by property, once (a property's rows: one slice)
            self._by_prop = np.argsort(self._out_prop, kind="stable")
            self._by_prop_ptr = np.searchsorted(
                self._out_prop[self._by_prop], np.arange(len(self._pnums) + 1), "left"
            )
        rows = self._by_prop[self._by_prop_ptr[p] : self._by_prop_ptr[p + 1]]
        ends = self._out_subj[rows] if side == "subject" else self._out_obj[rows]
        marked = np.zeros(len(self._qnums), dtype=bool)
        marked[ends] = True  # the same selection as np.isin(subjects, ends), in O(n)
        classes, counts = np.unique(self._typed_obj[marked[self._typed_subj]], return_counts=True)
        ranked = sorted(
            zip(counts.tolist(), classes.tolist()), key=lambda x: (-x[0], self._qnums[x[1]])
        )
        return {self._qid(int(c)): int(n) for n, c in ranked[:limit]}

    def count_subjects(self, prop: str, obj: str) -> int:
        return self._count(obj, prop, self._in_indptr, self._in_prop)

    def count_objects(self, subject: str, prop: str) -> int:
        return self._count(subject, prop, self._out_indptr, self._out_prop)

    def _count(self, qid: str, prop: str, indptr: np.ndarray, props: np.ndarray) -> int:
        """Statements of ``prop`` in ``qid``'s row of one CSR (over subjects or over
        objects); both ids are checked, and an unknown ``qid`` counts 0."""
        i = self._node(qid)
        if i < 0:
            self._prop(prop)
            return 0
        a, b = self._row(indptr, props, i, prop)
        return b - a

    def categories(
        self,
        properties: Iterable[str],
        *,
        side: Side,
        min_size: int = 2,
        max_size: int | None = None,
    ) -> Iterator[Category]:
        if side == "subject":
            indptr, props, others = self._in_indptr, self._in_prop, self._in_subj
        elif side == "object":
            indptr, props, others = self._out_indptr, self._out_prop, self._out_obj
        else:
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        wanted = sorted({self._prop(check_pid(p)) for p in properties} - {-1})
        if not wanted:
            return
        anchor = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
        mask = np.isin(props, wanted)
        edge_idx = np.flatnonzero(mask)
        order = np.lexsort((others[edge_idx], anchor[edge_idx], props[edge_idx]))
        edge_idx = edge_idx[order]
        key_p, key_a = props[edge_idx], anchor[edge_idx]
        if len(edge_idx) == 0:
            return
        breaks = np.flatnonzero((np.diff(key_p) != 0) | (np.diff(key_a) != 0)) + 1
        starts = np.concatenate([[0], breaks])
        ends = np.concatenate([breaks, [len(edge_idx)]])
        sizes = ends - starts
        upper = max_size if max_size is not None else np.iinfo(np.int64).max
        for start, end, size in zip(starts.tolist(), ends.tolist(), sizes.tolist()):
            if size < min_size or size > upper:
                continue
            first = edge_idx[start]
            members = tuple(f"Q{self._qnums[m]}" for m in others[edge_idx[start:end]].tolist())
            yield Category(
                self._pid(int(props[first])), self._qid(int(anchor[first])), side, size, members
            )

    def stats(self) -> dict[str, int]:
        keys = (
            "statements",
            "entities",
            "properties",
            "labelled_entities",
            "labelled_properties",
            "aliases",
            "descriptions",
        )
        return {k: int(self.meta[k]) for k in keys if k in self.meta}

    def property_counts(self) -> dict[str, int]:
        """Statements per property."""
        counts = np.bincount(self._out_prop, minlength=len(self._pnums))
        return {self._pid(i): int(c) for i, c in enumerate(counts.tolist())}

    def random_statements(self, n: int, seed: int = 0) -> list[Edge]:
        """``n`` statements drawn uniformly without replacement (for tests and benchmarks)."""
        rng = np.random.default_rng(seed)
        total = len(self._out_obj)
        picks = np.sort(rng.choice(total, size=min(n, total), replace=False))
        subjects = np.searchsorted(self._out_indptr, picks, side="right") - 1
        return [
            Edge(
                self._qid(int(s)),
                self._pid(int(self._out_prop[e])),
                self._qid(int(self._out_obj[e])),
            )
            for s, e in zip(subjects.tolist(), picks.tolist())
        ]

    def close(self) -> None:
        self._conn.close()
