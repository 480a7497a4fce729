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
import errno
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

__all__ = [
    "InputError",
    "atomic_write",
    "with_filename",
    "sha256_file",
    "read_jsonl",
    "iter_jsonl",
    "write_jsonl",
    "read_records",
    "iter_records",
    "iter_csv_lines",
    "write_records",
    "JsonlAppender",
    "truncate_partial_line",
    "write_csv",
    "csv_safe_cell",
    "csv_cell_text",
]

#: A text cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV
#: Injection"): =, +, -, @, tab and carriage return.
_FORMULA_START = frozenset("=+-@\t\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class InputError(ValueError):
    """Bad user input, with the file (and line or field) it came from in the message."""


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "w",
    encoding: str | None = "utf-8",
    newline: str | None = None,
) -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing; rename it over ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left untouched. The data
    is fsynced before the rename and the directory after it, so after a crash ``path``
    holds either the old or the new content in full. The file gets the usual permissions
    (``0o666`` less the umask), not the private ones of a temporary file.
    """
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    binary = "b" in mode
    try:
        umask = _umask()
        if umask is not None:
            os.chmod(fd, 0o666 & ~umask)
        with os.fdopen(
            fd, mode, encoding=None if binary else encoding, newline=None if binary else newline
        ) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
        _fsync_dir(target.parent)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError) and exc.filename is None:  # e.g. a full disk
            raise with_filename(exc, target) from exc
        raise


def with_filename(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` naming ``path`` when it names no file (a write to a full disk names none).

    Examples
    --------
    >>> import errno
    >>> with_filename(OSError(errno.ENOSPC, "No space left on device"), "out.csv")
    OSError(28, 'No space left on device')
    >>> _.filename
    'out.csv'
    """
    if exc.filename is not None or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(path))


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 hex digest of the file at ``path``, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _umask() -> int | None:
    """The process umask, read without changing it (``None`` where it cannot be read)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):  # pragma: no cover - not Linux
        pass
    return None


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse
        pass
    finally:
        os.close(fd)


def iter_jsonl(
    path: str | os.PathLike[str], *, tolerate_truncated_tail: bool = False
) -> Iterator[dict[str, Any]]:
    """Yield one dict per non-empty line of a JSON Lines file.

    Raises :class:`InputError` naming the file and line number on a malformed line, a
    line that is not UTF-8, nested too deeply, or not a JSON object — never another
    exception type. With ``tolerate_truncated_tail`` a malformed *last* line (an
    interrupted append) is skipped instead.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected a JSON Lines file")
    with p.open("rb") as handle:
        pending: tuple[int, bytes] | None = None
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


def _decode_line(path: Path, lineno: int, raw: bytes, encoding: str = "utf-8") -> str:
    """One line of a file as text, or an :class:`InputError` naming the line and column."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text (invalid byte at column {exc.start + 1})"
        raise InputError(f"{path}:{lineno}: {message}") from None


def _parse_json_line(path: Path, lineno: int, line: str | bytes) -> dict[str, Any]:
    if isinstance(line, bytes):
        line = _decode_line(path, lineno, line)
    value = _loads(line, f"{path}:{lineno}")
    if not isinstance(value, dict):
        raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(value).__name__}")
    return value


def _loads(text: str, where: str) -> Any:
    """``json.loads`` whose every failure is an :class:`InputError` naming ``where``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = f"line {exc.lineno}, " if exc.lineno > 1 else ""
        message = f"malformed JSON ({exc.msg} at {line}column {exc.colno})"
        raise InputError(f"{where}: {message}") from exc
    except RecursionError:
        raise InputError(f"{where}: malformed JSON (nested too deeply)") from None
    except MemoryError:
        raise InputError(f"{where}: JSON value too large to load") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python allows
        raise InputError(f"{where}: malformed JSON ({exc})") from exc


def _decode(path: Path, data: bytes) -> str:
    """UTF-8 text of a whole file, or an :class:`InputError` naming the line of a bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        message = f"not UTF-8 text (invalid byte at column {column})"
        raise InputError(f"{path}:{line}: {message}") from None


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
    """Read records from ``.jsonl``/``.ndjson``, ``.json`` (a list), ``.csv`` or ``.parquet``.

    All of them in a list; see :func:`iter_records` for the errors raised.
    """
    return list(iter_records(path))


def iter_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield the records of a ``.jsonl``/``.ndjson``, ``.json``, ``.csv`` or ``.parquet`` file.

    JSON Lines, CSV and Parquet are read lazily (a ``.json`` list is loaded whole). Any
    problem with the file — missing, not UTF-8, malformed, truncated, nested too deeply, a
    CSV row with more fields than the header, an unreadable Parquet file — raises
    :class:`InputError` naming the file and, where there is one, the line; never another
    exception type.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rows.csv"
    >>> _ = p.write_text("a,b\\n1,2\\n")
    >>> list(iter_records(p))
    [{'a': '1', 'b': '2'}]
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected a file of records")
    suffix = p.suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        yield from iter_jsonl(p)
    elif suffix == ".json":
        data = _loads(_decode(p, p.read_bytes()), str(p))
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise InputError(f"{p}: expected a JSON list of objects, got {type(data).__name__}")
        for i, record in enumerate(data):
            if not isinstance(record, dict):
                raise InputError(
                    f"{p}: item {i} of the JSON list is a {type(record).__name__}, not an object"
                )
        yield from data
    elif suffix == ".csv":
        yield from _iter_csv(p)
    elif suffix == ".parquet":
        yield from _iter_parquet(p)
    else:
        raise InputError(
            f"{p}: unsupported file type {suffix!r} (use .jsonl, .json, .csv or .parquet)"
        )


def _utf8_lines(p: Path, handle: IO[bytes]) -> Iterator[str]:
    for lineno, raw in enumerate(handle, start=1):
        yield _decode_line(p, lineno, raw, "utf-8-sig" if lineno == 1 else "utf-8")


def _iter_csv(p: Path) -> Iterator[dict[str, Any]]:
    for _, row in iter_csv_lines(p):
        yield row


def iter_csv_lines(
    path: str | os.PathLike[str], required: Iterable[str] = ()
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line, row)`` for each record of a UTF-8 CSV file (header = line 1).

    ``line`` is the file line where the record ends, for error messages. The header must
    name every column in ``required``; problems raise :class:`InputError` naming the file
    and line, as :func:`iter_records` does (this is the CSV reader behind it).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rows.csv"
    >>> _ = p.write_text("a,b\\n1,2\\n")
    >>> list(iter_csv_lines(p, required=["a"]))
    [(2, {'a': '1', 'b': '2'})]
    """
    p = Path(path)
    required = list(required)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    with p.open("rb") as handle:
        last = [0]  # the file line the csv module is reading (its line_num lags behind)

        def lines() -> Iterator[str]:
            for number, line in enumerate(_utf8_lines(p, handle), start=1):
                last[0] = number
                yield line

        reader = csv.DictReader(lines())
        try:
            header = reader.fieldnames
        except csv.Error as exc:
            raise InputError(f"{p}:1: malformed CSV header ({exc})") from None
        if required:
            if not header:
                raise InputError(f"{p}:1: empty file (expected columns {list(required)})")
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(
                    f"{p}:1: missing column(s) {missing} (expected {list(required)}; "
                    f"found {header})"
                )
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                if "field larger than field limit" in str(exc):
                    raise InputError(
                        f"{p}:{last[0]}: a cell is longer than {csv.field_size_limit():,} "
                        "characters (the CSV reader's limit); shorten it or use JSON Lines"
                    ) from None
                raise InputError(f"{p}:{last[0]}: malformed CSV ({exc})") from None
            if None in row:
                n_header = len(reader.fieldnames or [])
                raise InputError(
                    f"{p}:{reader.line_num}: row has {n_header + len(row[None])} fields, "
                    f"the header has {n_header}"
                )
            yield reader.line_num, {
                csv_cell_text(k) if isinstance(k, str) else k: (
                    csv_cell_text(v) if isinstance(v, str) else v
                )
                for k, v in row.items()
            }


def _iter_parquet(p: Path) -> Iterator[dict[str, Any]]:
    from creagraph.core.extras import require  # (core.extras imports this module)

    pq = require("pyarrow.parquet", "parquet", "needed to read .parquet files")

    try:
        parquet = pq.ParquetFile(p)
    except Exception as exc:  # pyarrow raises several unrelated types
        raise InputError(f"{p}: cannot read Parquet ({exc}); is the file complete?") from None
    row = 0
    try:
        for batch in parquet.iter_batches(batch_size=1024):
            records = batch.to_pylist()
            yield from records
            row += len(records)
    except InputError:
        raise
    except Exception as exc:  # a corrupt page, a truncated column chunk, ...
        raise InputError(f"{p}: row {row + 1}: cannot read Parquet ({exc})") from None


def write_records(
    path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]]
) -> None:
    """Atomically write records in the format named by the suffix (.jsonl, .csv, .parquet)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        write_jsonl(p, records)
    elif suffix == ".csv":
        write_csv(p, records)
    elif suffix == ".parquet":
        from creagraph.core.extras import require

        pa = require("pyarrow", "parquet", "needed to write .parquet files")
        pq = require("pyarrow.parquet", "parquet", "needed to write .parquet files")

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


def csv_safe_cell(value: Any) -> Any:
    """A cell value a spreadsheet shows as text, never runs as a formula (OWASP CSV injection).

    Text that starts with ``= + - @``, a tab or a carriage return (after any leading
    apostrophes) gets one more leading ``'``; numbers, and text that is a plain decimal
    number such as ``"-1.5"``, are left alone. :func:`csv_cell_text` undoes it exactly, so
    creagraph reads back what it wrote.

    Examples
    --------
    >>> [csv_safe_cell(v) for v in ("=HYPERLINK(1)", "+cmd", "@SUM(A1)", "-1.5", -2, "a-b")]
    ["'=HYPERLINK(1)", "'+cmd", "'@SUM(A1)", '-1.5', -2, 'a-b']
    >>> csv_cell_text(csv_safe_cell("'=x")) == "'=x"
    True
    """
    if not isinstance(value, str) or value.lstrip("'")[:1] not in _FORMULA_START:
        return value
    if _NUMBER.fullmatch(value):
        return value
    return "'" + value


def csv_cell_text(text: str) -> str:
    """The text :func:`csv_safe_cell` was given (one ``'`` removed where it added one)."""
    if text.startswith("'") and text.lstrip("'")[:1] in _FORMULA_START:
        return text[1:]
    return text


def _csv_default_cell(value: Any) -> Any:
    if isinstance(value, list | dict):
        return dumps(value)
    return value


def write_csv(
    path: str | os.PathLike[str],
    records: Iterable[Mapping[str, Any]],
    fieldnames: Sequence[str] | None = None,
    *,
    cell: Callable[[Any], Any] | None = None,
    lineterminator: str = "\r\n",
) -> int:
    """Atomically write records as CSV: the one CSV writer of creagraph.

    Columns are ``fieldnames`` or the union of the records' keys in first-seen order;
    missing values are blank. Each value goes through ``cell`` (default: lists and dicts
    as JSON text) and then :func:`csv_safe_cell`, so no cell is a spreadsheet formula.
    Returns the number of records written.
    """
    rows = records if fieldnames is not None else list(records)
    if fieldnames is None:
        fields: list[str] = []
        for record in rows:
            fields.extend(k for k in record if k not in fields)
        fieldnames = fields
    convert = cell or _csv_default_cell
    n = 0
    with atomic_write(path, newline="") as handle:
        writer = csv.writer(handle, lineterminator=lineterminator)
        writer.writerow([csv_safe_cell(str(name)) for name in fieldnames])
        for record in rows:
            writer.writerow(
                [csv_safe_cell(convert(record[k])) if k in record else "" for k in fieldnames]
            )
            n += 1
    return n


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
        try:
            self._handle.write(dumps(record) + "\n")
            if flush:
                self._handle.flush()
        except OSError as exc:  # a full disk: name the file
            raise with_filename(exc, self.path) from exc

    def flush(self) -> None:
        """Hand buffered lines to the operating system."""
        try:
            self._handle.flush()
        except OSError as exc:
            raise with_filename(exc, self.path) from exc

    def sync(self) -> None:
        """Flush and ``fsync``: written lines survive a power loss."""
        try:
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as exc:
            raise with_filename(exc, self.path) from exc

    def close(self) -> None:
        if not self._handle.closed:
            self.sync()
            self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
