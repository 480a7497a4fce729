"""Synthetic answer files for dry runs and scale measurements of the scoring pipeline.

:func:`write_synthetic_answers` writes a JSON Lines file of answer rows shaped like the
published CREATE outputs (query fields, a raw ``path_prediction`` with an ``<answer>``
JSON block, per-path stored judgments, and a few kilobytes of prompt text as the
published rows carry), generated deterministically from a seed and streamed to disk, so
any size can be produced in bounded memory. Scored with the ``stored`` judge and a
:class:`~creagraph.core.embeddings.HashingEmbedder`, such a file exercises every stage
of :func:`~creagraph.scoring.pipeline.score_files` (parse, validity, judgments,
embedding, utility, output) without a model or a knowledge graph.

:func:`measure_scoring` scores such a file and reports the peak resident memory; run it
in a fresh process (``python -m creagraph.scoring.synthetic``) so the peak belongs to the
scoring run alone. The scores mean nothing: the entities are made up.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

from creagraph.core.io import atomic_write

__all__ = ["write_synthetic_answers", "measure_scoring", "peak_rss_mib", "add_size_options"]

_WORDS = (
    *("river", "stone", "amber", "quartz", "violin", "harbor", "cedar", "lantern", "orbit"),
    *("meadow", "falcon", "copper", "glacier", "saffron", "tundra", "velvet", "cobalt"),
    *("prairie", "ember", "lattice"),
)
_RELATIONS = ("part of", "located in", "member of", "influenced by", "genre", "award received")


def _name(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS).capitalize() for _ in range(2)) + f" {rng.randrange(10**6)}"


def synthetic_row(index: int, paths_per_query: int, seed: int = 0) -> dict[str, Any]:
    """One synthetic answer row (deterministic in ``index`` and ``seed``)."""
    rng = random.Random(seed * 1_000_003 + index)
    a, b = _name(rng), _name(rng)
    rel_b = rng.choice(_RELATIONS)
    answer: dict[str, list[list[str]]] = {}
    salience: list[list[int]] = []
    factuality: list[list[float]] = []
    for p in range(paths_per_query):
        hops = rng.randint(1, 3)
        nodes = [a] + [_name(rng) for _ in range(hops)] + [b]
        triples = [
            [nodes[i], rng.choice(_RELATIONS) if i < hops else rel_b, nodes[i + 1]]
            for i in range(hops + 1)
        ]
        answer[str(p + 1)] = triples
        salience.append([rng.randint(1, 5) for _ in triples])
        factuality.append([1.0 if rng.random() < 0.9 else 0.0 for _ in triples])
    text = "<answer>" + json.dumps(answer, indent=2) + "</answer>"
    return {
        "index": index,
        "model": "synthetic",
        "query": f"What are different ways of connecting {a} and something whose {rel_b} is {b}?",
        "entity_a": a,
        "entity_b": b,
        "rel_b": rel_b,
        "path_prediction": [text],
        "raw_salience_scores_0": salience,
        "parsed_scores_factuality_0": factuality,
        # published rows carry the prompts (several kB); keep the rows as heavy
        "prompt": "Task: identify how two real-world entities are connected. " * 40,
    }


def write_synthetic_answers(
    path: str | os.PathLike[str], n_queries: int, paths_per_query: int = 20, seed: int = 0
) -> Path:
    """Write ``n_queries`` synthetic rows of ``paths_per_query`` paths each (atomically,
    streamed) and return the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = write_synthetic_answers(pathlib.Path(tempfile.mkdtemp()) / "a.jsonl", 3, 2)
    >>> from creagraph.scoring.inputs import read_answers
    >>> [len(r.extra["raw_salience_scores_0"]) for r in read_answers([f])]
    [2, 2, 2]
    """
    target = Path(path)
    with atomic_write(target) as handle:
        for index in range(n_queries):
            handle.write(json.dumps(synthetic_row(index, paths_per_query, seed)) + "\n")
    return target


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB (Linux: ``VmHWM``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_scoring(
    answers: str | os.PathLike[str], out_dir: str | os.PathLike[str], dim: int = 256
) -> dict[str, Any]:
    """Score ``answers`` (stored judge, :class:`HashingEmbedder`, paper mode) into
    ``out_dir`` by streaming, and return counts, seconds and peak RSS (MiB) before and
    after scoring. Call it in a fresh process for a meaningful peak."""
    from creagraph.core.embeddings import HashingEmbedder
    from creagraph.scoring.api import ScorerConfig, build_scorer
    from creagraph.scoring.inputs import count_answers, iter_answers
    from creagraph.scoring.pipeline import score_files

    config = ScorerConfig(judge="stored", mode="paper", threads=None)
    scorer = build_scorer(config, embedder=HashingEmbedder(dim))
    baseline = peak_rss_mib()
    start = time.perf_counter()
    counts = score_files(iter_answers([answers]), scorer, out_dir, total=count_answers([answers]))
    seconds = time.perf_counter() - start
    n_paths = 0
    with (Path(out_dir) / "paths.jsonl").open("rb") as handle:
        n_paths = sum(1 for _ in handle)
    return {
        **counts,
        "paths": n_paths,
        "seconds": seconds,
        "rss_before_mib": baseline,
        "peak_rss_mib": peak_rss_mib(),
    }


def add_size_options(parser: argparse.ArgumentParser, *, queries: int) -> None:
    """The ``--queries``, ``--paths`` (per answer) and ``--seed`` options of a synthetic
    input (here and in ``benchmarks/reliability.py``)."""
    parser.add_argument("--queries", type=int, default=queries)
    parser.add_argument("--paths", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)


def main(argv: list[str] | None = None) -> int:
    """``python -m creagraph.scoring.synthetic OUT_DIR --queries N --paths K``: write a
    synthetic input (unless ``--answers`` names one), score it, print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    add_size_options(parser, queries=1000)
    parser.add_argument("--answers", type=Path, help="score this file instead of writing one")
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    answers = args.answers or args.out_dir / "answers.jsonl"
    if args.answers is None and not answers.exists():
        write_synthetic_answers(answers, args.queries, args.paths, args.seed)
    if args.generate_only:
        return 0
    result = measure_scoring(answers, args.out_dir / "scored")
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
