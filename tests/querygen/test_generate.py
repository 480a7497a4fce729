"""Query generation on the shared Wikidata slice: the acceptance checks of the issue."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from creagraph.cli import main
from creagraph.querygen import (
    GenerationConfig,
    PairSampler,
    generate_queries,
    load_blocklist,
    load_source_relations,
    pair_from_index,
    query_id,
)

PUBLISHED_FIELDS = ("query", "entity_a", "entity_b", "rel_b")


def test_thousand_distinct_queries_over_eight_relations(generated):
    records = generated.records
    assert len(records) == 1000
    assert len({r["query_id"] for r in records}) == 1000
    assert len({r["query"] for r in records}) == 1000
    assert len({(r["entity_a_id"], r["rel_b_id"], r["entity_b_id"]) for r in records}) == 1000
    relations = Counter(r["source_relation"] for r in records)
    assert len(relations) >= 8, relations
    catalogue = {r.pid for r in load_source_relations()}
    assert set(relations) <= catalogue


def test_strata_are_balanced(generated):
    report = generated.report
    kept = {pid: row["kept"] for pid, row in report.per_relation.items()}
    assert sum(kept.values()) == 1000 == report.kept
    open_strata = [pid for pid, row in report.per_relation.items() if not row["exhausted"]]
    assert len(open_strata) >= 2
    # relations that did not run out share the quota equally (±1); those that ran out
    # gave everything they had and never more than an open stratum
    open_sizes = [kept[pid] for pid in open_strata]
    assert max(open_sizes) - min(open_sizes) <= 1
    for pid, row in report.per_relation.items():
        if row["exhausted"]:
            assert kept[pid] <= min(open_sizes)
    removed = report.removed
    assert report.drawn == report.kept + sum(removed.values())


def test_every_source_path_is_in_the_graph(kg, generated):
    blocklist = load_blocklist()
    for rec in generated.records:
        path = rec["source_path"]
        assert len(path) == 3
        for triple in path:
            assert kg.has_triple(triple["subject"], triple["property"], triple["object"]), rec[
                "query_id"
            ]
            assert triple["subject_label"] == kg.label(triple["subject"])
            assert triple["object_label"] == kg.label(triple["object"])
        first, second, last = path
        cat = rec["category"]
        assert first["property"] == second["property"] == cat["property"] == rec["source_relation"]
        if cat["side"] == "subject":
            assert first["object"] == second["object"] == cat["entity"]
            assert first["subject"] == rec["entity_a_id"]
            assert second["subject"] == last["subject"] == rec["bridge"]["id"]
            assert cat["size"] == kg.count_subjects(cat["property"], cat["entity"])
        else:
            assert first["subject"] == second["subject"] == cat["entity"]
            assert first["object"] == rec["entity_a_id"]
            assert second["object"] == last["subject"] == rec["bridge"]["id"]
            assert cat["size"] == kg.count_objects(cat["entity"], cat["property"])
        assert rec["entity_a_id"] != rec["bridge"]["id"]
        assert 2 <= rec["class_size"] == cat["size"] <= 99
        assert (last["property"], last["object"]) == (rec["rel_b_id"], rec["entity_b_id"])
        assert last["property"] not in blocklist
        assert (
            rec["target_holders"] == kg.count_subjects(rec["rel_b_id"], rec["entity_b_id"]) <= 499
        )
        assert rec["source_quality"] >= 4


def test_no_query_is_trivially_one_hop(kg, generated):
    for rec in generated.records:
        assert not kg.has_triple(rec["entity_a_id"], rec["rel_b_id"], rec["entity_b_id"]), rec
        assert rec["entity_b_id"] not in {rec["entity_a_id"], rec["category"]["entity"]}


def test_record_fields_and_text(kg, generated):
    for rec in generated.records:
        for name in PUBLISHED_FIELDS:
            assert isinstance(rec[name], str) and rec[name], name
        assert rec["entity_a"] == kg.label(rec["entity_a_id"])
        assert rec["entity_b"] == kg.label(rec["entity_b_id"])
        assert rec["rel_b"] == kg.label(rec["rel_b_id"])
        assert rec["query_id"] == query_id(rec["entity_a_id"], rec["rel_b_id"], rec["entity_b_id"])
        assert rec["query"].startswith(f"What are different ways of connecting {rec['entity_a']}")
        assert rec["query"].endswith("?")
        assert rec["entity_b"] in rec["query"]
        assert rec["seed"] == 7


def test_output_is_interleaved_round_robin(generated):
    first = [r["source_relation"] for r in generated.records[:9]]
    assert len(set(first)) == 9  # the nine relations present in the slice, one each


def test_same_seed_same_queries_other_seed_other_queries(kg, generated):
    again = generate_queries(kg, 1000, seed=7)
    assert again.records == generated.records
    other = generate_queries(kg, 1000, seed=8)
    assert other.records != generated.records


def test_cli_generate_is_byte_identical(store_dir, tmp_path, capsys):
    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        out = tmp_path / name
        report = tmp_path / f"{name}.report.json"
        code = main(["queries", "generate", "--store", str(store_dir), "--n", "1000",
                     "--seed", "7", "--out", str(out), "--report", str(report)])
        assert code == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    lines = outs[0].decode("utf-8").splitlines()
    assert len(lines) == 1000
    records = [json.loads(line) for line in lines]
    assert all(r["source_relation"].startswith("P") for r in records)
    printed = capsys.readouterr().out
    assert (
        "trivial_one_hop" in printed and "duplicate" in printed and "wrote 1000 queries" in printed
    )
    report = json.loads((tmp_path / "a.jsonl.report.json").read_text())
    assert report["kept"] == 1000 and set(report["removed"]) >= {"trivial_one_hop", "duplicate"}


def test_cli_rejects_bad_arguments(store_dir, tmp_path, capsys):
    out = tmp_path / "q.jsonl"
    generate = ["queries", "generate", "--n", "5", "--out", str(out)]
    assert main([*generate, "--store", str(store_dir), "--relation", "P999999"]) == 2
    assert "P999999" in capsys.readouterr().err
    assert not out.exists()
    assert main([*generate, "--store", str(tmp_path / "nothing")]) == 2


def test_relation_subset_and_small_n(kg):
    result = generate_queries(kg, 10, 1, GenerationConfig(relations=("P54", "P161")))
    assert len(result.records) == 10
    assert Counter(r["source_relation"] for r in result.records) == {"P54": 5, "P161": 5}
    assert list(result.report.per_relation) == ["P54", "P161"]


def test_invalid_arguments_raise(kg):
    with pytest.raises(ValueError):
        generate_queries(kg, -1, 0)
    with pytest.raises(ValueError):
        generate_queries(kg, 1, -3)
    with pytest.raises(ValueError):
        GenerationConfig(min_size=1)
    with pytest.raises(ValueError):
        GenerationConfig(min_size=5, max_size=4)
    with pytest.raises(ValueError, match="not in the source-relation catalogue"):
        generate_queries(kg, 1, 0, GenerationConfig(relations=("P999",)))


def test_pair_unranking_covers_every_pair_once():
    for n in (2, 3, 7, 40):
        pairs = [pair_from_index(n, i) for i in range(n * (n - 1) // 2)]
        assert pairs == [(a, b) for a in range(n) for b in range(a + 1, n)]
    with pytest.raises(ValueError):
        pair_from_index(3, 3)


def test_pair_sampler_draws_without_replacement_and_caps():
    import numpy as np

    from creagraph.core.graph import Category

    cats = [
        Category("P1", "Q1", "subject", 5, ("Q10", "Q11", "Q12", "Q13", "Q14")),
        Category("P1", "Q2", "subject", 2, ("Q20", "Q21")),
    ]
    sampler = PairSampler(cats)
    rng = np.random.default_rng(3)
    draws = []
    while (d := sampler.draw(rng)) is not None:
        draws.append((d[0].entity, d[1], d[2]))
    assert len(draws) == len(set(draws)) == 10 + 1
    capped = PairSampler(cats, max_per_category=2)
    got = Counter()
    while (d := capped.draw(rng)) is not None:
        capped.accept(d[0])
        got[d[0].entity] += 1
    assert got == {"Q1": 2, "Q2": 1}
