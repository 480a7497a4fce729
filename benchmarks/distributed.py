"""Distributed scoring benchmark: scaling of ``creagraph score --engine ray`` from 1 to 2 workers.

Run: ``.venv/bin/python benchmarks/distributed.py [--judge kg|stored] [--rows N] [--dask]``.

Scores the shared CREATE sample outputs (all 80 rows by default, repeated to ``--rows``
with fresh query indices when more are asked for) with the kg judge on the embedded store
built from the shared slice, each run with its own empty embedding cache, and prints for:

- the local in-process loop (reference; ``--engine local``),
- Ray with 1 worker (the named baseline) and with 2 workers (``--dask``: Dask too),

the start-up time (cluster start, workers loading the model and opening the graph, up to
the first result), the steady-state throughput after the first result in queries/s and
paths/s, the end-to-end wall time, and the speed-up of each run's steady-state throughput
against Ray with 1 worker. It also checks that every run wrote the same records as the
local loop (utilities to 1e-9). On a machine with 2 cores shared with other work the
ideal speed-up is below 2; the load average is printed next to the figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from creagraph.core import embeddings
from creagraph.core.paths import default_slice_path, default_store_dir
from creagraph.kg import import_dumps
from creagraph.scoring.api import build_scorer
from creagraph.scoring.distributed import (
    ScorerConfig,
    dask_client,
    dask_runner,
    ray_cluster,
    ray_runner,
)
from creagraph.scoring.inputs import iter_answers

BASELINE = "ray, 1 worker"


def sample_rows(n: int) -> list:
    """``n`` answer rows: the shared sample outputs, repeated with fresh indices if needed."""
    folder = default_slice_path().parents[2] / "external" / "create-leaderboard"
    files = sorted((folder / "sample_outputs").glob("*.jsonl"))
    base = list(iter_answers(files, None))
    rows = []
    for i in range(n):
        row = base[i % len(base)]
        copy = i // len(base)
        rows.append(row if copy == 0 else dataclasses.replace(row, index=f"{row.index}#{copy}"))
    return rows


def timed(rows: list, run: Callable[[Iterable[Any]], Iterator[Any]]) -> dict[str, Any]:
    """Consume ``run(rows)``, timing the first result and the rest."""
    start = time.perf_counter()
    results, first = [], None
    for result in run(rows):
        if first is None:
            first = time.perf_counter()
        results.append(result)
    end = time.perf_counter()
    later = results[1:]
    return {
        "results": results,
        "startup_s": first - start,
        "wall_s": end - start,
        "queries_per_s": len(later) / (end - first),
        "paths_per_s": sum(len(r.paths) for r in later) / (end - first),
    }


def one_run(
    name: str,
    rows: list,
    config: ScorerConfig,
    cluster: Callable[[], AbstractContextManager],
    runner: Callable[[Any], Callable[[Iterable[Any]], Iterator[Any]]],
) -> dict[str, Any]:
    """Time one engine with its own empty embedding cache (cluster start-up included)."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CREAGRAPH_CACHE_DIR"] = cache
        embeddings._DEFAULT = None  # the driver's embedder (local loop) uses it too
        start = time.perf_counter()
        with cluster() as handle:
            cluster_s = time.perf_counter() - start
            figures = timed(rows, runner(handle))
        figures["startup_s"] += cluster_s
        figures["wall_s"] += cluster_s
    figures["name"] = name
    return figures


def same_records(a: list, b: list) -> bool:
    """Everything equal, per-query utilities and distances to 1e-9."""

    def close(x, y) -> bool:
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(close(x[k], y[k]) for k in x)
        if isinstance(x, float) and isinstance(y, float):
            return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)
        return x == y

    return len(a) == len(b) and all(
        r.paths == s.paths and close(r.query, s.query) for r, s in zip(a, b)
    )


def main() -> None:
    # This script's folder is first on sys.path and its name would shadow the `distributed`
    # package (Dask), so it comes off before anything imports Dask.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default="kg", choices=["kg", "stored"])
    parser.add_argument("--store", type=Path, default=default_store_dir())
    parser.add_argument("--rows", type=int, default=80, help="queries to score per run")
    parser.add_argument("--batch-size", type=int, default=4, help="queries per batch")
    parser.add_argument("--dask", action="store_true", help="also time Dask with 1 and 2")
    args = parser.parse_args()
    os.environ.setdefault("CREAGRAPH_PROGRESS", "0")
    store = None
    if args.judge == "kg":
        import_dumps([default_slice_path()], args.store, show_progress=False)
        store = str(args.store.resolve())
    config = ScorerConfig(judge=args.judge, store=store)
    rows = sample_rows(args.rows)
    print(
        f"{len(rows)} queries, judge {args.judge}, batches of {args.batch_size}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start"
    )

    def local_runner(_handle):
        scorer = build_scorer(config)
        return lambda todo: (scorer.score(r) for r in todo)

    runs = [one_run("local loop", rows, config, nullcontext, local_runner)]
    for n in (1, 2):
        runs.append(
            one_run(
                f"ray, {n} worker{'s' * (n > 1)}",
                rows,
                config,
                lambda n=n: ray_cluster(workers=n),
                lambda _ray, n=n: ray_runner(config, build_scorer, n, args.batch_size),
            )
        )
    if args.dask:
        for n in (1, 2):
            runs.append(
                one_run(
                    f"dask, {n} worker{'s' * (n > 1)}",
                    rows,
                    config,
                    lambda n=n: dask_client(workers=n),
                    lambda client: dask_runner(client, config, build_scorer, args.batch_size),
                )
            )
    baseline = next(r for r in runs if r["name"] == BASELINE)
    local = runs[0]["results"]
    print(
        f"{'run':<16}{'start-up s':>11}{'queries/s':>11}{'paths/s':>10}{'wall s':>9}"
        f"{'speed-up':>10}  same as local"
    )
    for r in runs:
        ratio = r["queries_per_s"] / baseline["queries_per_s"]
        print(
            f"{r['name']:<16}{r['startup_s']:>11.1f}{r['queries_per_s']:>11.2f}"
            f"{r['paths_per_s']:>10.1f}{r['wall_s']:>9.1f}{ratio:>9.2f}x  "
            f"{'yes' if same_records(local, r['results']) else 'NO'}"
        )
    print(
        f"speed-up = steady-state queries/s vs '{BASELINE}' (baseline); "
        f"load average {os.getloadavg()[0]:.1f} at end"
    )


if __name__ == "__main__":
    main()
