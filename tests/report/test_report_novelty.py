"""The report's novelty section: population novelty beside within-model repetition, from a
real `creagraph tig score --summary` file (issue 27, item 5)."""

from __future__ import annotations

import json
import os

import pytest

from creagraph.core.io import InputError
from creagraph.tig.io import write_responses
from tests.tig.conftest import calm_population

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

QUERIES = [{"model": "m", "utility": {"0.7": u, "0.9": u}, "n_kept": 1} for u in (1.0, 2.0)]


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    """`tig score --summary` on the calm population, one model repeating itself."""
    from creagraph.cli import main

    root = tmp_path_factory.mktemp("novelty")
    responses = calm_population()
    # m1 says its first idea in every sample: it repeats itself
    first = next(r for r in responses if r.model == "m1")
    responses = [r.__class__(**{**r.to_dict(), "core_idea": first.core_idea})
                 if r.model == "m1" else r for r in responses]
    path = root / "calm.jsonl"
    write_responses(path, responses)
    out = root / "summary.json"
    assert main([str(a) for a in ("tig", "score", path, "--out", root / "scores.jsonl",
                                  "--summary", out)]) == 0
    return out


def test_summary_is_read_and_split_from_cluster_files(summary, tmp_path):
    from creagraph.report.novelty import is_tig_summary, read_tig_summary, split_tig_summaries

    rows = read_tig_summary(summary)
    shares = {r["model"]: r["distinct_share"] for r in rows}
    assert len(rows) == 6 and shares["m1"] < min(v for m, v in shares.items() if m != "m1")
    clusters = tmp_path / "clusters.jsonl"
    clusters.write_text(json.dumps({"id": "c", "task_id": "t", "cliche_score": 0.5}) + "\n")
    assert is_tig_summary(summary) and not is_tig_summary(clusters)
    found, others = split_tig_summaries([summary, clusters])
    assert [r["model"] for r in found] == [r["model"] for r in rows] and others == [clusters]


def test_report_shows_novelty_beside_repetition(summary, tmp_path):
    from creagraph.report import write_report
    from creagraph.report.novelty import read_tig_summary

    rows = read_tig_summary(summary)
    page = write_report(QUERIES, tmp_path / "r", n_resamples=50,
                        tig_novelty=rows)[0].read_text()
    assert "Population novelty and within-model repetition" in page
    section = page.split("Population novelty and within-model repetition", 1)[1]
    for row in rows:
        assert f'data-model="{row["model"]}"' in section
    m1 = next(r for r in rows if r["model"] == "m1")
    cells = section.split('data-model="m1"', 1)[1].split("</tr>", 1)[0]
    assert f"{m1['distinct_share']:.2f}" in cells and f"{1 - m1['distinct_share']:.2f}" in cells
    # without a summary the section is not shown (a CREATE report keeps its sections)
    plain = write_report(QUERIES, tmp_path / "p", n_resamples=50)[0].read_text()
    assert "within-model repetition" not in plain


def test_report_cli_takes_the_summary_through_tig(summary, tmp_path):
    from creagraph.cli import main

    results = tmp_path / "results"
    results.mkdir()
    (results / "queries.jsonl").write_text(
        "".join(json.dumps({**q, "query_id": f"q{i}", "rel_b": "occupation",
                            "utility_curve": {"0.0": 1.0, "1.0": 1.0}}) + "\n"
                for i, q in enumerate(QUERIES)))
    out = tmp_path / "report"
    assert main([str(a) for a in ("report", results, "--out", out, "--tig", summary,
                                  "--resamples", 50)]) == 0
    assert 'data-model="m1"' in (out / "report.html").read_text()


@pytest.mark.parametrize(("record", "message"), [
    ({"models": [{"n_responses": 3, "novelty_mean": 0.5, "distance_mean": 0.2}]}, "'model'"),
    ({"models": [{"model": "a", "n_responses": 3, "novelty_mean": None,
                  "distance_mean": 0.2}]}, "'novelty_mean'"),
    ({"models": [{"model": "a", "n_responses": 3, "novelty_mean": 0.5, "distance_mean": 0.2,
                  "distinct_share": 1.5}]}, "'distinct_share'"),
    ({"models": [{"model": "a", "n_responses": -1, "novelty_mean": 0.5,
                  "distance_mean": 0.2}]}, "'n_responses'"),
    ({"rows": []}, "not a `creagraph tig score --summary` file"),
])
def test_bad_summary_names_file_row_and_field(tmp_path, record, message):
    from creagraph.report.novelty import read_tig_summary

    path = tmp_path / "summary.json"
    path.write_text(json.dumps(record))
    with pytest.raises(InputError, match=message) as info:
        read_tig_summary(path)
    assert str(path) in str(info.value)
