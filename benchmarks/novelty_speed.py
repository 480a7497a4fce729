"""Cold ``tig score`` against the embedding limit (issue 31 bullet; information only).

A cold run of ``tig score`` (empty embedding cache) on human answers of
``../shared/external/aut-human/aut_human_dev.csv`` (prompts chosen with ``--prompts``,
participants hashed into 10 pseudo-models as in ``novelty_human.py``) is timed from the
model load to the last score: atom extraction, every embedding, scoring. The *embedding
limit* is the same work's floor: loading the model and encoding, in one batched call, exactly
the distinct strings the cold run sent to the model (recorded during the run). Each side
runs in its own process with its own empty cache; the printed ratio is limit ÷ cold (1.0 =
scoring costs nothing beyond the embeddings; the issue's target is ≥ 0.7).

Usage::

    python benchmarks/novelty_speed.py --shared-dir ../shared --prompts fork,shoe
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))


class _Recording:
    """An embedder that records every text it is asked to encode."""

    def __init__(self, embedder: object):
        self.embedder = embedder
        self.name = embedder.name  # type: ignore[attr-defined]
        self.texts: list[str] = []

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)  # type: ignore[attr-defined]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.asarray(self.embedder.encode(texts))  # type: ignore[attr-defined]


def _cold_score(shared: Path, prompts: set[str], cache_dir: Path, texts_out: Path) -> dict:
    from novelty_human import DEV_FILE, load

    from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder
    from creagraph.tig.atoms import OfflineExtractor
    from creagraph.tig.population import build_atom_tables
    from creagraph.tig.score import score_tables

    responses, _ = load(shared / DEV_FILE, prompts)
    start = time.perf_counter()
    model = _Recording(SentenceTransformerEmbedder())
    embedder = CachedEmbedder(model, cache_dir / "embeddings.sqlite")  # type: ignore[arg-type]
    tables = build_atom_tables(responses, OfflineExtractor(embedder), embedder,
                               show_progress=False)
    built = time.perf_counter()
    run = score_tables(tables, embedder, show_progress=False)
    seconds = time.perf_counter() - start
    texts_out.write_text(json.dumps(model.texts), encoding="utf-8")
    return {"seconds": seconds, "tables_seconds": built - start, "answers": len(responses),
            "scored": len(run.scores), "texts": len(model.texts),
            "distinct_texts": len(set(model.texts))}


def _limit(texts_file: Path) -> dict:
    from creagraph.core.embeddings import SentenceTransformerEmbedder

    texts = list(dict.fromkeys(json.loads(texts_file.read_text(encoding="utf-8"))))
    start = time.perf_counter()
    SentenceTransformerEmbedder().encode(texts)
    return {"seconds": time.perf_counter() - start, "texts": len(texts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared-dir", type=Path, default=None)
    parser.add_argument("--prompts", default="fork,shoe")
    parser.add_argument("--mode", choices=("both", "cold", "limit"), default="both",
                        help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    from creagraph.tig.adapters import default_shared_dir

    shared = args.shared_dir or default_shared_dir()
    prompts = {p.strip() for p in args.prompts.split(",") if p.strip()}
    if args.mode == "cold":
        print(json.dumps(_cold_score(shared, prompts, args.work, args.work / "texts.json")))
        return
    if args.mode == "limit":
        print(json.dumps(_limit(args.work / "texts.json")))
        return
    with tempfile.TemporaryDirectory(prefix="novelty-speed-") as work:
        results = {}
        for mode in ("cold", "limit"):
            done = subprocess.run(
                [sys.executable, __file__, "--mode", mode, "--work", work, "--prompts",
                 args.prompts, "--shared-dir", str(shared)],
                check=True, capture_output=True, text=True,
                env={**os.environ, "CREAGRAPH_CACHE_DIR": work})
            results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    cold, limit = results["cold"], results["limit"]
    print(f"prompts {args.prompts}: {cold['answers']} answers, {cold['scored']} scored; "
          f"{cold['texts']} texts sent to the model ({cold['distinct_texts']} distinct)")
    print(f"cold tig score (model load → last score): {cold['seconds']:.1f} s "
          f"(tables {cold['tables_seconds']:.1f} s)")
    print(f"embedding limit (model load + one batched encode of the same "
          f"{limit['texts']} strings): {limit['seconds']:.1f} s")
    print(f"ratio limit ÷ cold: {limit['seconds'] / cold['seconds']:.2f} (target ≥ 0.7)")


if __name__ == "__main__":
    main()
