"""Ekphrasis measurement benchmark: offline judging speed and what active sampling saves.

Run: ``.venv/bin/python benchmarks/ekphrasis.py [--max-runs 1] [--budget 300] [--seeds 5]``
(reads the MCTB Alternative Uses population from the shared folder).

Prints

1. comparisons per second of ``tig judge --judge novelty-score`` offline, cold (the L2MO
   anchors and novelty of every pair computed on the way) and warm (that evidence already
   computed: scheduling, Bradley–Terry refits and writing only);
2. the ranking of the *exhaustive* schedule — every cross-model response pair of every
   task, judged by the same offline rule — and, for active sampling (warm start, then
   :func:`creagraph.judgments.next_pairs`) and the baseline of uniformly random pairs, the
   Spearman correlation of each budget's BT scores with the exhaustive ones, and the
   smallest budget reaching ρ ≥ 0.9 (median over seeds; the ratio uniform / active is the
   saving).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

from scipy.stats import spearmanr  # noqa: E402

from creagraph.tig.adapters import load_aut_population  # noqa: E402
from creagraph.tig.judge import (  # noqa: E402
    JudgeSettings,
    PairContext,
    fit_leaderboard,
    novelty_verdict,
    run_judging,
)
from creagraph.tig.population import build_atom_tables  # noqa: E402

GRID = (25, 50, 75, 100, 150, 200, 300, 400, 600, 800)
TARGET = 0.9


def exhaustive_records(population, context: PairContext, margin: float) -> list[dict]:
    """Every cross-model response pair of every task, judged by the offline rule."""
    by_task: dict[str, dict[str, list[str]]] = {}
    for r in population:
        by_task.setdefault(r.task_id, {}).setdefault(r.model, []).append(r.response_id)
    records = []
    for task_id, per in sorted(by_task.items()):
        models = sorted(per)
        for k, a in enumerate(models):
            for b in models[k + 1:]:
                na = context.novelty(task_id, a, b)
                nb = context.novelty(task_id, b, a)
                for ra in per[a]:
                    for rb in per[b]:
                        v = novelty_verdict(na[ra], nb[rb], margin)
                        winner = "tie" if v == "tie" else (a if v == "a" else b)
                        records.append({"task_id": task_id, "model_a": a, "model_b": b,
                                        "winner": winner})
    return records


def scores(records, models) -> dict[str, float] | None:
    try:
        fit = fit_leaderboard(records, models, n_bootstrap=0)
    except ValueError:
        fit = fit_leaderboard(records, models, n_bootstrap=0, alpha=0.01)
    if fit is None:
        return None
    return {m: float(t) for m, t in zip(fit.items, fit.theta, strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared-dir", type=Path, default=None)
    parser.add_argument("--max-runs", type=int, default=1)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8, help="pairs planned per step")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    population = load_aut_population(args.shared_dir, max_runs=args.max_runs)
    t = time.perf_counter()
    tables = build_atom_tables(population, show_progress=False)
    t_tables = time.perf_counter() - t
    models = sorted({r.model for r in population})
    print(f"MCTB AUT, first {args.max_runs} run(s): {len(population)} responses, "
          f"{len(tables)} tasks, {len(models)} models; atom tables {t_tables:.1f} s; "
          f"load {load:.1f}")

    settings = JudgeSettings(budget=args.budget, n_bootstrap=0, swap_share=0.0)
    context = PairContext(tables)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run_judging(population, settings, Path(tmp) / "cold", context=context)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        run_judging(population, settings, Path(tmp) / "warm", context=context)
        warm = time.perf_counter() - t
    print(f"1. offline novelty-score judging, {args.budget} comparisons: cold {cold:.1f} s "
          f"({args.budget / cold:.1f} cmp/s), warm {warm:.2f} s ({args.budget / warm:.0f} "
          f"cmp/s); cold/warm ×{cold / warm:.0f} (the L2MO evidence dominates)")

    t = time.perf_counter()
    reference_records = exhaustive_records(population, context, settings.margin)
    reference = scores(reference_records, models)
    assert reference is not None
    print(f"   batch {args.batch} pairs per active-sampling step")
    print(f"2. exhaustive schedule: {len(reference_records)} comparisons "
          f"({time.perf_counter() - t:.1f} s); ranking: "
          + ", ".join(sorted(reference, key=lambda m: -reference[m])))
    largest = max(GRID)
    reached: dict[str, list[int | None]] = {"active": [], "uniform": []}
    curves: dict[str, dict[int, list[float]]] = {"active": {}, "uniform": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for schedule in ("active", "uniform"):
            for seed in range(args.seeds):
                s = JudgeSettings(budget=largest, n_bootstrap=0, swap_share=0.0, seed=seed,
                                  schedule=schedule, batch=args.batch)
                run = run_judging(population, s, Path(tmp) / f"{schedule}{seed}",
                                  context=context)
                first = None
                for n in GRID:
                    got = scores(run.comparisons[:n], models)
                    rho = float(spearmanr([got[m] for m in models],
                                          [reference[m] for m in models]).statistic) \
                        if got else float("nan")
                    curves[schedule].setdefault(n, []).append(rho)
                    if first is None and rho >= TARGET:
                        first = n
                reached[schedule].append(first)
    for schedule in ("active", "uniform"):
        line = ", ".join(f"{n}: {statistics.median(v):.2f}"
                         for n, v in sorted(curves[schedule].items()))
        print(f"   {schedule:<7} median Spearman by budget — {line}")
    med: dict[str, float] = {}
    for schedule, values in reached.items():
        hits = [v if v is not None else 2 * largest for v in values]
        med[schedule] = statistics.median(hits)
        print(f"   {schedule:<7} comparisons to ρ ≥ {TARGET} (per seed): {values} → median "
              f"{med[schedule]:g}")
    print(f"   uniform / active: ×{med['uniform'] / med['active']:.2f} "
          f"(baseline: uniformly random pairs)")


if __name__ == "__main__":
    main()
