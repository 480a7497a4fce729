import csv
import json

import pytest

from creagraph.cli import main
from creagraph.core.io import read_jsonl


def test_score_stored_published_contract_and_resume(sample_files, tmp_path, capsys):
    out = tmp_path / "out"
    args = [
        "score",
        *map(str, sample_files),
        "--judge",
        "stored",
        "--mode",
        "published",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    queries = read_jsonl(out / "queries.jsonl")
    paths = read_jsonl(out / "paths.jsonl")
    assert len(queries) == 80 and {q["model"] for q in queries} == {
        "GPT-4.1",
        "GPT-5_med",
        "Gemini-3-pro",
        "Qwen_Qwen3-32B_32k",
    }
    for q in queries:
        assert set(q["utility"]) == {"0.7", "0.9"}
        assert "mean_pairwise_distance" in q and "mean_pairwise_raw_distance" in q
        assert isinstance(q["index"], int)
    empty = [q for q in queries if q["n_paths"] == 0]
    assert empty and all(q["utility"]["0.7"] == 1.0 for q in empty)  # published: empty set = 1
    with (out / "summary.csv").open() as handle:
        table = {r["model"]: r for r in csv.DictReader(handle)}
    # the published leaderboard (Table 1) orders these models the same way at s0.9
    assert float(table["GPT-5_med"]["s_0.9_mean"]) > float(
        table["Qwen_Qwen3-32B_32k"]["s_0.9_mean"]
    )
    first = paths[0]
    assert {"triples", "valid", "validity_reasons", "judgments", "quality", "kept"} <= set(first)

    # resume: a second run scores nothing; an interrupted tail is repaired
    text = (out / "queries.jsonl").read_text().splitlines()
    (out / "queries.jsonl").write_text("\n".join(text[:-1]) + "\n" + text[-1][:20])
    capsys.readouterr()
    assert main(args) == 0
    assert "scored 1 queries (skipped 79" in capsys.readouterr().out
    again = read_jsonl(out / "queries.jsonl")
    assert len(again) == 80
    assert len(read_jsonl(out / "paths.jsonl")) == len(paths)


def test_score_kg_judge_on_a_subset(sample_files, store_dir, tmp_path):
    rows = [json.loads(line) for line in sample_files[0].open()][:3]
    src = tmp_path / "subset.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "kg"
    assert (
        main(
            [
                "score",
                str(src),
                "--model",
                "m1",
                "--judge",
                "kg",
                "--store",
                str(store_dir),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    queries = read_jsonl(out / "queries.jsonl")
    assert [q["index"] for q in queries] == [r["index"] for r in rows]
    assert all(q["judge"] == "kg" and q["mode"] == "paper" for q in queries)
    statuses = {j["status"] for p in read_jsonl(out / "paths.jsonl") for j in p["judgments"]}
    assert statuses <= {"verified", "refuted", "unknown", "malformed"} and "verified" in statuses
    # utility under unknowns is an interval: strict (unknown = not factual) fills `utility`
    for q in queries:
        assert q["unknown"] == "strict" and q["utility"] == q["utility_strict"]
        assert set(q["utility_lenient"]) == set(q["utility_strict"]) == {"0.7", "0.9"}
        assert q["n_kept_strict"] <= q["n_kept_lenient"] and 0 <= q["decided_share"] <= 1
    assert any(q["n_kept_strict"] < q["n_kept_lenient"] for q in queries)
    summary = (out / "summary.csv").read_text()
    assert "s_0.9_strict_mean" in summary and "decided_share_mean" in summary
    lenient = tmp_path / "kg-lenient"
    args = ["score", str(src), "--model", "m1", "--judge", "kg", "--store", str(store_dir)]
    assert main([*args, "--unknown", "lenient", "--out", str(lenient)]) == 0
    for q, ql in zip(queries, read_jsonl(lenient / "queries.jsonl")):
        assert ql["utility"] == ql["utility_lenient"] == q["utility_lenient"]
        assert ql["utility_strict"] == q["utility_strict"]
    assert main([*args, "--unknown", "maybe", "--out", str(tmp_path / "bad")]) != 0


def test_bad_input_names_file_row_and_field(tmp_path, capsys):
    src = tmp_path / "bad.jsonl"
    src.write_text(
        json.dumps(
            {"query": "q", "entity_a": "a", "rel_b": "r", "path_prediction": "x", "model": "m"}
        )
        + "\n"
    )
    assert main(["score", str(src), "--judge", "stored", "--out", str(tmp_path / "o")]) == 2
    assert "bad.jsonl: row 1: field 'entity_b' is missing" in capsys.readouterr().err


def test_distance_command(tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    a = [["Ann", "born in", "Paris"], ["Paris", "capital of", "France"]]
    b = [["Ann", "was born in", "Paris"], ["Paris", "capital of", "France"]]
    c = [["Ann", "plays", "chess"], ["chess", "popular in", "Russia"]]
    pairs.write_text(json.dumps({"a": a, "b": b}) + "\n" + json.dumps({"a": a, "b": c}) + "\n")
    capsys.readouterr()
    assert main(["distance", str(pairs)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["a"] == " [born in] paris" and lines[0]["b"] == " [was born in] paris"
    assert lines[0]["raw"] < 0.4 and lines[0]["transformed"] < 0.25
    assert lines[1]["raw"] > lines[0]["raw"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"a": [["x", "y"]], "b": a}) + "\n")
    assert main(["distance", str(bad)]) == 2


def test_distinct_command(sample_files, tmp_path):
    out = tmp_path / "s"
    assert main(["score", *map(str, sample_files[:2]), "--judge", "stored", "--out", str(out)]) == 0
    assert main(["distinct", str(out), "--out", str(tmp_path / "d")]) == 0
    per_path = read_jsonl(tmp_path / "d" / "distinct_paths.jsonl")
    assert per_path and all(p["nu"] is None or 0 <= p["nu"] <= 1 for p in per_path)
    with (tmp_path / "d" / "distinct_summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["model"] for r in rows} == {"GPT-4.1", "GPT-5_med"}


@pytest.mark.parametrize("flag", [["--judge", "nope"], ["--mode", "nope"]])
def test_bad_choices(sample_files, tmp_path, flag):
    assert main(["score", str(sample_files[0]), *flag, "--out", str(tmp_path / "x")]) == 2


def test_parquet_input_and_output(sample_files, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in sample_files[1].open()][:4]
    keep = [
        "index",
        "query",
        "entity_a",
        "entity_b",
        "rel_b",
        "path_prediction",
        "raw_salience_scores_0",
        "parsed_scores_factuality_0",
    ]
    src = tmp_path / "answers.parquet"
    pq.write_table(pa.Table.from_pylist([{k: r[k] for k in keep} for r in rows]), src)
    out = tmp_path / "o"
    assert (
        main(
            [
                "score",
                str(src),
                "--model",
                "gpt-5",
                "--judge",
                "stored",
                "--parquet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    queries = pq.read_table(out / "queries.parquet").to_pylist()
    assert [q["index"] for q in queries] == [r["index"] for r in rows]
    assert pq.read_table(out / "summary.parquet").to_pylist()[0]["model"] == "gpt-5"
    assert pq.read_table(out / "paths.parquet").num_rows == len(read_jsonl(out / "paths.jsonl"))


def test_report_command(sample_files, tmp_path):
    out = tmp_path / "s"
    assert main(["score", *map(str, sample_files), "--judge", "stored", "--out", str(out)]) == 0
    assert main(["distinct", str(out), "--out", str(tmp_path / "d")]) == 0
    assert (
        main(
            [
                "report",
                str(out),
                "--distinct",
                str(tmp_path / "d"),
                "--resamples",
                "200",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    for name in (
        "leaderboard.csv",
        "report.html",
        "utility_curves.png",
        "distinctiveness.png",
    ):
        assert (tmp_path / "r" / name).stat().st_size > 0
    assert (tmp_path / "r" / "utility_curves.png").read_bytes()[:4] == b"\x89PNG"
    with (tmp_path / "r" / "leaderboard.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4
    for r in rows:
        assert float(r["s_0.9_ci_low"]) <= float(r["s_0.9"]) <= float(r["s_0.9_ci_high"])
        assert r["avg_nu"] != ""
    s09 = [float(r["s_0.9"]) for r in rows]
    assert s09 == sorted(s09, reverse=True)
    assert "<table>" in (tmp_path / "r" / "report.html").read_text()
