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
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, atomic_write, sha256_file

__all__ = [
    "MARKER_NAME",
    "LOCK_NAME",
    "MARKER_FORMAT",
    "claim_output_dir",
    "file_identity",
    "fingerprint_changes",
    "check_inputs_outside",
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


def _foreign_entries(path: Path) -> list[str]:
    return sorted(e.name for e in os.scandir(path) if e.name not in _OWN)


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


def _lock(path: Path, command: str) -> int:
    import fcntl

    lock_path = path / LOCK_NAME
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise
        raise InputError(
            f"{path}: another `creagraph {command}` run is writing this directory "
            f"({_holder(lock_path)}); wait for it to finish or give another --out"
        ) from None
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)
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
        Delete the command's previous outputs in ``out`` first (only with a marker).

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
        _settle_marker(path, command, outputs, new_fp, fresh)
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
) -> None:
    """Under the lock: refuse results of other settings (unless ``fresh``), delete the old
    outputs when ``fresh``, and (re)write the marker when it is new or changes."""
    marker = _existing_marker(path, command)  # again, under the lock
    old_fp = marker.get("fingerprint") if marker is not None else None
    if marker is not None and not any((path / name).exists() for name in outputs):
        marker = None  # no results yet (e.g. the last run stopped on a bad input)
    if marker is not None and new_fp is not None and old_fp != new_fp:
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
            with contextlib.suppress(FileNotFoundError):
                (path / name).unlink()
    if marker is None or fresh or (new_fp is None and marker.get("fingerprint") is None):
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
