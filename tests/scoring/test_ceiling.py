"""Scoring with the graph's oracle ceiling (SPEC §3.8): a model that answers with the
generated queries' own source paths recovers graph paths and gets a ceiling fraction."""

import json

from creagraph.cli import main
from creagraph.core.io import read_jsonl
from creagraph.querygen import generate_queries


def test_score_with_ceiling_on_generated_queries(kg, store_dir, tmp_path):
    queries = generate_queries(kg, 3, 5).records
    rows = []
    for q in queries:
        path = [
            [t["subject_label"], t["property_label"], t["object_label"]] for t in q["source_path"]
        ]
        rows.append({**q, "path_prediction": json.dumps({"1": path}), "model": "oracle-copy"})
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    args = ["score", str(src), "--judge", "kg", "--store", str(store_dir), "--ceiling"]
    assert main([*args, "--out", str(out)]) == 0
    records = read_jsonl(out / "queries.jsonl")
    assert len(records) == 3
    for r in records:
        c = r["ceiling"]
        assert c["k"] == 3 and c["n_paths"] >= 1
        assert c["utility"]["0.7"] > 0
        assert r["n_kept"] == 1
        assert 0 < c["fraction"]["0.7"] <= 1.0 + 1e-9
        assert c["graph_path_recall"] > 0


def test_ceiling_on_published_answers(store_dir, sample_files, tmp_path, capsys):
    """Published rows carry the source path as `triple1`… ids plus `source_path` labels;
    `--ceiling` reads them, and the ceiling fraction and graph recall reach summary.csv and
    the printed summary (issue 13.4)."""
    from creagraph.core.io import read_records

    src = tmp_path / "published.jsonl"
    src.write_text("".join(sample_files[0].read_text().splitlines(keepends=True)[:3]))
    out = tmp_path / "out"
    args = ["score", str(src), "--model", "GPT-4.1", "--judge", "kg", "--store", str(store_dir)]
    assert main([*args, "--ceiling", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ceiling s0.7" in printed and "graph recall" in printed
    records = read_jsonl(out / "queries.jsonl")
    assert len(records) == 3
    assert any(r["ceiling"]["n_paths"] > 0 for r in records)
    for r in records:
        assert r["ceiling"]["source_path_found"] in (True, False)
        if r["ceiling"]["utility"]["0.7"] > 0:
            assert r["ceiling"]["fraction"]["0.7"] is not None
    (row,) = read_records(out / "summary.csv")
    for column in ("ceiling_fraction_0.7_mean", "ceiling_fraction_0.9_mean"):
        assert row[column] not in (None, "")
    assert "graph_path_recall_mean" in row
