"""Benchmark of CREATE query generation and oracle paths on the shared Wikidata slice.

Prints queries generated per second (embedded store); for the 1,000 queries, what a
researcher checks against the published set: queries per relation (also with
``--balance``), the category-size distribution, descriptor lengths and the rejection
reasons (categories generic in the world, filters, expansion edges); and the oracle's time
per query at k = 2 and k = 3, enumeration alone and with scoring (class sizes, labels,
embeddings, utility), with k = 2 as the named baseline for k = 3, and the throughput of
``queries paths`` (:func:`oracle_paths_many`: shared neighbourhoods, batched embeddings)
with a cold and a warm embedding cache.

Usage::

    python benchmarks/querygen.py [--store DIR] [--n 1000] [--oracle-queries 50]
        [--scored-queries 10] [--paths-queries 50]

The store defaults to ``creagraph.core.paths.default_store_dir()``; it is imported from
the shared slice first if it does not exist. Embeddings use a fresh cache in a temporary
directory, so the scoring times include encoding (the model load is timed separately).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")


def main(argv: list[str] | None = None) -> None:
    from creagraph.core.paths import default_slice_path, default_store_dir
    from creagraph.kg import EmbeddedKG, import_dumps

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--oracle-queries", type=int, default=50)
    parser.add_argument("--scored-queries", type=int, default=10)
    parser.add_argument("--paths-queries", type=int, default=50)
    parser.add_argument("--paths-cli", type=int, default=0, metavar="N",
                        help="only time `creagraph queries paths` on N generated queries, cold "
                        "and warm, fp32 (before and after) and bf16, each a fresh process")
    parser.add_argument("--before-tree", type=Path, default=None,
                        help="--paths-cli: a checkout of the baseline (git archive main "
                        "creagraph wikidata | tar -x -C DIR)")
    args = parser.parse_args(argv)

    store = args.store or default_store_dir()
    if not (store / "meta.json").exists():
        print(f"importing {default_slice_path()} into {store} …")
        import_dumps([default_slice_path()], store, show_progress=False)
    if args.paths_cli:
        _paths_cli(store, args.paths_cli, args.seed, args.before_tree)
        return
    kg = EmbeddedKG(store)

    records = _generation(kg, args.n, args.seed)
    sample = records[: args.oracle_queries]
    _enumeration(kg, sample)
    with tempfile.TemporaryDirectory() as tmp:
        single = _scoring(kg, records[: args.scored_queries], Path(tmp) / "embeddings.sqlite")
        # `queries paths`: shared neighbourhoods and batched embeddings over the whole set,
        # on queries whose path strings were not embedded above (a cold cache of its own)
        batch = records[args.scored_queries : args.scored_queries + args.paths_queries]
        _paths_throughput(kg, batch, Path(tmp) / "paths.sqlite")
        print(f"  one oracle_paths call per query (cold): {1 / single:.2f} queries/s")
    _without_model(kg, sample)


def _generation(kg, n: int, seed: int) -> list[dict]:
    """Queries per second (best of 3), the set's mix, and the --balance report."""
    from creagraph.querygen import GenerationConfig, generate_queries

    generate_queries(kg, 50, seed + 1)  # warm caches (SQLite pages, numpy arrays)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        result = generate_queries(kg, n, seed)
        runs.append(time.perf_counter() - t0)
    best = min(runs)
    records = result.records
    print(
        f"generation: {len(records)} queries in {best:.2f} s (best of 3) = "
        f"{len(records) / best:,.0f} queries/s; candidates drawn {result.report.drawn}"
    )

    _print_mix(result, records)
    balanced = generate_queries(kg, n, seed, GenerationConfig(balance=True))
    print(f"--balance: {balanced.report.kept} queries, quota {balanced.report.quota} per relation")
    for line in balanced.report.lines():
        if line.startswith("balance:"):
            print(f"  {line}")
    return records


def _enumeration(kg, sample: list[dict]) -> None:
    """Enumeration alone at k = 2 and k = 3, and how many source paths k = 3 finds."""
    from creagraph.querygen import enumerate_paths, path_key

    times: dict[int, list[float]] = {2: [], 3: []}
    found = 0
    paths: dict[int, list[int]] = {2: [], 3: []}
    for k in (2, 3):
        for rec in sample:
            t0 = time.perf_counter()
            out = enumerate_paths(kg, rec["entity_a_id"], rec["rel_b_id"], rec["entity_b_id"], k=k)
            times[k].append(time.perf_counter() - t0)
            paths[k].append(len(out.paths))
            if k == 3:
                triples = rec["source_path"]
                source = path_key((t["subject"], t["property"], t["object"]) for t in triples)
                found += any(p.key == source for p in out.paths)
    base = statistics.mean(times[2])
    for k in (2, 3):
        mean = statistics.mean(times[k])
        print(
            f"oracle enumeration k={k}: mean {mean * 1000:.1f} ms/query, median "
            f"{statistics.median(times[k]) * 1000:.1f} ms, max {max(times[k]) * 1000:.0f} ms, "
            f"median paths {statistics.median(paths[k]):.0f}"
            + (
                ""
                if k == 2
                else f"; {mean / base:.1f}x the k=2 baseline; source path found "
                f"{found}/{len(sample)}"
            )
        )


def _scoring(kg, sample: list[dict], cache: Path) -> float:
    """The model load and oracle_paths at k = 2 and 3 with a cold embedding cache; returns
    the mean seconds per query at k = 3."""
    from creagraph.core.embeddings import default_embedder
    from creagraph.querygen import OracleBudget, oracle_paths

    embedder = default_embedder(cache)
    t0 = time.perf_counter()
    embedder.encode(["warm up"])
    print(f"embedding model load: {time.perf_counter() - t0:.1f} s (once per process)")
    budget = OracleBudget()
    scored: dict[int, list[float]] = {2: [], 3: []}
    for k in (2, 3):
        for rec in sample:
            t0 = time.perf_counter()
            oracle_paths(kg, rec, k=k, budget=budget, embedder=embedder)
            scored[k].append(time.perf_counter() - t0)
    base = statistics.mean(scored[2])
    for k in (2, 3):
        mean = statistics.mean(scored[k])
        print(
            f"oracle with scoring k={k} (max_scored={budget.max_scored}, cold embedding "
            f"cache): mean {mean:.2f} s/query"
            + ("" if k == 2 else f"; {mean / base:.1f}x the k=2 baseline")
        )
    return statistics.mean(scored[3])


def _paths_throughput(kg, batch: list[dict], cache: Path) -> None:
    """`queries paths` (oracle_paths_many) with a cold, then a warm embedding cache."""
    from creagraph.core.embeddings import default_embedder
    from creagraph.querygen import OracleBudget, oracle_paths_many

    budget = OracleBudget()
    embedder = default_embedder(cache)
    embedder.encode(["warm up"])
    t0 = time.perf_counter()
    cold = list(oracle_paths_many(kg, batch, k=3, budget=budget, embedder=embedder))
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = list(oracle_paths_many(kg, batch, k=3, budget=budget, embedder=embedder))
    t_warm = time.perf_counter() - t0
    assert [r.as_dict() for r in cold] == [r.as_dict() for r in warm]
    texts = sum(r.scored for r in cold)
    print(
        f"queries paths k=3 over {len(batch)} queries ({texts} path strings, "
        f"{texts / t_cold:.0f} embedded/s cold): "
        f"cold embedding cache {len(batch) / t_cold:.2f} queries/s, "
        f"warm {len(batch) / t_warm:.2f} queries/s"
    )


def _paths_cli(store: Path, n: int, seed: int, before_tree: Path | None) -> None:
    """Issue 31: ``creagraph queries paths`` as a user runs it — a fresh process (imports,
    model load, graph, embedding, writing) — over ``n`` generated queries: cold (an empty
    cache folder: every path string embedded) and then warm (the same folder), fp32 before
    (``before_tree``) and after, bf16 after (when the processor has it). Prints wall and
    CPU seconds per query against the target (≤ 3 s per query cold), the ratios, and
    whether the fp32 outputs are byte-identical before and after, cold and warm."""
    import resource
    import subprocess
    import sys

    from creagraph.core.embeddings import bf16_support

    def child_cpu() -> float:
        use = resource.getrusage(resource.RUSAGE_CHILDREN)
        return use.ru_utime + use.ru_stime

    here = str(Path(__file__).resolve().parents[1])
    runs = [("before", "fp32"), ("after", "fp32")] if before_tree else [("after", "fp32")]
    if bf16_support()[0]:
        runs.append(("after", "bf16"))
    trees = {"before": str(before_tree), "after": here}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        queries = work / "q.jsonl"
        env = {**os.environ, "PYTHONPATH": here, "CREAGRAPH_CACHE_DIR": str(work / "gen")}
        subprocess.run([sys.executable, "-m", "creagraph.cli", "queries", "generate", "--store",
                        str(store), "--n", str(n), "--seed", str(seed), "--out", str(queries)],
                       env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip

        def run(tree: str, precision: str, state: str) -> tuple[float, float]:
            env = {**os.environ, "PYTHONPATH": trees[tree], "CREAGRAPH_PROGRESS": "0",
                   "CREAGRAPH_CACHE_DIR": str(work / f"cache-{tree}-{precision}")}  # fmt: skip
            out = work / f"{tree}-{precision}-{state}.jsonl"
            cmd = [sys.executable, "-m", "creagraph.cli", "queries", "paths", str(queries),
                   "--store", str(store), "--out", str(out)]  # fmt: skip
            if precision != "fp32":  # the baseline has no --precision option
                env["CREAGRAPH_PRECISION"] = precision
            cpu, start = child_cpu(), time.perf_counter()
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            return time.perf_counter() - start, child_cpu() - cpu

        print(f"queries paths, {n} queries (k = 3), fresh process each; "
              f"load {os.getloadavg()[0]:.1f} at start")  # fmt: skip
        got: dict[tuple[str, str, str], tuple[float, float]] = {}
        for state in ("cold", "warm"):
            for tree, precision in runs:
                got[(tree, precision, state)] = wall, cpu = run(tree, precision, state)
                print(f"  {tree:6} {precision} {state}: {wall:7.1f} s wall, {cpu:6.1f} CPU-s "
                      f"→ {wall / n:5.2f} s, {cpu / n:5.2f} CPU-s per query "
                      "(target cold ≤ 3 s)")  # fmt: skip
        for state in ("cold", "warm"):
            base = got[("after", "fp32", state)]
            if ("before", "fp32", state) in got:
                before = got[("before", "fp32", state)]
                same = (work / f"before-fp32-{state}.jsonl").read_bytes() == (
                    work / f"after-fp32-{state}.jsonl"
                ).read_bytes()
                print(f"  fp32 {state}: before/after ×{before[0] / base[0]:.2f} wall, "
                      f"×{before[1] / base[1]:.2f} CPU; output byte-identical before/after: "
                      f"{same}")  # fmt: skip
            if ("after", "bf16", state) in got:
                bf = got[("after", "bf16", state)]
                print(f"  bf16/fp32 {state}: {bf[0] / base[0]:.2f}× wall, "
                      f"{bf[1] / base[1]:.2f}× CPU")
        print(f"  load {os.getloadavg()[0]:.1f} at end")


def _without_model(kg, sample: list[dict]) -> None:
    """The oracle with a hashing embedder: search, class sizes, labels and utility alone."""
    from creagraph.core.embeddings import HashingEmbedder
    from creagraph.querygen import oracle_paths, oracle_paths_many

    fast = HashingEmbedder()  # isolates search, class sizes, labels and utility from MiniLM
    t0 = time.perf_counter()
    for rec in sample:
        oracle_paths(kg, rec, k=3, embedder=fast)
    t_single = time.perf_counter() - t0
    t0 = time.perf_counter()
    list(oracle_paths_many(kg, sample, k=3, embedder=fast))
    t_many = time.perf_counter() - t0
    print(
        f"oracle without the embedding model, {len(sample)} queries: one call per query "
        f"{len(sample) / t_single:.1f} queries/s, oracle_paths_many {len(sample) / t_many:.1f} "
        "queries/s"
    )


def _print_mix(result, records) -> None:
    from collections import Counter

    from creagraph.querygen.specificity import size_bucket

    report = result.report
    print("queries per source relation:")
    for pid, row in report.per_relation.items():
        print(f"  {pid:<7}{row['label']:<28}{row['kept']:>6}")
    print("category class sizes (queries):")
    bands = Counter(size_bucket(r["class_size"]) for r in records)
    for band, count in report.as_dict()["class_sizes"].items():
        print(f"  {band:<8}{count:>6}")
    assert bands == Counter(report.as_dict()["class_sizes"])
    sizes = sorted(r["class_size"] for r in records)
    print(f"  median class size {statistics.median(sizes):g}")
    lengths = [len(r["entity_a_descriptor"].split()) for r in records if r["entity_a_descriptor"]]
    none = sum(1 for r in records if not r["entity_a_descriptor"])
    print(
        f"descriptor length (words): mean {statistics.mean(lengths):.1f}, median "
        f"{statistics.median(lengths):g}, max {max(lengths)}; without a descriptor {none}"
    )
    print("rejection reasons:")
    for pid, counts in report.categories_rejected.items():
        if counts:
            detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            print(f"  categories {pid:<7}{detail}")
    removed = {k: v for k, v in report.as_dict()["removed"].items() if v}
    print(f"  candidates removed: {removed}")
    print(f"  expansion edges passed over: {dict(sorted(report.edges_skipped.items()))}")


if __name__ == "__main__":
    main()
