"""Output directories that never lose a user's files or mix two runs' results.

Every command that writes a directory of results (``creagraph score``, ``distinct``,
``report``) claims it with :func:`claim_output_dir` before writing anything:

- **Only creagraph's own directories are written into.** The directory must be new, empty,
  or carry creagraph's marker file ``.creagraph-out.json`` (format version, the command
  that made it, and the fingerprint of the settings behind its numbers). Anything else is
  refused untouched, so a user's ``README.txt`` or ``summary.csv`` is never overwritten.
- **An input is never opened for writing.** An input file that lies inside the directory
  under the name of one of the command's outputs (``creagraph score queries.jsonl --out .``)
  is refused before anything is opened.
- **One run at a time.** The run holds an exclusive ``flock`` on ``.creagraph-out.lock``
  for its whole life (released by the kernel even on ``kill -9``); a second run into the
  same directory stops at once with a message naming the holder's pid and host.
- **Never mix two runs.** A resumable command passes a *fingerprint*: a mapping of every
  setting that determines its numbers (judge, mode, thresholds, graph store identity,
  input files' identity, …) to plain JSON values. It is recorded in the marker by the
  first run; a later run with a different fingerprint is refused with a message naming
  each setting that changed and how to start fresh (a new ``--out``, or ``fresh=True``,
  which deletes only the command's own outputs listed in ``outputs``).

Commands that write one file (``--out scores.jsonl``: ``tig clusters/anchors/score``,
``judge bt/agreement --out``, ``queries generate/paths``) claim it with
:func:`claim_output_file`, which applies the same rules to that one file: it is never an
input, an existing file is replaced only when creagraph made it (a hidden sidecar record
``.NAME.creagraph-out.json`` beside it holds the command, the settings fingerprint and the
SHA-256 of the bytes written; a file changed since, or with no record, is refused), and one
run at a time writes it (``flock`` on ``.NAME.creagraph-out.lock``).

File names made from ids (task ids, model names) go through :func:`id_file_stem`, an
escaped form that is one-to-one, so ``a/b`` and ``a_b`` never share a file.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import socket
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, atomic_write, sha256_file, with_filename

__all__ = [
    "MARKER_NAME",
    "LOCK_NAME",
    "MARKER_FORMAT",
    "claim_output_dir",
    "file_identity",
    "fingerprint_changes",
    "check_inputs_outside",
    "claim_output_file",
    "check_output_file",
    "OutputFile",
    "id_file_stem",
    "unique_file_stems",
]

MARKER_NAME = ".creagraph-out.json"
LOCK_NAME = ".creagraph-out.lock"
MARKER_FORMAT = 1
_OWN = (MARKER_NAME, LOCK_NAME)


def file_identity(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The identity of an input file for a fingerprint: resolved path, size and SHA-256.

    A non-seekable input (a FIFO, a character device, a pipe) is read by the command
    itself and only once, so it is identified by its path and type alone.
    """
    p = Path(path)
    try:
        info = p.stat()
    except OSError:
        return {"path": str(p.absolute()), "missing": True}
    resolved = str(p.resolve())
    if not stat.S_ISREG(info.st_mode):
        return {"path": resolved, "type": "non-seekable"}
    return {"path": resolved, "size": info.st_size, "sha256": sha256_file(p)}


def check_inputs_outside(
    out: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]], outputs: Sequence[str]
) -> None:
    """Refuse when an input file is (or would be overwritten as) one of the outputs.

    ``outputs`` are file names inside ``out``. An input is refused when it is the same
    file as ``out/name`` (hard or symbolic links included) or lies in ``out`` under such a
    name, before anything is written.
    """
    out_dir = Path(out)
    names = [*outputs, *_OWN]
    try:
        out_resolved = out_dir.resolve()
    except OSError:
        return
    for raw in inputs:
        p = Path(raw)
        try:
            resolved = p.resolve()
        except OSError:
            continue
        for name in names:
            target = out_dir / name
            same = resolved == out_resolved / name
            if not same and target.exists() and p.exists():
                with contextlib.suppress(OSError):
                    same = os.path.samefile(p, target)
            if same:
                raise InputError(
                    f"{p}: this input is the output file {name!r} of --out {out_dir}; writing "
                    "the results would destroy it. Give another --out directory"
                )


def _read_marker(path: Path) -> dict[str, Any]:
    where = path / MARKER_NAME
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{where}: not a readable creagraph output marker ({exc}); "
            "give a new --out directory"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("format"), int):
        raise InputError(
            f"{where}: not a creagraph output marker (no format version); "
            "give a new --out directory"
        )
    if data["format"] > MARKER_FORMAT:
        raise InputError(
            f"{where}: made by a newer creagraph (marker format {data['format']}, this one "
            f"reads {MARKER_FORMAT}); upgrade creagraph or give a new --out directory"
        )
    return data


def _is_own_temp(name: str) -> bool:
    """A temporary file of :func:`~creagraph.core.io.atomic_write` for the marker (a
    concurrent run writing it right now), not a user's file."""
    return name.startswith(f".{MARKER_NAME}.") and name.endswith(".tmp")


def _foreign_entries(path: Path) -> list[str]:
    return sorted(
        e.name for e in os.scandir(path) if e.name not in _OWN and not _is_own_temp(e.name)
    )


def _describe(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, dict) and "path" in v for v in value):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    if isinstance(value, dict) and "path" in value:
        detail = value.get("sha256", value.get("type", "missing"))
        return f"{Path(value['path']).name} ({str(detail)[:12]})"
    return json.dumps(value, ensure_ascii=False)


def fingerprint_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One line per setting that differs between two fingerprints, e.g.
    ``"--judge: was \\"stored\\", now \\"kg\\""``.

    Examples
    --------
    >>> fingerprint_changes({"--judge": "stored", "--mode": "paper"},
    ...                     {"--judge": "kg", "--mode": "paper"})
    ['--judge: was "stored", now "kg"']
    """
    changes = []
    for key in sorted(set(old) | set(new), key=str):
        if key not in old:
            changes.append(f"{key}: not recorded before, now {_describe(new[key])}")
        elif key not in new:
            changes.append(f"{key}: was {_describe(old[key])}, not given now")
        elif old[key] != new[key]:
            changes.append(f"{key}: was {_describe(old[key])}, now {_describe(new[key])}")
    return changes


def _holder(lock_path: Path) -> str:
    try:
        info = json.loads(lock_path.read_text(encoding="utf-8") or "{}")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["since"]))
        return f"pid {info['pid']} on {info['host']}, since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"


def _flock_or_refuse(fd: int, lock_path: Path, path: Path, command: str, what: str) -> None:
    """Take the lock on ``fd`` without waiting; if another run holds it, close ``fd`` and
    say who holds it (``what``: "directory" or "file")."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise
        raise InputError(
            f"{path}: another `creagraph {command}` run is writing this {what} "
            f"({_holder(lock_path)}); wait for it to finish or give another --out"
        ) from None


def _write_holder(fd: int) -> None:
    """Record this process as the holder of the lock file open on ``fd``."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)


def _lock(path: Path, command: str) -> int:
    lock_path = path / LOCK_NAME
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    _flock_or_refuse(fd, lock_path, path, command, "directory")
    _write_holder(fd)
    return fd


@contextlib.contextmanager
def claim_output_dir(
    out: str | os.PathLike[str],
    command: str,
    outputs: Sequence[str],
    *,
    inputs: Sequence[str | os.PathLike[str]] = (),
    fingerprint: Mapping[str, Any] | None = None,
    fresh: bool = False,
    rewrite: bool = False,
) -> Iterator[Path]:
    """Claim ``out`` for one run of ``creagraph <command>``; see the module docstring.

    Parameters
    ----------
    out : path
        The output directory (created when missing).
    command : str
        The command writing it (``"score"``); a directory made by another command is
        refused.
    outputs : sequence of str
        The file names the command writes in ``out`` (checked against ``inputs``, and the
        only files ``fresh`` deletes).
    inputs : sequence of path
        Files the run reads.
    fingerprint : mapping, optional
        Plain JSON values of every setting that determines the results. Given, a
        directory holding results of another fingerprint is refused (unless ``fresh``).
        ``None`` for commands that rewrite all their outputs every run.
    fresh : bool
        Delete the command's previous outputs in ``out`` first (only with a marker);
        an output that is a folder (``graphs``) is deleted with its contents.
    rewrite : bool
        The command replaces all its outputs every run (``tig build``): a different
        fingerprint is not refused but recorded in the marker, so the folder always says
        which settings made what it holds.

    Yields
    ------
    Path
        ``out``, locked until the ``with`` block ends.

    Raises
    ------
    InputError
        With one line saying what is wrong and what to do.
    """
    path = Path(out)
    check_inputs_outside(path, inputs, outputs)
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: exists and is not a directory; give a directory as --out")
    new_fp = json.loads(json.dumps(dict(fingerprint))) if fingerprint is not None else None

    _existing_marker(path, command)  # refuse a foreign directory before creating anything
    path.mkdir(parents=True, exist_ok=True)
    fd = _lock(path, command)
    try:
        _settle_marker(path, command, outputs, new_fp, fresh, rewrite)
        yield path
    finally:
        _unlock(fd)


def _existing_marker(path: Path, command: str) -> dict[str, Any] | None:
    """The marker of ``path`` when ``command`` made it; ``None`` for a missing or empty
    directory; an error for a foreign directory or another command's."""
    if not path.exists():
        return None
    if not (path / MARKER_NAME).exists():
        foreign = _foreign_entries(path)
        if foreign:
            shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
            raise InputError(
                f"{path}: directory is not empty and was not made by creagraph "
                f"(it holds {shown}); refusing to write into it. Give a new or empty "
                "--out directory"
            )
        return None
    marker = _read_marker(path)
    if marker.get("command") != command:
        raise InputError(
            f"{path}: holds the output of `creagraph {marker.get('command')}`, not of "
            f"`creagraph {command}`; give another --out directory"
        )
    return marker


def _settle_marker(
    path: Path,
    command: str,
    outputs: Sequence[str],
    new_fp: dict[str, Any] | None,
    fresh: bool,
    rewrite: bool = False,
) -> None:
    """Under the lock: refuse results of other settings (unless ``fresh``), delete the old
    outputs when ``fresh``, and (re)write the marker when it is new or changes."""
    marker = _existing_marker(path, command)  # again, under the lock
    old_fp = marker.get("fingerprint") if marker is not None else None
    if marker is not None and not any((path / name).exists() for name in outputs):
        marker = None  # no results yet (e.g. the last run stopped on a bad input)
    if marker is not None and new_fp is not None and old_fp != new_fp and not rewrite:
        changes = fingerprint_changes(old_fp or {}, new_fp)
        if not fresh:
            raise InputError(
                f"{path}: holds results of `creagraph {command}` with other settings "
                f"({'; '.join(changes)}); they cannot be mixed with this run's. Re-run "
                "with the same settings to resume, or start fresh: give a new --out, "
                f"or add --fresh to delete the previous results in {path}"
            )
    if fresh and marker is not None:
        for name in outputs:
            target = path / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
    if marker is None or fresh or marker.get("fingerprint") != new_fp and (
        rewrite or new_fp is None
    ):
        _write_marker(path, command, new_fp)


def _write_marker(path: Path, command: str, fingerprint: dict[str, Any] | None) -> None:
    from creagraph import __version__

    with atomic_write(path / MARKER_NAME) as handle:
        json.dump(
            {
                "format": MARKER_FORMAT,
                "command": command,
                "creagraph": __version__,
                "fingerprint": fingerprint,
            },
            handle,
            ensure_ascii=False,
            indent=1,
        )
        handle.write("\n")


def _unlock(fd: int) -> None:
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


# single-file outputs ----------------------------------------------------------------------
def _sidecar(path: Path, kind: str) -> Path:
    return path.parent / f".{path.name}.creagraph-out.{kind}"


class OutputFile:
    """A claimed single output file (from :func:`claim_output_file`).

    Write the results to :attr:`path` (atomically, e.g. with
    :func:`~creagraph.core.io.atomic_write` or ``write_jsonl``) inside the ``with`` block;
    when the block ends without an error, the sidecar record is (re)written with the
    SHA-256 of what was written, so the next run knows creagraph made it.
    """

    def __init__(self, path: Path, command: str, fingerprint: dict[str, Any] | None):
        self.path = path
        self.command = command
        self.fingerprint = fingerprint

    def __fspath__(self) -> str:
        return str(self.path)

    def record(self) -> None:
        """Write the sidecar record for the file now at :attr:`path` (no-op when none)."""
        if not self.path.is_file():
            return
        try:
            self._write_record()
        except OSError as exc:  # named by the output file (a full disk names none)
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.path)) from None

    def _write_record(self) -> None:
        from creagraph import __version__

        with atomic_write(_sidecar(self.path, "json")) as handle:
            json.dump(
                {
                    "format": MARKER_FORMAT,
                    "command": self.command,
                    "creagraph": __version__,
                    "file": self.path.name,
                    "sha256": sha256_file(self.path),
                    "fingerprint": self.fingerprint,
                },
                handle,
                ensure_ascii=False,
                indent=1,
            )
            handle.write("\n")


def _check_file_is_ours(path: Path, command: str) -> None:
    """Refuse an existing ``path`` that creagraph did not write (or that changed since)."""
    if not path.exists() and not path.is_symlink():
        return
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"{path}: is a directory, expected a file")
    if path.is_symlink() or not path.is_file():
        raise InputError(
            f"{path}: exists and is not a regular file creagraph wrote; refusing to "
            "replace it. Give another --out"
        )
    record_path = _sidecar(path, "json")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            f"{path}: file exists and was not made by creagraph (no record "
            f"{record_path.name} beside it); refusing to overwrite it. Give another --out, "
            "or remove the file yourself"
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{record_path}: not a readable creagraph output record ({exc}); refusing to "
            f"overwrite {path.name}. Give another --out"
        ) from None
    if not isinstance(record, dict) or record.get("file") != path.name:
        raise InputError(
            f"{record_path}: not a creagraph output record for {path.name}; refusing to "
            "overwrite it. Give another --out"
        )
    if record.get("command") != command:
        raise InputError(
            f"{path}: holds the output of `creagraph {record.get('command')}`, not of "
            f"`creagraph {command}`; give another --out"
        )
    if record.get("sha256") != sha256_file(path):
        raise InputError(
            f"{path}: changed since `creagraph {command}` wrote it (its SHA-256 no longer "
            f"matches {record_path.name}); refusing to overwrite it. Give another --out, "
            "or remove the file yourself"
        )


@contextlib.contextmanager
def claim_output_file(
    out: str | os.PathLike[str],
    command: str,
    *,
    inputs: Sequence[str | os.PathLike[str]] = (),
    fingerprint: Mapping[str, Any] | None = None,
) -> Iterator[OutputFile]:
    """Claim the single output file ``out`` for one run of ``creagraph <command>``.

    The rules of :func:`claim_output_dir`, for one file:

    - ``out`` is never one of ``inputs`` (same path, hard or symbolic link): refused
      before anything is read or written;
    - an existing ``out`` is replaced only when creagraph's record beside it
      (``.NAME.creagraph-out.json``) says ``command`` wrote it and its bytes have not
      changed since; a user's file, a folder or a link is refused untouched;
    - one writer at a time: an exclusive ``flock`` on ``.NAME.creagraph-out.lock``;
      a second run stops at once naming the holder;
    - the settings are recorded: ``fingerprint`` (plain JSON values) goes into the
      record written when the block ends without an error.

    The command writes the whole file every run, so a different fingerprint is recorded,
    not refused.

    Parameters
    ----------
    out : path
        The output file (its folder is created when missing).
    command : str
        The command writing it (``"tig score"``).
    inputs : sequence of path
        Files the run reads.
    fingerprint : mapping, optional
        Every setting that determines the file's contents.

    Yields
    ------
    OutputFile
        Its ``path`` is where to write; locked until the block ends.

    Raises
    ------
    InputError
        With one line saying what is wrong and what to do.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from creagraph.core.io import write_jsonl
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "scores.jsonl"
    >>> with claim_output_file(target, "tig score", fingerprint={"--k": 3}) as claimed:
    ...     _ = write_jsonl(claimed.path, [{"a": 1}])
    >>> with claim_output_file(target, "tig score") as claimed:  # ours: may be replaced
    ...     _ = write_jsonl(claimed.path, [{"a": 2}])
    """
    path = Path(out)
    fp = json.loads(json.dumps(dict(fingerprint))) if fingerprint is not None else None
    _check_not_input(path, inputs)
    _check_file_unless_locked(path, command)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _lock_file(path, command)
    try:
        _check_file_is_ours(path, command)  # again, under the lock
        claimed = OutputFile(path, command, fp)
        yield claimed
        claimed.record()
    finally:
        _unlock(fd)
        if not path.exists():  # nothing written (an error): leave nothing beside it either
            with contextlib.suppress(OSError):
                _sidecar(path, "lock").unlink()


def check_output_file(
    out: str | os.PathLike[str],
    command: str,
    *,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> None:
    """The checks of :func:`claim_output_file` without claiming: call it before long work
    so a bad ``--out`` is refused at once (the claim at write time checks again).

    Raises
    ------
    InputError
        When ``out`` is an input or an existing file creagraph did not write, or a
        ``.parquet`` file without the parquet extra (checked now, not after the work).
    """
    path = Path(out)
    if path.suffix.lower() == ".parquet":
        from creagraph.core.extras import require

        require("pyarrow.parquet", "parquet", "needed to write .parquet files")
    _check_not_input(path, inputs)
    _check_file_unless_locked(path, command)


def _check_file_unless_locked(path: Path, command: str) -> None:
    """:func:`_check_file_is_ours`, except that a file another run is writing right now
    (its lock held, its record not yet written) is reported as that run, not as foreign."""
    import fcntl

    try:
        _check_file_is_ours(path, command)
    except InputError:
        lock_path = _sidecar(path, "lock")
        try:
            fd = os.open(lock_path, os.O_RDWR)
        except OSError:
            fd = -1
        if fd < 0:
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InputError(
                f"{path}: another `creagraph` run is writing this file "
                f"({_holder(lock_path)}); wait for it to finish or give another --out"
            ) from None
        finally:
            os.close(fd)
        raise


def _check_not_input(path: Path, inputs: Sequence[str | os.PathLike[str]]) -> None:
    try:
        resolved = path.resolve()
    except OSError:
        return
    for raw in inputs:
        p = Path(raw)
        same = False
        with contextlib.suppress(OSError):
            same = p.resolve() == resolved or (
                path.exists() and p.exists() and os.path.samefile(p, path)
            )
        if same:
            raise InputError(
                f"{p}: this input is also the --out file; writing the results would "
                "destroy it. Give another --out"
            )


def _lock_file(path: Path, command: str) -> int:
    lock_path = _sidecar(path, "lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise with_filename(exc, path) from None
    _flock_or_refuse(fd, lock_path, path, command, "file")
    try:
        _write_holder(fd)
    except OSError as exc:
        _unlock(fd)
        with contextlib.suppress(OSError):
            lock_path.unlink()  # a full disk: leave nothing beside the output
        raise with_filename(exc, path) from None
    return fd


# file names from ids ------------------------------------------------------------------------
_STEM_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_MAX_STEM_BYTES = 200


def id_file_stem(identifier: str) -> str:
    """A file name stem for ``identifier`` that no other identifier maps to.

    ASCII letters, digits, ``-`` and ``_`` are kept; every other character (``/``, ``.``,
    ``%``, spaces, non-ASCII) becomes ``%XX`` per UTF-8 byte, so the mapping is one-to-one
    and :func:`urllib.parse.unquote` gives the id back. A stem longer than 200 bytes is cut
    and ends with ``~`` and 16 hex digits of the id's SHA-256 instead.

    Examples
    --------
    >>> id_file_stem("a/b"), id_file_stem("a_b"), id_file_stem("a%2Fb")
    ('a%2Fb', 'a_b', 'a%252Fb')
    >>> id_file_stem(".."), id_file_stem("")
    ('%2E%2E', '%')
    """
    if identifier == "":
        return "%"  # unquote("%") == "%" is not "", but no other id maps here: "%" → "%25"
    parts = []
    for ch in identifier:
        if ch in _STEM_SAFE:
            parts.append(ch)
        else:
            parts.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    stem = "".join(parts)
    if len(stem) > _MAX_STEM_BYTES:
        digest = hashlib.sha256(identifier.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        stem = f"{stem[: _MAX_STEM_BYTES - 17]}~{digest}"
    return stem


def unique_file_stems(identifiers: Sequence[str], what: str = "id") -> dict[str, str]:
    """:func:`id_file_stem` of each identifier, refusing two that would share a file on a
    case-insensitive file system (``"Task"`` and ``"task"``).

    Raises
    ------
    InputError
        Naming both identifiers.
    """
    stems: dict[str, str] = {}
    seen: dict[str, str] = {}
    for identifier in identifiers:
        stem = id_file_stem(identifier)
        key = stem.casefold()
        other = seen.get(key)
        if other is not None and other != identifier:
            raise InputError(
                f"{what}s {other!r} and {identifier!r} would be written to the same file "
                f"({stem!r} on a case-insensitive file system); rename one of them"
            )
        seen[key] = identifier
        stems[identifier] = stem
    return stems
