"""The report's numbers and input checks (no browser)."""

from __future__ import annotations

import doctest
import importlib
import json
from collections import Counter

import numpy as np
import pytest

from creagraph.core.io import InputError, read_jsonl, read_records
from creagraph.report import (
    GROUNDING_STATUSES,
    bootstrap_ci,
    cliche_tables,
    grounding_coverage,
    leaderboard,
    read_distinct,
    read_query_relations,
    read_scored,
    read_tig,
    relation_breakdown,
    source_relations,
)


@pytest.mark.parametrize("name", ["creagraph.report", "creagraph.report.tables",
                                  "creagraph.report.page"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_bootstrap_ci_matches_scipy_percentile_interval():
    from scipy.stats import bootstrap

    x = np.random.default_rng(3).gamma(2.0, 3.0, size=40)
    lo, hi = bootstrap_ci(x.tolist(), n_resamples=20000, seed=1)
    ref = bootstrap((x,), np.mean, n_resamples=20000, method="percentile",
                    random_state=np.random.default_rng(2)).confidence_interval
    width = ref.high - ref.low
    assert abs(lo - ref.low) < 0.05 * width and abs(hi - ref.high) < 0.05 * width
    assert bootstrap_ci(x.tolist(), seed=5) == bootstrap_ci(x.tolist(), seed=5)
    narrow = bootstrap_ci(x.tolist(), level=0.5)
    assert lo < narrow[0] < narrow[1] < hi
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci([1.0], level=1.0)


def test_leaderboard_agrees_with_the_scorers_summary(scored):
    queries = read_scored([scored["score"]])
    summary = {r["model"]: r for r in read_records(scored["score"] / "summary.csv")}
    _, distinct = read_distinct(scored["distinct"])
    table = leaderboard(queries, distinct, n_resamples=300)
    assert [r["s_0.9"] for r in table] == sorted((r["s_0.9"] for r in table), reverse=True)
    for row in table:
        ref = summary[row["model"]]
        for col in ("s_0.7", "s_0.9", "max_quality", "n_kept"):
            assert row[col] == pytest.approx(float(ref[f"{col}_mean"]), rel=1e-12)
        assert row["s_0.9_ci_low"] < row["s_0.9"] < row["s_0.9_ci_high"]
        assert row["avg_nu"] is not None and 0.0 <= row["avg_nu"] <= 1.0


def test_grounding_coverage_counts_the_per_triple_statuses(scored):
    # one folder per read: the same model in two result folders is an error (issue 13.1)
    queries = read_scored([scored["score"]]) + read_scored([scored["score-kg"]])
    coverage = grounding_coverage(queries)
    per_path = Counter()
    totals = Counter()
    for p in read_jsonl(scored["score-kg"] / "paths.jsonl"):
        for j in p["judgments"]:
            if j["status"] in GROUNDING_STATUSES:
                per_path[(p["model"], j["status"])] += 1
                totals[p["model"]] += 1
    assert [r["model"] for r in coverage] == sorted(totals)
    for row in coverage:
        assert row["n_queries"] == 1 and row["n_triples"] == totals[row["model"]]
        for s in GROUNDING_STATUSES:
            assert row[s] == pytest.approx(per_path[(row["model"], s)] / row["n_triples"])
    assert grounding_coverage(read_scored([scored["score"]])) == []  # stored judge only


def test_source_relations_of_the_sample_outputs(scored, sample_files):
    relations = source_relations(read_query_relations(sample_files))
    queries = read_scored([scored["score"]])
    assert {q["query"] for q in queries} <= set(relations)
    for f in sample_files:
        for record in read_jsonl(f):
            pid = record["description"].split("__")[1]
            assert relations[record["query"]]["id"] == pid
    rows = relation_breakdown(queries, "source", relations)
    assert sum(r["n_queries"] for r in rows) == len(queries)
    assert any(r["relation"] == "P166 award received" for r in rows)
    by_query = relation_breakdown(queries, "query")
    assert sum(r["n_queries"] for r in by_query) == len(queries)


def test_cliche_tables_from_tig_output(tig_dir):
    clusters, anchors = read_tig([tig_dir])
    assert clusters and anchors
    groups = cliche_tables(clusters, anchors, top=4)
    assert {(g["task_id"], g["comparison_key"]) for g in groups} == {
        (t, k) for t in ("aut-brick", "aut-paperclip")
        for k in ("", "claude/claude-sonnet-4-20250514||gpt/gpt-5")
    }
    for g in groups:
        scores = [r["cliche_score"] for r in g["rows"]]
        assert scores == sorted(scores, reverse=True) and len(scores) <= 4
        mine = [c["cliche_score"] for c in clusters if c["task_id"] == g["task_id"]]
        if g["comparison_key"] == "":
            assert scores == sorted(mine, reverse=True)[:4]
        else:  # anchors: ranked questions attached to their clusters
            # AUT tasks: anchors speak of uses (SPEC §4.11, issue 15)
            assert all(r["checklist"].startswith("Does the answer find a use for")
                       for r in g["rows"])


def test_inputs_are_checked_at_the_boundary(tmp_path, scored):
    bad = tmp_path / "queries.jsonl"
    good = read_jsonl(scored["score"] / "queries.jsonl")[0]
    bad.write_text(json.dumps(good) + "\n" + json.dumps({**good, "utility": {"0.7": 1}}) + "\n")
    with pytest.raises(InputError, match=r"queries.jsonl: record 2: .*γ = 0.9"):
        read_scored([bad])
    bad.write_text(json.dumps({**good, "model": None}) + "\n")
    with pytest.raises(InputError, match="record 1: field 'model'"):
        read_scored([bad])
    with pytest.raises(InputError, match="file not found"):
        read_scored([tmp_path / "nowhere"])
    tig = tmp_path / "tig.jsonl"
    tig.write_text(json.dumps({"task_id": "t", "cliche_score": 0.5}) + "\n")
    with pytest.raises(InputError, match="tig.jsonl: record 1: neither a cluster"):
        read_tig([tig])
    tig.write_text(json.dumps({"id": "c", "task_id": "t", "cliche_score": "high"}) + "\n")
    with pytest.raises(InputError, match="field 'cliche_score'"):
        read_tig([tig])
    with pytest.raises(InputError, match="no clusters.jsonl or anchors.jsonl"):
        read_tig([tmp_path])
    d = tmp_path / "distinct"
    d.mkdir()
    (d / "distinct_paths.jsonl").write_text(json.dumps({"model": "m", "nu": 0.5}) + "\n")
    (d / "distinct_summary.csv").write_text("model,avg_nu,max_nu\nm,0.5,lots\n")
    with pytest.raises(InputError, match=r"distinct_summary.csv: line 2: field 'max_nu'"):
        read_distinct(d)


def test_missing_chromium_fails_loudly(monkeypatch, tmp_path):
    """Without Chromium the browser tests fail with the install command, never skip."""
    from tests.report.browser import chromium_paths

    monkeypatch.setenv("CREAGRAPH_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y chromium chromium-driver"):
        chromium_paths()


def test_report_shows_ceiling_and_judge_failures(tmp_path):
    """Ceiling fraction and graph path recall (`score --ceiling`) and the LLM judge's
    unjudged triples reach the report and leaderboard.csv (issue 13.3, 13.4)."""
    from creagraph.report import write_report

    queries = []
    for model, fraction, recall in (("a", 0.5, 0.25), ("b", 0.2, 0.0)):
        for u in (1.0, 2.0, 3.0):
            queries.append({
                "model": model, "query_key": f"index:{u}", "utility": {"0.7": u, "0.9": u},
                "n_kept": 1, "judge": "llm", "judge_errors": {"unparsed": 1, "failed": 2},
                "ceiling": {"fraction": {"0.7": fraction, "0.9": fraction},
                            "graph_path_recall": recall},
            })
    files = write_report(queries, tmp_path, n_resamples=100)
    page = files[0].read_text()
    assert "ceiling s<sub>0.9</sub>" in page and "graph recall" in page
    assert "50.0%" in page and "25.0%" in page
    assert "a: 3 unparsed, 6 failed" in page
    assert "3 queries × 2 models" in page
    board = {r["model"]: r for r in read_records(tmp_path / "leaderboard.csv")}
    assert float(board["a"]["ceiling_fraction_0.9"]) == 0.5
    assert float(board["b"]["graph_path_recall"]) == 0.0
    assert board["a"]["tier"] == "1"


def test_templates_ship_as_package_data():
    """Every template of the page is package data of ``creagraph.report.templates`` (a
    data-only package listed in pyproject), so a wheel (a non-editable install) carries
    them; the page loads them through the package (jinja2.PackageLoader)."""
    import fnmatch
    import tomllib
    from pathlib import Path

    import creagraph.report

    folder = Path(creagraph.report.__file__).parent / "templates"
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    setuptools = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]
    assert "creagraph.report.templates" in setuptools["packages"]
    globs = setuptools["package-data"]["creagraph.report.templates"]
    templates = sorted(p.name for p in folder.iterdir())
    assert "page.html.j2" in templates
    unshipped = [t for t in templates if not any(fnmatch.fnmatch(t, g) for g in globs)]
    assert not unshipped, f"add to [tool.setuptools.package-data]: {unshipped}"


def test_page_escapes_every_input_text(tmp_path):
    """Autoescape is on: markup in model names, relations, cluster labels, checklist
    questions and the title reaches the page as text (the browser test sees it rendered)."""
    import html

    from creagraph.report import write_report

    evil = "<script>x</script> & \"q\" 'a'"
    queries = [{"model": evil, "utility": {"0.7": u, "0.9": u}, "rel_b": f"<i>{u}</i>",
                "utility_curve": {"0.0": u, "1.0": u}, "n_kept": 1, "judge": evil,
                "triple_status": {"verified": 1, "unknown": 3}} for u in (1.0, 2.0)]
    queries[0]["judge"] = "kg"
    clusters = [{"id": "c", "task_id": "<task>", "summary": "<b>s</b>", "cliche_score": 0.5,
                 "comparison_key": "<a>||b"}]
    anchors = [{"task_id": "<task>", "comparison_key": "<a>||b", "cluster_id": "c",
                "cliche_score": 0.5, "text": "<u>question</u>?"}]
    page = write_report(queries, tmp_path, n_resamples=50, tig_clusters=clusters,
                        tig_anchors=anchors, title="<h1>t</h1>")[0].read_text()
    for tag in ("<script", "<i>", "<b>s", "<task>", "<a>", "<u>", "<h1>t"):
        assert tag not in page
    for text in ("&lt;script&gt;x&lt;/script&gt; &amp; ", "&lt;i&gt;1.0&lt;/i&gt;",
                 "&lt;b&gt;s&lt;/b&gt;", "&lt;u&gt;question&lt;/u&gt;?", "&lt;task&gt;",
                 "<title>&lt;h1&gt;t&lt;/h1&gt;</title>"):
        assert text in page
    assert evil in html.unescape(page)  # quotes escaped too, as text


def test_scored_files_are_the_records_json_form(scored):
    """Every line ``creagraph score`` writes is a record's JSON form, keys in order: read
    back through :mod:`creagraph.core.records` it is the same JSON; the report reads the
    same numbers from a record as from its JSON form (issue 30)."""
    from creagraph.core.records import PathRecord, QueryRecord, SummaryRow

    for run in ("score", "score-kg"):
        queries = read_jsonl(scored[run] / "queries.jsonl")
        for q in queries:
            assert json.dumps(QueryRecord.from_dict(q).to_dict()) == json.dumps(q)
        for p in read_jsonl(scored[run] / "paths.jsonl"):
            assert json.dumps(PathRecord.from_dict(p).to_dict()) == json.dumps(p)
        for row in read_records(scored[run] / "summary.csv"):
            summary = SummaryRow.from_dict(row)
            assert summary.mean("s_0.9") == float(row["s_0.9_mean"])
            assert summary.identity["judge"] == row["judge"]
        records = [QueryRecord.from_dict(q) for q in queries]
        assert leaderboard(records, n_resamples=50) == leaderboard(queries, n_resamples=50)
        assert grounding_coverage(records) == grounding_coverage(queries)
