"""Nothing a user owns is lost and two runs never mix, through the real `creagraph score`.

Issue 12: inputs inside --out, foreign output directories, concurrent runs, changed
settings, duplicate indices on re-runs, FIFO inputs, lone surrogates, round trips through
every format creagraph writes, out-of-range stored values and non-finite numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from creagraph.cli import main
from creagraph.core.io import read_jsonl, write_records
from creagraph.scoring.synthetic import write_synthetic_answers


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "creagraph"
    return [str(script)] if script.exists() else [sys.executable, "-m", "creagraph.cli"]


@pytest.fixture()
def answers(sample_files, tmp_path) -> Path:
    """The first three rows of one published sample file, model given with --model."""
    path = tmp_path / "in" / "answers.jsonl"
    path.parent.mkdir()
    path.write_text("".join(sample_files[0].read_text().splitlines(keepends=True)[:3]))
    return path


def _score(inputs, out, *extra) -> int:
    return main(["score", *map(str, inputs), "--model", "m", "--judge", "stored",
                 "--out", str(out), *extra])


def test_input_inside_out_under_an_output_name_is_never_written(answers, capsys):
    data = answers.parent / "queries.jsonl"
    answers.rename(data)
    before = data.read_bytes()
    assert _score([data], data.parent) == 2
    assert "output file 'queries.jsonl'" in capsys.readouterr().err
    assert data.read_bytes() == before
    assert sorted(os.listdir(data.parent)) == ["queries.jsonl"]


def test_a_users_directory_is_refused_untouched(answers, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.txt").write_text("my notes\n")
    (out / "summary.csv").write_text("my,table\n")
    assert _score([answers], out) == 2
    assert "not made by creagraph" in capsys.readouterr().err
    assert sorted(os.listdir(out)) == ["README.txt", "summary.csv"]
    assert (out / "README.txt").read_text() == "my notes\n"
    assert (out / "summary.csv").read_text() == "my,table\n"


def test_changed_settings_or_input_are_refused_and_fresh_starts_over(answers, tmp_path, capsys):
    out = tmp_path / "out"
    assert _score([answers], out) == 0
    first = read_jsonl(out / "queries.jsonl")
    capsys.readouterr()
    assert _score([answers], out, "--mode", "published") == 2
    err = capsys.readouterr().err
    assert '--mode: was "paper", now "published"' in err and "--fresh" in err
    assert _score([answers], out, "--factuality-threshold", "0.5") == 2
    assert "--factuality-threshold: was 1.0, now 0.5" in capsys.readouterr().err
    other = answers.with_name("other.jsonl")
    other.write_text(answers.read_text().splitlines(keepends=True)[0])
    assert _score([other], out) == 2
    assert "inputs: was [answers.jsonl" in capsys.readouterr().err
    assert read_jsonl(out / "queries.jsonl") == first  # nothing mixed in
    assert _score([answers], out, "--mode", "published", "--fresh") == 0
    fresh = read_jsonl(out / "queries.jsonl")
    assert len(fresh) == 3 and {q["mode"] for q in fresh} == {"published"}
    capsys.readouterr()
    assert _score([answers], out, "--mode", "published") == 0  # same settings: resumes
    assert "skipped 3 already scored" in capsys.readouterr().out


def test_a_duplicate_index_is_an_error_on_every_run(answers, tmp_path, capsys):
    rows = answers.read_text().splitlines(keepends=True)
    dup = answers.with_name("dup.jsonl")
    dup.write_text(rows[0] + rows[1] + rows[0])
    out = tmp_path / "out"
    for _ in range(2):
        assert _score([dup], out) == 2
        assert "row 3: duplicate query 'index:0'" in capsys.readouterr().err


def test_a_second_concurrent_run_is_refused_naming_the_holder(tmp_path, capsys):
    answers = write_synthetic_answers(tmp_path / "answers.jsonl", 150, 4, seed=5)
    out = tmp_path / "out"
    cmd = [*_cli(), "score", str(answers), "--judge", "stored", "--out", str(out)]
    env = {**os.environ, "CREAGRAPH_PROGRESS": "0"}
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not (out / "queries.jsonl").exists() or not (out / "queries.jsonl").stat().st_size:
            assert first.poll() is None, first.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert main(cmd[len(_cli()):]) == 2
        err = capsys.readouterr().err
        assert f"pid {first.pid} on " in err and "another `creagraph score` run" in err
        assert first.wait(timeout=600) == 0, first.stderr.read().decode()[-2000:]
    finally:
        if first.poll() is None:
            first.kill()
    queries = read_jsonl(out / "queries.jsonl")
    assert len(queries) == 150 == len({q["index"] for q in queries})


def test_fifo_input_is_read_once(answers, tmp_path):
    fifo = tmp_path / "answers.jsonl"
    os.mkfifo(fifo)
    text = answers.read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as handle:
            handle.write(text)

    writer = threading.Thread(target=feed, daemon=True)  # blocks until a reader opens
    writer.start()
    out = tmp_path / "out"
    cmd = [*_cli(), "score", str(fifo), "--model", "m", "--judge", "stored", "--out", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                              env={**os.environ, "CREAGRAPH_PROGRESS": "0"})
    except subprocess.TimeoutExpired:  # (the blocked command was killed)
        pytest.fail("score blocked on a FIFO input")
    writer.join(timeout=5)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(read_jsonl(out / "queries.jsonl")) == 3


def test_a_lone_surrogate_is_recorded_and_the_run_goes_on(answers, tmp_path):
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    from creagraph.scoring.parse import parse_answer

    entity = parse_answer(rows[1]["path_prediction"]).paths[0].triples[0][2]
    rows[1]["path_prediction"][0] = rows[1]["path_prediction"][0].replace(entity, entity + "\ud800")
    bad = answers.with_name("bad.jsonl")
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))  # "\ud800": valid JSON
    out = tmp_path / "out"
    assert _score([bad], out) == 0
    queries = read_jsonl(out / "queries.jsonl")
    assert [len(q["issues"]) for q in queries] == [0, 1, 0]
    issue = queries[1]["issues"][0]
    assert "lone surrogate" in issue and "path_prediction" in issue
    assert queries[1]["n_kept"] > 0
    assert any("\ufffd" in (p["path_string"] or "") for p in read_jsonl(out / "paths.jsonl"))


def test_every_format_creagraph_writes_scores_identically(answers, tmp_path):
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    results = {}
    for suffix in ("jsonl", "csv", "parquet"):
        path = tmp_path / f"answers.{suffix}"
        write_records(path, rows)
        out = tmp_path / f"out-{suffix}"
        assert _score([path], out) == 0
        results[suffix] = [
            {k: v for k, v in q.items() if k != "source"} for q in read_jsonl(out / "queries.jsonl")
        ]
    assert results["jsonl"][1]["n_kept"] > 0
    assert results["csv"] == results["jsonl"] == results["parquet"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("raw_salience_scores_0", 99, "field 'raw_salience_scores_0', path 0, triple 0: 99"),
        ("raw_salience_scores_0", -5, "field 'raw_salience_scores_0', path 0, triple 0: -5"),
        ("parsed_scores_factuality_0", 2.0, "field 'parsed_scores_factuality_0', path 0"),
    ],
)
def test_out_of_range_stored_values_are_refused(answers, tmp_path, capsys, field, value, message):
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    rows[1][field][0][0] = value
    bad = answers.with_name("bad.jsonl")
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _score([bad], tmp_path / "out") == 2
    assert f"bad.jsonl: row 2: {message}" in capsys.readouterr().err


def test_nan_index_is_refused(answers, tmp_path, capsys):
    lines = answers.read_text().splitlines()
    lines[2] = lines[2].replace('"index":', '"index":NaN,"was":', 1)
    assert "NaN" in lines[2]
    bad = answers.with_name("bad.jsonl")
    bad.write_text("\n".join(lines) + "\n")
    assert _score([bad], tmp_path / "out") == 2
    assert "bad.jsonl: row 3: field 'index'" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_report_refuses_non_finite_utilities(answers, tmp_path, capsys, value):
    out = tmp_path / "out"
    assert _score([answers], out) == 0
    lines = (out / "queries.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    text = json.dumps(record).replace(
        json.dumps({"0.7": record["utility"]["0.7"]})[1:-1], f'"0.7": {value}', 1
    )
    queries = tmp_path / "tampered.jsonl"
    queries.write_text("\n".join([lines[0], text, lines[2]]) + "\n")
    capsys.readouterr()
    assert main(["report", str(queries), "--out", str(tmp_path / "r"), "--resamples", "20"]) == 2
    assert "tampered.jsonl: record 2: field 'utility' (γ = 0.7)" in capsys.readouterr().err


def test_paths_per_answer_are_capped_with_a_reason(answers, tmp_path):
    out = tmp_path / "out"
    assert _score([answers], out, "--max-paths", "2") == 0
    queries = read_jsonl(out / "queries.jsonl")
    capped = [q for q in queries if q["issues"]]
    assert capped and all(q["n_paths"] == 2 for q in capped)
    assert "only the first 2 were scored (--max-paths)" in capped[0]["issues"][0]
    assert len(read_jsonl(out / "paths.jsonl")) == sum(q["n_paths"] for q in queries)


def test_distinct_and_report_never_write_into_a_users_directory(answers, tmp_path, capsys):
    out = tmp_path / "out"
    assert _score([answers], out) == 0
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.html").write_text("my page")
    (mine / "distinct_summary.csv").write_text("my,table\n")
    capsys.readouterr()
    assert main(["distinct", str(out), "--out", str(mine)]) == 2
    assert "not made by creagraph" in capsys.readouterr().err
    assert main(["report", str(out), "--out", str(mine), "--resamples", "20"]) == 2
    assert "not made by creagraph" in capsys.readouterr().err
    assert main(["report", str(out), "--out", str(out), "--resamples", "20"]) == 2
    assert "output of `creagraph score`" in capsys.readouterr().err
    assert (mine / "report.html").read_text() == "my page"
    assert sorted(os.listdir(mine)) == ["distinct_summary.csv", "report.html"]
