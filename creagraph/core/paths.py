"""Where the repository's data folders live (``wikidata/``), and small readers of them."""

from __future__ import annotations

import functools
import os
from pathlib import Path

__all__ = ["wikidata_dir", "default_store_dir", "default_slice_path", "inverse_labels"]


def wikidata_dir() -> Path:
    """The ``wikidata/`` data folder (catalogues, phrasing, SPARQL templates).

    ``$CREAGRAPH_WIKIDATA_DIR`` overrides; otherwise the folder beside the package.
    """
    env = os.environ.get("CREAGRAPH_WIKIDATA_DIR")
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "wikidata"
    if not path.is_dir():
        raise FileNotFoundError(
            f"{path}: wikidata data folder not found (install creagraph from its repository "
            "with `pip install -e .`, or set CREAGRAPH_WIKIDATA_DIR)"
        )
    return path


def default_store_dir() -> Path:
    """Default embedded store: ``$CREAGRAPH_STORE`` or ``~/.cache/creagraph/store``."""
    env = os.environ.get("CREAGRAPH_STORE")
    if env:
        return Path(env)
    cache = os.environ.get("CREAGRAPH_CACHE_DIR")
    return (Path(cache) if cache else Path.home() / ".cache" / "creagraph") / "store"


def default_slice_path() -> Path:
    """The shared Wikidata slice: ``$CREAGRAPH_SLICE`` or ``../shared/data/wikidata-slice/
    slice.nt.gz`` relative to the repository root."""
    env = os.environ.get("CREAGRAPH_SLICE")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parents[2]
    return root.parent / "shared" / "data" / "wikidata-slice" / "slice.nt.gz"


@functools.cache
def inverse_labels() -> dict[str, str]:
    """PID -> inverse phrasing, from ``wikidata/inverse_labels.tsv``."""
    out: dict[str, str] = {}
    path = wikidata_dir() / "inverse_labels.tsv"
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(
                f"{path}:{lineno}: expected 3 tab-separated fields (pid, label, inverse)"
            )
        out[parts[0]] = parts[2]
    return out
