"""Bradley–Terry at scale (issue 26 item 6, issue 31's ``judge bt`` bullet): a ring of
items, each compared with its two neighbours, and LLMFAO in-process against evalica.

Run: ``.venv/bin/python benchmarks/bt_scale.py [--sizes 1000 2000 10000] [--dense-max 2000]``.

1. **Ring**: ``n`` items, item ``k`` against ``k + 1`` (mod ``n``) twice — once won by
   ``k`` (so every item beats its successor once: the ML estimate exists) and once drawn
   from Bradley–Terry with true strengths ``2 sin(2πk/n)`` — ``2n`` comparison rows.
   One :func:`~creagraph.judgments.bradley_terry` fit (Wald intervals, significance ranks,
   P(rank 1)) in a fresh subprocess per size and path, timed, with the subprocess's peak
   resident memory (``ru_maxrss``) beside the memory after imports. Paths: the sparse one
   (the default above ``SPARSE_ITEMS`` items) and — the "before" — the dense one (``n × n``
   matrices and a full inverse; forced, only up to ``--dense-max`` items: 10,000 took
   > 400 s and 8.7 GB). Baselines: evalica's ``bradley_terry`` (scores only) and choix's
   ``ilsr_pairwise`` (scores only) in their own subprocesses, when installed, up to
   ``--baseline-max`` items (evalica ran > 10 minutes at 10,000 items).
   Target: 10,000 items in < 60 s and < 2 GB.
2. **LLMFAO** (8,931 comparisons, 59 models), ties as half-wins: median of 15 in-process
   fits, ours (intervals, ranks, rank probabilities) vs evalica's (scores only). Target:
   ratio ≤ 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, math, resource, sys, time, warnings
import numpy as np
n, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
k = np.arange(n)
theta = 2.0 * np.sin(2 * math.pi * k / n)
nxt = (k + 1) % n
p = 1.0 / (1.0 + np.exp(-(theta - theta[nxt])))
left = np.concatenate([k, k])
right = np.concatenate([nxt, nxt])
left_won = np.concatenate([np.ones(n, bool), rng.random(n) < p])
if path in ("sparse", "dense"):
    from creagraph.judgments import leaderboard, make_comparisons
    from creagraph.judgments.comparisons import Comparisons
    items = [f"m{i:05d}" for i in range(n)]
    comps = Comparisons(items=items, left=left, right=right,
                        outcome=np.where(left_won, 1, -1).astype(np.int8),
                        weight=np.ones(2 * n))
    if path == "dense":
        leaderboard.SPARSE_ITEMS = 10 ** 9
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    res = leaderboard.bradley_terry(comps)
    dt = time.perf_counter() - t
    err = float(np.corrcoef(res.theta, theta)[0, 1])
    extra = {"corr_true": err, "tier_1": int((res.tier == 1).sum()),
             "median_se": float(np.median(res.se)), "converged": res.converged}
elif path == "evalica":
    import evalica, pandas as pd
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    x = pd.Series([f"m{i:05d}" for i in left]); y = pd.Series([f"m{i:05d}" for i in right])
    w = pd.Series([evalica.Winner.X if b else evalica.Winner.Y for b in left_won])
    t = time.perf_counter()
    evalica.bradley_terry(x, y, w)
    dt = time.perf_counter() - t
    extra = {}
else:
    import choix
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    data = [(int(a), int(b)) if won else (int(b), int(a))
            for a, b, won in zip(left, right, left_won)]
    t = time.perf_counter()
    choix.ilsr_pairwise(n, data, alpha=0.0)
    dt = time.perf_counter() - t
    extra = {}
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"n": n, "path": path, "seconds": dt, "peak_mb": peak / 1024,
                  "base_mb": base / 1024, **extra}))
"""


def ring(n: int, path: str, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0"}
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(n), path], env=env,
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"n": n, "path": path, "error": f"> {timeout:.0f} s (stopped)"}
    if out.returncode != 0:
        return {"n": n, "path": path, "error": out.stderr.strip().splitlines()[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def llmfao(repeat: int) -> None:
    """Ours and evalica's fit, alternating (so that load swings hit both alike): the
    median time of each and the median of the per-round ratios."""
    from creagraph.judgments import bradley_terry, read_llmfao

    comps = read_llmfao(None)

    def ours() -> None:
        bradley_terry(comps, ties="half")

    def timed(fn) -> float:
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3

    ours()
    if not _installed("evalica"):
        times = [timed(ours) for _ in range(repeat)]
        print(f"LLMFAO single fit, ties as half-wins: creagraph "
              f"{statistics.median(times):.1f} ms (evalica not installed)", flush=True)
        return
    import evalica
    import pandas as pd

    from creagraph.judgments.llmfao import default_llmfao_path

    df = pd.read_csv(default_llmfao_path())
    winner = df["winner"].map({"left": evalica.Winner.X, "right": evalica.Winner.Y,
                               "tie": evalica.Winner.Draw})

    def theirs() -> None:
        evalica.bradley_terry(df["left"], df["right"], winner)

    theirs()
    pairs = [(timed(ours), timed(theirs)) for _ in range(repeat)]
    a = statistics.median(p[0] for p in pairs)
    b = statistics.median(p[1] for p in pairs)
    ratio = statistics.median(p[0] / p[1] for p in pairs)
    print(f"LLMFAO single fit, ties as half-wins: creagraph {a:.1f} ms (intervals, ranks, "
          f"rank probabilities), evalica {b:.1f} ms (scores only): ratio {ratio:.2f} "
          f"(median of {repeat} alternating rounds)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 10000])
    parser.add_argument("--dense-max", type=int, default=2000)
    parser.add_argument("--baseline-max", type=int, default=2000,
                        help="largest ring given to evalica / choix (dense in n × n)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} (1-min average)", flush=True)
    llmfao(args.repeat)
    paths = ["sparse", "dense"] + [p for p, m in (("evalica", "evalica"), ("choix", "choix"))
                                   if _installed(m)]
    for n in args.sizes:
        for path in paths:
            if (path == "dense" and n > args.dense_max) or (
                    path in ("evalica", "choix") and n > args.baseline_max):
                continue
            r = ring(n, path, args.timeout)
            if "error" in r:
                print(f"ring n={n:>6} {path:>7}: {r['error']}", flush=True)
                continue
            extra = (f"; corr with true θ {r['corr_true']:.3f}, tier 1: {r['tier_1']}, "
                     f"converged {r['converged']}" if "corr_true" in r else "")
            print(f"ring n={n:>6} {path:>7}: {r['seconds']:8.2f} s, peak RSS "
                  f"{r['peak_mb']:7.0f} MB (after imports {r['base_mb']:.0f} MB){extra}",
                  flush=True)


if __name__ == "__main__":
    main()
