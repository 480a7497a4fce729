"""Issue 23, silently wrong numbers: model names differing only by whitespace are one
leaderboard row; a damaged vector cache is an error naming it (not NaN utilities); a NaN
utility is never left out of a summary mean that counts its query."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from creagraph.core.io import InputError, read_jsonl, read_records
from creagraph.scoring.pipeline import summarize

from ..clirun import run


def _answers(sample_files, tmp_path, names):
    rows = [json.loads(line) for line in sample_files[0].open()][: len(names)]
    path = tmp_path / "answers.jsonl"
    with path.open("w") as handle:
        for row, name in zip(rows, names, strict=True):
            handle.write(json.dumps({**row, "model": name}) + "\n")
    return path


def test_model_names_differing_by_whitespace_are_one_row_and_damaged_vectors_refused(
    sample_files, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    answers = _answers(sample_files, tmp_path, ["gpt-x", "gpt-x ", " gpt-x"])
    code, _, err = run(capsys, "score", answers, "--judge", "stored", "--out", tmp_path / "o")
    assert code == 0, err
    queries = read_jsonl(tmp_path / "o" / "queries.jsonl")
    assert len(queries) == 3 and {q["model"] for q in queries} == {"gpt-x"}
    summary = read_records(tmp_path / "o" / "summary.csv")
    assert [r["model"] for r in summary] == ["gpt-x"] and summary[0]["n_queries"] == "3"
    # the vectors damaged in the cache: an error naming the cache, not NaN utilities
    cache = tmp_path / "cache" / "embeddings.sqlite"
    with sqlite3.connect(cache) as conn:
        (blob,) = conn.execute("SELECT vec FROM vectors LIMIT 1").fetchone()
        nan = np.full(len(blob) // 4, np.nan, dtype=np.float32).tobytes()
        conn.execute("UPDATE vectors SET vec = ?", (nan,))
    code, _, err = run(capsys, "score", answers, "--judge", "stored", "--out", tmp_path / "p")
    assert code == 2 and err.count("\n") == 1, err
    assert str(cache) in err and "not finite" in err, err


def test_summary_refuses_a_nan_utility_it_would_drop_from_the_mean():
    q = {"model": "m", "query_key": "q1", "utility": {"0.7": 0.5, "0.9": 0.25},
         "max_quality": 3.0, "mean_pairwise_distance": None,
         "mean_pairwise_raw_distance": None, "n_kept": 2, "n_paths": 3}
    bad = {**q, "query_key": "q2", "utility": {"0.7": float("nan"), "0.9": 0.25}}
    assert summarize([q, q])[0]["n_queries"] == 2
    with pytest.raises(InputError, match=r"query 'q2' of model 'm': utility s_0\.7 is nan"):
        summarize([q, bad])
