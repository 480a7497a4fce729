"""`creagraph queries paths --precision` (issue 31): fp32 — the default — gives the output it
gave before the option; bf16, where the processor has it, embeds the path strings in bf16
(cached apart from fp32) and gives nearly the same ceilings; anything else is refused."""

from __future__ import annotations

import json

import pytest

from creagraph.cli import main
from creagraph.core.embeddings import bf16_support


@pytest.fixture
def queries(store_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CREAGRAPH_PRECISION", raising=False)
    path = tmp_path / "q.jsonl"
    args = ["queries", "generate", "--store", str(store_dir), "--n", "3", "--seed", "5"]
    assert main([*args, "--out", str(path)]) == 0
    return path


def _paths(store_dir, queries, out, *extra) -> list[dict]:
    args = ["queries", "paths", str(queries), "--store", str(store_dir), "--out", str(out)]
    assert main([*args, "--k", "2", *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _record(out) -> dict:
    return json.loads(out.with_name(f".{out.name}.creagraph-out.json").read_text())


def test_fp32_is_the_default_and_unchanged(store_dir, queries, tmp_path):
    from creagraph.core.embeddings import default_embedder
    from creagraph.kg import EmbeddedKG
    from creagraph.querygen.oracle import read_query_records, write_oracle_records

    default = tmp_path / "default.jsonl"
    _paths(store_dir, queries, default)
    chosen = tmp_path / "fp32.jsonl"
    _paths(store_dir, queries, chosen, "--precision", "fp32")
    assert default.read_bytes() == chosen.read_bytes()
    # the library call without the option, with an explicit fp32 embedder
    direct = tmp_path / "direct.jsonl"
    kg = EmbeddedKG(store_dir)
    write_oracle_records(kg, read_query_records(queries), direct, k=2, precision=None)
    kg.close()
    assert direct.read_bytes() == default.read_bytes()
    assert default_embedder().name == "sentence-transformers/all-MiniLM-L6-v2"
    assert "precision" in json.dumps(_record(default)) and "bf16" not in json.dumps(
        _record(default)
    )


@pytest.mark.skipif(not bf16_support()[0], reason="no native bf16 on this processor")
def test_bf16_when_chosen(store_dir, queries, tmp_path):
    fp32 = _paths(store_dir, queries, tmp_path / "fp32.jsonl")
    bf16 = _paths(store_dir, queries, tmp_path / "bf16.jsonl", "--precision", "bf16")
    assert "bf16" in json.dumps(_record(tmp_path / "bf16.jsonl"))
    assert [r["query_id"] for r in bf16] == [r["query_id"] for r in fp32]
    for a, b in zip(fp32, bf16):
        assert a["n_paths"] == b["n_paths"]
        for gamma in ("0.7", "0.9"):
            assert b["ceiling"][gamma] == pytest.approx(a["ceiling"][gamma], rel=0.02, abs=0.05)
    # vectors of both precisions are cached, under different names
    import sqlite3

    with sqlite3.connect(tmp_path / "cache" / "embeddings.sqlite") as conn:
        (n,) = conn.execute("SELECT count(*) FROM vectors").fetchone()
    listed = {p["text"] for r in fp32 for p in r["paths"]}
    assert listed and n >= 2 * len(listed)


def test_unknown_precision_is_refused(store_dir, queries, tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    args = ["queries", "paths", str(queries), "--store", str(store_dir), "--out", str(out)]
    assert main([*args, "--precision", "fp16"]) == 2
    assert "--precision must be one of fp32, bf16" in capsys.readouterr().err
    assert not out.exists()


def test_threads_give_the_same_output_and_bad_counts_are_refused(
    store_dir, queries, tmp_path, capsys, monkeypatch
):
    """One thread (the default) and two give byte-identical fp32 output on this machine; the
    vectors are computed afresh each time (separate caches)."""
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}.jsonl"
        args = ["queries", "paths", str(queries), "--store", str(store_dir), "--out", str(out)]
        monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / f"cache-{threads}"))
        assert main([*args, "--k", "2", "--threads", threads]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    bad = ["queries", "paths", str(queries), "--store", str(store_dir), "--out", str(out)]
    assert main([*bad, "--threads", "0"]) == 2
    assert "--threads must be at least 1" in capsys.readouterr().err
