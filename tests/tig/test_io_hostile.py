"""TIG response and atom loaders under hostile input: arbitrary bytes, invalid UTF-8,
truncated and garbled files, any JSON shape — InputError naming the file, never another
exception type."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creagraph.core.io import InputError
from creagraph.tig.io import read_atoms, read_responses

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
RESPONSE = {
    "task_id": "t1",
    "brief": "a poster",
    "model": "m",
    "sample": 0,
    "core_idea": "A kite made of letters.",
    "visual_description": "letters fly",
}
GOOD = (
    "\n".join(json.dumps({**RESPONSE, "sample": i}) for i in range(3))
    + "\n\n"
    + json.dumps({"response_id": "t1|m|0", "atoms": [{"type": "object", "text": "kite"}]})
).encode()


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _only_input_errors(path: Path) -> None:
    for reader in (read_responses, read_atoms):
        try:
            reader(path)
        except InputError as exc:
            assert str(exc).startswith(str(path)), exc


@SETTINGS
@given(data=st.binary(max_size=1500), suffix=st.sampled_from([".jsonl", ".json"]))
def test_arbitrary_bytes(folder, data, suffix):
    path = folder / f"any{suffix}"
    path.write_bytes(data)
    _only_input_errors(path)


@SETTINGS
@given(
    cut=st.floats(0, 1),
    edits=st.lists(
        st.tuples(
            st.floats(0, 1), st.sampled_from([b"\xff", b"\r", b"\n", b"{", b'"', b"[" * 3000])
        ),
        max_size=3,
    ),
)
def test_truncated_and_garbled(folder, cut, edits):
    data = bytearray(GOOD)
    for where, chunk in edits:
        i = int(where * len(data))
        data[i:i] = chunk
    path = folder / "garbled.jsonl"
    path.write_bytes(bytes(data[: int(cut * len(data)) + 1]))
    _only_input_errors(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
    max_leaves=15,
)


@SETTINGS
@given(
    rows=st.lists(
        st.fixed_dictionaries({}, optional={k: json_values for k in RESPONSE})
        | st.fixed_dictionaries({"response_id": json_values, "atoms": json_values}),
        min_size=1,
        max_size=3,
    )
)
def test_any_row_shape(folder, rows):
    path = folder / "shapes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    _only_input_errors(path)
    whole = folder / "shapes.json"
    whole.write_text(json.dumps({str(i): r.get("atoms") for i, r in enumerate(rows)}))
    _only_input_errors(whole)


def test_invalid_utf8_and_raw_carriage_return_name_the_line(folder):
    path = folder / "lines.jsonl"
    path.write_bytes(GOOD.split(b"\n")[0] + b"\n\n" + b'{"task_id": "t\r\xff"}\n')
    with pytest.raises(InputError, match=r"lines\.jsonl:3: not UTF-8"):
        read_responses(path)
    whole = folder / "atoms.json"
    whole.write_bytes(b'{"a": [' + b"[" * 100_000 + b"]}")
    with pytest.raises(InputError, match=r"atoms\.json: malformed JSON"):
        read_atoms(whole)
