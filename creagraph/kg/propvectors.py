"""The import step that saves property-name vectors in a new store (issue 19).

:func:`add_property_vectors` is called by :func:`~creagraph.kg.embedded.import_dumps` on
the freshly built store, before it replaces the old one: it embeds the property names
relation linking uses (:mod:`creagraph.core.propvectors`), writes
:data:`~creagraph.core.propvectors.FILE_NAME` and records its size and SHA-256 in
``meta.json``, where opening the store checks them like every other file. Without the
embedding libraries (torch, sentence-transformers and the packaged weights) nothing is
written and the import succeeds as before; linking then embeds the names itself.
``CREAGRAPH_PROPERTY_VECTORS=0`` skips the step too (an import that does not want the model
loaded).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from creagraph.core import settings
from creagraph.core.io import atomic_write
from creagraph.core.propvectors import (
    FILE_NAME,
    compute_property_vectors,
    write_property_vectors,
)
from creagraph.kg.store import _file_digest

__all__ = ["add_property_vectors"]


def add_property_vectors(store: str | os.PathLike[str]) -> bool:
    """Embed the property names of the store at ``store`` and save them beside it.

    ``store`` must hold a complete store (``meta.json`` written). Returns whether the file
    was written (``False`` without the embedding libraries or with
    ``CREAGRAPH_PROPERTY_VECTORS=0``).
    """
    from creagraph.kg.embedded import EmbeddedKG

    if not settings.enabled("CREAGRAPH_PROPERTY_VECTORS"):
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
    path = folder / FILE_NAME
    write_property_vectors(path, texts, vectors, identity)
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["files"][FILE_NAME] = _file_digest(path)
    with atomic_write(meta_path) as handle:
        json.dump(meta, handle, indent=1)
    return True
