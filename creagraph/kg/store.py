"""The embedded store on disk: its files, the saved fuzzy-name tables, integrity checks and
the atomic replacement of a store (SPEC §2).

Shared by :mod:`creagraph.kg.build` (which writes a store) and :mod:`creagraph.kg.embedded`
(which reads one); the layout is described in :mod:`creagraph.kg.embedded`.

- *Files*: :data:`STORE_FORMAT`, :data:`STORE_MARKER` and the names a store holds; a file an
  import adds (``fuzzy.npz``, and any later one) goes in ``_OPTIONAL_FILES`` so that it is
  checksummed in ``meta.json`` and checked on open like the others.
- *Integrity*: :func:`_file_digests` (sizes and SHA-256 recorded in ``meta.json``),
  :func:`_first_mismatch` (the check on open, remembering in the cache folder which file
  versions already matched, issue 31), :func:`_damaged` (the error naming a damaged file),
  :func:`_store_marker`.
- *Swap*: :func:`_check_replaceable`, :class:`_StoreLock`, :class:`_BuildLock`,
  :func:`_clean_stale_builds`, :func:`_replace_dir`, :func:`_interrupted_swap`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.io import InputError, sha256_file
from creagraph.core.propvectors import FILE_NAME as _PROPVECTORS_FILE
from creagraph.core.propvectors import RECORD_NAME as _PROPVECTORS_RECORD
from creagraph.kg.fuzzy import FuzzyIndex, NgramIndex

__all__ = ["STORE_FORMAT", "STORE_MARKER"]

STORE_FORMAT = 1
_ARRAYS = ("qnums", "pnums", "out_indptr", "out_prop", "out_obj", "in_indptr", "in_prop", "in_subj")
_STORE_FILES = tuple(f"{name}.npy" for name in _ARRAYS) + ("text.sqlite",)
#: Store files that older stores lack: checked like the others when meta.json records them.
_FUZZY_FILE = "fuzzy.npz"
_OPTIONAL_FILES = (_FUZZY_FILE, _PROPVECTORS_FILE)  # propvectors: issue 19
_FUZZY_PREFIXES = ("Q", "P")
_SQL_TABLES = {"records", "aliases", "names"}
_FUZZY_QUERY = "SELECT loose, id, kind, text FROM names WHERE substr(id, 1, 1) = ?"


def _fuzzy_table(rows: Iterable[tuple]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Token-sorted loose names (shortest first, stable) and their (id, kind, text)."""
    infos = []
    keys = []
    for r in rows:
        keys.append(_token_sorted(r[0]))
        infos.append(r[1:])
    return _by_length(keys, infos)


def _by_length(
    keys: list[str], infos: list[tuple[str, str, str]]
) -> tuple[list[str], list[tuple[str, str, str]]]:
    """``keys`` and their ``infos`` shortest key first, ties in their order."""
    lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    order = np.argsort(lengths, kind="stable").tolist()  # as sorted(key=len): ties in order
    return [keys[i] for i in order], [infos[i] for i in order]


def _token_sorted(name: str) -> str:
    """``name``'s space-separated tokens in sorted order (a one-word name as it is)."""
    return name if name.isalnum() else " ".join(sorted(name.split()))


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


def _write_fuzzy_tables(
    tables: Mapping[str, tuple[list[str], list[tuple[str, str, str]]]], path: Path
) -> None:
    """Save per prefix (``Q``, ``P``) the name table :func:`_fuzzy_table` makes — keys
    shortest first and their (id, kind, text) — with its trigram index: an import passes
    the tables it made from the rows it has just written (issue 31)."""
    arrays: dict[str, Any] = {}  # Any: mypy would match a dict of arrays to savez's allow_pickle
    for prefix in _FUZZY_PREFIXES:
        keys, info = tables[prefix]
        for name, values in NgramIndex(keys, 3).arrays().items():
            arrays[f"{prefix}_{name}"] = values
        for part, strings in (
            ("keys", keys), ("ids", [i[0] for i in info]), ("texts", [i[2] for i in info])
        ):
            arrays[f"{prefix}_{part}"], arrays[f"{prefix}_{part}_at"] = _pack(strings)
        arrays[f"{prefix}_alias"] = np.array([i[1] == "alias" for i in info], dtype=bool)
    with path.open("wb") as handle:
        np.savez(handle, **arrays)


def _read_fuzzy(
    data: Mapping[str, np.ndarray], prefix: str
) -> tuple[list[str], list[tuple[str, str, str]], FuzzyIndex]:
    """The name table and index :func:`_write_fuzzy_tables` saved for ``prefix``."""
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


def _file_digest(path: Path) -> dict:
    """What ``meta.json`` records of one store file: its size and SHA-256."""
    return {"size": path.stat().st_size, "sha256": sha256_file(path)}


def _file_digests(folder: Path) -> dict[str, dict]:
    names = _STORE_FILES + tuple(n for n in _OPTIONAL_FILES if (folder / n).exists())
    return {name: _file_digest(folder / name) for name in names}


#: The file, in the cache folder, that remembers which store files matched their checksum.
CHECKED_FILE = "store-checks.json"
_CHECKED_FORMAT = 1
#: Entries the memo keeps (the most recently checked), so that it stays small.
_CHECKED_MAX = 512


def _file_state(path: Path) -> list[int]:
    """What identifies one version of a file on disk: device, inode, size, and the
    modification and status-change times in nanoseconds. Any write, truncation,
    replacement (a new inode), copy or ``touch`` changes it; the status-change time cannot
    be set back by a program."""
    info = path.stat()
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _read_checked(memo: Path) -> dict[str, Any]:
    """The memo of files already checked (path -> state and digest); empty when it is
    missing or unreadable (it only saves work that can be done again)."""
    try:
        data = json.loads(memo.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _CHECKED_FORMAT:
        return {}
    files = data.get("files")
    return dict(files) if isinstance(files, dict) else {}


def _write_checked(memo: Path, files: dict[str, Any]) -> None:
    """Save the memo (temp file + rename); a folder that cannot be written is skipped."""
    from creagraph.core.io import atomic_write

    keep = dict(list(files.items())[-_CHECKED_MAX:])
    try:
        with atomic_write(memo) as handle:
            json.dump({"format": _CHECKED_FORMAT, "files": keep}, handle, sort_keys=False)
    except OSError:
        pass  # the next open checksums again: slower, never wrong


def _first_mismatch(
    folder: Path, names: Sequence[str], expected: dict, memo: Path | None
) -> str | None:
    """The first of ``names`` whose SHA-256 differs from ``expected[name]["sha256"]``
    (``meta.json``'s record), or ``None`` when all match.

    A file is read and hashed unless ``memo`` (a JSON file in the cache folder) says that
    this very version of it — the same :func:`_file_state` — already hashed to the digest
    now expected: a file that changed in any way is hashed again, so the memo never
    vouches for content it has not seen. The state is taken before hashing, so a file
    written while it is read does not match next time. ``memo=None`` hashes every file.
    """
    checked = _read_checked(memo) if memo is not None else {}
    changed = False
    for name in names:
        want = expected.get(name)
        digest = want.get("sha256") if isinstance(want, dict) else None
        if not isinstance(digest, str):
            return name
        path = folder / name
        key = str(path.resolve())
        state = _file_state(path)
        entry = {"state": state, "sha256": digest}
        if checked.get(key) == entry:
            continue
        if sha256_file(path) != digest:
            return name
        checked.pop(key, None)  # re-inserted last: the most recently checked are kept
        checked[key] = entry
        changed = True
    if changed and memo is not None:
        _write_checked(memo, checked)
    return None


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
_STORE_NAMES = frozenset(_STORE_FILES) | frozenset(_OPTIONAL_FILES) | {
    "meta.json",
    _PROPVECTORS_RECORD,  # written by the first run that saves the vectors (issue 31)
}


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


class _StoreLock:
    """An exclusive lock on ``.<store>.import.lock`` beside the store, held for a whole import.

    Two imports into one store would otherwise both build, both swap their folder in and
    both report success, the first one's store silently replaced (issue 23). The second
    import is refused at once, naming the running one. The holder removes the file before
    unlocking it; whoever locked a file that is no longer the one at that path tries again.
    """

    def __init__(self, target: Path):
        import fcntl

        self.path = target.with_name(f".{target.name}.import.lock")
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                try:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                except OSError:
                    holder = ""
                os.close(fd)
                who = f" (process {holder})" if holder.isdigit() else ""
                raise InputError(
                    f"{target}: another import into this store is running{who}; "
                    "wait for it to finish, or choose another --store"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed this file as it finished: lock the new one
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # while still held: see __init__'s inode check
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
