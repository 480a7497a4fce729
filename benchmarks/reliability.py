"""Reliability benchmark: parser fuzzing and streaming-scoring memory at 1M paths.

Run: ``.venv/bin/python benchmarks/reliability.py [--fuzz-seconds 60] [--queries 50000]
[--paths 20] [--small-queries 2500] [--workdir DIR]``. Prints:

- the parser fuzz run (``benchmarks/fuzz.py``'s ``fuzz_parser``): iterations, inputs/s and
  distinct crashes;
- peak resident memory (RSS) of ``score_files`` streaming a synthetic input of
  ``queries × paths`` paths (default 50,000 × 20 = 1,000,000), with the time taken, next to
  the same figures for a small run (default 2,500 × 20 = 50,000 paths) and the ratio of
  the two peaks (1.0 = memory does not grow with the input);
- the baseline: the same small input scored from a list of all rows held in memory
  (``read_answers``, the pre-streaming API), whose peak grows with the input.

Each scoring run is a fresh process (``python -m creagraph.scoring.synthetic``), so a peak
belongs to that run alone. The runs use the stored judge and the fast, deterministic
:class:`creagraph.core.embeddings.HashingEmbedder` (the MiniLM model embeds ~120 paths/s
on a laptop core: a million paths would take hours and measure the model, not the
pipeline); every other stage (reading, parsing, validity, judgments, utility, output,
resume bookkeeping, summary) is the one the CLI runs. The inputs and outputs (about
1.3 GB at the default size) are written to a temporary directory and removed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from creagraph.scoring.synthetic import add_size_options

ROOT = Path(__file__).resolve().parent.parent

_LIST_BASELINE = """
import json, sys, time
from creagraph.core.embeddings import HashingEmbedder
from creagraph.scoring.api import ScorerConfig, build_scorer
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.pipeline import score_files
from creagraph.scoring.synthetic import peak_rss_mib
scorer = build_scorer(ScorerConfig(judge="stored", mode="paper", threads=None),
                      embedder=HashingEmbedder(256))
before = peak_rss_mib()
start = time.perf_counter()
rows = read_answers([sys.argv[1]])
score_files(rows, scorer, sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - start, "rss_before_mib": before,
                  "peak_rss_mib": peak_rss_mib()}))
"""


def _python(*args: str) -> dict:
    env = {**os.environ, "CREAGRAPH_PROGRESS": "0"}
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}


def scoring_run(workdir: Path, queries: int, paths: int) -> dict:
    """Generate (one process) then score (a fresh process) a synthetic input."""
    t0 = time.perf_counter()
    module = ["-m", "creagraph.scoring.synthetic", str(workdir)]
    _python(*module, "--queries", str(queries), "--paths", str(paths), "--generate-only")
    generate = time.perf_counter() - t0
    result = _python(*module, "--queries", str(queries), "--paths", str(paths))
    result["generate_seconds"] = generate
    result["input_mib"] = (workdir / "answers.jsonl").stat().st_size / 2**20
    result["paths_jsonl_mib"] = (workdir / "scored" / "paths.jsonl").stat().st_size / 2**20
    return result


def fuzz(seconds: float, seed: int) -> dict | None:
    """Run ``benchmarks/fuzz.py``'s ``fuzz_parser`` (imported lazily: it is optional)."""
    path = Path(__file__).resolve().parent / "fuzz.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("creagraph_benchmark_fuzz", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.fuzz_parser(seconds, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz-seconds", type=float, default=60.0)
    add_size_options(parser, queries=50_000)  # --seed: the parser fuzz's
    parser.add_argument("--small-queries", type=int, default=2_500)
    parser.add_argument("--workdir", type=Path, help="keep inputs/outputs here (default: tmp)")
    parser.add_argument("--skip-fuzz", action="store_true")
    args = parser.parse_args(argv)

    if not args.skip_fuzz:
        result = fuzz(args.fuzz_seconds, args.seed)
        if result is None:
            print("parser fuzz: benchmarks/fuzz.py not found, skipped")
        else:
            print(
                f"parser fuzz ({result['seconds']} s, seed {result['seed']}): "
                f"{result['iterations']:,} iterations "
                f"({result.get('inputs_per_second', 0):,.0f} inputs/s), "
                f"{result.get('distinct_crashes', '?')} distinct crashes, "
                f"{result.get('stalls', '?')} stalls"
            )

    with tempfile.TemporaryDirectory(prefix="creagraph-reliability-", dir=args.workdir) as tmp:
        work = Path(tmp)
        small = scoring_run(work / "small", args.small_queries, args.paths)
        baseline = _python(
            "-c",
            _LIST_BASELINE,
            str(work / "small" / "answers.jsonl"),
            str(work / "small" / "list-baseline"),
        )
        large = scoring_run(work / "large", args.queries, args.paths)

    def line(name: str, r: dict) -> str:
        rate = r["paths"] / r["seconds"] if r["seconds"] else float("nan")
        return (
            f"{name}: {r['paths']:,} paths ({r['queries']:,} queries, input "
            f"{r['input_mib']:,.0f} MiB, paths.jsonl {r['paths_jsonl_mib']:,.0f} MiB) scored in "
            f"{r['seconds']:,.1f} s ({rate:,.0f} paths/s); peak RSS {r['peak_rss_mib']:.1f} MiB "
            f"(after imports {r['rss_before_mib']:.1f} MiB)"
        )

    print("streaming scoring (stored judge, HashingEmbedder(256), paper mode):")
    print("  " + line("small", small))
    print("  " + line("large", large))
    growth_small = small["peak_rss_mib"] - small["rss_before_mib"]
    growth_large = large["peak_rss_mib"] - large["rss_before_mib"]
    print(
        f"  peak RSS ratio large/small: {large['peak_rss_mib'] / small['peak_rss_mib']:.3f} "
        f"for {large['paths'] / small['paths']:.0f}x the paths; growth above imports "
        f"{growth_small:.1f} MiB -> {growth_large:.1f} MiB"
    )
    print(
        f"baseline (all {small['paths']:,} small-run rows held in a list, read_answers): "
        f"peak RSS {baseline['peak_rss_mib']:.1f} MiB (growth above imports "
        f"{baseline['peak_rss_mib'] - baseline['rss_before_mib']:.1f} MiB), "
        f"{baseline['peak_rss_mib'] / small['peak_rss_mib']:.2f}x the streaming run's peak"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
