"""Where the repository's data folders live (``wikidata/``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["wikidata_dir", "default_store_dir", "default_slice_path"]


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
