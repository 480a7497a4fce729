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
naming the file and how to re-import. :meth:`EmbeddedKG.verify` checksums a store of
any size.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from creagraph.core.graph import (
    Category,
    Edge,
    EntityRecord,
    PropertyRecord,
    SearchHit,
    Side,
    check_pid,
    check_qid,
)
from creagraph.core.io import InputError, atomic_write, with_filename
from creagraph.core.progress import progress_bar
from creagraph.core.text import normalize, normalize_loose
from creagraph.kg.common import id_number, id_prefix, inverse_labels, rank_hits, search_text
from creagraph.kg.fuzzy import FuzzyIndex, NgramIndex, length_window
from creagraph.kg.ntriples import Literal_, ParseReport, parse_dump

__all__ = ["EmbeddedKG", "ImportResult", "import_dumps", "STORE_FORMAT", "STORE_MARKER"]

STORE_FORMAT = 1
_INT64_MAX = 2**63 - 1
#: Stores up to this many bytes are checksummed every time they are opened.
VERIFY_ON_OPEN_BYTES = 256 * 2**20
_ARRAYS = ("qnums", "pnums", "out_indptr", "out_prop", "out_obj", "in_indptr", "in_prop", "in_subj")


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
    files = [Path(p) for p in paths]
    if not files:
        raise InputError("no input files given")
    for f in files:
        if not f.exists():
            raise InputError(f"{f}: file not found")
    target = Path(store)
    fingerprint = _source_fingerprint(files)
    meta_path = target / "meta.json"
    _clean_stale_builds(target)
    if not force and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, json.JSONDecodeError):
            meta = {}
        if (
            meta.get("format") == STORE_FORMAT
            and meta.get("sources") == fingerprint
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

    _check_replaceable(target)  # before any work: refuse a folder that is not our store
    start = time.perf_counter()
    for folder in (target.parent, *target.parent.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise InputError(f"{folder}: not a directory, cannot hold the store {target}")
            break
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    lock: _BuildLock | None = None
    try:
        lock = _BuildLock(tmp)
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
        _replace_dir(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk names no file
            if exc.errno is None:  # numpy's short write: "N requested and M written"
                raise InputError(
                    f"{target}: writing the store failed ({exc}): is the disk full?"
                ) from exc
            raise with_filename(exc, target) from exc
        if isinstance(exc, sqlite3.OperationalError):  # "database or disk is full"
            raise InputError(f"{target}: cannot write the store's text index ({exc})") from exc
        raise
    finally:
        if lock is not None:
            lock.release()
    counts = report["counts"]
    return ImportResult(
        target,
        counts["statements"],
        counts["entities"],
        counts["properties"],
        time.perf_counter() - start,
        report["parse"],
    )


_STORE_FILES = tuple(f"{name}.npy" for name in _ARRAYS) + ("text.sqlite",)
#: Store files that older stores lack: checked like the others when meta.json records them.
_FUZZY_FILE = "fuzzy.npz"
_OPTIONAL_FILES = (_FUZZY_FILE,)
_FUZZY_PREFIXES = ("Q", "P")
_SQL_TABLES = {"records", "aliases", "names"}
_FUZZY_QUERY = "SELECT loose, id, kind, text FROM names WHERE substr(id, 1, 1) = ?"


def _fuzzy_table(rows: Iterable[tuple]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Token-sorted loose names (shortest first, stable) and their (id, kind, text)."""
    keyed = sorted(
        ((" ".join(sorted(r[0].split())), r[1:]) for r in rows), key=lambda x: len(x[0])
    )
    return [k for k, _ in keyed], [i for _, i in keyed]


def _pack(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)),
              out=offsets[1:])
    data = np.frombuffer("".join(strings).encode("utf-8", "surrogatepass"), np.uint8)
    return data, offsets  # UTF-8 bytes, offsets in characters


def _unpack(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    if data.dtype != np.uint8:
        raise ValueError(f"strings stored as {data.dtype}, not bytes")
    text = data.tobytes().decode("utf-8", "surrogatepass")
    if len(offsets) < 1 or int(offsets[0]) != 0 or int(offsets[-1]) != len(text):
        raise ValueError("string offsets inconsistent")
    bounds = offsets.tolist()
    return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _write_fuzzy(conn: sqlite3.Connection, path: Path) -> None:
    """Save, per kind, the fuzzy-search name table and its trigram index (issue 19): what
    :meth:`EmbeddedKG._fuzzy_names` otherwise reads and builds on every first search."""
    arrays: dict[str, np.ndarray] = {}
    for prefix in _FUZZY_PREFIXES:
        keys, info = _fuzzy_table(conn.execute(_FUZZY_QUERY, (prefix,)))
        for name, values in NgramIndex(keys, 3).arrays().items():
            arrays[f"{prefix}_{name}"] = values
        for part, strings in (
            ("keys", keys), ("ids", [i[0] for i in info]), ("texts", [i[2] for i in info])
        ):
            arrays[f"{prefix}_{part}"], arrays[f"{prefix}_{part}_at"] = _pack(strings)
        arrays[f"{prefix}_alias"] = np.array([i[1] == "alias" for i in info], dtype=bool)
    with path.open("wb") as handle:
        np.savez(handle, **arrays)


def _read_fuzzy(data, prefix: str) -> tuple[list[str], list[tuple[str, str, str]], FuzzyIndex]:
    """The name table and index :func:`_write_fuzzy` saved for ``prefix``."""
    keys = _unpack(data[f"{prefix}_keys"], data[f"{prefix}_keys_at"])
    ids = _unpack(data[f"{prefix}_ids"], data[f"{prefix}_ids_at"])
    texts = _unpack(data[f"{prefix}_texts"], data[f"{prefix}_texts_at"])
    alias = data[f"{prefix}_alias"].tolist()
    if not len(keys) == len(ids) == len(texts) == len(alias):
        raise ValueError("name tables of different lengths")
    info = [(i, "alias" if a else "label", t) for i, a, t in zip(ids, alias, texts)]
    index = NgramIndex.from_arrays(
        {name: data[f"{prefix}_{name}"] for name in NgramIndex.FIELDS}, 3
    )
    if len(index) != len(keys) or index.lengths.tolist() != [len(k) for k in keys]:
        raise ValueError("index does not match the name table")
    return keys, info, FuzzyIndex(keys, {3: index})


def _file_digests(folder: Path) -> dict[str, dict]:
    out = {}
    for name in _STORE_FILES + tuple(n for n in _OPTIONAL_FILES if (folder / n).exists()):
        digest = hashlib.sha256()
        with (folder / name).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        out[name] = {"size": (folder / name).stat().st_size, "sha256": digest.hexdigest()}
    return out


def _intact(store: Path) -> bool:
    """Whether a store opens without complaint (used before reusing it)."""
    try:
        EmbeddedKG(store).close()
    except InputError:
        return False
    return True


def _damaged(store: Path, name: str, problem: str) -> InputError:
    return InputError(
        f"{store / name}: {problem}; the store is damaged — re-import it with "
        f"`creagraph kg import FILE --store {store} --force`"
    )


def _interrupted_swap(target: Path) -> Path | None:
    """The old store :func:`_replace_dir` set aside, if a crash left ``target`` missing."""
    if target.exists():
        return None
    for old in sorted(target.parent.glob(f".{target.name}.old-*")):
        if (old / "meta.json").exists():
            return old
    return None


#: What ``meta.json`` of a store says it is (with ``format``): the store's own marker.
STORE_MARKER = "creagraph-embedded-store"
#: Every name a store directory may hold; a folder holding anything else is not replaced.
_STORE_NAMES = frozenset(_STORE_FILES) | frozenset(_OPTIONAL_FILES) | {"meta.json"}


def _store_marker(folder: Path) -> dict | None:
    """``meta.json`` of ``folder`` if it is verifiably a creagraph store, else ``None``.

    Verifiable: ``meta.json`` is a JSON object carrying :data:`STORE_MARKER` and a known
    ``format``, or (stores written before the marker existed) the ``format`` and the
    checksums of exactly the store's files.
    """
    try:
        meta = json.loads((folder / "meta.json").read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != STORE_FORMAT:
        return None
    if meta.get("store") == STORE_MARKER:
        return meta
    files = meta.get("files")
    if (
        meta.get("store") is None
        and isinstance(files, dict)
        and set(files) - set(_OPTIONAL_FILES) == set(_STORE_FILES)
    ):
        return meta
    return None


def _check_replaceable(target: Path) -> None:
    """Raise :class:`InputError`, touching nothing, unless an import may replace ``target``.

    Allowed: no such path, an empty directory, or a directory that is verifiably a
    creagraph store (:func:`_store_marker`) and holds nothing but the store's own files.
    """
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir():
        raise InputError(f"{target}: exists and is not a directory; refusing to replace it")
    try:
        names = sorted(entry.name for entry in os.scandir(target))
    except OSError as exc:
        raise InputError(f"{target}: cannot be listed ({exc.strerror})") from None
    if not names:
        return
    fix = "choose another --store, or move its contents away"
    if _store_marker(target) is None:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise InputError(
            f"{target}: not a creagraph store (it holds {shown}); refusing to replace it — {fix}"
        )
    foreign = [name for name in names if name not in _STORE_NAMES]
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise InputError(
            f"{target}: a creagraph store that also holds files the import did not write "
            f"({shown}); refusing to replace it — {fix}"
        )


#: A build folder without a lock file (from before locks) is stale after this many seconds.
_UNLOCKED_BUILD_AGE = 24 * 3600
#: The part of a build folder's name after ``.<store>`` (``tempfile.mkdtemp``'s pattern).
_MKDTEMP_NAME = re.compile(r"\.[a-z0-9_]{8}\.tmp")


class _BuildLock:
    """An exclusive lock held on ``<build folder>.lock`` while an import builds there.

    The operating system drops the lock when the process dies (``kill -9`` included), so a
    later import can tell a build folder that is still in use from one left by a killed run.
    """

    def __init__(self, folder: Path):
        import fcntl

        self.path = folder.with_name(folder.name + ".lock")
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(self._fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None


def _lock_is_free(path: Path) -> bool:
    """Whether nobody holds the lock file ``path`` (taken and released at once if so)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken here
    return True


def _clean_stale_builds(target: Path) -> list[Path]:
    """Remove build folders (``.<store>.*.tmp``) that killed imports left beside ``target``.

    Only folders an import made and nobody uses are removed: one whose lock file is free
    (its import died), or — from versions before lock files — one holding nothing but store
    files and untouched for a day. A build in progress (lock held) is never touched.
    Returns the folders removed.
    """
    parent = target.parent
    if not parent.is_dir():
        return []
    removed = []
    for folder in sorted(parent.glob(f".{target.name}.*.tmp")):
        if folder.is_symlink() or not folder.is_dir():
            continue
        lock = folder.with_name(folder.name + ".lock")
        try:
            if lock.exists():
                stale = _lock_is_free(lock)
            elif not _MKDTEMP_NAME.fullmatch(folder.name[len(target.name) + 1 :]):
                stale = False
            else:
                names = {entry.name for entry in os.scandir(folder)}
                newest = max(
                    [folder.stat().st_mtime]
                    + [(folder / name).stat().st_mtime for name in names]
                )
                stale = names <= _STORE_NAMES and time.time() - newest > _UNLOCKED_BUILD_AGE
        except OSError:
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            if lock.exists() and _lock_is_free(lock):
                lock.unlink(missing_ok=True)
            removed.append(folder)
    for lock in parent.glob(f".{target.name}.*.tmp.lock"):  # a lock without its folder
        if not lock.with_suffix("").exists() and _lock_is_free(lock):
            lock.unlink(missing_ok=True)
    return removed


def _replace_dir(new: Path, target: Path) -> None:
    # Two renames: a crash between them leaves no store at ``target`` but the old one intact
    # beside it, which opening the store then reports (see _interrupted_swap).
    if target.exists():
        _check_replaceable(target)  # again: the folder may have changed during the build
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
        os.replace(new, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(new, target)


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


def _build(files: list[Path], out: Path, *, language: str, strict: bool, show_progress: bool):
    subj, prop, obj = array("q"), array("q"), array("q")
    text_ids: set[int] = set()
    labels: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    alias_rows: list[tuple[str, str]] = []
    parse = ParseReport()
    total = sum(f.stat().st_size for f in files)
    bar = (
        progress_bar(total=total, desc="import", unit="B", unit_scale=True)
        if show_progress
        else None
    )
    try:
        for f in files:
            for item in parse_dump(
                f,
                language=language,
                strict=strict,
                report=parse,
                on_read=bar.update if bar is not None else None,
            ):
                if isinstance(item, Literal_):
                    if item.id[0] == "Q":
                        text_ids.add(int(item.id[1:]))
                    if item.kind == "label":
                        labels.setdefault(item.id, item.text)
                    elif item.kind == "description":
                        descriptions.setdefault(item.id, item.text)
                    else:
                        alias_rows.append((item.id, item.text))
                else:
                    subj.append(int(item.subject[1:]))
                    prop.append(int(item.property[1:]))
                    obj.append(int(item.object[1:]))
    finally:
        if bar is not None:
            bar.close()

    s = np.frombuffer(subj, dtype=np.int64) if subj else np.zeros(0, np.int64)
    p = np.frombuffer(prop, dtype=np.int64) if prop else np.zeros(0, np.int64)
    o = np.frombuffer(obj, dtype=np.int64) if obj else np.zeros(0, np.int64)
    qnums = np.unique(
        np.concatenate([s, o, np.fromiter(text_ids, dtype=np.int64, count=len(text_ids))])
    )
    pnums = np.unique(p)
    si = np.searchsorted(qnums, s).astype(np.int32)
    oi = np.searchsorted(qnums, o).astype(np.int32)
    pi = np.searchsorted(pnums, p).astype(np.int32)
    n_nodes = len(qnums)

    order = np.lexsort((oi, pi, si))
    si, pi, oi = si[order], pi[order], oi[order]
    if len(si):
        keep = np.ones(len(si), dtype=bool)
        keep[1:] = (np.diff(si) != 0) | (np.diff(pi) != 0) | (np.diff(oi) != 0)
        duplicates = int((~keep).sum())
        si, pi, oi = si[keep], pi[keep], oi[keep]
    else:
        duplicates = 0
    if duplicates:
        parse.skipped["duplicate statement"] += duplicates
    out_indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(si, minlength=n_nodes), out=out_indptr[1:])
    in_order = np.lexsort((si, pi, oi))
    in_indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(oi, minlength=n_nodes), out=in_indptr[1:])
    arrays = {
        "qnums": qnums,
        "pnums": pnums,
        "out_indptr": out_indptr,
        "out_prop": pi,
        "out_obj": oi,
        "in_indptr": in_indptr,
        "in_prop": pi[in_order],
        "in_subj": si[in_order],
    }
    for name, values in arrays.items():
        np.save(out / f"{name}.npy", np.ascontiguousarray(values))

    conn = sqlite3.connect(str(out / "text.sqlite"))
    try:
        _text_schema(conn)
        ids = sorted(set(labels) | set(descriptions) | {i for i, _ in alias_rows})
        conn.executemany(
            "INSERT INTO records VALUES (?, ?, ?)",
            ((i, labels.get(i), descriptions.get(i)) for i in ids),
        )
        seen_alias: set[tuple[str, str]] = set()
        unique_aliases = []
        for row in alias_rows:
            if row not in seen_alias:
                seen_alias.add(row)
                unique_aliases.append(row)
        conn.executemany("INSERT INTO aliases VALUES (?, ?)", unique_aliases)
        conn.executemany(
            "INSERT INTO names VALUES (?, ?, ?, ?, ?)",
            (
                (normalize(text), normalize_loose(text), i, kind, text)
                for kind, rows in (("label", labels.items()), ("alias", unique_aliases))
                for i, text in rows
            ),
        )
        conn.executescript(
            """
            CREATE INDEX names_key ON names(key);
            CREATE INDEX names_loose ON names(loose);
            CREATE INDEX aliases_id ON aliases(id);
            """
        )
        conn.commit()
        _write_fuzzy(conn, out / _FUZZY_FILE)
    finally:
        conn.close()

    counts = {
        "statements": int(len(si)),
        "entities": int(n_nodes),
        "properties": int(len(pnums)),
        "labelled_entities": sum(1 for i in labels if i[0] == "Q"),
        "labelled_properties": sum(1 for i in labels if i[0] == "P"),
        "aliases": len(unique_aliases),
        "descriptions": len(descriptions),
    }
    return {"counts": counts, "parse": parse.as_dict()}


class EmbeddedKG:
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
            self._check_digests()
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

    def _check_digests(self) -> None:
        files = self.meta["files"]
        actual = _file_digests(self.store)
        for name in self._files:
            expected = files.get(name)
            if not isinstance(expected, dict) or expected.get("sha256") != actual[name]["sha256"]:
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

    def search(
        self,
        text: str,
        *,
        limit: int = 10,
        fuzzy: bool = True,
        kind: str = "entity",
        min_score: float = 80.0,
    ) -> list[SearchHit]:
        prefix = id_prefix(kind)
        text = search_text(text)
        key, loose = normalize(text), normalize_loose(text)
        # an empty loose key (text that is all punctuation) would match every such name
        rows = self._sql(
            "SELECT id, kind, text FROM names "
            "WHERE (key = ? OR loose = ?) AND substr(id, 1, 1) = ?",
            (key, loose if loose else "\x00", prefix),
        )
        hits = [SearchHit(i, None, t, k, 100.0, True) for i, k, t in rows]
        if fuzzy and len({h.id for h in hits}) < limit and loose:
            hits.extend(self._fuzzy(loose, prefix, limit * 3, min_score))
        return rank_hits(hits, limit, self._popularity, self.labels)

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
                info[lo + idx][0], None, info[lo + idx][2], info[lo + idx][1], float(score), False
            )
            for _, score, idx in found
        ]

    # -- edges -----------------------------------------------------------------------
    def _row(self, indptr, props, node: int, prop: str | None) -> tuple[int, int]:
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
        o = self._node(obj)
        if o < 0:
            self._prop(prop)
            return 0
        a, b = self._row(self._in_indptr, self._in_prop, o, prop)
        return b - a

    def count_objects(self, subject: str, prop: str) -> int:
        s = self._node(subject)
        if s < 0:
            self._prop(prop)
            return 0
        a, b = self._row(self._out_indptr, self._out_prop, s, prop)
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
