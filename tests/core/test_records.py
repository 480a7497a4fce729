"""core.records: the typed records' JSON form (keys, order, left-out fields), reading files
of earlier versions, and the one query-id parser (on the published sample outputs)."""

import json

import pytest

from creagraph.core.io import InputError
from creagraph.core.records import (
    ABSENT,
    CEILING_COLUMNS,
    SUMMARY_COLUMNS,
    OracleRecord,
    PathRecord,
    QueryIds,
    QueryRecord,
    SummaryRow,
    make_query_id,
    parse_query_ids,
    require_query_ids,
)

#: The keys of a query record as ``creagraph score`` writes them, in order.
QUERY_KEYS = [
    "index", "query_key", "model", "query", "entity_a", "entity_b", "rel_b", "mode", "judge",
    "unknown", "creagraph_version", "n_paths", "n_valid", "n_kept", "n_kept_strict",
    "n_kept_lenient", "parse_failures", "repairs", "utility", "utility_strict",
    "utility_lenient", "utility_curve", "max_quality", "mean_pairwise_distance",
    "mean_pairwise_raw_distance", "triple_status", "judge_errors", "n_triples",
    "decided_share", "source", "issues",
]


def _query(**extra):
    return QueryRecord(model="m", query_key="k", utility={"0.7": 1.0, "0.9": 2.0}, **extra)


def test_query_record_keys_in_order_and_optional_fields_left_out():
    plain = _query()
    assert list(plain.to_dict()) == QUERY_KEYS
    named = _query(query_set="ab12", query_set_size=None, ceiling=None)
    assert list(named.to_dict()) == [*QUERY_KEYS, "query_set", "query_set_size", "ceiling"]
    assert named.to_dict()["ceiling"] is None  # a query without ids: null, not left out
    assert QueryRecord.from_dict(named.to_dict()) == named
    assert QueryRecord.from_dict(plain.to_dict()).query_set is ABSENT


def test_query_record_reads_records_of_earlier_versions():
    # written before query_key, both readings, decided_share and judge_errors existed
    old = {"index": 3, "model": "m", "utility": {"0.7": 1.0, "0.9": 2.0}, "n_kept": 2,
           "retired_field": "ignored"}
    q = QueryRecord.from_dict(old)
    assert q.query_key is None and q.decided_share is None and q.judge_errors is None
    assert q.utility_under("strict") == q.utility_under("lenient") == old["utility"]
    assert "retired_field" not in q.to_dict()
    with pytest.raises(InputError, match="queries.jsonl: record 2: field 'utility' is missing"):
        QueryRecord.from_dict({"model": "m"}, "queries.jsonl: record 2")
    assert QueryRecord.of({"model": "m"}).utility == {}  # the report's partial records
    assert QueryRecord.of(q) is q


def test_path_record_round_trip():
    record = PathRecord(model="m", index=0, query_key="k", path_index=1, key="1",
                        triples=[["a", "r", "b"]], valid=True, path_string=" [r] b",
                        specificities=[None], strength=None, factual_fraction=1.0,
                        factual=True, quality=0.0, kept=True, kept_strict=True,
                        kept_lenient=True)
    data = json.loads(json.dumps(record.to_dict()))
    assert list(data)[:5] == ["model", "index", "query_key", "path_index", "key"]
    assert PathRecord.from_dict(data) == record
    with pytest.raises(InputError, match="field 'model' is missing"):
        PathRecord.from_dict({"index": 0})


def test_summary_row_reads_its_csv_text():
    columns = {name: (1.5, 0.5) for name in SUMMARY_COLUMNS}
    columns["decided_share"] = (None, None)
    row = SummaryRow("m", 4, columns, 1, 0, {"judge": "kg", "mode": "paper"},
                     {"query_set": "ab", "query_set_size": 24})
    flat = row.to_dict()
    assert list(flat)[:4] == ["model", "n_queries", "s_0.7_mean", "s_0.7_sd"]
    as_csv = {k: "" if v is None else str(v) for k, v in flat.items()}  # what a CSV gives back
    back = SummaryRow.from_dict(as_csv)
    assert back.mean("s_0.9") == 1.5 and back.mean("decided_share") is None
    assert back.n_queries == 4 and back.judge_unparsed == 1
    assert back.mean(CEILING_COLUMNS[0]) is None  # a run without --ceiling
    with pytest.raises(InputError, match="line 2: field 's_0.7_mean' is not a number"):
        SummaryRow.from_dict({**as_csv, "s_0.7_mean": "high"}, "summary.csv: line 2")


def test_oracle_record_leaves_paths_out_when_none_listed():
    record = OracleRecord(query_id="cq-1", n_strong=2, ceiling={"0.7": 1.0, "0.9": 2.0},
                          truncated=False, source_path_found=None)
    assert "paths" not in record.to_dict()
    listed = OracleRecord(**{**record.to_dict(), "paths": []})
    assert listed.to_dict()["paths"] == []
    with pytest.raises(InputError, match="field 'ceiling' is missing"):
        OracleRecord.from_dict({"n_strong": 1, "truncated": False, "source_path_found": None})


@pytest.fixture(scope="module")
def published_rows(shared_dir):
    folder = shared_dir / "external" / "create-leaderboard" / "sample_outputs"
    return [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.open()]


def test_query_ids_from_the_published_source_path(published_rows):
    assert len(published_rows) == 80
    for row in published_rows:
        ids = parse_query_ids(row, default_id="published-key")
        assert ids is not None
        assert ids.entity_a_id == row["triple1"][0]
        last = row["triple3"] if isinstance(row.get("triple3"), list) else row["triple2"]
        assert (ids.rel_b_id, ids.entity_b_id) == (last[1], last[2])
        assert ids.query_id == "published-key"
        assert ids.source_path[0] == {
            "subject": row["triple1"][0], "property": row["triple1"][1],
            "object": row["triple1"][2], "subject_label": row["triple1_labels"][0],
            "property_label": row["triple1_labels"][1], "object_label": row["triple1_labels"][2],
        }


def test_query_ids_from_generated_fields_win_and_keep_their_id():
    source = [{"subject": "Q1", "property": "P5", "object": "Q9"}]
    fields = {"entity_a_id": "Q1", "rel_b_id": "P2", "entity_b_id": "Q3", "query_id": None,
              "source_path": source, "triple1": ["Q7", "P7", "Q7"]}
    ids = parse_query_ids(fields, default_id="k")
    assert ids == QueryIds("Q1", "P2", "Q3", None, source)  # a stated id, even null, is kept
    assert list(ids.to_dict()) == ["entity_a_id", "rel_b_id", "entity_b_id", "query_id",
                                   "source_path"]
    assert parse_query_ids({"query": "text"}) is None
    labels_only = parse_query_ids({**fields, "source_path": "labels", "triple1": None})
    assert labels_only.source_path is None and "source_path" not in labels_only.to_dict()


def test_required_query_ids_name_the_field():
    with pytest.raises(InputError, match="query 'q1': field 'rel_b_id' is missing"):
        require_query_ids({"query_id": "q1", "entity_a_id": "Q1", "entity_b_id": "Q2"})
    with pytest.raises(InputError, match="query record: field 'entity_b_id'"):
        require_query_ids({"entity_a_id": "Q1", "rel_b_id": "P2", "entity_b_id": "P3"})
    with pytest.raises(InputError, match="field 'entity_a_id' is missing"):  # generated only
        require_query_ids({"triple1": ["Q1", "P5", "Q9"], "triple2": ["Q9", "P2", "Q3"]})
    ids = require_query_ids({"entity_a_id": "Q1", "rel_b_id": "P2", "entity_b_id": "Q2"})
    assert (ids.entity_a_id, ids.rel_b_id, ids.entity_b_id) == ("Q1", "P2", "Q2")


def test_make_query_id_is_the_generators():
    from creagraph.querygen.generate import query_id

    assert query_id is make_query_id
    assert make_query_id("Q1", "P106", "Q2") != make_query_id("Q2", "P106", "Q1")
