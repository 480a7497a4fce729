"""Simulations behind the HCB statistics (issue 26): divergence verdicts and interval
coverage at the Human Creativity Benchmark's size.

Run: ``.venv/bin/python benchmarks/hcb_sim.py [--reps N] [--coverage-reps N]`` (a few
minutes on 2 cores at the defaults). Data come from :func:`creagraph.judgments.generate_hcb`
with HCB's shape — 4 models, one domain × phase cell, 6 prompts each judged by every
evaluator (so 6 tournaments per evaluator, every pairing of the 4 models in each).

1. **Divergence** (5 evaluators, 30 tournaments): the share of runs whose visual-appeal
   verdict is ``divergent`` with no taste at all (shared quality differences plus one-off
   noise: false divergence, target ≤ 5 %) and with planted taste (rater × model offsets:
   taste found, target ≥ 80 %), for a range of taste sizes; the baseline is the rule
   before issue 26 (low α and the models differing for some raters, by per-rater
   Kruskal–Wallis tests combined).
2. **Coverage** of nominal 95 % intervals for the models' log-strengths (ties excluded,
   Davidson-generated ties), 40 and 5 evaluators, with and without rater effects (each
   evaluator's own offsets to the strengths): plain Wald intervals, cluster-robust t
   intervals by evaluator (the new default for ``cluster="rater"``), and — as the
   baseline — the percentile bootstrap over evaluators. Target: [0.93, 0.97] where the
   method's assumptions hold (plain: no rater effects; cluster: always).
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np
from scipy import stats

from creagraph.judgments import bradley_terry, generate_hcb, hcb_comparisons, hcb_report
from creagraph.judgments.agreement import DegenerateDesignWarning

MODELS = ("aurora", "basalt", "cobalt", "dune")
THETA = (0.6, 0.2, -0.2, -0.6)
CELL = {"models": MODELS, "theta": THETA, "domains": ("poster",), "stages": ("ideation",),
        "prompts_per_cell": 6, "empty_rate": 0.0, "theme_rate": 0.0}


def _old_rule(data, alpha: float) -> str:
    """The verdict before issue 26: α < 0.4 and per-rater Kruskal–Wallis tests of the
    model effect, H summed over raters (divergent when significant)."""
    by_rater: dict[str, dict[str, list[float]]] = {}
    for r in data.scalar:
        by_rater.setdefault(r["evaluator_id"], {}).setdefault(r["model"], []).append(
            r["visual_appeal"])
    h, df = 0.0, 0
    for groups in by_rater.values():
        samples = list(groups.values())
        allv = np.concatenate(samples)
        if np.all(allv == allv[0]):
            continue
        h += float(stats.kruskal(*samples).statistic)
        df += len(samples) - 1
    if alpha >= 0.667:
        return "convergent"
    if alpha < 0.4:
        return "divergent" if df and stats.chi2.sf(h, df) < 0.05 else "no_difference"
    return "mixed"


def divergence(reps: int, taste_shares: list[float], noise: float) -> None:
    print(f"1. divergence, visual appeal, 5 evaluators x 6 tournaments, 4 models, rater "
          f"noise s.d. {noise}, {reps} runs per row (verdict 'divergent' share):")
    for share in taste_shares:
        new = old = 0
        t0 = time.perf_counter()
        for seed in range(reps):
            data, _ = generate_hcb(seed=seed, n_evaluators=5, raters_per_prompt=5,
                                   rater_noise={"prompt_adherence": 0.3, "usability": 0.7,
                                                "visual_appeal": noise},
                                   taste_share={"prompt_adherence": 0.0, "usability": 0.0,
                                                "visual_appeal": share}, **CELL)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDesignWarning)
                rep = hcb_report(data, n_bootstrap=0, n_permutations=499, seed=seed,
                                 n_power_simulations=0)
            (row,) = [r for r in rep.tables["convergence"] if r["axis"] == "visual_appeal"]
            new += row["verdict"] == "divergent"
            old += _old_rule(data, row["alpha_interval"]) == "divergent"
        taste_sd = noise * math.sqrt(share)
        what = "false divergence" if share == 0 else "taste found"
        print(f"   taste s.d. {taste_sd:.2f} (share {share:.1f}): {what} new {new / reps:.3f}, "
              f"before {old / reps:.3f}  [{time.perf_counter() - t0:.0f} s]")


def _covered(res, truth: np.ndarray) -> np.ndarray:
    return (res.ci_low <= truth) & (truth <= res.ci_high)


def coverage(reps: int, n_boot: int) -> None:
    truth = np.asarray(THETA) - np.mean(THETA)
    order = np.argsort(MODELS)  # comparisons' items are sorted by name
    truth = truth[order]
    print(f"2. coverage of nominal 95 % intervals (theta, ties excluded), {reps} runs per "
          f"row, {n_boot} bootstrap resamples:")
    for n_raters in (40, 5):
        for taste in (0.0, 0.5):
            cov = {"plain wald": [], "cluster t": [], "cluster bootstrap (before)": []}
            dav = []
            t0 = time.perf_counter()
            for seed in range(reps):
                data, _ = generate_hcb(seed=seed, n_evaluators=n_raters,
                                       raters_per_prompt=n_raters, pairwise_taste=taste,
                                       **CELL)
                comps = hcb_comparisons(data)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cov["plain wald"].append(_covered(bradley_terry(comps), truth))
                    cov["cluster t"].append(_covered(bradley_terry(comps, cluster="rater"),
                                                     truth))
                    if n_boot and seed < reps // 2:
                        boot = bradley_terry(comps, cluster="comparison", n_bootstrap=0)
                        b = _cluster_bootstrap(comps, n_boot, seed, boot.theta)
                        cov["cluster bootstrap (before)"].append(
                            (b[0] <= truth) & (truth <= b[1]))
                    dav.append(_covered(bradley_terry(comps, ties="davidson"), truth))
            cells = ", ".join(f"{k} {np.mean(v):.3f}" for k, v in cov.items() if v)
            print(f"   {n_raters:>2} raters, rater effects s.d. {taste}: {cells}; "
                  f"davidson wald {np.mean(dav):.3f}  [{time.perf_counter() - t0:.0f} s]")


def _cluster_bootstrap(comps, n_boot: int, seed: int, theta: np.ndarray):
    """The percentile bootstrap over raters (what ``cluster="rater"`` used before)."""
    from creagraph.judgments.comparisons import _check_arrays
    from creagraph.judgments.leaderboard import _bootstrap, _cluster_ids

    arrays = _check_arrays(comps.n_items, comps.left, comps.right, comps.outcome, comps.weight)
    boot, _, _ = _bootstrap(comps, arrays, _cluster_ids(comps, "rater"),
                            np.random.default_rng(seed), n_boot, "exclude", 0.0, 0.01, False)
    return np.quantile(boot, 0.025, axis=0), np.quantile(boot, 0.975, axis=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200, help="runs per divergence row")
    ap.add_argument("--coverage-reps", type=int, default=300, help="runs per coverage row")
    ap.add_argument("--bootstrap", type=int, default=100, help="resamples of the baseline")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    if args.reps:
        divergence(args.reps, [0.0, 0.2, 0.35, 0.5, 0.8], noise=1.8)
    if args.coverage_reps:
        coverage(args.coverage_reps, args.bootstrap)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
