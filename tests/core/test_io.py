import json

import pytest

from creagraph.core.io import (
    InputError,
    JsonlAppender,
    atomic_write,
    read_jsonl,
    read_records,
    write_records,
)


def test_write_and_read_every_format(tmp_path):
    records = [{"a": 1, "b": "x,y"}, {"a": 2, "b": "z", "c": [1, 2]}]
    for suffix in (".jsonl", ".csv", ".parquet"):
        path = tmp_path / f"r{suffix}"
        write_records(path, records)
        back = read_records(path)
        assert len(back) == 2 and str(back[0]["b"]) == "x,y"


def test_malformed_jsonl_names_file_and_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(InputError, match=r"x\.jsonl:3: malformed JSON"):
        read_jsonl(path)
    assert read_jsonl(path, tolerate_truncated_tail=True) == [{"a": 1}]
    path.write_text("[1, 2]\n")
    with pytest.raises(InputError, match=r"x\.jsonl:1: expected a JSON object"):
        read_jsonl(path)


def test_atomic_write_keeps_old_file_on_error(tmp_path):
    path = tmp_path / "keep.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(path) as handle:
        handle.write("new")
        raise RuntimeError("boom")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_appender_repairs_truncated_tail(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"k": 1}\n{"k": 2')
    with JsonlAppender(path) as out:
        out.write({"k": 3})
    assert [json.loads(x)["k"] for x in path.read_text().splitlines()] == [1, 3]
