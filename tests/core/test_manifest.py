"""The comparability rule of ``creagraph.core.manifest``: which query set a model is
compared on (named, declared, else the union of one score run)."""

from __future__ import annotations

import pytest

from creagraph.core.io import InputError
from creagraph.core.manifest import (
    QuerySetTally,
    comparison_key,
    fill_query_sets,
    named_query_set,
    query_set_digest,
    query_set_identity,
    read_query_set,
)
from creagraph.scoring.inputs import AnswerRow


def test_undeclared_models_share_the_union_of_their_run():
    tally = QuerySetTally()
    for model, query in (("a", "Q1"), ("a", "Q2"), ("b", "Q2"), ("b", "Q3")):
        tally.add({"model": model, "query": query})
    sets = tally.resolve()
    assert sets["a"] == sets["b"] == {"query_set": query_set_digest(["Q1", "Q2", "Q3"]),
                                      "query_set_size": 3}
    # a digest of each model's answered queries would have split them
    assert query_set_digest(["Q1", "Q2"]) != query_set_digest(["Q2", "Q3"])


def test_a_declared_set_wins_over_the_union_and_mixed_sets_match_nothing():
    tally = QuerySetTally()
    tally.add({"model": "run", "query": "Q1", "query_set": "D", "query_set_size": 5})
    tally.add({"model": "pub", "query": "Q2"})
    tally.add({"model": "mixed", "query": "Q3", "query_set": "D", "query_set_size": 5})
    tally.add({"model": "mixed", "query": "Q4"})
    sets = tally.resolve()
    assert sets["run"] == {"query_set": "D", "query_set_size": 5}
    union = query_set_digest(["Q1", "Q2", "Q3", "Q4"])
    assert sets["pub"] == {"query_set": union, "query_set_size": 4}
    assert sets["mixed"] == {"query_set": "+".join(sorted(["D", union])),
                             "query_set_size": None}


def test_fill_query_sets_and_the_comparison_key():
    rows = fill_query_sets([{"model": "a", "query": "Q1", "judge": "kg", "mode": "paper"},
                            {"model": "b", "query": "q1 ", "judge": "kg", "mode": "paper"}])
    assert rows[0]["query_set"] == rows[1]["query_set"] and rows[0]["query_set_size"] == 1
    assert comparison_key(rows[0]) == comparison_key(rows[1])
    assert comparison_key({"judge": "kg"}) == ("kg", "unknown", "unknown")


def test_a_named_set_checks_every_answer_and_names_the_outlier(tmp_path):
    named = tmp_path / "set.jsonl"
    named.write_text('{"query": "How are A and B linked?"}\n{"query": "Q2"}\n')
    digest, size, _ = read_query_set(named)
    assert (digest, size) == query_set_identity(["how are a and b linked", "q2"])

    def row(line, query):
        return AnswerRow(source="ans.jsonl", line=line, index=line, model="m", query=query,
                         entity_a="A", entity_b="B", rel_b="r", answer="", extra={})

    kept = list(named_query_set([row(1, "how are A and B linked")], named))
    assert kept[0].extra == {"query_set": digest, "query_set_size": 2}
    with pytest.raises(InputError, match=r"ans.jsonl: line 2: query 'Q9' is not in the query"):
        list(named_query_set([row(1, "Q2"), row(2, "Q9")], named))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "Q1"}\n{"text": "Q2"}\n')
    with pytest.raises(InputError, match="bad.jsonl: row 2: field 'query'"):
        read_query_set(bad)
