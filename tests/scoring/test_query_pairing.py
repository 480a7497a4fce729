"""Queries are paired by query_id, else index, else normalised query text — never by row
number — in `creagraph score`, `creagraph distinct` and `creagraph report` (issue 13.1)."""

import json
import random

from creagraph.cli import main
from creagraph.core.io import read_jsonl, read_records


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _take(sample_files, n=6):
    """The first n rows of two models' published files, on the same queries."""
    a = [json.loads(line) for line in sample_files[0].open()]
    b = [json.loads(line) for line in sample_files[2].open()]
    shared = sorted({r["index"] for r in a} & {r["index"] for r in b})[:n]
    pick = lambda rows: [r for r in rows if r["index"] in shared]  # noqa: E731
    return pick(a), pick(b)


def _score_and_distinct(tmp_path, name, rows_a, rows_b):
    dirs = []
    for model, rows in (("A", rows_a), ("B", rows_b)):
        src = _write(tmp_path / f"{name}-{model}.jsonl", [{**r, "model": model} for r in rows])
        out = tmp_path / f"{name}-score-{model}"
        args = ["score", str(src), "--judge", "stored", "--mode", "published", "--out", str(out)]
        assert main(args) == 0
        dirs.append(out)
    out = tmp_path / f"{name}-distinct"
    assert main(["distinct", *map(str, dirs), "--out", str(out)]) == 0
    return dirs, read_jsonl(out / "distinct_paths.jsonl"), read_records(
        out / "distinct_summary.csv"
    )


def test_answers_without_index_in_another_order_pair_the_same_queries(sample_files, tmp_path):
    rows_a, rows_b = _take(sample_files)
    _, paths, summary = _score_and_distinct(tmp_path, "ref", rows_a, rows_b)

    # answers to generated queries carry no index; one file is in another order
    strip = lambda rows: [{k: v for k, v in r.items() if k != "index"} for r in rows]  # noqa: E731
    shuffled_b = strip(rows_b)
    random.Random(3).shuffle(shuffled_b)
    assert [r["query"] for r in shuffled_b] != [r["query"] for r in rows_b]
    dirs, paths2, summary2 = _score_and_distinct(tmp_path, "noindex", strip(rows_a), shuffled_b)

    assert len(paths2) == len(paths) > 0
    for before, after in zip(summary, summary2):
        assert before["model"] == after["model"]
        assert float(before["avg_nu"]) == float(after["avg_nu"])
        assert float(before["max_nu"]) == float(after["max_nu"])
    # the keys name the query text, and the scores per query do not depend on file order
    keys = {p["query_key"] for p in paths2}
    assert all(k.startswith("text:") for k in keys)
    by_text = {q["query"]: q["utility"] for q in read_jsonl(dirs[1] / "queries.jsonl")}
    ref = read_jsonl(tmp_path / "ref-score-B" / "queries.jsonl")
    assert {q["query"]: q["utility"] for q in ref} == by_text
    # each per-path record names its nearest population path and that path's model
    for p in paths2:
        assert p["nearest_model"] == ("B" if p["model"] == "A" else "A")
        assert isinstance(p["nearest_path_string"], str) and p["nearest_path_index"] >= 0


def test_query_id_wins_over_index(sample_files, tmp_path):
    rows_a, _ = _take(sample_files, 3)
    rows = [{**r, "query_id": f"q{r['index']}", "index": 100 - i} for i, r in enumerate(rows_a)]
    src = _write(tmp_path / "a.jsonl", [{**r, "model": "A"} for r in rows])
    out = tmp_path / "out"
    assert main(["score", str(src), "--judge", "stored", "--out", str(out)]) == 0
    keys = [q["query_key"] for q in read_jsonl(out / "queries.jsonl")]
    assert keys == [f"id:q{r['index']}" for r in rows_a]


def test_the_same_model_in_two_result_folders_is_an_error(sample_files, tmp_path, capsys):
    rows_a, _ = _take(sample_files, 2)
    dirs = []
    for name, rows in (("one", rows_a[:1]), ("two", rows_a[1:])):
        src = _write(tmp_path / f"{name}.jsonl", [{**r, "model": "A"} for r in rows])
        out = tmp_path / name
        assert main(["score", str(src), "--judge", "stored", "--out", str(out)]) == 0
        dirs.append(out)
    capsys.readouterr()
    assert main(["distinct", *map(str, dirs), "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "model 'A' is in both" in err and "one" in err and "two" in err
    assert main(["report", *map(str, dirs), "--out", str(tmp_path / "r")]) == 2
    assert "model 'A' is in both" in capsys.readouterr().err
