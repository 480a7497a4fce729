"""Each filter of query generation removes what it should (hand-built graphs)."""

from __future__ import annotations

import pytest

from creagraph.querygen import (
    GenerationConfig,
    SourceRelation,
    TargetPolicy,
    generate_queries,
    stratified_take,
)

AWARD = SourceRelation("P166", "award received", "subject")
MEMBER = SourceRelation("P463", "member of", "subject")
TEAM = SourceRelation("P54", "member of sports team", "subject")
PEOPLE = {"Q1": "Ada Example", "Q2": "Bo Example", "Q3": "Cy Example", "Q4": "Di Example"}
THINGS = {
    "Q100": "Prize of Tests",
    "Q101": "Society of Tests",
    "Q102": "Test Rovers",
    "Q200": "painter",
    "Q201": "sculptor",
    "Q202": "engraver",
    "Q5": "human",
    "Q6581097": "male",
}
LABELS = {**PEOPLE, **THINGS}
# these graphs use occupation (P106) as a plain target; the target policy, which drops it as a
# broad attribute, has its own tests (tests/querygen/test_policy.py)
NO_POLICY = TargetPolicy({}, {})


@pytest.fixture
def tiny_graph(tiny_graph):
    """The conftest builder, with every person typed human: the pair of a query must share
    a P31 class (``mixed_types``), which these graphs do not test."""

    def make(triples, labels, descriptions=None):
        people = sorted({s for s, _, _ in triples if s in PEOPLE})
        return tiny_graph([*triples, *((q, "P31", "Q5") for q in people)], labels, descriptions)

    return make


def run(kg, relations=(AWARD,), seeds=range(8), **config):
    """Generation results for several seeds (each filter must act whatever the draw)."""
    cfg = GenerationConfig(**config)
    return [
        generate_queries(kg, 5, seed, cfg, relations=list(relations), target_policy=NO_POLICY)
        for seed in seeds
    ]


def test_trivial_one_hop_is_removed(tiny_graph):
    # Both members are painters: whichever endpoint is expanded, the start already holds it.
    kg = tiny_graph(
        [
            ("Q1", "P166", "Q100"),
            ("Q2", "P166", "Q100"),
            ("Q1", "P106", "Q200"),
            ("Q2", "P106", "Q200"),
        ],
        LABELS,
    )
    for result in run(kg):
        assert result.records == []
        assert result.report.drawn == 1
        assert result.report.removed["trivial_one_hop"] == 1
        assert result.report.removed["no_informative_edge"] == 0


def test_non_trivial_pair_is_kept(tiny_graph):
    kg = tiny_graph(
        [
            ("Q1", "P166", "Q100"),
            ("Q2", "P166", "Q100"),
            ("Q1", "P106", "Q200"),
            ("Q2", "P106", "Q201"),
        ],
        LABELS,
        {"Q1": "English test subject", "Q2": "Italian test subject"},
    )
    for result in run(kg):
        assert len(result.records) == 1
        rec = result.records[0]
        assert rec["rel_b_id"] == "P106"
        assert not kg.has_triple(rec["entity_a_id"], rec["rel_b_id"], rec["entity_b_id"])
        assert rec["query"] in (
            "What are different ways of connecting Ada Example, an English test subject, "
            "and someone who is a sculptor?",
            "What are different ways of connecting Bo Example, an Italian test subject, "
            "and someone who is a painter?",
        )


def test_blocklisted_edges_are_skipped(tiny_graph):
    kg = tiny_graph(
        [
            ("Q1", "P166", "Q100"),
            ("Q2", "P166", "Q100"),
            ("Q1", "P31", "Q5"),
            ("Q2", "P31", "Q5"),
            ("Q1", "P21", "Q6581097"),
            ("Q2", "P21", "Q6581097"),
        ],
        LABELS,
    )
    for result in run(kg):
        assert result.records == []
        assert result.report.removed["no_informative_edge"] == 1
        assert result.report.edges_skipped["blocklisted"] == 2
        assert result.report.edges_skipped["target_on_path"] == 1  # (x, P166, Q100) itself


def test_target_on_path_is_skipped(tiny_graph):
    # The only other edge of each member points at the other member: not a target.
    kg = tiny_graph(
        [("Q1", "P166", "Q100"), ("Q2", "P166", "Q100"), ("Q1", "P26", "Q2"), ("Q2", "P26", "Q1")],
        LABELS,
    )
    for result in run(kg):
        assert result.records == []
        assert result.report.removed["no_informative_edge"] == 1
        assert result.report.edges_skipped["target_on_path"] == 2


def test_generic_targets_are_skipped(tiny_graph):
    triples = [("Q1", "P166", "Q100"), ("Q2", "P166", "Q100")]
    triples += [(q, "P106", "Q200") for q in ("Q2", "Q3", "Q4")]  # painter: 3 holders
    triples += [(q, "P106", "Q201") for q in ("Q1", "Q3", "Q4")]  # sculptor: 3 holders
    kg = tiny_graph(triples, LABELS)
    for result in run(kg, max_target_holders=2):
        assert result.records == []
        assert result.report.removed["no_informative_edge"] == 1
        assert result.report.edges_skipped["generic_target"] == 1
    for result in run(kg, max_target_holders=3):
        assert len(result.records) == 1
        assert result.records[0]["target_holders"] == 3


def test_unlabelled_start_is_removed(tiny_graph):
    labels = {k: v for k, v in LABELS.items() if k not in ("Q1", "Q2")}
    kg = tiny_graph(
        [
            ("Q1", "P166", "Q100"),
            ("Q2", "P166", "Q100"),
            ("Q1", "P106", "Q200"),
            ("Q2", "P106", "Q201"),
        ],
        labels,
    )
    for result in run(kg):
        assert result.records == []
        assert result.report.removed["unlabelled_start"] == 1


def test_weak_source_path_is_removed(tiny_graph):
    # Ada received 101 other awards: (Ada, P166, Q100) has class size 101, σ = 3 < 4.
    triples = [("Q1", "P166", "Q100"), ("Q2", "P166", "Q100"), ("Q1", "P106", "Q200")]
    triples += [("Q2", "P106", "Q201")]
    triples += [("Q1", "P166", f"Q{1000 + i}") for i in range(101)]
    labels = {**LABELS, **{f"Q{1000 + i}": f"Medal {i}" for i in range(101)}}
    kg = tiny_graph(triples, labels)
    for result in run(kg):
        assert result.records == []
        assert result.report.removed["weak_source_path"] == 1
    for result in run(kg, min_source_quality=0):
        assert len(result.records) == 1
        assert result.records[0]["source_quality"] == 3.0


def test_duplicates_across_strata_are_removed(tiny_graph):
    # Three categories with the same pair, one per relation; each yields one of only two
    # possible (start, r', y) items, so at least one is a duplicate.
    triples = [
        ("Q1", "P166", "Q100"),
        ("Q2", "P166", "Q100"),
        ("Q1", "P463", "Q101"),
        ("Q2", "P463", "Q101"),
        ("Q1", "P54", "Q102"),
        ("Q2", "P54", "Q102"),
        ("Q1", "P106", "Q201"),
        ("Q2", "P106", "Q202"),
    ]
    kg = tiny_graph(triples, LABELS)
    for result in run(kg, relations=(AWARD, MEMBER, TEAM), max_target_holders=1):
        report = result.report
        assert report.drawn == 3
        assert report.removed["duplicate"] >= 1
        assert len(result.records) + report.removed["duplicate"] == 3
        keys = [(r["entity_a_id"], r["rel_b_id"], r["entity_b_id"]) for r in result.records]
        assert len(set(keys)) == len(keys)
        assert len({r["query_id"] for r in result.records}) == len(keys)


def test_stratified_take_balances_and_redistributes():
    streams = {
        "a": iter(range(100)),
        "b": iter(range(100, 103)),
        "c": iter(range(200, 300)),
        "d": iter([]),
    }
    exhausted = []
    taken, dups = stratified_take(streams, 40, on_exhausted=exhausted.append)
    sizes = {k: len(v) for k, v in taken.items()}
    assert sizes == {"a": 19, "b": 3, "c": 18, "d": 0} or sizes == {
        "a": 18,
        "b": 3,
        "c": 19,
        "d": 0,
    }
    assert sorted(exhausted) == ["b", "d"]
    assert dups == 0


def test_stratified_take_skips_duplicate_keys():
    streams = {"a": iter([1, 2, 3, 4]), "b": iter([2, 3, 5, 6])}
    taken, dups = stratified_take(streams, 4)
    flat = [x for v in taken.values() for x in v]
    assert len(flat) == len(set(flat)) == 4
    assert dups >= 1


def test_stratified_take_stops_when_all_streams_run_out():
    taken, dups = stratified_take({"a": iter([1]), "b": iter([2, 3])}, 10)
    assert taken == {"a": [1], "b": [2, 3]}
    assert dups == 0
    with pytest.raises(ValueError):
        stratified_take({}, -1)


def test_blocklisted_source_relation_is_refused(tiny_graph):
    kg = tiny_graph([("Q1", "P31", "Q5"), ("Q2", "P31", "Q5")], LABELS)
    with pytest.raises(ValueError, match="blocklisted"):
        generate_queries(kg, 1, 0, relations=[SourceRelation("P31", "instance of", "subject")])
