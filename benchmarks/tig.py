"""Benchmark of the Typed Idea Graph pipeline (information, not pass/fail).

Prints, with the offline extractor and the cached all-MiniLM-L6-v2 embedder:

1. NoveltyBench curated (100 prompts × 24 models × 10 generations): time to build the atom
   tables (extraction + embedding), to cluster every prompt's whole population, and to
   produce L2MO anchors for every model pair; agreement of cluster-derived response labels
   with NoveltyBench's own equivalence partitions (adjusted Rand index per prompt, averaged
   over the 24 models' partitions of their 10 generations), against a shuffled-label
   baseline.
2. A synthetic population of 400 tasks × 14 models × 3 samples: the same timings.

For both, the incremental L2MO build is compared with the named baseline "from-scratch
rebuild" (re-extract, re-embed and rebuild the reference population of each pair,
:func:`creagraph.tig.l2mo.l2mo_population_from_scratch`), timed on a sample of pairs, and
the ratio is printed.

Usage::

    python benchmarks/tig.py                      # everything (several minutes on 2 cores)
    python benchmarks/tig.py --pairs-per-task 10  # L2MO on a spread of pairs per task
    python benchmarks/tig.py --skip-synthetic --method igraph --jobs 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

from creagraph.core.embeddings import default_embedder  # noqa: E402
from creagraph.tig import (  # noqa: E402
    OfflineExtractor,
    Response,
    TigConfig,
    adjusted_rand_index,
    build_atom_tables,
    build_population,
    l2mo_population,
    l2mo_population_from_scratch,
    l2mo_results,
    load_noveltybench_curated,
    model_pairs,
    noveltybench_partitions,
    response_labels,
)
from creagraph.tig.config import ClusterMethod  # noqa: E402

CARRIERS = [
    "potted fern", "paper boat", "glass jar", "old lighthouse", "sleeping cat", "teacup",
    "hourglass", "wooden chair", "violin", "lantern", "umbrella", "pocket watch", "kite",
    "bicycle", "feather", "candle", "snow globe", "birdcage", "staircase", "tree stump",
    "whale", "fox", "moth", "jellyfish", "bonsai tree", "compass", "ladder", "typewriter",
    "mirror", "key", "bridge", "windmill", "hot air balloon", "shell", "seed pod",
    "telescope", "piano", "anchor", "paper crane", "stone wall",
]
MECHANISMS = [
    "made of stained glass", "melting into honey", "turning into birds",
    "growing out of books", "dissolving into mist", "woven from thread",
    "carved from ice", "folding into a map", "blooming with clocks", "made of clouds",
    "turning into smoke", "built from matchsticks", "unravelling into ribbons",
    "merging with the sea", "sprouting roots", "shattering into light",
]
SETTINGS = [
    "a quiet harbor", "a misty forest", "an empty library", "a desert at dusk",
    "a flooded city", "a mountain lake", "a sunlit kitchen", "a night market",
    "a snowy field", "an abandoned station", "a rooftop garden", "a coral reef",
    "a foggy pier", "a wheat field", "a cathedral", "a small attic",
]
PURPOSES = [
    "calm", "memory", "hope", "loneliness", "time passing", "freedom", "belonging",
    "grief", "wonder", "resilience", "change", "silence",
]
PERSPECTIVES = ["seen from above", "in extreme close-up", "viewed from inside",
                "from below", "a bird's-eye view", "a wide panoramic shot"]


def synthetic_population(n_tasks: int, n_models: int, n_samples: int,
                         seed: int = 0) -> list[Response]:
    """Template ideas: each task favours three carriers and one setting (its clichés)."""
    rng = np.random.default_rng(seed)
    responses = []
    for t in range(n_tasks):
        favoured = rng.choice(len(CARRIERS), 3, replace=False)
        cliche_setting = SETTINGS[rng.integers(len(SETTINGS))]
        concept = PURPOSES[t % len(PURPOSES)]
        for m in range(n_models):
            for s in range(n_samples):
                carrier = (CARRIERS[rng.choice(favoured)] if rng.random() < 0.5
                           else CARRIERS[rng.integers(len(CARRIERS))])
                setting = cliche_setting if rng.random() < 0.4 else SETTINGS[
                    rng.integers(len(SETTINGS))]
                parts = [f"A {carrier} {MECHANISMS[rng.integers(len(MECHANISMS))]} in {setting}"]
                if rng.random() < 0.4:
                    parts.append(PERSPECTIVES[rng.integers(len(PERSPECTIVES))])
                idea = ", ".join(parts) + f", to evoke {concept}."
                responses.append(Response(
                    task_id=f"synthetic-{t:03d}", brief=f"Make {concept} visible.",
                    model=f"model-{m:02d}", sample=s, core_idea=idea))
    return responses


def _spread(pairs: list, k: int | None) -> list:
    if k is None or k >= len(pairs):
        return pairs
    step = max(1, len(pairs) // k)
    return pairs[::step][:k]


def run_population(name: str, responses: list[Response], config: TigConfig,
                   pairs_per_task: int | None, scratch_pairs: int, jobs: int,
                   partitions: dict[str, int] | None = None) -> None:
    embedder = default_embedder()
    extractor = OfflineExtractor(embedder)
    tasks = sorted({r.task_id for r in responses})
    models = sorted({r.model for r in responses})
    print(f"\n== {name}: {len(tasks)} tasks × {len(models)} models, {len(responses)} "
          f"responses (method={config.cluster_method}, jobs={jobs})")

    misses_before = embedder.misses
    start = time.perf_counter()
    tables = build_atom_tables(responses, extractor, embedder, show_progress=False)
    build_s = time.perf_counter() - start
    atoms = sum(t.n_atoms for t in tables.values())
    forms = sum(len(t.form_text) for t in tables.values())
    print(f"build (extract + embed + tables): {build_s:8.2f} s   {atoms} atoms, {forms} "
          f"task-level forms, {embedder.misses - misses_before} newly embedded strings")

    start = time.perf_counter()
    populations = {task: build_population(table, None, config) for task, table in tables.items()}
    cluster_s = time.perf_counter() - start
    n_clusters = sum(len(p.clusters) for p in populations.values())
    print(f"cluster whole populations:        {cluster_s:8.2f} s   {n_clusters} clusters "
          f"({cluster_s / len(tables) * 1000:.1f} ms per task)")

    selected = {task: _spread(model_pairs(table.models), pairs_per_task)
                for task, table in tables.items()}
    wanted = sorted({p for ps in selected.values() for p in ps})
    start = time.perf_counter()
    n_comparisons = n_anchors = 0
    for result in l2mo_results(tables, config, pairs=wanted, n_jobs=jobs, show_progress=False):
        if tuple(result.comparison_key.split("||")) in set(selected[result.task_id]):
            n_comparisons += 1
            n_anchors += len(result.anchors)
    l2mo_s = time.perf_counter() - start
    all_pairs = sum(len(model_pairs(t.models)) for t in tables.values())
    per_pair_ms = l2mo_s / max(1, n_comparisons) * 1000
    print(f"L2MO anchors (incremental):       {l2mo_s:8.2f} s   {n_comparisons} comparisons "
          f"of {all_pairs}, {n_anchors} anchors, {per_pair_ms:.1f} ms per comparison"
          + ("" if n_comparisons == all_pairs else
             f" → all pairs ≈ {per_pair_ms * all_pairs / 1000 / max(1, jobs):.0f} s"))

    # baseline: from-scratch rebuild of a sample of reference populations
    by_task: dict[str, list[Response]] = defaultdict(list)
    for r in responses:
        by_task[r.task_id].append(r)
    sample = [(task, pair) for task in tasks[: max(1, scratch_pairs // 2)]
              for pair in _spread(model_pairs(tables[task].models), 2)][:scratch_pairs]
    # interleaved, so both builds see the same machine load
    scratch_s = incremental_s = 0.0
    for task, pair in sample:
        start = time.perf_counter()
        l2mo_population_from_scratch(by_task[task], pair, extractor, embedder, config)
        scratch_s += time.perf_counter() - start
        tables[task]._cluster_cache.clear()  # no reuse of earlier clusterings
        start = time.perf_counter()
        l2mo_population(tables[task], pair, config)
        incremental_s += time.perf_counter() - start
    scratch_ms = scratch_s / len(sample) * 1000
    incremental_ms = incremental_s / len(sample) * 1000
    print(f"baseline from-scratch rebuild:    {scratch_ms:8.1f} ms per comparison "
          f"(embedding cache warm) vs incremental {incremental_ms:.1f} ms on the same "
          f"{len(sample)} comparisons → speed-up ×{scratch_ms / incremental_ms:.1f}")

    if partitions:
        agreement(tables, populations, partitions)


def agreement(tables, populations, partitions: dict[str, int]) -> None:
    rng = np.random.default_rng(0)
    rows = []
    for task, table in tables.items():
        labels = {mode: response_labels(table, populations[task], mode=mode)
                  for mode in ("primary", "signature")}
        by_model: dict[str, list[str]] = defaultdict(list)
        for r in table.responses:
            by_model[r.model].append(r.response_id)
        scores = defaultdict(list)
        for ids in by_model.values():
            truth = [partitions[i] for i in ids]
            for mode in ("primary", "signature"):
                predicted = [labels[mode][i] for i in ids]
                scores[mode].append(adjusted_rand_index(truth, predicted))
                shuffled = list(predicted)
                rng.shuffle(shuffled)
                scores[f"{mode}-shuffled"].append(adjusted_rand_index(truth, shuffled))
            scores["classes"].append(len(set(truth)))
        rows.append((task, {k: float(np.mean(v)) for k, v in scores.items()}))
    print("agreement with NoveltyBench partitions (ARI per prompt, mean over its 24 models):")
    for key in ("primary", "signature"):
        values = [r[key] for _, r in rows]
        base = [r[f"{key}-shuffled"] for _, r in rows]
        print(f"  {key:9s} labels: mean {statistics.mean(values):.3f}  median "
              f"{statistics.median(values):.3f}  (shuffled-label baseline "
              f"{statistics.mean(base):.3f})")
    rows.sort(key=lambda r: r[1]["primary"])
    print("  lowest prompts:  " + ", ".join(f"{t} {r['primary']:.2f}" for t, r in rows[:3]))
    print("  highest prompts: " + ", ".join(f"{t} {r['primary']:.2f}" for t, r in rows[-3:]))
    print(f"  mean NoveltyBench classes per 10 generations: "
          f"{statistics.mean(r['classes'] for _, r in rows):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--method", default=TigConfig().cluster_method,
                        choices=[m.value for m in ClusterMethod],
                        help="cluster method: auto | leidenalg | igraph | components")
    parser.add_argument("--pairs-per-task", type=int, default=None,
                        help="L2MO on a spread of this many pairs per task (default all)")
    parser.add_argument("--scratch-pairs", type=int, default=20,
                        help="comparisons timed with the from-scratch baseline")
    parser.add_argument("--jobs", type=int, default=1, help="L2MO worker processes")
    parser.add_argument("--skip-noveltybench", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    args = parser.parse_args()
    config = TigConfig(cluster_method=args.method)
    if not args.skip_noveltybench:
        start = time.perf_counter()
        responses = load_noveltybench_curated()
        print(f"load NoveltyBench curated: {time.perf_counter() - start:.2f} s")
        run_population("NoveltyBench curated", responses, config, args.pairs_per_task,
                       args.scratch_pairs, args.jobs, noveltybench_partitions(responses))
    if not args.skip_synthetic:
        responses = synthetic_population(400, 14, 3)
        run_population("synthetic", responses, config, args.pairs_per_task,
                       args.scratch_pairs, args.jobs)


if __name__ == "__main__":
    main()
