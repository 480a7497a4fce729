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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

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

    def __init__(self, raw: IO[bytes], on_read):
        self._raw = raw
        self._on_read = on_read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        if n:
            self._on_read(n)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _open_binary(path: str | Path, on_read=None) -> IO[bytes]:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected an N-Triples file")
    raw: IO[bytes] = p.open("rb")
    if on_read is not None:
        raw = io.BufferedReader(_CountingReader(raw, on_read), buffer_size=1 << 20)
    if p.name.endswith(".gz"):
        stream: IO[bytes] = gzip.GzipFile(fileobj=raw)
    elif p.name.endswith(".bz2"):
        stream = bz2.BZ2File(raw)
    else:
        stream = raw
    return stream


#: What a truncated or corrupt compressed file raises while being read.
_STREAM_ERRORS = (EOFError, OSError, zlib.error, ValueError)


#: Longest line read (bytes). Wikidata truthy-dump lines are at most a few kilobytes; a
#: longer one is malformed, and is never held in memory in full.
MAX_LINE_BYTES = 1 << 20


def _lines(
    path: str | Path, on_read, max_line_bytes: int = MAX_LINE_BYTES
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
    on_read=None,
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
    entity_prefix_len = len(WD_ENTITY)
    for lineno, line in _lines(path, on_read, max_line_bytes):
        rep.lines += 1
        if isinstance(line, int):
            if strict:
                raise InputError(
                    f"{path}:{lineno}: a line of {line:,} bytes, longer than the "
                    f"{max_line_bytes:,}-byte limit (not a Wikidata N-Triples line)"
                )
            rep.skipped["line too long"] += 1
            continue
        if line is None:
            if strict:
                raise InputError(f"{path}:{lineno}: not UTF-8 text")
            rep.skipped["malformed line"] += 1
            continue
        stripped = line.strip()
        if not stripped or stripped[0] == "#":
            continue
        parts = stripped.split(" ", 2)
        if len(parts) < 3:
            if strict:
                raise InputError(
                    f"{path}:{lineno}: malformed N-Triples line: {stripped[:120]!r}"
                )
            rep.skipped["malformed line"] += 1
            continue
        subject, predicate, rest = parts
        s_iri, p_iri = _iri(subject), _iri(predicate)
        if s_iri is None and subject.startswith("_:"):
            rep.skipped["blank-node subject"] += 1
            continue
        if s_iri is None or p_iri is None:
            if strict:
                raise InputError(
                    f"{path}:{lineno}: malformed N-Triples line: {stripped[:120]!r}"
                )
            rep.skipped["malformed line"] += 1
            continue
        if p_iri.startswith(WDT):
            pid = p_iri[len(WDT) :]
            sid = s_iri[entity_prefix_len:] if s_iri.startswith(WD_ENTITY) else ""
            if not rest.endswith("."):
                if strict:
                    raise InputError(
                        f"{path}:{lineno}: malformed N-Triples line (no final '.')"
                    )
                rep.skipped["malformed line"] += 1
                continue
            obj = rest[:-1].rstrip()
            o_iri = _iri(obj)
            if o_iri is None or not o_iri.startswith(WD_ENTITY):
                rep.skipped["non-item object (literal, value or other IRI)"] += 1
                continue
            oid = o_iri[entity_prefix_len:]
            if not (sid.startswith("Q") and _ENTITY_ID.fullmatch(sid)):
                rep.skipped["non-item subject (property, lexeme, ...)"] += 1
                continue
            if not (oid.startswith("Q") and _ENTITY_ID.fullmatch(oid)):
                rep.skipped["non-item object (literal, value or other IRI)"] += 1
                continue
            if not _ENTITY_ID.fullmatch(pid):
                rep.skipped["unused predicate"] += 1
                continue
            if max(len(sid), len(pid), len(oid)) > _MAX_ID_CHARS:
                rep.skipped[_ID_TOO_LARGE] += 1
                continue
            rep.statements += 1
            yield Statement(sid, pid, oid)
            continue
        kind = _TEXT_PREDICATES.get(p_iri)
        if kind is None:
            rep.skipped["unused predicate"] += 1
            continue
        if not s_iri.startswith(WD_ENTITY) or not _ENTITY_ID.fullmatch(
            s_iri[entity_prefix_len:]
        ):
            rep.skipped["text of a non-item/property subject"] += 1
            continue
        match = _LITERAL.match(rest)
        if match is None:
            if strict:
                raise InputError(f"{path}:{lineno}: malformed literal: {rest[:120]!r}")
            rep.skipped["malformed line"] += 1
            continue
        if (match.group(2) or "").lower() != language.lower():
            rep.skipped[f"literal not in language {language!r}"] += 1
            continue
        try:
            text = unescape_literal(match.group(1))
        except ValueError as exc:
            if strict:
                raise InputError(f"{path}:{lineno}: {exc}") from exc
            rep.skipped["malformed line"] += 1
            continue
        if len(s_iri) - entity_prefix_len > _MAX_ID_CHARS:
            rep.skipped[_ID_TOO_LARGE] += 1
            continue
        rep.literals += 1
        yield Literal_(s_iri[entity_prefix_len:], kind, text)  # type: ignore[arg-type]
