"""CREATE scoring benchmark.

Run: ``.venv/bin/python benchmarks/score.py [--store DIR] [--rows N]``. Prints:

- paths scored per second end to end on the shared sample outputs with the kg judge, with a
  cold embedding cache and again warm (same run, same cache);
- pure embedding throughput of the same path strings (the model alone, no cache);
- greedy ordering time at n = 100, 1,000 and 5,000 for the O(n²) implementation against a
  straightforward O(n³) implementation of the same rule (baseline), with the ratio, after
  checking both give the same order;
- a grounding report: fraction of entity mentions and triples grounded in the slice, and on
  grounded triples the agreement between kg-σ and the published judge's σ (exact, ±1).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import KG_PAPER, parser_with_store, sample_outputs, slice_store

from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder
from creagraph.core.metrics import greedy_order, path_string
from creagraph.scoring.api import build_scorer
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.parse import parse_answer


def cubic_greedy(q: np.ndarray, d: np.ndarray) -> list[int]:
    n = len(q)
    chosen = [int(np.argmax(q))]
    left = set(range(n)) - set(chosen)
    while left:
        best, gain = -1, -1.0
        for i in sorted(left):
            g = q[i] * min(d[i, j] for j in chosen)
            if g > gain:
                best, gain = i, g
        chosen.append(best)
        left.remove(best)
    return chosen


def main() -> None:
    parser = parser_with_store(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20, help="sample rows to score")
    args = parser.parse_args()
    samples = sample_outputs()
    kg = slice_store(args.store)
    _end_to_end(kg, read_answers(samples)[: args.rows])
    _greedy_timing()
    _grounding_report(kg, samples)


def _end_to_end(kg, rows) -> None:
    """Paths scored per second, cold and warm cache, and the model's own throughput."""
    with tempfile.TemporaryDirectory() as tmp:
        model = SentenceTransformerEmbedder()
        embedder = CachedEmbedder(model, Path(tmp) / "cache.sqlite")
        for label in ("cold cache", "warm cache"):
            # the same embedder (and so the same on-disk cache) both times: cold, then warm
            scorer = build_scorer(KG_PAPER, kg=kg, embedder=embedder)
            t = time.perf_counter()
            n_paths = sum(len(scorer.score(r).paths) for r in rows)
            dt = time.perf_counter() - t
            print(
                f"end to end, kg judge, {label}: {n_paths} paths in {dt:.1f} s = "
                f"{n_paths / dt:.1f} paths/s"
            )
        strings = [
            path_string(p.triples)
            for r in rows
            for p in parse_answer(r.answer).paths
            if all(len(t) == 3 for t in p.triples)
        ]
        model.encode(strings[:8])
        t = time.perf_counter()
        model.encode(strings)
        dt = time.perf_counter() - t
        rate = len(strings) / dt
        print(f"pure embedding: {len(strings)} path strings in {dt:.1f} s = {rate:.0f} strings/s")


def _greedy_timing() -> None:
    """The O(n²) greedy order against the O(n³) baseline (same order checked)."""
    rng = np.random.default_rng(0)
    for n in (100, 1000, 5000):
        v = rng.normal(size=(n, 32))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        d = np.clip(1 - v @ v.T, 0, 1)
        q = rng.integers(1, 6, size=n).astype(float)
        t = time.perf_counter()
        fast, _ = greedy_order(q, d)
        t_fast = time.perf_counter() - t
        if n <= 1000:
            t = time.perf_counter()
            slow = cubic_greedy(q, d)
            t_slow = time.perf_counter() - t
            assert slow == fast, "O(n^3) and O(n^2) orders differ"
            print(
                f"greedy n={n}: O(n²) {t_fast * 1000:.1f} ms, "
                f"O(n³) baseline {t_slow * 1000:.0f} ms, ratio {t_slow / t_fast:.0f}x (same order)"
            )
        else:
            est = t_slow * (n / 1000) ** 3
            print(
                f"greedy n={n}: O(n²) {t_fast * 1000:.1f} ms, O(n³) baseline estimated "
                f"{est:.0f} s from n=1000 (not run), ratio ~{est / t_fast:.0f}x"
            )


def _grounding_report(kg, samples) -> None:
    """Entity mentions and triples grounded in the slice; kg-σ against the published σ."""
    grounder = build_scorer(
        KG_PAPER, kg=kg, embedder=CachedEmbedder(SentenceTransformerEmbedder())
    ).judge.grounder
    mentions = linked = triples = grounded = exact = within = compared = 0
    for r in read_answers(samples):
        stored = r.extra["raw_salience_scores_0"]
        for i, p in enumerate(parse_answer(r.answer).paths):
            for k, t in enumerate(p.triples):
                if len(t) != 3:
                    continue
                triples += 1
                g = grounder.ground(*t)
                mentions += 2
                linked += 2 - len({"head", "tail"} & set(g.evidence.get("unlinked", [])))
                if g.status == "verified":
                    grounded += 1
                    if i < len(stored) and k < len(stored[i]):
                        compared += 1
                        diff = abs(g.specificity - int(stored[i][k]))
                        exact += diff == 0
                        within += diff <= 1
    print(
        json.dumps(
            {
                "entity_mentions_linked": round(linked / mentions, 3),
                "triples_verified_in_slice": round(grounded / triples, 3),
                "sigma_agreement_exact": round(exact / compared, 3) if compared else None,
                "sigma_agreement_within_1": round(within / compared, 3) if compared else None,
                "triples": triples,
                "verified": grounded,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
