"""Building an embedded store from Wikidata N-Triples dumps (SPEC §2): :func:`import_dumps`.

An import reads the dumps (:func:`_read_dumps`), writes the CSR edge arrays
(:func:`_write_arrays`) and the SQLite text index with its saved fuzzy-name tables
(:func:`_write_text_index`) into a fresh build folder beside the store, records every
file's size and checksum in ``meta.json`` (:func:`_write_store`), then swaps the folder
into place (:func:`creagraph.kg.store._replace_dir`). The files and their checks live in
:mod:`creagraph.kg.store`; the read side is :class:`creagraph.kg.embedded.EmbeddedKG`.

A further file an import should store (say, vectors derived from the names) is written by
:func:`_build` into the build folder ``out`` after :func:`_write_text_index`, and its name
added to ``store._OPTIONAL_FILES``: ``meta.json`` then records its checksum and opening the
store checks it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.io import InputError, atomic_write, with_filename
from creagraph.core.progress import progress_bar
from creagraph.core.text import loosen, normalize
from creagraph.kg.ntriples import ParseReport, parse_dump_blocks
from creagraph.kg.propvectors import add_property_vectors
from creagraph.kg.store import (
    _FUZZY_FILE,
    _FUZZY_PREFIXES,
    STORE_FORMAT,
    STORE_MARKER,
    _BuildLock,
    _by_length,
    _check_replaceable,
    _clean_stale_builds,
    _file_digests,
    _replace_dir,
    _StoreLock,
    _token_sorted,
    _write_fuzzy_tables,
)

__all__ = ["ImportResult", "import_dumps"]

#: A fuzzy-name table: token-sorted loose names, shortest first, and their (id, kind, text).
_FuzzyTable = tuple[list[str], list[tuple[str, str, str]]]


@dataclass
class ImportResult:
    """What :func:`import_dumps` built."""

    store: Path
    statements: int
    entities: int
    properties: int
    seconds: float
    report: dict = field(default_factory=dict)


def _source_fingerprint(paths: Sequence[Path]) -> list[dict]:
    out = []
    for p in paths:
        st = p.stat()
        out.append({"path": str(p.resolve()), "size": st.st_size, "mtime": int(st.st_mtime)})
    return out


def import_dumps(
    paths: Sequence[str | os.PathLike[str]],
    store: str | os.PathLike[str],
    *,
    language: str = "en",
    strict: bool = True,
    force: bool = False,
    show_progress: bool = True,
) -> ImportResult:
    """Import Wikidata truthy-dump N-Triples files into an embedded store at ``store``.

    Parameters
    ----------
    paths : sequence of paths
        ``.nt``, ``.nt.gz`` or ``.nt.bz2`` files; all are merged into one store.
    store : path
        Store directory. Replaced atomically when the import succeeds.
    language : str
        Language of labels, aliases and descriptions to keep.
    strict : bool
        Raise on a malformed line (with file and line number) instead of skipping it.
    force : bool
        Re-import even when the store was already built from exactly these files.
    show_progress : bool
        Show a progress bar over the bytes read.

    Returns
    -------
    ImportResult
        Counts of statements, entities and properties, time taken, and the parse report
        (lines skipped, by reason).

    Examples
    --------
    >>> res = import_dumps(["slice.nt.gz"], "store")        # doctest: +SKIP
    >>> res.statements, res.entities, res.properties         # doctest: +SKIP
    (413419, 86812, 427)
    """
    files = _input_files(paths)
    target = Path(store)
    fingerprint = _source_fingerprint(files)
    _make_parent(target)
    store_lock = _StoreLock(target)  # one import per store at a time (issue 23)
    try:
        _clean_stale_builds(target)
        if not force:
            reused = _reusable(target, fingerprint, language)
            if reused is not None:
                return reused

        _check_replaceable(target)  # before any work: refuse a folder that is not our store
        start = time.perf_counter()
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        lock: _BuildLock | None = None
        try:
            lock = _BuildLock(tmp)
            report = _write_store(
                files, tmp, fingerprint, language=language, strict=strict,
                show_progress=show_progress,
            )  # fmt: skip
            add_property_vectors(tmp)  # only with CREAGRAPH_PROPERTY_VECTORS=import (issue 31)
            _replace_dir(tmp, target)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            _raise_write_error(exc, target)
            raise
        finally:
            if lock is not None:
                lock.release()
    finally:
        store_lock.release()
    counts = report["counts"]
    return ImportResult(
        target,
        counts["statements"],
        counts["entities"],
        counts["properties"],
        time.perf_counter() - start,
        report["parse"],
    )


def _input_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The dump files as paths; :class:`InputError` for none or a missing one."""
    files = [Path(p) for p in paths]
    if not files:
        raise InputError("no input files given")
    for f in files:
        if not f.exists():
            raise InputError(f"{f}: file not found")
    return files


def _reusable(target: Path, fingerprint: list[dict], language: str) -> ImportResult | None:
    """The result of the import that built ``target``, if it was built from exactly these
    files (``fingerprint``) keeping texts in ``language``, with this format and every
    current file, and opens intact."""
    meta_path = target / "meta.json"
    if not meta_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError):
        meta = {}
    if (
        meta.get("format") == STORE_FORMAT
        and meta.get("sources") == fingerprint
        and meta.get("language") == language  # `--language fr` over an English store
        and _FUZZY_FILE in (meta.get("files") or {})  # else rebuilt, to add fuzzy.npz
        and _intact(target)
    ):
        return ImportResult(
            target,
            meta["statements"],
            meta["entities"],
            meta["properties"],
            0.0,
            {**meta.get("report", {}), "reused": True},
        )
    return None


def _intact(store: Path) -> bool:
    """Whether a store opens without complaint (used before reusing it)."""
    from creagraph.kg.embedded import EmbeddedKG  # the read side imports this module

    try:
        EmbeddedKG(store).close()
    except InputError:
        return False
    return True


def _make_parent(target: Path) -> None:
    """Create the folder that will hold ``target``; :class:`InputError` when a file stands
    where one of its folders should be."""
    for folder in (target.parent, *target.parent.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise InputError(f"{folder}: not a directory, cannot hold the store {target}")
            break
    target.parent.mkdir(parents=True, exist_ok=True)


def _write_store(
    files: list[Path],
    tmp: Path,
    fingerprint: list[dict],
    *,
    language: str,
    strict: bool,
    show_progress: bool,
) -> dict:
    """Build the store's files in the build folder ``tmp``, then its ``meta.json`` (counts,
    sources, the parse report and every file's size and checksum); returns the build report."""
    report = _build(files, tmp, language=language, strict=strict, show_progress=show_progress)
    meta = {
        "store": STORE_MARKER,
        "format": STORE_FORMAT,
        "sources": fingerprint,
        "language": language,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **report["counts"],
        "report": report["parse"],
        "files": _file_digests(tmp),
    }
    with atomic_write(tmp / "meta.json") as handle:
        json.dump(meta, handle, indent=1)
    return report


def _raise_write_error(exc: BaseException, target: Path) -> None:
    """Raise a failed write as an error naming ``target`` (a full disk names no file);
    return for any other failure, which the caller re-raises as it is."""
    if isinstance(exc, OSError) and exc.filename is None:  # a full disk names no file
        if exc.errno is None:  # numpy's short write: "N requested and M written"
            raise InputError(
                f"{target}: writing the store failed ({exc}): is the disk full?"
            ) from exc
        raise with_filename(exc, target) from exc
    if isinstance(exc, sqlite3.OperationalError):  # "database or disk is full"
        raise InputError(f"{target}: cannot write the store's text index ({exc})") from exc


def _text_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        PRAGMA journal_mode=OFF;
        PRAGMA synchronous=OFF;
        CREATE TABLE records (id TEXT PRIMARY KEY, label TEXT, description TEXT);
        CREATE TABLE aliases (id TEXT NOT NULL, alias TEXT NOT NULL);
        CREATE TABLE names (key TEXT NOT NULL, loose TEXT NOT NULL, id TEXT NOT NULL,
                            kind TEXT NOT NULL, text TEXT NOT NULL);
        """
    )


#: Statements read between two removals of repeated ones: the reader's buffer holds at most
#: this many (24 bytes each), so a dump repeating one line millions of times is never held
#: whole before its repeats are dropped (issue 23).
_COMPACT_EVERY = 1 << 16


def _unique_rows(
    s: np.ndarray, p: np.ndarray, o: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``(s, p, o)`` rows, sorted by subject, property, object."""
    return _sorted_rows(s, p, o, distinct=True)


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct ``values``, ascending, sorting ``values`` in place: a sort and a mask
    (``np.unique`` of numpy ≥ 2.3 goes through a hash table, ~30× slower on these integers
    and larger in memory: issue 31)."""
    values.sort()
    if len(values) > 1:
        keep = np.ones(len(values), dtype=bool)
        np.not_equal(values[1:], values[:-1], out=keep[1:])
        values = values[keep]
    return values


def _positions(numbers: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The position (int32) of each of ``values`` in ``numbers`` (distinct, ascending, holding
    every value). Through a table over ``numbers``' range when they fill at least a quarter
    of it (Wikidata's item numbers do: one read per value), else by binary search."""
    if len(numbers) == 0:
        return np.zeros(len(values), dtype=np.int32)
    low, span = int(numbers[0]), int(numbers[-1]) - int(numbers[0]) + 1
    if span > 4 * len(numbers):
        return np.searchsorted(numbers, values).astype(np.int32)
    table = np.zeros(span, dtype=np.int32)
    table[numbers - low] = np.arange(len(numbers), dtype=np.int32)
    return table[values - low]


def _sorted_rows(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, *, distinct: bool = False, bits: int = 64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows ``(a, b, c)`` (integer columns) sorted by ``a``, then ``b``, then ``c``,
    repeats removed when ``distinct``; each column keeps its dtype.

    When the columns' ranges (maximum − minimum) fit together in ``bits`` bits, the rows are
    packed into one unsigned integer each and sorted as such (issue 31: one sort of one
    array, several times faster than ``np.lexsort`` over three); else ``np.lexsort``."""
    if len(a) == 0:
        return a, b, c
    cols = (a, b, c)
    lows = [int(x.min()) for x in cols]
    widths = [max((int(x.max()) - low).bit_length(), 1) for x, low in zip(cols, lows)]
    if sum(widths) > bits:
        order = np.lexsort((c, b, a))
        a, b, c = a[order], b[order], c[order]
        if distinct:
            keep = np.ones(len(a), dtype=bool)
            keep[1:] = (np.diff(a) != 0) | (np.diff(b) != 0) | (np.diff(c) != 0)
            a, b, c = a[keep], b[keep], c[keep]
        return a, b, c
    packed = np.zeros(len(a), dtype=np.uint64)
    for x, low, width in zip(cols, lows, widths):
        packed <<= np.uint64(width)
        packed |= (x - low).astype(np.uint64)
    packed.sort()
    if distinct:
        keep = np.ones(len(packed), dtype=bool)
        keep[1:] = packed[1:] != packed[:-1]
        packed = packed[keep]
    out = []
    shift = sum(widths)
    for x, low, width in zip(cols, lows, widths):
        shift -= width
        part = (packed >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        out.append((part.astype(np.int64) + low).astype(x.dtype))
    return out[0], out[1], out[2]


@dataclass
class _Parsed:
    """Everything read from the dumps: statements as numeric ids (repeats removed as the
    reading goes, counted in the parse report), first labels
    and descriptions per id, distinct aliases in reading order, the parse report."""

    subj: array = field(default_factory=lambda: array("q"))
    prop: array = field(default_factory=lambda: array("q"))
    obj: array = field(default_factory=lambda: array("q"))
    #: Statement chunks already without repeats (each ``(s, p, o)``), and their total rows.
    kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    kept_rows: int = 0
    merged_rows: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    aliases: dict[tuple[str, str], None] = field(default_factory=dict)
    parse: ParseReport = field(default_factory=ParseReport)
    _text_keys: set[str] | None = None

    def text_keys(self) -> set[str]:
        """The ids (``Q…``, ``P…``) with a label, description or alias kept (made once)."""
        if self._text_keys is None:
            self._text_keys = {*self.labels, *self.descriptions, *(i for i, _ in self.aliases)}
        return self._text_keys

    def text_ids(self) -> set[int]:
        """The numbers of the items (``Q…``) with a label, description or alias kept."""
        return {int(i[1:]) for i in self.text_keys() if i[0] == "Q"}

    def add_statements(self, rows: np.ndarray) -> None:
        """Add an ``(n, 3)`` array of subject, property and object numbers."""
        if len(rows):
            self.subj.frombytes(np.ascontiguousarray(rows[:, 0]).tobytes())
            self.prop.frombytes(np.ascontiguousarray(rows[:, 1]).tobytes())
            self.obj.frombytes(np.ascontiguousarray(rows[:, 2]).tobytes())
        if len(self.subj) >= _COMPACT_EVERY:
            self._compact()

    def _compact(self) -> None:
        """Move the buffer into ``kept`` without its repeats; merge all chunks (dropping
        repeats between them) once they have doubled since the last merge, so memory stays
        within a small multiple of the distinct statements at linear-logarithmic cost."""
        if self.subj:
            chunk = _unique_rows(*(np.frombuffer(a, dtype=np.int64).copy()
                                   for a in (self.subj, self.prop, self.obj)))  # fmt: skip
            self._count_repeats(len(self.subj) - len(chunk[0]))
            self.kept.append(chunk)
            self.kept_rows += len(chunk[0])
            self.subj, self.prop, self.obj = array("q"), array("q"), array("q")
        if len(self.kept) > 1 and self.kept_rows > 2 * max(self.merged_rows, _COMPACT_EVERY):
            self._merge()

    def _merge(self) -> None:
        merged = _unique_rows(*(np.concatenate([c[i] for c in self.kept]) for i in range(3)))
        self._count_repeats(self.kept_rows - len(merged[0]))
        self.kept = [merged]
        self.kept_rows = self.merged_rows = len(merged[0])

    def _count_repeats(self, n: int) -> None:
        if n:
            self.parse.skipped["duplicate statement"] += n

    def statements(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every distinct statement read, as subject, property and object numbers."""
        self._compact()
        if len(self.kept) != 1:
            if not self.kept:
                return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
            self._merge()
        return self.kept[0]


def _build(
    files: list[Path], out: Path, *, language: str, strict: bool, show_progress: bool
) -> dict[str, Any]:
    """Write every store file but ``meta.json`` into ``out``; returns ``{"counts": ...,
    "parse": ...}`` (the counts ``meta.json`` records, the parse report)."""
    parsed = _read_dumps(files, language=language, strict=strict, show_progress=show_progress)
    counts = _write_arrays(parsed, out)
    parsed.kept = []  # the statements are written: not held through the text index's peak
    counts.update(_write_text_index(parsed, out))
    return {"counts": counts, "parse": parsed.parse.as_dict()}


def _read_dumps(
    files: list[Path], *, language: str, strict: bool, show_progress: bool
) -> _Parsed:
    """Parse every dump, with a progress bar over the bytes read when ``show_progress``."""
    parsed = _Parsed()
    total = sum(f.stat().st_size for f in files)
    bar = (
        progress_bar(total=total, desc="import", unit="B", unit_scale=True)
        if show_progress
        else None
    )
    try:
        for f in files:
            for rows, literals in parse_dump_blocks(
                f,
                language=language,
                strict=strict,
                report=parsed.parse,
                on_read=bar.update if bar is not None else None,
            ):
                parsed.add_statements(rows)
                _add_literals(parsed, literals)
    finally:
        if bar is not None:
            bar.close()
    return parsed


def _add_literals(parsed: _Parsed, literals: list[tuple[str, str, str]]) -> None:
    """Keep the first label and description of each id and every distinct alias, in order."""
    labels, descriptions, aliases = parsed.labels, parsed.descriptions, parsed.aliases
    for item_id, kind, text in literals:
        if kind == "label":
            if item_id not in labels:
                labels[item_id] = text
        elif kind == "description":
            if item_id not in descriptions:
                descriptions[item_id] = text
        else:
            aliases[(item_id, text)] = None


def _write_arrays(parsed: _Parsed, out: Path) -> dict[str, int]:
    """Number the items and properties (the statements come without repeats), save the CSR
    arrays over subjects and over objects; returns the counts of statements, entities and
    properties."""
    s, p, o = parsed.statements()
    text_ids = parsed.text_ids()
    qnums = _distinct(
        np.concatenate([s, o, np.fromiter(text_ids, dtype=np.int64, count=len(text_ids))])
    )
    pnums = _distinct(p.copy())
    si, oi = _positions(qnums, s), _positions(qnums, o)
    pi = _positions(pnums, p)
    n_nodes = len(qnums)

    # the statements come distinct and sorted by number: the ids keep that order
    out_indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(si, minlength=n_nodes), out=out_indptr[1:])
    _, in_prop, in_subj = _sorted_rows(oi, pi, si)  # by object, property, subject
    in_indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(oi, minlength=n_nodes), out=in_indptr[1:])
    arrays = {
        "qnums": qnums,
        "pnums": pnums,
        "out_indptr": out_indptr,
        "out_prop": pi,
        "out_obj": oi,
        "in_indptr": in_indptr,
        "in_prop": in_prop,
        "in_subj": in_subj,
    }
    for name, values in arrays.items():
        np.save(out / f"{name}.npy", np.ascontiguousarray(values))
    return {
        "statements": int(len(si)),
        "entities": int(n_nodes),
        "properties": int(len(pnums)),
    }


def _name_rows(
    labels: dict[str, str], aliases: list[tuple[str, str]]
) -> tuple[list[tuple[str, str, str, str, str]], dict[str, _FuzzyTable]]:
    """The ``names`` table's rows ``(key, loose, id, kind, text)``: labels, then aliases, each
    text normalised once however many ids it names; and the fuzzy-name tables of
    :func:`creagraph.kg.store._fuzzy_table` per prefix (``Q``, ``P``) made from the same
    rows, each loose name token-sorted once."""
    forms: dict[str, tuple[str, str, str]] = {}
    rows = []
    keys: dict[str, list[str]] = {prefix: [] for prefix in _FUZZY_PREFIXES}
    infos: dict[str, list[tuple[str, str, str]]] = {prefix: [] for prefix in _FUZZY_PREFIXES}
    for kind, pairs in (("label", labels.items()), ("alias", aliases)):
        for item_id, text in pairs:
            both = forms.get(text)
            if both is None:
                key = normalize(text)
                loose = loosen(key)
                both = forms[text] = (key, loose, _token_sorted(loose))
            rows.append((both[0], both[1], item_id, kind, text))
            found = keys.get(item_id[0])
            if found is not None:
                found.append(both[2])
                infos[item_id[0]].append((item_id, kind, text))
    return rows, {prefix: _by_length(keys[prefix], infos[prefix]) for prefix in keys}


def _write_text_index(parsed: _Parsed, out: Path) -> dict[str, int]:
    """Write ``text.sqlite`` (records, aliases without repeats, the normalised name index)
    and the fuzzy-name tables built from it (``fuzzy.npz``); returns the text counts."""
    labels, descriptions = parsed.labels, parsed.descriptions
    unique_aliases = list(parsed.aliases)  # first occurrence of each, in reading order
    conn = sqlite3.connect(str(out / "text.sqlite"))
    try:
        _text_schema(conn)
        ids = sorted(parsed.text_keys())
        conn.executemany(
            "INSERT INTO records VALUES (?, ?, ?)",
            zip(ids, map(labels.get, ids), map(descriptions.get, ids)),
        )
        del ids
        conn.executemany("INSERT INTO aliases VALUES (?, ?)", unique_aliases)
        names, fuzzy = _name_rows(labels, unique_aliases)
        conn.executemany("INSERT INTO names VALUES (?, ?, ?, ?, ?)", names)
        del names
        conn.executescript(
            """
            CREATE INDEX names_key ON names(key);
            CREATE INDEX names_loose ON names(loose);
            CREATE INDEX aliases_id ON aliases(id);
            """
        )
        conn.commit()
        # the tables of the rows _FUZZY_QUERY reads back (by prefix, in insertion order)
        _write_fuzzy_tables(fuzzy, out / _FUZZY_FILE)
    finally:
        conn.close()
    return {
        "labelled_entities": sum(1 for i in labels if i[0] == "Q"),
        "labelled_properties": sum(1 for i in labels if i[0] == "P"),
        "aliases": len(unique_aliases),
        "descriptions": len(descriptions),
    }
