"""Setup shared by the scoring benchmarks (``grounding.py``, ``score.py``): the published
sample outputs on the shared data and the embedded store of the Wikidata slice.

Imported by those scripts as ``_common`` (a script's own folder is first on ``sys.path``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from creagraph.core.paths import default_slice_path, default_store_dir
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.scoring.config import ScorerConfig

__all__ = ["KG_PAPER", "STORED_PAPER", "parser_with_store", "sample_outputs", "slice_store"]

# The kg and the stored judge in paper mode, the library's default wiring; threads=None
# leaves the libraries' thread pools as they are (the benchmarks measured them that way
# before the API).
KG_PAPER = ScorerConfig(judge="kg", mode="paper", threads=None)
STORED_PAPER = ScorerConfig(judge="stored", mode="paper", threads=None)


def parser_with_store(description: str) -> argparse.ArgumentParser:
    """An argument parser with the benchmarks' ``--store DIR`` option."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--store", type=Path, default=default_store_dir())
    return parser


def sample_outputs() -> list[Path]:
    """The published sample outputs (``external/create-leaderboard/sample_outputs``)."""
    folder = default_slice_path().parents[2] / "external/create-leaderboard/sample_outputs"
    return sorted(folder.glob("*.jsonl"))


def slice_store(store: Path) -> EmbeddedKG:
    """The embedded store of the shared Wikidata slice in ``store`` (imported if needed)."""
    import_dumps([default_slice_path()], store, show_progress=False)
    return EmbeddedKG(store)
