"""Scoring on a local Ray or Dask cluster gives the same records as the local loop.

Each run gets its own empty embedding cache, so every run really embeds its paths (the
driver for the local run, the worker processes for the distributed ones) and the
comparison checks the model's arithmetic, not a shared cache. Per-query utilities (all γ)
must agree to 1e-9, everything else exactly.
"""

from __future__ import annotations

import math
import sys
from itertools import count

import pytest

from creagraph.cli import main
from creagraph.core import embeddings
from creagraph.core.io import read_jsonl
from creagraph.scoring.distributed import batches, ordered_results

TOL = 1e-9
FLOATS = {"utility", "utility_curve", "mean_pairwise_distance", "mean_pairwise_raw_distance"}


def _score(args: list[str], out, cache_dir) -> dict[str, list[dict]]:
    """Run ``creagraph score`` with a fresh embedding cache; return its records."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    with pytest.MonkeyPatch.context() as mp, threadpool_limits(limits=None):  # restores BLAS
        mp.setenv("CREAGRAPH_CACHE_DIR", str(cache_dir))
        mp.setattr(embeddings, "_DEFAULT", None)  # the driver's embedder uses that cache too
        try:
            assert main([*args, "--out", str(out)]) == 0
        finally:
            torch.set_num_threads(threads)
    assert (out / "summary.csv").exists()
    assert (cache_dir / "embeddings.sqlite").exists()  # the run embedded into its own cache
    return {name: read_jsonl(out / f"{name}.jsonl") for name in ("queries", "paths")}


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def _assert_same(local: dict, remote: dict) -> None:
    for name in ("queries", "paths"):
        a, b = local[name], remote[name]
        assert len(a) == len(b) > 0
        for x, y in zip(a, b):  # input order is kept, so the files line up
            assert (x["model"], x["index"]) == (y["model"], y["index"])
            assert x.keys() == y.keys()
            for key in x:
                if name == "queries" and key in FLOATS:
                    assert _close(x[key], y[key]), (x["model"], x["index"], key, x[key], y[key])
                else:
                    assert x[key] == y[key], (x["model"], x["index"], key)
    assert any(q["n_kept"] >= 2 for q in local["queries"])  # distances really compared


@pytest.fixture(scope="module")
def score_args(sample_files):
    return ["score", *map(str, sample_files[:2]), "--judge", "stored"]


@pytest.fixture(scope="module")
def local_run(score_args, tmp_path_factory):
    base = tmp_path_factory.mktemp("local")
    return _score(score_args, base / "out", base / "cache")


@pytest.mark.distributed
def test_ray_workers_match_local_run(score_args, local_run, tmp_path):
    ray = pytest.importorskip("ray")
    args = [*score_args, "--engine", "ray", "--workers", "2"]
    remote = _score(args, tmp_path / "out", tmp_path / "cache")
    _assert_same(local_run, remote)
    assert not ray.is_initialized()  # the private cluster was shut down


@pytest.mark.distributed
def test_dask_workers_match_local_run(score_args, local_run, tmp_path):
    remote = _score([*score_args, "--workers", "2"], tmp_path / "out", tmp_path / "cache")
    _assert_same(local_run, remote)


def test_ordered_results_reads_lazily_and_keeps_order():
    pulled = count()

    def rows():
        for i in range(100):
            next(pulled)
            yield i

    submitted: list[list[int]] = []

    def submit(chunk):
        submitted.append(chunk)
        return [x * 2 for x in chunk]

    results = ordered_results(batches(rows(), 4), submit, lambda handle: handle, 3)
    first = next(results)
    assert first == 0
    consumed = next(pulled)  # rows drawn from the input so far (+1 for this call)
    assert consumed <= 3 * 4 + 1
    assert len(submitted) == 3
    assert list(results) == [2 * i for i in range(1, 100)]


def test_batches_rejects_bad_size():
    with pytest.raises(ValueError):
        list(batches([1], 0))
    assert list(batches([], 3)) == []


def test_engine_option_errors(sample_files, tmp_path, capsys):
    base = ["score", str(sample_files[0]), "--judge", "stored", "--out", str(tmp_path)]
    assert main([*base, "--engine", "spark"]) == 2
    # an enum: click lists the valid values
    assert "'spark' is not one of 'local', 'dask', 'ray'" in capsys.readouterr().err
    assert main([*base, "--engine", "local", "--workers", "2"]) == 2
    assert "need --engine dask or --engine ray" in capsys.readouterr().err
    assert main([*base, "--engine", "ray", "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    assert "Dask scheduler address" in capsys.readouterr().err


def test_ray_unreachable_address_is_a_clear_error(sample_files, tmp_path, capsys):
    pytest.importorskip("ray")
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["score", str(sample_files[0]), "--judge", "stored", "--out", str(tmp_path)]
    assert main([*args, "--engine", "ray", "--address", f"127.0.0.1:{port}"]) == 2
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in capsys.readouterr().err
    assert main([*args, "--engine", "ray", "--address", "nowhere"]) == 2
    assert "--address must be host:port" in capsys.readouterr().err


def test_ray_missing_is_a_clear_error(sample_files, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    args = ["score", str(sample_files[0]), "--judge", "stored", "--out", str(tmp_path)]
    assert main([*args, "--engine", "ray"]) == 2
    assert "--engine ray needs Ray installed" in capsys.readouterr().err


@pytest.mark.distributed
def test_ray_worker_error_reaches_the_user(sample_files, tmp_path, capsys):
    """A scorer that cannot be built on a worker fails the run with the worker's own error."""
    ray = pytest.importorskip("ray")
    missing = tmp_path / "no-store"
    args = ["score", str(sample_files[0]), "--judge", "stored", "--store", str(missing)]
    assert main([*args, "--engine", "ray", "--workers", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {missing}: no creagraph store here"), err
    assert not (tmp_path / "queries.jsonl").exists() or not read_jsonl(tmp_path / "queries.jsonl")
    assert not ray.is_initialized()  # shut down on the error too


@pytest.mark.distributed
@pytest.mark.parametrize("engine", ["dask", "ray"])
def test_cluster_reports_the_llm_judges_usage_as_the_local_engine(engine, tmp_path,
                                                                  sample_files, monkeypatch):
    """The workers' LLM judge requests and tokens reach run.json and the cost estimate,
    as the local engine's do (each run with its own empty reply cache)."""
    import json

    from tests.chatserver import ChatServer
    from tests.scoring.test_llm_judge_client import verdicts

    if engine == "ray":
        pytest.importorskip("ray")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(sample_files[0].read_text().splitlines(keepends=True)[:3]))
    usage = {}
    with ChatServer(verdicts) as server:
        args = ["score", str(answers), "--model", "M", "--judge", "llm", "--llm-base-url",
                server.url, "--llm-model", "judge-m", "--embedder", "hashing",
                "--price-input", "1", "--price-output", "2"]
        for name in ("local", engine):
            monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / f"cache-{name}"))
            cluster = ["--engine", name, "--workers", "2"] if name != "local" else []
            assert main([*args, *cluster, "--out", str(tmp_path / name)]) == 0
            run = json.loads((tmp_path / name / "run.json").read_text())
            usage[name] = run["llm_judge"]
    local, remote = usage["local"], usage[engine]
    assert local["requests"] > 0 and local["sent"] == local["requests"]
    for key in ("requests", "sent", "cached", "failed", "total_tokens", "sent_prompt_tokens"):
        assert remote[key] == local[key], key
    assert remote["cost"] == local["cost"] and remote["cost"] is not None
