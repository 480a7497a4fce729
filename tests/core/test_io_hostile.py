"""Record loaders and answer reading under hostile input: arbitrary bytes, invalid UTF-8,
truncated files, deep nesting and huge strings give records or an InputError naming the
file (and line/field where there is one) — never another exception type."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creagraph.core.io import InputError, iter_records, read_jsonl, read_records, write_records
from creagraph.scoring.inputs import read_answers

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")

GOOD = [
    {
        "query": "Q?",
        "entity_a": "Kareem Abdul-Jabbar",
        "entity_b": "UCLA",
        "rel_b": "educated at",
        "path_prediction": ['<answer>{"1": [["A", "r", "B"]]}</answer>'],
        "model": "m",
        "index": i,
    }
    for i in range(3)
]


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


@pytest.fixture(scope="module")
def good_files(folder):
    """A valid file of each format (bytes), to truncate and garble."""
    out = {}
    for suffix in SUFFIXES:
        path = folder / f"good{suffix}"
        if suffix == ".json":
            path.write_text(json.dumps(GOOD, indent=1))
        else:
            write_records(path, GOOD)
        out[suffix] = path.read_bytes()
    return out


def _only_input_errors(path: Path) -> list[dict] | None:
    """Read ``path`` with every loader; return the records or ``None`` on an InputError."""
    records = None
    try:
        records = read_records(path)
        assert all(isinstance(r, dict) for r in records)
    except InputError as exc:
        assert str(exc).startswith(str(path)), exc
    try:
        rows = read_answers([path])
        assert records is not None and len(rows) == len(records)
    except InputError as exc:
        assert str(exc).startswith(str(path)), exc
    return records


@SETTINGS
@given(data=st.binary(max_size=2000), suffix=st.sampled_from(SUFFIXES))
def test_arbitrary_bytes(folder, data, suffix):
    path = folder / f"arbitrary{suffix}"
    path.write_bytes(data)
    _only_input_errors(path)


@SETTINGS
@given(
    suffix=st.sampled_from(SUFFIXES),
    cut=st.floats(0, 1),
    edits=st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=8)), max_size=4),
)
def test_truncated_and_garbled_files(folder, good_files, suffix, cut, edits):
    data = bytearray(good_files[suffix])
    for where, chunk in edits:
        i = int(where * len(data))
        data[i : i + len(chunk)] = chunk
    data = bytes(data[: int(cut * len(data)) + 1])
    path = folder / f"garbled{suffix}"
    path.write_bytes(data)
    _only_input_errors(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(
    records=st.lists(json_values, max_size=5),
    suffix=st.sampled_from((".jsonl", ".json")),
    depth=st.sampled_from([0, 10, 3000, 100_000]),
)
def test_any_json_shape_and_deep_nesting(folder, records, suffix, depth):
    path = folder / f"shape{suffix}"
    nested = "[" * depth + "]" * depth
    if suffix == ".jsonl":
        lines = [json.dumps(r) for r in records] + ([f'{{"x": {nested}}}'] if depth else [])
        path.write_text("\n".join(lines))
    else:
        text = json.dumps(records)
        path.write_text(text[:-1] + (f", {nested}]" if depth and records else "]"))
    _only_input_errors(path)


def _message(path: Path, reader=read_records) -> str:
    with pytest.raises(InputError) as info:
        reader(path)
    return str(info.value)


def test_precise_locations(folder):
    bad = b"\xff\xfe"
    cases = {
        # JSON Lines: line numbers are physical lines (blank lines count)
        "a.jsonl": (b'{"a": 1}\n\n{"a": "x' + bad + b'"}\n', ":3: not UTF-8 text"),
        "b.jsonl": (b'{"a": 1}\n' + b"[" * 50_000 + b"]" * 50_000 + b"\n", ":2: malformed JSON"),
        "c.jsonl": (b'{"a": 1}\n{"a": 1' + b"9" * 5000 + b"}\n", ":2: malformed JSON"),
        "d.jsonl": (b'{"a": 1}\n[1, 2]\n', ":2: expected a JSON object"),
        "a.json": (b'[{"a": 1},\n {"a": "' + bad + b'"}]', ":2: not UTF-8 text"),
        "b.json": (b'[{"a": 1},\n ' + b"[" * 50_000, "nested too deeply"),
        "c.json": (b'[{"a": 1},\n {"a": 2', ": malformed JSON"),
        "a.csv": (b"a,b\n1,2\n3," + bad + b"\n", ":3: not UTF-8 text"),
        "b.csv": (b"a,b\n1,2\n3,4,5\n", ":3: row has 3 fields, the header has 2"),
        # the over-long cell is on line 3 (the csv module's own count says 2; issue 23)
        "c.csv": (b'a,b\n1,2\n1,"' + b"x" * 200_000 + b'"\n',
                  ":3: a cell is longer than 131,072 characters"),
        "a.parquet": (b"PAR1 not really", "cannot read Parquet"),
    }
    for name, (data, expected) in cases.items():
        path = folder / name
        path.write_bytes(data)
        message = _message(path)
        assert message.startswith(str(path)) and expected in message, (name, message)
    assert "is a directory" in _message(folder)
    assert "file not found" in _message(folder / "missing.jsonl")


def test_truncated_parquet_names_file(folder, good_files):
    data = good_files[".parquet"]
    for cut in (0, 4, len(data) // 2, len(data) - 1):
        path = folder / "cut.parquet"
        path.write_bytes(data[:cut])
        message = _message(path)
        assert message.startswith(str(path)) and "Parquet" in message


def test_huge_strings_load_intact(folder):
    big = "ü\"\\}" * 1_000_000
    records = [{**GOOD[0], "path_prediction": [big]}]
    for suffix in (".jsonl", ".csv", ".parquet"):
        path = folder / f"huge{suffix}"
        write_records(path, records)
        if suffix == ".csv":
            # a 4 MB CSV field is over Python's csv field limit: a clear error, not a crash
            assert ":2: a cell is longer than 131,072 characters" in _message(path)
            continue
        loaded = read_records(path)
        assert loaded[0]["path_prediction"] == [big]


def test_truncated_tail_tolerated_only_at_the_end(folder):
    path = folder / "tail.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": "\xc3')  # cut inside a UTF-8 character
    assert ":3: not UTF-8 text" in _message(path, read_jsonl)
    assert read_jsonl(path, tolerate_truncated_tail=True) == [{"a": 1}, {"a": 2}]
    path.write_bytes(b'{"a": 1}\n{"a": \n{"a": 3}\n')
    tolerant = _message(path, lambda p: read_jsonl(p, tolerate_truncated_tail=True))
    assert ":2: malformed JSON" in tolerant


def test_read_answers_names_row_and_field(folder):
    rows = [dict(r) for r in GOOD]
    rows[1]["entity_a"] = ""
    rows[2]["rel_b"] = ["not", "a", "string"]
    for suffix in (".jsonl", ".csv", ".parquet"):
        path = folder / f"answers{suffix}"
        write_records(path, rows[:2])
        message = _message(path, read_answers_one)
        assert message == f"{path}: row 2: field 'entity_a' is missing or empty"
    path = folder / "answers3.jsonl"
    write_records(path, [rows[0], rows[2]])
    assert _message(path, read_answers_one).endswith("row 2: field 'rel_b' is missing or empty")


def read_answers_one(path):
    return read_answers([path])


def test_iter_records_is_lazy(folder):
    path = folder / "lazy.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\nbroken\n')
    records = iter_records(path)
    assert next(records) == {"a": 1} and next(records) == {"a": 2}
    with pytest.raises(InputError, match=":3: malformed JSON"):
        next(records)
