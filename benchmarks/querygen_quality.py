"""Quality of a CREATE query set from the shared slice (issue 29): what a reader checks.

On ``--n`` queries (default 1,000, seed 7) it prints the share of broad-attribute targets
(the issue's list: occupation, citizenship, ethnicity, religion, genre, cause of death,
diplomatic relations, borders), class-valued targets (items with instances or subclasses),
broad place values, items trivial through any edge between the start entity and the target
(inverses, implications or other), descriptors cut to a modifier, the most uses of one start
entity and of one target, the holders named "something", and the ``--balance`` shortfall
with its reasons. The named baseline is the same generation with the target policy and the
reuse limits switched off (``TargetPolicy({}, {})``, no limits); the class-valued check,
triviality, descriptor and type rules cannot be switched off and act in both.

``--sample FILE`` also writes a stratified reading sample (``--sample-size`` queries, one
relation after another) as CSV with empty ``grade`` and ``note`` columns for a person to
fill in (natural / awkward / wrong).

Usage::

    python benchmarks/querygen_quality.py [--store DIR] [--n 1000] [--seed 7]
        [--sample benchmarks/querygen_reading.csv] [--sample-size 50]
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

BROAD_ATTRIBUTES = ("P106", "P27", "P172", "P140", "P136", "P509", "P530", "P47")


def measure(kg, records) -> dict[str, float]:
    """The figures of one query set."""
    from creagraph.querygen import load_target_policy, target_policy_rejection
    from creagraph.querygen.catalogue import load_demonyms
    from creagraph.querygen.phrasing import ends_in_modifier

    policy = load_target_policy()
    demonyms = load_demonyms()
    n = len(records) or 1
    broad = sum(r["rel_b_id"] in BROAD_ATTRIBUTES for r in records)
    reasons = Counter(
        target_policy_rejection(kg, r["rel_b_id"], r["entity_b_id"], policy) for r in records
    )
    trivial = sum(bool(kg.edges_between(r["entity_a_id"], r["entity_b_id"])) for r in records)
    cut = sum(
        ends_in_modifier(r["entity_a_descriptor"], r["entity_a_description"], demonyms)
        for r in records
    )
    starts = Counter(r["entity_a_id"] for r in records)
    targets = Counter((r["rel_b_id"], r["entity_b_id"]) for r in records)
    return {
        "queries": len(records),
        "broad_attribute_pct": 100 * broad / n,
        "policy_broad_pct": 100 * (reasons["broad_attribute"] + reasons["broad_value"]) / n,
        "class_valued": reasons["class_target"],
        "trivial_any_edge": trivial,
        "descriptor_cut_to_modifier": cut,
        "max_start_uses": max(starts.values(), default=0),
        "starts_used_more_than_twice": sum(v > 2 for v in starts.values()),
        "max_target_uses": max(targets.values(), default=0),
        "targets_used_more_than_twice": sum(v > 2 for v in targets.values()),
        "something_holders": sum(r["holder"].startswith("something") for r in records),
    }


def write_sample(records, path: Path, size: int) -> None:
    """A reading sample: queries taken round-robin over the source relations."""
    from creagraph.core.io import atomic_write

    by_relation: dict[str, list[dict]] = {}
    for rec in records:
        by_relation.setdefault(rec["source_relation"], []).append(rec)
    picked: list[dict] = []
    depth = 0
    while len(picked) < size and any(len(v) > depth for v in by_relation.values()):
        for pid in sorted(by_relation):
            if len(by_relation[pid]) > depth and len(picked) < size:
                picked.append(by_relation[pid][depth])
        depth += 1
    with atomic_write(path) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["query_id", "source_relation", "rel_b_id", "query", "grade", "note"])
        for rec in picked:
            writer.writerow(
                [rec["query_id"], rec["source_relation"], rec["rel_b_id"], rec["query"], "", ""]
            )


def main(argv: list[str] | None = None) -> None:
    from _common import slice_store

    from creagraph.core.paths import default_store_dir
    from creagraph.querygen import GenerationConfig, TargetPolicy, generate_queries

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sample", type=Path, default=None)
    parser.add_argument("--sample-size", type=int, default=50)
    args = parser.parse_args(argv)

    kg = slice_store(args.store or default_store_dir())

    t0 = time.perf_counter()
    result = generate_queries(kg, args.n, args.seed)
    seconds = time.perf_counter() - t0
    off = GenerationConfig(max_start_uses=None, max_target_uses=None)
    baseline = generate_queries(kg, args.n, args.seed, off, target_policy=TargetPolicy({}, {}))
    now, base = measure(kg, result.records), measure(kg, baseline.records)
    print(f"{len(result.records)} queries (seed {args.seed}) in {seconds:.2f} s")
    print(f"{'figure':<30}{'issue 29':>10}{'baseline':>10}   (baseline: policy and limits off)")
    for key, value in now.items():
        ratio = ""
        if base[key] and key != "queries":
            ratio = f"   {value / base[key]:.2f}x"
        print(f"  {key:<28}{value:>10.1f}{base[key]:>10.1f}{ratio}")
    removed = result.report.removed
    print("removed: " + ", ".join(f"{k} {v}" for k, v in removed.items() if v))
    balanced = generate_queries(kg, args.n, args.seed, GenerationConfig(balance=True))
    for line in balanced.report.lines():
        if line.startswith("balance"):
            print(line)
    if args.sample is not None:
        write_sample(result.records, args.sample, args.sample_size)
        print(f"wrote a reading sample of {args.sample_size} queries to {args.sample}")


if __name__ == "__main__":
    main()
