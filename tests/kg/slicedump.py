"""A small N-Triples dump cut from the shared Wikidata slice, for tests that import a store of
their own (damage, saved tables, property vectors) without the whole slice's import time."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path


def slice_dump(slice_path: Path, folder: Path, step: int, count: int = 20_000) -> Path:
    """``folder/part.nt``: every ``step``-th line of the slice, the first ``count`` of them."""
    with gzip.open(slice_path, "rb") as handle:
        lines = list(itertools.islice(handle, 0, None, step))[:count]
    dump = folder / "part.nt"
    dump.write_bytes(b"".join(lines))
    return dump
