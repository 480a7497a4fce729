"""Speed of the offline atom chunker and of L2MO population building (issue 27 check).

Building leave-two-models-out populations dominated the full-MCTB Ekphrasis run; this
script times the two steps the issue-27 changes touch, on real data, without the
embedding model's cost (atoms are chunked only; populations are built from fixed tables):

1. ``chunk_phrases`` over every NoveltyBench curated first sentence (24,000) and every
   MCTB Alternative Uses answer (16,000);
2. ``build_population`` for every model pair of the first ``--tasks`` NoveltyBench
   prompts (24 models: 276 L2MO populations each), from atom tables built once.

Run it on two checkouts (``PYTHONPATH=<checkout> python benchmarks/tig_population_speed.py``)
and take the ratio of the printed times; both runs in one shell session, on the same load.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

from creagraph.tig import (  # noqa: E402
    build_atom_tables,
    build_population,
    load_noveltybench_curated,
    model_pairs,
)
from creagraph.tig.adapters import load_aut_population  # noqa: E402
from creagraph.tig.atoms import chunk_phrases  # noqa: E402
from creagraph.tig.config import TigConfig  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2, help="NoveltyBench prompts for L2MO")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for each timing")
    args = parser.parse_args()
    ideas = [r.core_idea for r in load_noveltybench_curated()]
    ideas += [r.core_idea for r in load_aut_population()]
    best = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        n_phrases = sum(len(chunk_phrases(idea)) for idea in ideas)
        best = min(best, time.perf_counter() - started)
    print(f"chunk_phrases: {len(ideas)} ideas, {n_phrases} phrases, best {best:.2f} s")

    responses = load_noveltybench_curated()
    tasks = sorted({r.task_id for r in responses})[: args.tasks]
    responses = [r for r in responses if r.task_id in tasks]
    tables = build_atom_tables(responses, show_progress=False)
    config = TigConfig()
    total = 0.0
    n_populations = 0
    for table in tables.values():
        pairs = list(model_pairs(table.models))
        best = float("inf")
        for _ in range(args.repeat):
            table._cluster_cache.clear()  # every repeat clusters afresh
            started = time.perf_counter()
            for a, b in pairs:
                others = [m for m in table.models if m not in (a, b)]
                build_population(table, others, config)
            best = min(best, time.perf_counter() - started)
        total += best
        n_populations += len(pairs)
        print(f"{table.task_id}: {len(pairs)} L2MO populations, best {best:.2f} s")
    print(f"build_population: {n_populations} populations, {total:.2f} s "
          f"({1000 * total / max(n_populations, 1):.1f} ms each)")


if __name__ == "__main__":
    main()
