"""Streaming reader for Wikidata truthy-dump N-Triples (``.nt``, ``.nt.gz``, ``.nt.bz2``).

Only the statement kinds creagraph uses are returned: item-to-item truthy statements
(``wd:Q… wdt:P… wd:Q…``) and English (by default) labels, aliases and descriptions of
items and properties. Everything else is counted by reason and skipped, so importing a
full Wikidata dump works line by line without ever holding the file as text.
"""

from __future__ import annotations

import bz2
import gzip
import io
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, cast

import numpy as np

from creagraph.core.io import InputError

__all__ = [
    "WD_ENTITY",
    "WDT",
    "RDFS_LABEL",
    "SKOS_ALT",
    "SCHEMA_DESCRIPTION",
    "Statement",
    "Literal_",
    "ParseReport",
    "parse_dump",
    "parse_dump_blocks",
    "escape_literal",
    "unescape_literal",
]

WD_ENTITY = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
SCHEMA_DESCRIPTION = "http://schema.org/description"

_TEXT_PREDICATES = {
    RDFS_LABEL: "label",
    SKOS_ALT: "alias",
    SCHEMA_DESCRIPTION: "description",
}

_ENTITY_ID = re.compile(r"[QP][1-9][0-9]*")
#: Ids are stored as 64-bit integers: at most 18 digits after the letter (Wikidata's are 9).
_MAX_ID_CHARS = 19
_ID_TOO_LARGE = "id too large (more than 18 digits)"
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"(?:@([A-Za-z][A-Za-z0-9-]*)|\^\^<[^>]*>)?\s*\.\s*$')
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")
_SIMPLE_ESCAPES = {
    "t": "\t",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "f": "\f",
    '"': '"',
    "'": "'",
    "\\": "\\",
}


@dataclass(frozen=True, slots=True)
class Statement:
    """``(subject QID, PID, object QID)``."""

    subject: str
    property: str
    object: str


@dataclass(frozen=True, slots=True)
class Literal_:
    """A label, alias or description of an item or property."""

    id: str
    kind: Literal["label", "alias", "description"]
    text: str


@dataclass
class ParseReport:
    """Counts of what a parse read, kept and skipped (by reason)."""

    lines: int = 0
    statements: int = 0
    literals: int = 0
    skipped: Counter = field(default_factory=Counter)

    def merge(self, other: ParseReport) -> None:
        self.lines += other.lines
        self.statements += other.statements
        self.literals += other.literals
        self.skipped.update(other.skipped)

    def as_dict(self) -> dict:
        return {
            "lines": self.lines,
            "statements": self.statements,
            "literals": self.literals,
            "skipped": dict(sorted(self.skipped.items())),
        }


def unescape_literal(text: str) -> str:
    r"""Undo N-Triples string escapes (``\"``, ``\\``, ``\n``, ``\uXXXX``, ...).

    Examples
    --------
    >>> unescape_literal(r'say \"hi\"\n\u00e9')
    'say "hi"\né'
    """
    if "\\" not in text:
        return text

    def repl(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "uU" and len(code) > 1:
            value = int(code[1:], 16)
            if value > 0x10FFFF:
                raise ValueError(f"invalid escape \\{code} (beyond U+10FFFF)")
            return chr(value)
        if code in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[code]
        raise ValueError(f"invalid escape \\{code}")

    out = _ESCAPE.sub(repl, text)
    if _SURROGATE.search(out):
        # \uD83D\uDE00-style pairs are one character; a lone half is not text at all
        try:
            out = out.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise ValueError("invalid escape: an unpaired UTF-16 surrogate") from None
    return out


def escape_literal(text: str) -> str:
    r"""Escape a string for an N-Triples literal (inverse of :func:`unescape_literal`).

    Examples
    --------
    >>> escape_literal('a "b"\n')
    'a \\"b\\"\\n'
    """
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )


class _CountingReader(io.RawIOBase):
    """Counts compressed bytes read, for a progress bar over the file size."""

    def __init__(self, raw: IO[bytes], on_read: OnRead) -> None:
        self._raw = raw
        self._on_read = on_read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        if n:
            self._on_read(n)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _open_binary(path: str | Path, on_read: OnRead | None = None) -> IO[bytes]:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected an N-Triples file")
    raw: IO[bytes] = p.open("rb")
    if on_read is not None:
        raw = io.BufferedReader(_CountingReader(raw, on_read), buffer_size=1 << 20)
    if p.name.endswith(".gz"):
        stream: IO[bytes] = cast(IO[bytes], gzip.GzipFile(fileobj=raw))
    elif p.name.endswith(".bz2"):
        stream = bz2.BZ2File(raw)
    else:
        stream = raw
    return stream


#: What a truncated or corrupt compressed file raises while being read.
_STREAM_ERRORS = (EOFError, OSError, zlib.error, ValueError)


#: Called with the number of raw bytes read (a progress bar over the file size).
OnRead = Callable[[int], object]

#: Longest line read (bytes). Wikidata truthy-dump lines are at most a few kilobytes; a
#: longer one is malformed, and is never held in memory in full.
MAX_LINE_BYTES = 1 << 20


def _lines(
    path: str | Path, on_read: OnRead | None, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, str | None | int]]:
    """``(line number, text)`` for each line; text is ``None`` for a line that is not UTF-8,
    and the line's length in bytes (an ``int``, at least ``max_line_bytes + 1``) for a line
    longer than ``max_line_bytes``, which is read in pieces and skipped, never kept whole.

    A compressed file that ends early or is corrupt raises :class:`InputError` naming the
    file and the last line read.
    """
    with _open_binary(path, on_read) as handle:
        lineno = 0
        while True:
            try:
                raw = handle.readline(max_line_bytes + 1)
                too_long = len(raw) > max_line_bytes and not raw.endswith(b"\n")
                length = len(raw)
                while too_long:  # drop the rest of the line, a piece at a time
                    piece = handle.readline(1 << 20)
                    length += len(piece)
                    if not piece or piece.endswith(b"\n"):
                        break
            except _STREAM_ERRORS as exc:
                raise InputError(
                    f"{path}:{lineno + 1}: the compressed file is truncated or corrupt "
                    f"({type(exc).__name__}: {exc}); download or copy it again"
                ) from None
            if not raw:
                return
            lineno += 1
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
                raw = raw[3:]
            if too_long:
                yield lineno, length
                continue
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError:
                yield lineno, None


def _iri(token: str) -> str | None:
    if len(token) > 2 and token[0] == "<" and token[-1] == ">":
        return token[1:-1]
    return None


def parse_dump(
    path: str | Path,
    *,
    language: str = "en",
    strict: bool = True,
    report: ParseReport | None = None,
    on_read: OnRead | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Statement | Literal_]:
    """Yield the statements and literals of one dump file, in file order.

    Parameters
    ----------
    path : path
        ``.nt``, ``.nt.gz`` or ``.nt.bz2`` in the Wikidata truthy-dump vocabulary.
    language : str
        Language tag of labels/aliases/descriptions to keep; others are skipped.
    strict : bool
        If true, a malformed line raises :class:`InputError` naming file and line;
        if false it is counted under ``skipped["malformed line"]``.
    report : ParseReport, optional
        Filled with counts of lines read, kept and skipped by reason.
    on_read : callable, optional
        Called with the number of (compressed) bytes read, for progress bars.
    max_line_bytes : int
        A longer line is malformed (``strict``: an error naming file and line; otherwise
        counted under ``skipped["line too long"]``); memory stays bounded by this size.
    """
    rep = report if report is not None else ParseReport()
    for lineno, line in _lines(path, on_read, max_line_bytes):
        rep.lines += 1
        try:
            item = _kept(line, language, strict, max_line_bytes, rep.skipped)
        except _Refused as refused:
            raise refused.error(path, lineno) from refused.skip.cause
        if item is None:
            continue
        if type(item) is Statement:
            rep.statements += 1
        else:
            rep.literals += 1
        yield item


class _Skip(NamedTuple):
    """A line :func:`parse_dump` does not keep: the reason counted in the report, and the
    error (``problem``, ``cause``) raised instead when parsing strictly (``problem`` is
    ``None`` for lines skipped even then: data outside the graph's vocabulary)."""

    reason: str
    problem: str | None = None
    cause: Exception | None = None


class _Refused(Exception):
    """A line strict parsing refuses (``skip.problem`` says why)."""

    def __init__(self, skip: _Skip):
        super().__init__(skip.problem)
        self.skip = skip

    def error(self, path: str | Path, lineno: int) -> InputError:
        """The error naming file and line that the readers raise for it."""
        return InputError(f"{path}:{lineno}: {self.skip.problem}")


def _kept(
    line: str | None | int, language: str, strict: bool, max_line_bytes: int, skipped: Counter
) -> Statement | Literal_ | None:
    """The per-line step both readers share: the statement or literal of one line as
    :func:`_lines` gives it, or ``None`` for a line not kept (a blank line or comment, or a
    skipped line, counted in ``skipped`` by reason); raises :class:`_Refused` for a line
    that ``strict`` parsing refuses."""
    item = _parse_line(line, language, max_line_bytes)
    if item is None or not isinstance(item, _Skip):
        return item
    if strict and item.problem is not None:
        raise _Refused(item)
    skipped[item.reason] += 1
    return None


_MALFORMED = "malformed line"
_SKIP_BLANK_SUBJECT = _Skip("blank-node subject")
_SKIP_NON_ITEM_OBJECT = _Skip("non-item object (literal, value or other IRI)")
_SKIP_NON_ITEM_SUBJECT = _Skip("non-item subject (property, lexeme, ...)")
_SKIP_UNUSED = _Skip("unused predicate")
_SKIP_ID_TOO_LARGE = _Skip(_ID_TOO_LARGE)
_SKIP_TEXT_SUBJECT = _Skip("text of a non-item/property subject")
_ENTITY_PREFIX_LEN = len(WD_ENTITY)


def _parse_line(
    line: str | None | int, language: str, max_line_bytes: int
) -> Statement | Literal_ | _Skip | None:
    """One line as :func:`_lines` gives it: its statement or literal, why it is skipped, or
    ``None`` for a blank line or a comment."""
    if isinstance(line, int):
        return _Skip(
            "line too long",
            f"a line of {line:,} bytes, longer than the {max_line_bytes:,}-byte limit "
            "(not a Wikidata N-Triples line)",
        )
    if line is None:
        return _Skip(_MALFORMED, "not UTF-8 text")
    stripped = line.strip()
    if not stripped or stripped[0] == "#":
        return None
    parts = stripped.split(None, 2)  # spaces or tabs between terms, as the format allows
    if len(parts) < 3:
        return _Skip(_MALFORMED, f"malformed N-Triples line: {stripped[:120]!r}")
    subject, predicate, rest = parts
    s_iri, p_iri = _iri(subject), _iri(predicate)
    if s_iri is None and subject.startswith("_:"):
        return _SKIP_BLANK_SUBJECT
    if s_iri is None or p_iri is None:
        return _Skip(_MALFORMED, f"malformed N-Triples line: {stripped[:120]!r}")
    if p_iri.startswith(WDT):
        return _statement(s_iri, p_iri[len(WDT) :], rest)
    return _literal(s_iri, p_iri, rest, language)


def _statement(s_iri: str, pid: str, rest: str) -> Statement | _Skip:
    """A ``wdt:`` line: the item-to-item statement, or why it is skipped."""
    sid = s_iri[_ENTITY_PREFIX_LEN:] if s_iri.startswith(WD_ENTITY) else ""
    if not rest.endswith("."):
        return _Skip(_MALFORMED, "malformed N-Triples line (no final '.')")
    o_iri = _iri(rest[:-1].rstrip())
    if o_iri is None or not o_iri.startswith(WD_ENTITY):
        return _SKIP_NON_ITEM_OBJECT
    oid = o_iri[_ENTITY_PREFIX_LEN:]
    if not (sid.startswith("Q") and _ENTITY_ID.fullmatch(sid)):
        return _SKIP_NON_ITEM_SUBJECT
    if not (oid.startswith("Q") and _ENTITY_ID.fullmatch(oid)):
        return _SKIP_NON_ITEM_OBJECT
    if not _ENTITY_ID.fullmatch(pid):
        return _SKIP_UNUSED
    if max(len(sid), len(pid), len(oid)) > _MAX_ID_CHARS:
        return _SKIP_ID_TOO_LARGE
    return Statement(sid, pid, oid)


def _literal(s_iri: str, p_iri: str, rest: str, language: str) -> Literal_ | _Skip:
    """Any other line: a label, alias or description in ``language``, or why it is skipped."""
    kind = _TEXT_PREDICATES.get(p_iri)
    if kind is None:
        return _SKIP_UNUSED
    if not s_iri.startswith(WD_ENTITY) or not _ENTITY_ID.fullmatch(
        s_iri[_ENTITY_PREFIX_LEN:]
    ):
        return _SKIP_TEXT_SUBJECT
    match = _LITERAL.match(rest)
    if match is None:
        return _Skip(_MALFORMED, f"malformed literal: {rest[:120]!r}")
    if (match.group(2) or "").lower() != language.lower():
        return _Skip(f"literal not in language {language!r}")
    try:
        text = unescape_literal(match.group(1))
    except ValueError as exc:
        return _Skip(_MALFORMED, str(exc), exc)
    if len(s_iri) - _ENTITY_PREFIX_LEN > _MAX_ID_CHARS:
        return _SKIP_ID_TOO_LARGE
    return Literal_(s_iri[_ENTITY_PREFIX_LEN:], kind, text)  # type: ignore[arg-type]


# --- the block reader (issue 31) --------------------------------------------------------------

#: Bytes read at a time by :func:`parse_dump_blocks` (at most ``max_line_bytes``, so that only
#: the line a read starts inside can be longer than the limit).
_BLOCK_BYTES = 1 << 18
_BOM = b"\xef\xbb\xbf"
#: An item-to-item statement written the way Wikidata's dumps write it (one space between
#: terms, " ." at the end), preceded by its line's newline: what :func:`_parse_line` reads as
#: ``Statement`` with ids of at most 18 digits; every other line takes the general path.
_FAST_STATEMENT = re.compile(
    rb"\n<http://www\.wikidata\.org/entity/Q([1-9][0-9]{0,17})> "
    rb"<http://www\.wikidata\.org/prop/direct/P([1-9][0-9]{0,17})> "
    rb"<http://www\.wikidata\.org/entity/Q([1-9][0-9]{0,17})> \.(?=\n)"
)
_TEXT_KINDS = {re.escape(iri): kind for iri, kind in _TEXT_PREDICATES.items()}


def _fast_literal(language: str) -> re.Pattern[str]:
    """A label, alias or description without escapes, in ``language`` (ASCII letters matched
    without regard to case, as :func:`_literal` compares tags), one space between terms."""
    tag = "".join(f"[{c.lower()}{c.upper()}]" if c.isascii() and c.isalpha() else re.escape(c)
                  for c in language)  # fmt: skip
    return re.compile(
        r"<http://www\.wikidata\.org/entity/([QP][1-9][0-9]{0,17})> <("
        + "|".join(_TEXT_KINDS)
        + r')> "([^"\\]*)"@' + tag + r" \."
    )


def _read_block(handle: IO[bytes], size: int, path: str | Path, lineno: int) -> bytes:
    try:
        return handle.read(size)
    except _STREAM_ERRORS as exc:
        raise InputError(
            f"{path}:{lineno + 1}: the compressed file is truncated or corrupt "
            f"({type(exc).__name__}: {exc}); download or copy it again"
        ) from None


def _line_blocks(
    path: str | Path, on_read: OnRead | None, max_line_bytes: int, block_bytes: int = _BLOCK_BYTES
) -> Iterator[tuple[int, bytes | int]]:
    """``(number of the first line, whole lines)`` for each stretch of the file read, the
    lines as bytes each ending in a newline (but the file's last line, when it has none); and
    ``(line number, length in bytes)`` for a line longer than ``max_line_bytes``, which is read
    in pieces and skipped, never kept whole (as :func:`_lines`).

    A compressed file that ends early or is corrupt raises :class:`InputError` naming the file
    and the first line of the stretch that could not be read.
    """
    size = max(1, min(block_bytes, max_line_bytes))
    with _open_binary(path, on_read) as handle:
        lineno = 0
        buf = _read_block(handle, size, path, lineno)
        while buf:
            first_end = buf.find(b"\n")
            if first_end > max_line_bytes or (first_end < 0 and len(buf) > max_line_bytes):
                length, buf = _skip_long_line(handle, buf, size, path, lineno)
                lineno += 1
                yield lineno, length
                continue
            cut = buf.rfind(b"\n") + 1
            newlines = buf.count(b"\n", 0, cut)  # the newlines of the block (counted once)
            data = _read_block(handle, size, path, lineno + newlines)
            if cut == 0 and data:  # a line still being read
                buf += data
                continue
            if not data:  # the end of the file: the rest is the last line
                cut = len(buf)
            block, buf = buf[:cut], buf[cut:] + data
            if lineno == 0 and block.startswith(_BOM):  # a UTF-8 byte-order mark
                block = block[3:] or b"\n"  # (a file of just the mark has one empty line)
                newlines = block.count(b"\n")
            yield lineno + 1, block
            lineno += newlines + (not block.endswith(b"\n"))


def _skip_long_line(
    handle: IO[bytes], buf: bytes, size: int, path: str | Path, lineno: int
) -> tuple[int, bytes]:
    """The length of the over-long line that ``buf`` starts with (its newline included), and
    what follows it, reading the rest of it a piece at a time."""
    length = 0
    while True:
        end = buf.find(b"\n")
        if end >= 0:
            rest = buf[end + 1 :] or _read_block(handle, size, path, lineno + 1)
            return length + end + 1, rest
        length += len(buf)
        buf = _read_block(handle, size, path, lineno)
        if not buf:
            return length, b""


def parse_dump_blocks(
    path: str | Path,
    *,
    language: str = "en",
    strict: bool = True,
    report: ParseReport | None = None,
    on_read: OnRead | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[tuple[np.ndarray, list[tuple[str, str, str]]]]:
    r"""What :func:`parse_dump` reads, a block of lines at a time: for each, the statements as
    an ``(n, 3)`` array of subject, property and object numbers (``Q5`` → 5) and the literals
    as ``(id, kind, text)`` in file order.

    The same lines are kept, skipped and counted in ``report`` as by :func:`parse_dump`, with
    the same errors naming file and line, but for a corrupt compressed file, whose error
    names the first line of the block that could not be read. Within a block the statements
    come in no particular order (the import sorts them); literals keep the file's order. The
    lines Wikidata's dumps write most (item-to-item statements, labels without escapes) are
    read by two regular expressions over the whole block; every other line by
    :func:`parse_dump`'s own per-line code.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> dump = pathlib.Path(tempfile.mkdtemp()) / "tiny.nt"
    >>> _ = dump.write_text(
    ...     "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P31> "
    ...     "<http://www.wikidata.org/entity/Q5> .\n"
    ...     '<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> '
    ...     '"one"@en .\n')
    >>> [(rows.tolist(), texts) for rows, texts in parse_dump_blocks(dump)]
    [([[1, 31, 5]], [('Q1', 'label', 'one')])]
    """
    rep = report if report is not None else ParseReport()
    fast_literal = _fast_literal(language).fullmatch
    for lineno, block in _line_blocks(path, on_read, max_line_bytes):
        if isinstance(block, int):  # an over-long line: skipped or refused, never kept
            rep.lines += 1
            try:
                _kept(block, language, strict, max_line_bytes, rep.skipped)
            except _Refused as refused:
                raise refused.error(path, lineno) from None
            continue
        try:
            yield _parse_block(block, language, strict, rep, fast_literal, max_line_bytes)
        except _Refused:
            _raise_strict(path, lineno, block, language, max_line_bytes)


def _parse_block(
    block: bytes, language: str, strict: bool, rep: ParseReport,
    fast_literal: Callable[[str], re.Match[str] | None],
    max_line_bytes: int,
) -> tuple[np.ndarray, list[tuple[str, str, str]]]:  # fmt: skip
    """One block's statements and literals (see :func:`parse_dump_blocks`); counts into
    ``rep`` only when the whole block is read (:class:`_Refused`, raised for a line strict
    parsing refuses, leaves it as it was: :func:`_raise_strict` then locates the line)."""
    n_lines = block.count(b"\n") + (not block.endswith(b"\n"))
    data = b"\n" + block + (b"" if block.endswith(b"\n") else b"\n")
    # one pass of the regular expression: the text between statements, and their numbers
    parts = _FAST_STATEMENT.split(data)
    rest = b"".join(parts[0::4]) if len(parts) > 1 else data
    fast = [parts[1::4], parts[2::4], parts[3::4]]  # subjects, properties, objects
    rows: list[tuple[str, str, str]] = []
    lines: Sequence[str | None]
    try:
        lines = rest.decode("utf-8")[1:-1].split("\n")
    except UnicodeDecodeError:  # some line is not UTF-8: decode them one by one
        lines = [_decode(line) for line in rest[1:-1].split(b"\n")]
    literals: list[tuple[str, str, str]] = []
    skipped: Counter = Counter()
    kinds = _TEXT_PREDICATES
    for line in lines:
        match = fast_literal(line) if line is not None else None
        if match is not None:
            literals.append((match[1], kinds[match[2]], match[3]))
            continue
        item = _kept(line, language, strict, max_line_bytes, skipped)
        if item is None:
            continue
        if isinstance(item, Statement):
            rows.append((item.subject[1:], item.property[1:], item.object[1:]))
        else:
            literals.append((item.id, item.kind, item.text))
    rep.lines += n_lines
    rep.statements += len(fast[0]) + len(rows)
    rep.literals += len(literals)
    rep.skipped.update(skipped)
    array = np.array(fast, dtype=np.int64).T.reshape(-1, 3)
    if rows:
        array = np.concatenate([array, np.array(rows, dtype=np.int64).reshape(-1, 3)])
    return array, literals


def _decode(line: bytes) -> str | None:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _raise_strict(
    path: str | Path, first: int, block: bytes, language: str, max_line_bytes: int
) -> None:
    """Raise, as :func:`parse_dump` does, the error of the first line of ``block`` (whose
    first line is line ``first`` of ``path``) that strict parsing refuses."""
    for lineno, raw in enumerate(block.split(b"\n"), start=first):
        try:
            _kept(_decode(raw), language, True, max_line_bytes, Counter())
        except _Refused as refused:
            raise refused.error(path, lineno) from refused.skip.cause
    raise AssertionError("a block refused by strict parsing has no refused line")
