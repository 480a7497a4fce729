"""Reading and writing plain records: JSON Lines, JSON, CSV and Parquet.

Every writer goes through :func:`atomic_write` (write to a temporary file in the same
directory, then rename), so an interrupted run never leaves a half-written file in place
of a good one. :class:`JsonlAppender` supports resumable outputs: records are appended
and flushed one by one, and :func:`read_jsonl` with ``tolerate_truncated_tail=True`` drops
a final line cut short by an interruption.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

__all__ = [
    "InputError",
    "atomic_write",
    "read_jsonl",
    "iter_jsonl",
    "write_jsonl",
    "read_records",
    "write_records",
    "JsonlAppender",
    "truncate_partial_line",
]


class InputError(ValueError):
    """Bad user input, with the file (and line or field) it came from in the message."""


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "w",
    encoding: str | None = "utf-8",
    newline: str | None = None,
):
    """Open a temporary sibling of ``path`` for writing; rename it over ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    binary = "b" in mode
    try:
        with os.fdopen(
            fd, mode, encoding=None if binary else encoding, newline=None if binary else newline
        ) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def iter_jsonl(
    path: str | os.PathLike[str], *, tolerate_truncated_tail: bool = False
) -> Iterator[dict[str, Any]]:
    """Yield one dict per non-empty line of a JSON Lines file.

    Raises :class:`InputError` naming the file and line number on a malformed line or a
    line that is not a JSON object. With ``tolerate_truncated_tail`` a malformed *last*
    line (an interrupted append) is skipped instead.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    with p.open("r", encoding="utf-8") as handle:
        pending: tuple[int, str] | None = None
        for lineno, line in enumerate(handle, start=1):
            if pending is not None:
                yield _parse_json_line(p, *pending)
                pending = None
            if line.strip():
                pending = (lineno, line)
        if pending is not None:
            try:
                yield _parse_json_line(p, *pending)
            except InputError:
                if not tolerate_truncated_tail:
                    raise


def _parse_json_line(path: Path, lineno: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{lineno}: malformed JSON ({exc.msg} at column {exc.colno})"
        ) from exc
    if not isinstance(value, dict):
        raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(value).__name__}")
    return value


def read_jsonl(
    path: str | os.PathLike[str], *, tolerate_truncated_tail: bool = False
) -> list[dict[str, Any]]:
    """All records of a JSON Lines file (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path, tolerate_truncated_tail=tolerate_truncated_tail))


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dumps(record: Any) -> str:
    """Compact, deterministic JSON for one record (numpy values converted)."""
    return json.dumps(record, ensure_ascii=False, default=_json_default, separators=(",", ":"))


def write_jsonl(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> int:
    """Atomically write ``records`` as JSON Lines; returns the number written."""
    n = 0
    with atomic_write(path) as handle:
        for record in records:
            handle.write(dumps(record) + "\n")
            n += 1
    return n


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read records from ``.jsonl``/``.ndjson``, ``.json`` (a list), ``.csv`` or ``.parquet``."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    suffix = p.suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        return read_jsonl(p)
    if suffix == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise InputError(f"{p}: expected a JSON list of objects")
        return data
    if suffix == ".csv":
        with p.open(newline="", encoding="utf-8") as handle:
            return [dict(row) for row in csv.DictReader(handle)]
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(p)
        except Exception as exc:  # pyarrow raises several unrelated types
            raise InputError(f"{p}: cannot read Parquet ({exc})") from exc
        return table.to_pylist()
    raise InputError(f"{p}: unsupported file type {suffix!r} (use .jsonl, .json, .csv or .parquet)")


def write_records(path: str | os.PathLike[str], records: list[Mapping[str, Any]]) -> None:
    """Atomically write records in the format named by the suffix (.jsonl, .csv, .parquet)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        write_jsonl(p, records)
    elif suffix == ".csv":
        fields: list[str] = []
        for record in records:
            fields.extend(k for k in record if k not in fields)
        with atomic_write(p, newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            for record in records:
                writer.writerow(
                    {k: (dumps(v) if isinstance(v, list | dict) else v) for k, v in record.items()}
                )
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pa.Table.from_pylist([dict(r) for r in records])
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            # Heterogeneous nested values (e.g. evidence dicts): store them as JSON text.
            table = pa.Table.from_pylist(
                [
                    {k: (dumps(v) if isinstance(v, list | dict) else v) for k, v in r.items()}
                    for r in records
                ]
            )
        with atomic_write(p, mode="wb") as handle:
            pq.write_table(table, handle)
    else:
        raise InputError(f"{p}: unsupported output type {suffix!r}")


def truncate_partial_line(path: str | os.PathLike[str]) -> int:
    """Cut a final line that lacks its newline (an interrupted append); returns bytes cut.

    Reads only the file's tail, so it is cheap on large files. A missing file is left alone.
    """
    p = Path(path)
    if not p.exists():
        return 0
    with p.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        end = size
        cut = 0
        while end > 0:
            start = max(0, end - 65536)
            handle.seek(start)
            found = handle.read(end - start).rfind(b"\n")
            if found >= 0:
                cut = start + found + 1
                break
            end = start
        handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
        return size - cut


class JsonlAppender:
    """Append records to a JSON Lines file one at a time, flushing each line.

    Used for resumable outputs: a re-run reads the keys already present and skips them.
    A truncated last line left by a crash is cut off before appending. Each
    :meth:`write` hands the line to the operating system (``flush``), so a killed
    process leaves a prefix of the records written, at most with a partial last line;
    :meth:`sync` (called by :meth:`close`) also forces the data to disk.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        truncate_partial_line(self.path)
        self._handle: IO[str] = self.path.open("a", encoding="utf-8")

    def write(self, record: Mapping[str, Any], *, flush: bool = True) -> None:
        """Append one record; with ``flush=False`` it may stay buffered until :meth:`flush`."""
        self._handle.write(dumps(record) + "\n")
        if flush:
            self._handle.flush()

    def flush(self) -> None:
        """Hand buffered lines to the operating system."""
        self._handle.flush()

    def sync(self) -> None:
        """Flush and ``fsync``: written lines survive a power loss."""
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if not self._handle.closed:
            self.sync()
            self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
