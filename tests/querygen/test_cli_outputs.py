"""Issue 23: `creagraph queries paths/generate` claim their --out file."""

from __future__ import annotations

from ..clirun import run


def test_paths_refuses_to_overwrite_the_query_file(tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "x"}\n')
    code, _, err = run(capsys, "queries", "paths", queries, "--out", queries,
                       "--store", tmp_path / "nostore")
    assert code == 2 and "this input is also the --out file" in err, err
    assert queries.read_text() == '{"query": "x"}\n'


def test_generate_refuses_a_users_file(tmp_path, capsys):
    mine = tmp_path / "mine.jsonl"
    mine.write_text("keep me\n")
    code, _, err = run(capsys, "queries", "generate", "--out", mine, "--n", "1",
                       "--store", tmp_path / "nostore")
    assert code == 2 and "was not made by creagraph" in err, err
    assert mine.read_text() == "keep me\n"
