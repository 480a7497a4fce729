"""The N-Triples reader and importer under hostile input: arbitrary bytes, invalid UTF-8,
mutated real lines from the shared slice, truncated compressed files. Strict mode raises
InputError naming the file and the exact line; skip mode counts the line and goes on; a
failed import leaves an existing store exactly as it was."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creagraph.core.io import InputError
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.kg.ntriples import (
    Literal_,
    ParseReport,
    parse_dump,
    parse_dump_blocks,
    unescape_literal,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


@pytest.fixture(scope="module")
def real_lines(slice_path) -> list[bytes]:
    """About 2,000 real lines spread over the slice: labels, aliases, statements."""
    with gzip.open(slice_path, "rb") as handle:
        lines = list(itertools.islice(handle, 0, None, 333))[:2000]
    assert any(b"rdf-schema#label" in line for line in lines)
    assert any(b"/prop/direct/" in line for line in lines)
    return lines


def _parse(path: Path, strict: bool) -> ParseReport:
    report = ParseReport()
    for _ in parse_dump(path, strict=strict, report=report):
        pass
    return report


def _read_both(path: Path, strict: bool, max_line_bytes: int = 1 << 20):
    """What each reader gives for ``path``: ``(report, statements sorted, literals in order)``
    or the error message."""
    got = []
    for blocks in (False, True):
        report = ParseReport()
        statements: list[tuple[int, int, int]] = []
        literals: list[tuple[str, str, str]] = []
        try:
            if blocks:
                for rows, texts in parse_dump_blocks(
                    path, strict=strict, report=report, max_line_bytes=max_line_bytes
                ):
                    assert rows.dtype == np.int64 and rows.shape == (len(rows), 3)
                    statements += map(tuple, rows.tolist())
                    literals += texts
            else:
                for item in parse_dump(
                    path, strict=strict, report=report, max_line_bytes=max_line_bytes
                ):
                    if isinstance(item, Literal_):
                        literals.append((item.id, item.kind, item.text))
                    else:
                        statements.append(
                            (int(item.subject[1:]), int(item.property[1:]), int(item.object[1:]))
                        )
        except InputError as exc:
            got.append(str(exc))
            continue
        got.append((report.as_dict(), sorted(statements), literals))
    return got


def _assert_same_reading(path: Path, max_line_bytes: int = 1 << 20) -> None:
    """Issue 31: the block reader the import uses keeps, skips, counts and refuses exactly
    what the line reader does."""
    for strict in (True, False):
        by_line, by_block = _read_both(path, strict, max_line_bytes)
        assert by_line == by_block, (strict, by_line, by_block)


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_arbitrary_bytes(folder, data):
    path = folder / "arbitrary.nt"
    path.write_bytes(data)
    _assert_same_reading(path)
    n_lines = len(data.split(b"\n")) - (data.endswith(b"\n") or not data)
    try:
        _parse(path, strict=True)
    except InputError as exc:
        location = str(exc).split(": ", 1)[0]
        assert location.startswith(f"{path}:")
        assert 1 <= int(location.rsplit(":", 1)[1]) <= n_lines
    report = _parse(path, strict=False)
    assert report.lines == n_lines


def _mutate(line: bytes, kind: int, where: float, chunk: bytes) -> bytes:
    """One edit inside a line (its final newline kept)."""
    body = line.rstrip(b"\n")
    i = int(where * len(body))
    if kind == 0:
        body = body[:i] + chunk + body[i:]
    elif kind == 1:
        body = body[:i] + body[i + len(chunk) :]
    elif kind == 2:
        body = body[:i]  # truncated line
    elif kind == 3:
        body = body[:i] + b"\xff\xfe" + body[i:]
    else:
        body = body.replace(b'"', chunk[:1], 1)
    return body + b"\n"


@SETTINGS
@given(
    position=st.floats(0, 1),
    kind=st.integers(0, 4),
    where=st.floats(0, 1),
    chunk=st.sampled_from(
        [b'"', b"\\", b"\\u", b"\\uD800", b"\\U0011FFFF", b"<", b">", b" ", b".", b"@", b"\x00",
         b"\xc3", b"#", b"_:b1", b"\\q", b"\r"]
    ),
)  # fmt: skip
def test_mutated_real_lines(folder, real_lines, position, kind, where, chunk):
    index = int(position * (len(real_lines) - 1))
    lines = list(real_lines)
    lines[index] = _mutate(lines[index], kind, where, chunk)
    path = folder / "mutated.nt"
    path.write_bytes(b"".join(lines))
    _assert_same_reading(path)
    clean = _parse_bytes(folder, real_lines)
    try:
        strict = _parse(path, strict=True)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:{index + 1}: "), (str(exc), index + 1)
    else:
        assert strict.lines == len(lines)
    lenient = _parse(path, strict=False)
    assert lenient.lines == len(lines)
    # one changed line changes at most one kept item
    kept, clean_kept = lenient.statements + lenient.literals, clean.statements + clean.literals
    assert abs(kept - clean_kept) <= 1


@SETTINGS
@given(
    start=st.integers(0, 1990),
    count=st.integers(0, 12),
    edits=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(
        [b"\r\n", b"\t", b"\n\n", b"\xef\xbb\xbf", b"\xff", b"#", b"  ", b"\\n"]
    )), max_size=4),
    max_line_bytes=st.integers(1, 400),
    final_newline=st.booleans(),
)  # fmt: skip
def test_block_reader_matches_line_reader_at_any_line_limit(
    folder, real_lines, start, count, edits, max_line_bytes, final_newline
):
    """Issue 31: lines longer than the limit, a byte-order mark, CR LF endings, tabs, a last
    line without its newline: the block reader (which reads at most ``max_line_bytes`` at a
    time) keeps, skips and refuses what the line reader does, line numbers included."""
    lines = list(real_lines[start : start + count])
    for where, piece in edits:
        if lines:
            i = where % len(lines)
            body = lines[i].rstrip(b"\n")
            lines[i] = body[: len(body) // 2] + piece + body[len(body) // 2 :] + b"\n"
    data = b"".join(lines)
    if not final_newline:
        data = data.rstrip(b"\n")
    path = folder / "limits.nt"
    path.write_bytes(data)
    _assert_same_reading(path, max_line_bytes)


def test_block_reader_on_the_whole_slice(slice_path):
    """Issue 31: over the whole shared slice (666k lines) the block reader gives the line
    reader's statements, literals (in order) and report."""
    by_line, by_block = _read_both(slice_path, strict=True)
    assert by_line == by_block
    assert by_line[0]["statements"] > 400_000 and len(by_block[2]) > 250_000


def _parse_bytes(folder: Path, lines: list[bytes]) -> ParseReport:
    path = folder / "clean.nt"
    if not path.exists():
        path.write_bytes(b"".join(lines))
    return _parse(path, strict=True)


@pytest.mark.parametrize("suffix", [".nt.gz", ".nt.bz2"])
def test_truncated_or_garbled_compressed_files(folder, real_lines, suffix):
    data = b"".join(real_lines)
    packed = gzip.compress(data) if suffix == ".nt.gz" else bz2.compress(data)
    path = folder / f"cut{suffix}"
    variants = [packed[:cut] for cut in (1, 10, len(packed) // 3, len(packed) - 5)]
    variants += [packed[:100] + bytes(50) + packed[150:], b"not compressed at all\n"]
    for variant in variants:
        path.write_bytes(variant)
        for strict in (True, False):
            with pytest.raises(InputError) as info:
                _parse(path, strict=strict)
            message = str(info.value)
            assert message.startswith(f"{path}:") and "truncated or corrupt" in message
            with pytest.raises(InputError) as info:  # the import's reader (issue 31)
                for _ in parse_dump_blocks(path, strict=strict):
                    pass
            message = str(info.value)
            assert message.startswith(f"{path}:") and "truncated or corrupt" in message


def test_escapes_outside_unicode_are_errors():
    assert unescape_literal(r"\uD83D\uDE00 and \u00e9") == "😀 and é"
    for bad in (r"\uD800", r"x\uDE00y", r"\U00110000", r"\UFFFFFFFF", r"\q"):
        with pytest.raises(ValueError, match="invalid escape"):
            unescape_literal(bad)


def _fingerprint(store: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(store.iterdir())
    }


def test_failed_import_keeps_the_existing_store(folder, real_lines):
    good = folder / "good.nt"
    good.write_bytes(b"".join(real_lines))
    store = folder / "imports" / "store"
    import_dumps([good], store, show_progress=False)
    before = _fingerprint(store)
    kg = EmbeddedKG(store)
    stats, sample = kg.stats(), kg.random_statements(20, seed=3)
    kg.close()

    bad_lines = list(real_lines)
    bad_lines[1500] = b'<http://www.wikidata.org/entity/Q1> <x> "\xff" .\n'
    bad = folder / "bad.nt"
    bad.write_bytes(b"".join(bad_lines))
    cut = folder / "cut.nt.gz"
    cut.write_bytes(gzip.compress(b"".join(real_lines))[:-40])
    for source, line in ((bad, 1501), (cut, None)):
        with pytest.raises(InputError) as info:
            import_dumps([good, source], store, force=True, show_progress=False)
        assert str(info.value).startswith(f"{source}:{line if line else ''}")
        assert _fingerprint(store) == before
        assert sorted(p.name for p in store.parent.iterdir()) == ["store"]  # no temp left
    kg = EmbeddedKG(store)
    assert kg.stats() == stats and all(kg.has_triple(*e.as_tuple()) for e in sample)
    kg.close()

    # skip-malformed: the same bad file imports, the bad line counted
    result = import_dumps([bad], folder / "lenient", strict=False, show_progress=False)
    assert result.report["skipped"]["malformed line"] == 1
    assert result.statements == stats["statements"] or result.statements == (
        stats["statements"] - 1
    )
