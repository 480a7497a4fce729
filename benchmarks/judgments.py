"""Preference-statistics benchmark: Bradley–Terry on the real LLMFAO crowd comparisons.

Run: ``.venv/bin/python benchmarks/judgments.py [--llmfao PATH] [--bootstrap N]``. Prints
the median fit time of each solver / tie policy on LLMFAO (8,931 comparisons, 59 models),
the bootstrap time, and the time of a full synthetic HCB report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from creagraph.judgments import (
    bradley_terry,
    bt_mle,
    count_matrices,
    davidson_mle,
    generate_hcb,
    hcb_report,
    read_llmfao,
)


def median_ms(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _versus_evalica(comps, path: Path | None) -> None:
    """One LLMFAO fit with ties as half-wins, against evalica's Bradley–Terry (the
    baseline) in the same process (issue 31: ours ≤ evalica)."""
    import evalica
    import pandas as pd

    from creagraph.judgments.llmfao import default_llmfao_path

    df = pd.read_csv(path or default_llmfao_path())
    winner = df["winner"].map({"left": evalica.Winner.X, "right": evalica.Winner.Y,
                               "tie": evalica.Winner.Draw})
    ev = median_ms(lambda: evalica.bradley_terry(df["left"], df["right"], winner), repeat=15)
    ours = median_ms(lambda: bradley_terry(comps, ties="half"), repeat=15)
    print(f"single fit, ties as half-wins: creagraph {ours:.1f} ms (intervals, ranks, rank "
          f"probabilities included), evalica {ev:.1f} ms (scores only): ratio {ours / ev:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--llmfao", type=Path, default=None)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

    t = time.perf_counter()
    comps = read_llmfao(args.llmfao)
    print(f"read LLMFAO: {len(comps)} comparisons, {comps.n_items} models, "
          f"{(time.perf_counter() - t) * 1e3:.1f} ms")
    wins, ties = count_matrices(comps.n_items, comps.left, comps.right, comps.outcome)
    ms = median_ms(lambda: count_matrices(comps.n_items, comps.left, comps.right, comps.outcome))
    print(f"count matrices: {ms:.2f} ms")
    for method in ("newton", "mm"):
        ms = median_ms(lambda m=method: bt_mle(wins, method=m))
        print(f"bt_mle ties excluded, {method}: {ms:.2f} ms")
        ms = median_ms(lambda m=method: bt_mle(wins + ties / 2, method=m))
        print(f"bt_mle ties as half-wins, {method}: {ms:.2f} ms")
    print(f"davidson_mle (Newman iteration): {median_ms(lambda: davidson_mle(wins, ties)):.2f} ms")
    print(f"bradley_terry full result (Wald): {median_ms(lambda: bradley_terry(comps)):.2f} ms")
    _versus_evalica(comps, args.llmfao)
    t = time.perf_counter()
    res = bradley_terry(comps, ties="half", n_bootstrap=args.bootstrap, seed=0)
    dt = time.perf_counter() - t
    print(f"bootstrap x{args.bootstrap} (ties as half-wins): {dt:.2f} s "
          f"({dt / args.bootstrap * 1e3:.2f} ms per resample, "
          f"{res.n_degenerate_resamples} degenerate)")
    data, _ = generate_hcb(seed=0)
    t = time.perf_counter()
    hcb_report(data)
    print(f"synthetic HCB report ({len(data.pairwise)} comparisons, {len(data.scalar)} "
          f"ratings): {(time.perf_counter() - t) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
