"""The distance stage of scoring before and after the lean, blockwise version.

Before: ``distance_matrix`` twice (transformed and raw, n×n float64 each), the greedy order
on the matrix, ``mean_pairwise_distance`` with triangle index arrays (what
``Scorer.score`` did). After: :func:`creagraph.core.metrics.path_set_distances` (raw and
transformed from one Gram block, blockwise above 2**21 distances, greedy order from the
embeddings). Each measurement runs in a fresh process, one BLAS thread, so its peak
resident memory (VmHWM) belongs to it alone.

    python benchmarks/distance_stage.py                    # n = 1,000 / 4,000 / 8,000
    python benchmarks/distance_stage.py --n 12000 --after-only
    python benchmarks/distance_stage.py --cli 12000        # one answer through `creagraph score`

``--cli N`` writes one answer with N two-triple paths (distinct path strings), scores it
with the real CLI (stored judge, MiniLM) and prints the command's peak RSS and time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import json, sys, time, numpy as np
from threadpoolctl import threadpool_limits
from creagraph.scoring.synthetic import peak_rss_mib
n, how = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
centres = rng.standard_normal((40, 384))
v = centres[rng.integers(0, 40, n)] + 0.6 * rng.standard_normal((n, 384))
v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
q = rng.integers(1, 6, n).astype(float)
base = peak_rss_mib()
with threadpool_limits(1):
    t = time.perf_counter()
    if how == "before":
        from creagraph.core.metrics import distance_matrix, greedy_order, mean_pairwise_distance
        d = distance_matrix(v); raw = distance_matrix(v, transformed=False)
        order, mins = greedy_order(q, d)
        result = (order, mean_pairwise_distance(d), mean_pairwise_distance(raw), mins)
    else:
        from creagraph.core.metrics import path_set_distances
        s = path_set_distances(q, v)
        result = (s.order, s.mean_distance, s.mean_raw_distance, s.min_distances)
    seconds = time.perf_counter() - t
order, md, mr, mins = result
print(json.dumps({"seconds": seconds, "growth_mib": peak_rss_mib() - base,
                  "peak_mib": peak_rss_mib(), "order_head": order[:50], "mean": md,
                  "mean_raw": mr, "mins_sum": float(np.sum(mins))}))
"""


def _child(n: int, how: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n), how], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout)


def _cli(n: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="distance-stage-"))
    answer = {
        str(i + 1): [["Alpha Centauri", "related to", f"e{i}"], [f"e{i}", "rel", "Beta Star"]]
        for i in range(n)
    }
    row = {
        "index": 0,
        "model": "bench",
        "query": "q",
        "entity_a": "Alpha Centauri",
        "entity_b": "Beta Star",
        "rel_b": "rel",
        "path_prediction": ["<answer>" + json.dumps(answer, separators=(",", ":")) + "</answer>"],
        "raw_salience_scores_0": [[3, 3]] * n,
        "parsed_scores_factuality_0": [[1.0, 1.0]] * n,
    }
    (tmp / "a.jsonl").write_text(json.dumps(row) + "\n")
    script = Path(sys.executable).parent / "creagraph"
    cmd = [
        "/usr/bin/time",
        "-v",
        str(script),
        "score",
        str(tmp / "a.jsonl"),
        "--judge",
        "stored",
        "--out",
        str(tmp / "out"),
    ]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    lines = done.stderr.splitlines()
    peak = next((ln.split(":")[1].strip() for ln in lines if "Maximum resident" in ln), "0")
    query = json.loads((tmp / "out" / "queries.jsonl").read_text()) if done.returncode == 0 else {}
    print(
        f"creagraph score, one answer of {n:,} paths (answer {len(row['path_prediction'][0]):,} "
        f"chars): rc {done.returncode}, {seconds:.1f} s, peak RSS {int(peak) / 1024:.0f} MiB, "
        f"n_kept {query.get('n_kept')}, s0.9 {query.get('utility', {}).get('0.9')}"
    )
    if done.returncode != 0:
        print(done.stderr[-2000:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[1000, 4000, 8000])
    parser.add_argument("--after-only", action="store_true")
    parser.add_argument("--cli", type=int, help="paths in one answer scored through the CLI")
    args = parser.parse_args()
    if args.cli:
        _cli(args.cli)
        return
    print(f"{'n':>6} {'before s':>9} {'after s':>8} {'speed-up':>8} {'before MiB':>11} "
          f"{'after MiB':>10} {'max |Δ mean|':>13} same order")
    for n in args.n:
        after = _child(n, "after")
        if args.after_only:
            print(f"{n:>6} {'-':>9} {after['seconds']:>8.2f} {'-':>8} {'-':>11} "
                  f"{after['growth_mib']:>10.0f}")
            continue
        before = _child(n, "before")
        delta = max(abs(before[k] - after[k]) for k in ("mean", "mean_raw"))
        same = before["order_head"] == after["order_head"]
        same = same and abs(before["mins_sum"] - after["mins_sum"]) < 1e-9
        print(
            f"{n:>6} {before['seconds']:>9.2f} {after['seconds']:>8.2f} "
            f"{before['seconds'] / after['seconds']:>7.2f}x {before['growth_mib']:>11.0f} "
            f"{after['growth_mib']:>10.0f} {delta:>13.1e} "
            f"{same}"
        )


if __name__ == "__main__":
    main()
