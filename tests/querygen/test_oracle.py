"""Oracle paths and the graph ceiling (SPEC §3.8)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from creagraph.cli import main
from creagraph.core.embeddings import default_embedder
from creagraph.core.io import InputError
from creagraph.core.metrics import path_string, specificity, triple_class_size
from creagraph.querygen import (
    OracleBudget,
    ceiling_fraction,
    enumerate_paths,
    graph_path_recall,
    oracle_paths,
    path_key,
)

# S = Q1 (start), holders of (·, P106, Q200) are Q2, Q3, Q5.
EDGES = [
    ("Q1", "P166", "Q100"),
    ("Q2", "P166", "Q100"),
    ("Q1", "P69", "Q101"),
    ("Q2", "P69", "Q101"),
    ("Q1", "P27", "Q102"),
    ("Q3", "P27", "Q102"),
    ("Q1", "P26", "Q3"),
    ("Q1", "P40", "Q4"),
    ("Q4", "P26", "Q5"),
    ("Q6", "P40", "Q5"),
    ("Q7", "P69", "Q101"),
    ("Q7", "P40", "Q5"),
    ("Q2", "P106", "Q200"),
    ("Q3", "P106", "Q200"),
    ("Q5", "P106", "Q200"),
]
NAMES = {
    "Q1": "Ada",
    "Q2": "Bo",
    "Q3": "Cy",
    "Q4": "Di",
    "Q5": "Ed",
    "Q6": "Fay",
    "Q7": "Gil",
    "Q100": "Prize",
    "Q101": "College",
    "Q102": "Land",
    "Q200": "painter",
}
EXPECTED_K3 = {
    frozenset({("Q1", "P26", "Q3"), ("Q3", "P106", "Q200")}),
    frozenset({("Q1", "P166", "Q100"), ("Q2", "P166", "Q100"), ("Q2", "P106", "Q200")}),
    frozenset({("Q1", "P69", "Q101"), ("Q2", "P69", "Q101"), ("Q2", "P106", "Q200")}),
    frozenset({("Q1", "P27", "Q102"), ("Q3", "P27", "Q102"), ("Q3", "P106", "Q200")}),
    frozenset({("Q1", "P40", "Q4"), ("Q4", "P26", "Q5"), ("Q5", "P106", "Q200")}),
}


@pytest.fixture
def small(tiny_graph):
    return tiny_graph(EDGES, NAMES)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return default_embedder(tmp_path_factory.mktemp("emb") / "embeddings.sqlite")


def test_enumeration_is_exact_on_a_small_graph(small):
    found = enumerate_paths(small, "Q1", "P106", "Q200", k=3)
    keys = [p.key for p in found.paths]
    assert set(keys) == EXPECTED_K3 and len(keys) == len(EXPECTED_K3)
    assert found.holders == 3 and not found.truncated
    for p in found.paths:
        assert p.nodes[0] == "Q1" and p.nodes[-1] == "Q200"
        assert len(set(p.nodes)) == len(p.nodes)
        assert p.triples[-1].property == "P106"
        for i, (t, fwd) in enumerate(zip(p.triples, p.forward)):
            a, b = p.nodes[i], p.nodes[i + 1]
            assert (t.subject, t.object) == ((a, b) if fwd else (b, a))
            assert small.has_triple(*t.as_tuple())
    only_short = enumerate_paths(small, "Q1", "P106", "Q200", k=2)
    assert {p.key for p in only_short.paths} == {
        frozenset({("Q1", "P26", "Q3"), ("Q3", "P106", "Q200")})
    }
    longer = enumerate_paths(small, "Q1", "P106", "Q200", k=4)
    four = frozenset(
        {("Q1", "P69", "Q101"), ("Q7", "P69", "Q101"), ("Q7", "P40", "Q5"), ("Q5", "P106", "Q200")}
    )
    assert {p.key for p in longer.paths} == EXPECTED_K3 | {four}


def test_enumeration_without_the_meet_in_the_middle_agrees(small):
    full = enumerate_paths(small, "Q1", "P106", "Q200", k=3)
    # with max_holders=1 the holders' lists are not fetched: the search runs forward only
    budget = OracleBudget(max_holders=1)
    forward_only = enumerate_paths(small, "Q1", "P106", "Q200", k=3, budget=budget)
    assert {p.key for p in forward_only.paths} == {p.key for p in full.paths}
    assert full.expansions == 1 + 3  # the start and the three holders
    assert forward_only.expansions == 1 + 5  # the start and its five neighbours


def test_budget_truncates_and_is_reported(small):
    capped = enumerate_paths(small, "Q1", "P106", "Q200", k=3, budget=OracleBudget(max_paths=2))
    assert capped.truncated and len(capped.paths) == 2
    starved = enumerate_paths(
        small, "Q1", "P106", "Q200", k=3, budget=OracleBudget(max_expansions=1)
    )
    assert starved.truncated and starved.expansions == 1
    with pytest.raises(ValueError):
        OracleBudget(max_paths=0)
    with pytest.raises(ValueError):
        enumerate_paths(small, "Q1", "P106", "Q200", k=1)


def test_oracle_scores_like_scoring(small, embedder):
    query = {"query_id": "t", "entity_a_id": "Q1", "rel_b_id": "P106", "entity_b_id": "Q200"}
    result = oracle_paths(small, query, k=3, embedder=embedder)
    assert result.n_paths == 5 and result.scored == 5
    qualities = [p.quality for p in result.paths]
    assert qualities == sorted(qualities, reverse=True)
    for p in result.paths:
        sizes = [triple_class_size(small, *t.as_tuple()) for t in p.path.triples]
        assert list(p.class_sizes) == sizes
        assert p.quality == min(specificity(s) for s in sizes[:-1])
        assert p.text == path_string(p.labelled)
    assert result.n_strong == sum(1 for q in qualities if q >= 4) == 5
    spouse = next(p for p in result.paths if len(p.path) == 2)
    assert spouse.text == " [spouse] cy"
    prize = next(p for p in result.paths if ("Q1", "P166", "Q100") in p.path.key)
    assert prize.text == " [award received] prize | prize [was awarded to] bo"
    assert 0 < result.ceiling[0.7] < result.ceiling[0.9] <= 5 * sum(0.9**i for i in range(5))
    assert ceiling_fraction(result.ceiling[0.9], result, 0.9) == pytest.approx(1.0)
    assert ceiling_fraction(result.ceiling[0.7] / 2, result) == pytest.approx(0.5)
    with pytest.raises(KeyError):
        ceiling_fraction(1.0, result, 0.5)
    assert result.source_path_found is None
    row = json.loads(json.dumps(result.as_dict()))
    assert row["n_paths"] == 5 and set(row["ceiling"]) == {"0.7", "0.9"} and len(row["paths"]) == 5


def test_graph_path_recall(small, embedder):
    query = {"entity_a_id": "Q1", "rel_b_id": "P106", "entity_b_id": "Q200"}
    result = oracle_paths(small, query, k=3, embedder=embedder)
    model = [
        [("Q1", "P26", "Q3"), ("Q3", "P106", "Q200")],  # an oracle path
        [("Q3", "P106", "Q200"), ("Q1", "P26", "Q3")],  # the same path, triples reordered
        [("Q1", "P166", "Q100"), ("Q2", "P166", "Q100"), None],  # failed grounding
        None,
        [("Q1", "P999", "Q2"), ("Q2", "P106", "Q200")],  # not in the graph
    ]
    assert graph_path_recall(model, result) == pytest.approx(1 / 5)
    assert graph_path_recall([], result) == 0.0
    everything = [[t.as_tuple() for t in p.path.triples] for p in result.paths]
    assert graph_path_recall(everything, result, strong_only=False) == 1.0


def test_query_without_any_path(small, embedder):
    query = {"entity_a_id": "Q6", "rel_b_id": "P106", "entity_b_id": "Q999"}
    result = oracle_paths(small, query, embedder=embedder)
    assert result.n_paths == 0 and result.n_strong == 0
    assert result.ceiling == {0.7: 0.0, 0.9: 0.0}
    assert math.isnan(ceiling_fraction(1.0, result))
    assert math.isnan(graph_path_recall([], result))


def test_malformed_query_records_are_reported(small):
    with pytest.raises(InputError, match="entity_b_id"):
        oracle_paths(small, {"query_id": "x", "entity_a_id": "Q1", "rel_b_id": "P106"})
    with pytest.raises(InputError, match="rel_b_id"):
        oracle_paths(small, {"entity_a_id": "Q1", "rel_b_id": "occupation", "entity_b_id": "Q2"})


def test_oracle_finds_every_sampled_source_path(kg, generated):
    rng = np.random.default_rng(0)
    sample = rng.choice(len(generated.records), size=120, replace=False)
    budget = OracleBudget()
    for i in sorted(sample.tolist()):
        rec = generated.records[i]
        found = enumerate_paths(
            kg, rec["entity_a_id"], rec["rel_b_id"], rec["entity_b_id"], k=3, budget=budget
        )
        want = path_key((t["subject"], t["property"], t["object"]) for t in rec["source_path"])
        assert want in {p.key for p in found.paths}, (
            rec["query_id"],
            found.truncated,
            len(found.paths),
        )


def test_oracle_ceiling_on_generated_queries(kg, generated, embedder):
    records = sorted(generated.records, key=lambda r: (r["target_holders"], r["query_id"]))[:3]
    for rec in records:
        result = oracle_paths(kg, rec, k=3, budget=OracleBudget(max_scored=32), embedder=embedder)
        assert result.source_path_found is True
        assert result.n_strong >= 1 and result.scored <= 32
        source = next(
            p
            for p in result.paths
            if p.path.key
            == path_key((t["subject"], t["property"], t["object"]) for t in rec["source_path"])
        )
        assert source.quality == rec["source_quality"] >= 4
        recall = graph_path_recall([[t.as_tuple() for t in source.path.triples]], result)
        assert recall == pytest.approx(1 / result.n_strong)
        assert result.ceiling[0.9] >= result.ceiling[0.7] >= 4


def test_cli_paths(store_dir, tmp_path, capsys, embedder):
    queries = tmp_path / "q.jsonl"
    store = ["--store", str(store_dir)]
    generate = ["queries", "generate", *store, "--n", "4", "--seed", "2"]
    assert main([*generate, "--out", str(queries)]) == 0
    out = tmp_path / "paths.jsonl"
    args = ["queries", "paths", str(queries), *store, "--out", str(out), "--k", "2"]
    assert main([*args, "--list-paths", "3"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4
    for row in rows:
        assert row["k"] == 2 and row["source_path_found"] is False  # source paths have 3 triples
        assert len(row["paths"]) <= 3
    printed = capsys.readouterr().out
    assert "mean ceiling utility" in printed and "wrote 4 oracle records" in printed
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    assert main(["queries", "paths", str(bad), *store, "--out", str(out)]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


@pytest.mark.slow  # ~26 s measured: the oracle over the generated queries, twice
def test_oracle_paths_many_equals_one_call_per_query(kg, generated, embedder):
    """Shared neighbourhoods and batched embeddings change no result (issue 16 item 5)."""
    from creagraph.querygen import GraphCache, oracle_paths_many

    records = generated.records[:12]
    cache = GraphCache(kg)
    many = list(oracle_paths_many(kg, records, embedder=embedder, batch_size=5, cache=cache))
    assert len(many) == len(records)
    expansions = 0
    for rec, got in zip(records, many):
        one = oracle_paths(kg, rec, embedder=embedder)
        assert got.as_dict() == one.as_dict(), rec["query_id"]
        expansions += one.expansions
    # the queries share neighbourhoods: fewer neighbour lists read than expansions counted
    assert 0 < len(cache._neighbours) < expansions
    with pytest.raises(ValueError, match="batch_size"):
        list(oracle_paths_many(kg, records, batch_size=0))
