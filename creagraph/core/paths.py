"""Where the repository's data folders live (``wikidata/``, ``docs/``), and small readers of
them."""

from __future__ import annotations

import functools
from pathlib import Path

from creagraph.core import settings

__all__ = [
    "wikidata_dir",
    "spec_path",
    "default_store_dir",
    "default_slice_path",
    "inverse_labels",
]


def wikidata_dir() -> Path:
    """The ``wikidata/`` data folder (catalogues, phrasing, SPARQL templates).

    ``$CREAGRAPH_WIKIDATA_DIR`` overrides. An installed package carries the folder as
    package data (``creagraph/wikidata``, found with :mod:`importlib.resources`); a
    checkout (or an editable install) uses the folder at the top of the repository.
    """
    env = settings.value("CREAGRAPH_WIKIDATA_DIR")
    if env:
        path = Path(env)
    else:
        path = _packaged_wikidata() or Path(__file__).resolve().parents[2] / "wikidata"
    if not path.is_dir():
        raise FileNotFoundError(
            f"{path}: wikidata data folder not found (reinstall creagraph, or set "
            "CREAGRAPH_WIKIDATA_DIR to a copy of the repository's wikidata/ folder)"
        )
    return path


def _packaged_wikidata() -> Path | None:
    """``creagraph/wikidata`` inside an installed package, if it is there on disk."""
    return _packaged_folder("wikidata")


def _packaged_folder(name: str) -> Path | None:
    """``creagraph/<name>`` inside an installed package, if it is there on disk."""
    from importlib.resources import files

    try:
        folder = files("creagraph") / name
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - unusual loaders
        return None
    return folder if isinstance(folder, Path) and folder.is_dir() else None


def spec_path() -> Path:
    """creagraph's specification, the document every "SPEC §x.y" citation refers to.

    An installed package carries it as package data (``creagraph/docs/spec.md``); a
    checkout (or an editable install) reads ``docs/spec.md`` at the top of the repository.

    Examples
    --------
    >>> spec_path().read_text(encoding="utf-8").startswith("# creagraph specification")
    True
    """
    folder = _packaged_folder("docs") or Path(__file__).resolve().parents[2] / "docs"
    path = folder / "spec.md"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: creagraph's specification not found (reinstall creagraph)"
        )
    return path


def default_store_dir() -> Path:
    """Default embedded store: ``$CREAGRAPH_STORE`` or ``~/.cache/creagraph/store``
    (:func:`creagraph.core.settings.store_dir`)."""
    return settings.store_dir()


def default_slice_path() -> Path:
    """The shared Wikidata slice: ``$CREAGRAPH_SLICE``, else ``data/wikidata-slice/
    slice.nt.gz`` in the shared folder (:func:`creagraph.core.settings.slice_path`)."""
    return settings.slice_path()


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
