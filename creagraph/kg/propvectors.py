"""Saving property-name vectors in a store (issues 19 and 31; SPEC §3.4).

By default the vectors are saved by the first run that needs them: relation linking asks
:func:`creagraph.core.propvectors.saved_name_vectors`, which computes them by the cold run's
exact call and hands them to :func:`save_property_vectors` (registered here as the store
writer), so that ``kg import`` costs what it costs without them. Saving is safe: under the
store's import lock (:class:`~creagraph.kg.store._StoreLock`), only into the store that was
opened (``meta.json`` unchanged since), the file written atomically and then its size and
SHA-256 in :data:`~creagraph.core.propvectors.RECORD_NAME` (atomically too), which linking
checks before reading the file; ``meta.json`` — the store's identity for every cache and
resumable run keyed on it — is not changed, since the vectors change no result. A store
that cannot be written gets nothing saved and the reason back.

With ``CREAGRAPH_PROPERTY_VECTORS=import``, :func:`add_property_vectors` embeds them at
import instead (for a store that will be read-only). Without the embedding libraries
(torch, sentence-transformers and the packaged weights) nothing is written either way;
linking then embeds the names itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from creagraph.core.io import InputError, atomic_write, sha256_file
from creagraph.core.propvectors import (
    FILE_NAME,
    RECORD_NAME,
    compute_property_vectors,
    register_store_writer,
    save_mode,
    write_property_vectors,
)
from creagraph.kg.store import _file_digest, _StoreLock

__all__ = ["add_property_vectors", "save_property_vectors"]


def add_property_vectors(store: str | os.PathLike[str]) -> bool:
    """Embed the property names of the store at ``store`` and save them beside it, when
    ``CREAGRAPH_PROPERTY_VECTORS=import`` (else they are saved on first use).

    ``store`` must hold a complete store (``meta.json`` written). Returns whether the file
    was written (``False`` without the embedding libraries or unless asked at import).
    """
    from creagraph.kg.embedded import EmbeddedKG

    if save_mode() != "import":
        return False
    folder = Path(store)
    kg = EmbeddedKG(folder)
    try:
        computed = compute_property_vectors(kg)
    finally:
        kg.close()
    if computed is None:
        return False
    texts, vectors, identity = computed
    _write(folder, json.loads((folder / "meta.json").read_text(encoding="utf-8")),
           texts, vectors, identity)  # fmt: skip
    return True


def _write(folder: Path, meta: dict, texts: list[str], vectors: np.ndarray,
           identity: dict) -> None:  # fmt: skip
    """Write the file, then ``meta`` with its digest (both atomically): at import, into the
    build folder; a failure to write ``meta.json`` removes the file again."""
    path = folder / FILE_NAME
    write_property_vectors(path, texts, vectors, identity)
    try:
        meta = {**meta, "files": {**meta["files"], FILE_NAME: _file_digest(path)}}
        with atomic_write(folder / "meta.json") as handle:
            json.dump(meta, handle, indent=1)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def save_property_vectors(
    store: Path, opened: dict, texts: list[str], vectors: np.ndarray, identity: dict
) -> str | None:
    """Save vectors computed on first use into the store at ``store``, opened with the
    ``meta.json`` record ``opened``: the file, then its size and SHA-256 (and the SHA-256 of
    ``meta.json``, left as it is) in :data:`~creagraph.core.propvectors.RECORD_NAME`, both
    atomically. ``None`` when saved, else why they were not (the store's lock held by an
    import or by another run saving them, the store replaced or changed since it was
    opened, or a folder that cannot be written)."""
    try:
        lock = _StoreLock(store)
    except InputError:
        return "another process is writing the store: an import, or another run saving them"
    except OSError as exc:
        return f"its folder cannot be written: {exc.strerror or exc}"
    try:
        try:
            meta = json.loads((store / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return f"its meta.json cannot be read again: {exc}"
        if meta != opened:
            return "the store changed since this run opened it"
        path = store / FILE_NAME
        write_property_vectors(path, texts, vectors, identity)
        record = {FILE_NAME: _file_digest(path), "meta_sha256": sha256_file(store / "meta.json")}
        with atomic_write(store / RECORD_NAME) as handle:
            json.dump(record, handle, indent=1)
    except OSError as exc:
        return f"it cannot be written: {exc.strerror or exc}"
    finally:
        lock.release()
    return None


register_store_writer(save_property_vectors)
