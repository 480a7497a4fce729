"""Models scored under different judges, modes or query sets are never ranked together
(issue 24): one table per comparison group in leaderboard.csv and on the page, and the
query set of a model by the rule of ``creagraph.core.manifest``."""

from __future__ import annotations

import json

from creagraph.core.io import read_jsonl, read_records
from creagraph.report import leaderboard, read_scored, write_report
from tests.clirun import run


def _scored(model, judge, queries, value=1.0):
    return [{"model": model, "query": q, "query_key": f"text:{q}", "judge": judge,
             "mode": "paper", "utility": {"0.7": value, "0.9": value}, "n_kept": 1}
            for q in queries]


def test_models_judged_differently_are_separate_tables(tmp_path):
    queries = (_scored("a", "kg", ["Q1", "Q2"]) + _scored("c", "kg", ["Q1", "Q2"], 2.0)
               + _scored("b", "stored", ["Q1", "Q2"], 9.0))
    table = leaderboard(queries, n_resamples=50)
    assert [(r["comparison_group"], r["model"], r["tier"]) for r in table] == [
        (1, "c", 1), (1, "a", 2), (2, "b", 1)]  # b's 9.0 is ranked against nobody
    write_report(queries, tmp_path / "r", n_resamples=50)
    csv = read_records(tmp_path / "r" / "leaderboard.csv")
    assert [(r["comparison_group"], r["model"]) for r in csv] == [("1", "c"), ("1", "a"),
                                                                   ("2", "b")]
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "Table 1: kg judge, paper mode" in page and "Table 2: stored judge" in page
    assert "Not ranked against table 1 (judge kg vs stored)." in page
    assert page.count("<table>") >= 2


def test_models_asked_different_query_sets_are_separate_tables(tmp_path):
    one = _scored("a", "kg", ["Q1", "Q2"])
    two = _scored("b", "kg", ["Q3", "Q4"])
    for i, rows in enumerate((one, two)):
        (tmp_path / f"s{i}").mkdir()
        (tmp_path / f"s{i}" / "queries.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows))
    scored = read_scored([tmp_path / "s0", tmp_path / "s1"])  # two score runs
    table = leaderboard(scored, n_resamples=50)
    assert sorted(r["comparison_group"] for r in table) == [1, 2]
    assert table[0]["query_set_size"] == table[1]["query_set_size"] == 2
    write_report(scored, tmp_path / "r", n_resamples=50)
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert f"query_set {table[0]['query_set']} vs {table[1]['query_set']}" in page
    # the same records given as one run share the union of their queries
    table = leaderboard(one + two, n_resamples=50)
    assert {r["comparison_group"] for r in table} == {1}
    assert table[0]["query_set_size"] == 4


def test_published_samples_scored_together_are_one_group(scored):
    summary = read_records(scored["score"] / "summary.csv")
    assert len(summary) == 4 and len({r["query_set"] for r in summary}) == 1
    assert {r["query_set_size"] for r in summary} == {"22"}  # 20 each, 22 in all
    table = leaderboard(read_scored([scored["score"]]), n_resamples=50)
    assert {r["comparison_group"] for r in table} == {1}
    assert table[0]["query_set"] == summary[0]["query_set"]  # summary and report agree


def test_score_query_set_names_the_set_and_refuses_an_outlier(capsys, tmp_path,
                                                                sample_files):
    """Two published models scored in separate runs name different sets; scored against
    the same --query-set they are one group; an answer outside the set is refused."""
    files = []
    for n, source in enumerate(sample_files[:2]):
        rows = read_jsonl(source)[n * 2: n * 2 + 2]  # different queries
        files.append(tmp_path / source.name)
        files[-1].write_text("".join(json.dumps(r) + "\n" for r in rows))
    every = tmp_path / "set.jsonl"
    every.write_text("".join(json.dumps({"query": r["query"]}) + "\n"
                             for f in files for r in read_jsonl(f)))
    for i, f in enumerate(files):
        code, out, err = run(capsys, "score", f, "--judge", "stored", "--mode", "published",
                             "--out", tmp_path / f"apart{i}")
        assert code == 0, err
        assert "(2 queries of 2 in query set " in out
        code, out, err = run(capsys, "score", f, "--judge", "stored", "--mode", "published",
                             "--query-set", every, "--out", tmp_path / f"named{i}")
        assert code == 0, err
        assert "(2 queries of 4 in query set " in out
    apart = leaderboard(read_scored([tmp_path / "apart0", tmp_path / "apart1"]),
                        n_resamples=50)
    assert sorted(r["comparison_group"] for r in apart) == [1, 2]
    named = leaderboard(read_scored([tmp_path / "named0", tmp_path / "named1"]),
                        n_resamples=50)
    assert {r["comparison_group"] for r in named} == {1}
    assert {r["query_set_size"] for r in named} == {4}
    summary = read_records(tmp_path / "named0" / "summary.csv")
    assert summary[0]["query_set"] == named[0]["query_set"]
    marker = json.loads((tmp_path / "named0" / ".creagraph-out.json").read_text())
    assert marker["fingerprint"]["--query-set"]["sha256"]
    # an answer outside the named set: refused, naming the file and line
    code, _, err = run(capsys, "score", files[1], "--judge", "stored", "--mode", "published",
                       "--query-set", files[0], "--out", tmp_path / "bad")
    assert code == 2 and f"{files[1]}: line 1: query " in err
    assert f"is not in the query set {files[0]}" in err
