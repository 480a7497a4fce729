"""Interruption safety of scoring: SIGKILL mid-run, restart, same output as one clean run.

The main test runs the real ``creagraph score`` CLI (stored judge, real all-MiniLM-L6-v2
embeddings, the first rows of the published sample outputs) in a subprocess, kills it
with SIGKILL twice at different points, restarts it, and compares everything with an
uninterrupted run in another process: query and path records, summary, and the
embedding cache (SQLite integrity, and every cached vector against the clean run's
fresh encodes).
"""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from creagraph.core.embeddings import HashingEmbedder
from creagraph.core.io import iter_jsonl, read_jsonl
from creagraph.scoring.api import ScorerConfig, build_scorer
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.pipeline import Scorer, score_files, summarize
from creagraph.scoring.synthetic import write_synthetic_answers

# the stored judge in paper mode; threads=None leaves the test process's thread pools alone
STORED = ScorerConfig(judge="stored", mode="paper", threads=None)

# Fields computed from embeddings (distances and utilities). Embeddings are
# deterministic in one process configuration, but a restarted run may embed a query's
# strings in a different batch (some already cached): compare these within float32 noise.
_EMBEDDING_FIELDS = {
    "utility",
    "utility_curve",
    "mean_pairwise_distance",
    "mean_pairwise_raw_distance",
    "ceiling",
}


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "creagraph"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from creagraph.cli import main; sys.exit(main())"]


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.endswith(b"\n"))
    except FileNotFoundError:
        return 0


def _run_and_kill(cmd: list[str], env: dict, queries: Path, at_least: int) -> int:
    """Start ``cmd``; SIGKILL it as soon as ``queries`` has ``at_least`` complete lines.
    Returns the number of lines seen at the kill (fails if the run finished first)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            n = _lines(queries)
            if n >= at_least:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                return n
            if proc.poll() is not None:
                raise AssertionError(
                    f"run ended (rc {proc.returncode}) before {at_least} queries were written: "
                    + proc.stderr.read().decode()[-2000:]
                )
            time.sleep(0.02)
        raise AssertionError("timed out waiting for queries to be written")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _by_key(records: list[dict], key) -> dict:
    out: dict = {}
    for r in records:
        k = key(r)
        assert k not in out, f"duplicate record {k}"
        out[k] = r
    return out


def _assert_same_record(a: dict, b: dict, where) -> None:
    assert set(a) == set(b), where
    for field in a:
        if field in _EMBEDDING_FIELDS:
            _assert_close(a[field], b[field], (where, field))
        else:
            assert a[field] == b[field], (where, field)


def _assert_close(a, b, where) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for k in a:
            _assert_close(a[k], b[k], where)
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6), (where, a, b)
    else:
        assert a == b, where


def _cache_vectors(path: Path) -> dict[bytes, np.ndarray]:
    with sqlite3.connect(str(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT key, vec FROM vectors").fetchall()
    return {bytes(k): np.frombuffer(v, dtype=np.float32) for k, v in rows}


@pytest.mark.slow  # ~35 s: kills and restarts real scoring processes
def test_sigkill_and_restart_gives_the_uninterrupted_output(sample_files, tmp_path):
    def run_env(cache: Path) -> dict:
        return {**os.environ, "CREAGRAPH_CACHE_DIR": str(cache), "CREAGRAPH_PROGRESS": "0"}

    # the first 10 rows of each published sample file (same names: the model comes from
    # the file name), to keep four model loads and ~600 path embeddings the whole cost
    inputs = []
    for source in sample_files:
        subset = tmp_path / "inputs" / source.name
        subset.parent.mkdir(exist_ok=True)
        subset.write_text("".join(source.read_text().splitlines(keepends=True)[:10]))
        inputs.append(subset)

    def args(out: Path) -> list[str]:
        return [*_cli(), "score", *map(str, inputs), "--judge", "stored", "--out", str(out)]

    total = len(read_answers(inputs))
    killed_out, killed_cache = tmp_path / "killed", tmp_path / "cache-killed"
    env = run_env(killed_cache)
    first = _run_and_kill(args(killed_out), env, killed_out / "queries.jsonl", 5)
    second = _run_and_kill(args(killed_out), env, killed_out / "queries.jsonl", first + 12)
    assert 5 <= first < second < total == 40
    done = subprocess.run(args(killed_out), env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    skipped = int(done.stdout.split("skipped ")[1].split()[0])
    assert second <= skipped < total  # the rows done before the last kill were not redone

    clean_out, clean_cache = tmp_path / "clean", tmp_path / "cache-clean"
    clean = subprocess.run(args(clean_out), env=run_env(clean_cache), capture_output=True)
    assert clean.returncode == 0, clean.stderr[-2000:]

    q_key = lambda r: (r["model"], r["index"])  # noqa: E731
    p_key = lambda r: (r["model"], r["index"], r["path_index"])  # noqa: E731
    killed_q = _by_key(read_jsonl(killed_out / "queries.jsonl"), q_key)
    clean_q = _by_key(read_jsonl(clean_out / "queries.jsonl"), q_key)
    assert len(clean_q) == total and set(killed_q) == set(clean_q)
    for k in clean_q:
        _assert_same_record(killed_q[k], clean_q[k], k)
    killed_p = _by_key(read_jsonl(killed_out / "paths.jsonl"), p_key)
    clean_p = _by_key(read_jsonl(clean_out / "paths.jsonl"), p_key)
    assert set(killed_p) == set(clean_p)
    assert sum(q["n_paths"] for q in clean_q.values()) == len(clean_p)
    assert all(killed_p[k] == clean_p[k] for k in clean_p)  # no embedding-derived fields

    with (killed_out / "summary.csv").open() as a, (clean_out / "summary.csv").open() as b:
        rows_a, rows_b = list(csv.DictReader(a)), list(csv.DictReader(b))
    assert len(rows_a) == len(rows_b) == 4
    for ra, rb in zip(rows_a, rows_b):
        for field in ra:
            if field in ("judge", "mode", "creagraph_version", "query_set"):
                assert ra[field] == rb[field], field  # the comparability columns (issue 24)
            elif ra[field] and field not in ("model", "n_queries"):
                assert math.isclose(float(ra[field]), float(rb[field]), rel_tol=1e-5), field
            else:
                assert ra[field] == rb[field]

    # The cache survived two SIGKILLs: integrity ok, the same keys as a clean run's cache,
    # every vector equal to the clean process's fresh encode of the same text.
    killed_vectors = _cache_vectors(killed_cache / "embeddings.sqlite")
    clean_vectors = _cache_vectors(clean_cache / "embeddings.sqlite")
    assert clean_vectors and set(killed_vectors) == set(clean_vectors)
    worst = max(float(np.abs(killed_vectors[k] - clean_vectors[k]).max()) for k in clean_vectors)
    assert worst < 1e-5, worst
    print(f"largest cached-vector difference to a clean run: {worst:.3g}")
    assert all(killed_vectors[k].shape == (384,) for k in killed_vectors)


def _synthetic_cmd(answers: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "creagraph.scoring.synthetic",
        str(out),
        "--answers",
        str(answers),
    ]


def test_many_kills_on_a_synthetic_input(tmp_path):
    """Cheap model-free run (HashingEmbedder): killed five times at growing points."""
    answers = write_synthetic_answers(tmp_path / "answers.jsonl", 300, 12, seed=3)
    env = {**os.environ, "CREAGRAPH_PROGRESS": "0"}
    killed = tmp_path / "killed"
    queries = killed / "scored" / "queries.jsonl"
    seen = 0
    for target in (1, 40, 90, 150, 230):
        seen = _run_and_kill(_synthetic_cmd(answers, killed), env, queries, max(target, seen + 1))
    assert seen < 300
    done = subprocess.run(_synthetic_cmd(answers, killed), env=env, capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]
    clean = tmp_path / "clean"
    assert subprocess.run(_synthetic_cmd(answers, clean), env=env).returncode == 0
    for name in ("queries.jsonl", "paths.jsonl"):
        a = (killed / "scored" / name).read_text().splitlines()
        b = (clean / "scored" / name).read_text().splitlines()
        assert len(a) == len(set(a)) and sorted(a) == sorted(b), name
    assert (killed / "scored" / "summary.csv").read_text() == (
        clean / "scored" / "summary.csv"
    ).read_text()


def _scored(tmp_path, n=6) -> tuple[list, Scorer, Path]:
    answers = write_synthetic_answers(tmp_path / "answers.jsonl", n, 3, seed=1)
    rows = read_answers([answers])
    scorer = build_scorer(STORED, embedder=HashingEmbedder(32))
    out = tmp_path / "out"
    score_files(rows, scorer, out)
    return rows, scorer, out


@pytest.mark.parametrize(
    "damage",
    ["query_without_all_paths", "paths_without_query", "duplicate_query", "no_final_newline"],
)
def test_resume_repairs_every_inconsistent_state(tmp_path, damage):
    rows, scorer, out = _scored(tmp_path)
    reference = {n: (out / n).read_text() for n in ("queries.jsonl", "paths.jsonl")}
    queries, paths = out / "queries.jsonl", out / "paths.jsonl"
    q_lines = queries.read_text().splitlines(keepends=True)
    p_lines = paths.read_text().splitlines(keepends=True)
    if damage == "query_without_all_paths":  # e.g. a power loss lost a path line
        paths.write_text("".join(p_lines[:4] + p_lines[5:]))
        expect_scored = 1
    elif damage == "paths_without_query":  # killed after the paths, before the query
        queries.write_text("".join(q_lines[:-1]))
        expect_scored = 1
    elif damage == "duplicate_query":
        queries.write_text("".join(q_lines + q_lines[:1]))
        expect_scored = 0
    else:  # the last query complete but its newline not written
        queries.write_text("".join(q_lines)[:-1])
        expect_scored = 1
    counts = score_files(iter(rows), scorer, out)
    assert counts["scored"] == expect_scored and counts["queries"] == len(rows)
    for name, text in reference.items():
        lines = (out / name).read_text().splitlines()
        assert len(lines) == len(set(lines)) and sorted(lines) == sorted(text.splitlines())


def test_summary_streams_and_matches_statistics(tmp_path):
    import statistics

    _, _, out = _scored(tmp_path, n=40)
    queries = read_jsonl(out / "queries.jsonl")
    table = summarize(iter_jsonl(out / "queries.jsonl"))
    assert table == summarize(list(reversed(queries)))  # order does not matter
    (row,) = table
    values = [q["utility"]["0.9"] for q in queries]
    assert row["n_queries"] == 40
    assert row["s_0.9_mean"] == statistics.fmean(values)
    assert row["s_0.9_sd"] == statistics.stdev(values)
    kept = [q["n_kept"] for q in queries]
    assert row["n_kept_mean"] == statistics.fmean(kept) and row["n_kept_sd"] == statistics.stdev(
        kept
    )
    written = list(csv.DictReader((out / "summary.csv").open()))
    assert float(written[0]["s_0.9_mean"]) == row["s_0.9_mean"]
    assert json.loads(json.dumps(table))  # plain values only


def test_truncate_partial_line_and_atomic_write(tmp_path):
    import stat

    from creagraph.core.io import atomic_write, truncate_partial_line

    f = tmp_path / "a.jsonl"
    good = '{"a": 1}\n' + '{"b": "' + "x" * 200_000 + '"}\n'
    f.write_text(good + '{"c": "' + "y" * 150_000)  # partial line longer than a read chunk
    assert truncate_partial_line(f) == 150_007 and f.read_text() == good
    assert truncate_partial_line(f) == 0 and f.read_text() == good
    f.write_text("no newline at all")
    assert truncate_partial_line(f) == 17 and f.read_text() == ""
    assert truncate_partial_line(tmp_path / "missing.jsonl") == 0

    target = tmp_path / "summary.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "summary.csv"]
    with atomic_write(target) as handle:
        handle.write("new\n")
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0o600
