"""Demo benchmark: seconds per stage of ``creagraph demo`` and the cost of the kg judge.

Run: ``.venv/bin/python benchmarks/demo.py [--kg-queries N] [--tig-runs R]``.

Runs the demo's stages one by one into a fresh temporary output directory (the store and
the embedding cache are whatever ``~/.cache/creagraph`` holds; the first run of all fills
them) and prints the wall time of each: graph look-ups and query generation, scoring the
80 published sample answers with the stored judge, scoring ``N`` answers per model again
with the kg judge, distinctiveness, the TIG population (AUT, ``R`` runs per model), and
the report. It then prints the kg judge's seconds per answer against the stored judge's
(the named baseline) and what scoring all 80 answers with the kg judge would cost — the
figure behind the demo's default of grounding only the first 5 answers per model.
The load average is printed, as the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
import time
from pathlib import Path

from creagraph import demo
from creagraph.core.io import read_jsonl
from creagraph.core.paths import default_slice_path, default_store_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg-queries", type=int, default=5)
    parser.add_argument("--tig-runs", type=int, default=3)
    args = parser.parse_args()
    from creagraph.core.embeddings import default_embedder
    from creagraph.kg import EmbeddedKG, import_dumps

    import_dumps([default_slice_path()], default_store_dir())
    default_embedder().encode(["warm up"])  # model load is not part of any stage
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        out = Path(tmp)
        kg = EmbeddedKG(default_store_dir())
        t = time.perf_counter()
        generated = demo.run_querygen_demo(kg, out / "queries")
        times["query generation + ceiling"] = time.perf_counter() - t

        t = time.perf_counter()
        stored = demo.run_scoring_demo(kg, out / "stored-only", kg_queries=0)
        times["stored judge, 80 answers + distinct"] = time.perf_counter() - t
        t = time.perf_counter()
        scored = demo.run_scoring_demo(kg, out, kg_queries=args.kg_queries)
        times[f"kg judge, {args.kg_queries}/model (+ stored, distinct)"] = (
            time.perf_counter() - t
        )
        t = time.perf_counter()
        tig = demo.run_tig_demo(out / "tig", runs=args.tig_runs)
        times[f"TIG, AUT {args.tig_runs} runs/model"] = time.perf_counter() - t
        t = time.perf_counter()
        demo.run_report_demo(out, scored, generated, tig)
        times["report"] = time.perf_counter() - t
        n_kg = len(read_jsonl(scored.score_kg / "queries.jsonl"))
        n_stored = len(read_jsonl(stored.score / "queries.jsonl"))
    for name, seconds in times.items():
        print(f"{name:>45}: {seconds:7.2f} s")
    stored_s = times["stored judge, 80 answers + distinct"]
    kg_s = times[f"kg judge, {args.kg_queries}/model (+ stored, distinct)"] - stored_s
    per_stored, per_kg = stored_s / n_stored, kg_s / max(n_kg, 1)
    print(f"{'stored judge per answer (baseline)':>45}: {per_stored:7.3f} s")
    print(f"{'kg judge per answer':>45}: {per_kg:7.3f} s  ({per_kg / per_stored:.0f}x baseline)")
    print(f"{'kg judge on all 80 answers (projected)':>45}: {80 * per_kg:7.1f} s")
    print(f"{'total':>45}: {sum(times.values()):7.1f} s; load average {os.getloadavg()[0]:.1f}"
          f" on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
