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
    assert (
        main(
            [
                "score",
                str(src),
                "--judge",
                "kg",
                "--store",
                str(store_dir),
                "--ceiling",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    records = read_jsonl(out / "queries.jsonl")
    assert len(records) == 3
    for r in records:
        c = r["ceiling"]
        assert c["k"] == 3 and c["n_paths"] >= 1
        assert c["utility"]["0.7"] > 0
        assert r["n_kept"] == 1
        assert 0 < c["fraction"]["0.7"] <= 1.0 + 1e-9
        assert c["graph_path_recall"] > 0
