import json

import pytest

from creagraph.core.io import InputError
from creagraph.tig.io import read_atoms, read_responses, write_atoms, write_responses
from creagraph.tig.schema import Atom, Response

GOOD = {
    "task_id": "calm",
    "brief": "Make calm visible.",
    "family": "Abstraction",
    "model": "m1",
    "sample": 0,
    "core_idea": "A fern unfurling in a jar.",
    "visual_description": "A fern in a glass jar on a desk.",
}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" if isinstance(r, dict) else r for r in rows))
    return path


def test_read_responses_round_trip(tmp_path):
    rows = [GOOD, {**GOOD, "sample": 1, "family": None}, {**GOOD, "model": "m2", "sample": "0"}]
    responses = read_responses(_write(tmp_path / "r.jsonl", rows))
    assert [r.response_id for r in responses] == ["calm|m1|0", "calm|m1|1", "calm|m2|0"]
    assert responses[2].sample == 0 and responses[1].family is None
    write_responses(tmp_path / "copy.jsonl", responses)
    assert read_responses(tmp_path / "copy.jsonl") == responses


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"core_idea": None}, "missing field 'core_idea'"),
        ({"core_idea": "  "}, "field 'core_idea' is empty"),
        ({"model": 3}, "field 'model' must be a string"),
        ({"sample": -1}, "field 'sample' must be a non-negative integer"),
        ({"sample": "two"}, "field 'sample' must be a non-negative integer"),
        ({"sample": True}, "field 'sample' must be a non-negative integer"),
        ({"visual_description": None}, "missing field 'visual_description'"),
        ({"family": 7}, "field 'family' must be a string or null"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path, change, message):
    bad = {**GOOD, "sample": 1, **change}
    path = _write(tmp_path / "r.jsonl", [GOOD, "\n", bad])
    with pytest.raises(InputError) as info:
        read_responses(path)
    assert str(info.value).startswith(f"{path}:3: ")
    assert message in str(info.value)


def test_duplicate_and_malformed_rows(tmp_path):
    path = _write(tmp_path / "dup.jsonl", [GOOD, GOOD])
    with pytest.raises(InputError, match=r"dup.jsonl:2: duplicate response 'calm\|m1\|0'.*:1"):
        read_responses(path)
    path = _write(tmp_path / "broken.jsonl", [GOOD, '{"task_id": \n'])
    with pytest.raises(InputError, match=r"broken.jsonl:2: malformed JSON"):
        read_responses(path)
    with pytest.raises(InputError, match="file not found"):
        read_responses(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="no responses"):
        read_responses(_write(tmp_path / "empty.jsonl", ["\n"]))


def test_atoms_file_round_trip_and_errors(tmp_path):
    response = Response("calm", "b", "m1", 0, "A fern unfurling in a jar.")
    atoms = [[Atom("carrier", "fern"), Atom("setting", "jar")]]
    write_atoms(tmp_path / "a.jsonl", [response], atoms)
    assert read_atoms(tmp_path / "a.jsonl") == {response.response_id: atoms[0]}
    (tmp_path / "a.json").write_text(json.dumps(
        {response.response_id: [{"type": "motif", "text": "fern"}]}))
    assert read_atoms(tmp_path / "a.json")[response.response_id] == [Atom("motif", "fern")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"response_id": "x", "atoms": [{"type": "colour", "text": "a"}]})
                   + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl:1: atoms\[0\].type 'colour'"):
        read_atoms(bad)
    bad.write_text(json.dumps({"response_id": "x", "atoms": [{"type": "motif", "text": ""}]})
                   + "\n")
    with pytest.raises(InputError, match=r"atoms\[0\].text must be a non-empty string"):
        read_atoms(bad)


def test_explicit_kind_field_is_read_and_checked(tmp_path):
    import json as _json

    from creagraph.core.io import InputError
    from creagraph.tig.io import read_responses

    row = {"task_id": "t", "brief": "Tell me something.", "model": "m", "sample": 0,
           "core_idea": "x", "visual_description": ""}
    path = tmp_path / "r.jsonl"
    path.write_text(_json.dumps({**row, "kind": "Consequence"}) + "\n"
                    + _json.dumps({**row, "sample": 1, "kind": "poem"}) + "\n")
    with pytest.raises(InputError, match=r":2: field 'kind' must be one of"):
        read_responses(path)
    path.write_text(_json.dumps({**row, "kind": "Consequence"}) + "\n")
    (response,) = read_responses(path)
    assert response.kind == "consequence" and response.to_dict()["kind"] == "consequence"
