"""Shared core: data types, text normalisation, embeddings, I/O, progress bars.

Nothing in ``creagraph.core`` imports from the job subpackages (kg, scoring, querygen,
tig, judgments); they all import from here.
"""

from creagraph.core.graph import (
    Category,
    Edge,
    EntityRecord,
    KnowledgeGraph,
    PropertyRecord,
    SearchHit,
    UnknownIdError,
    check_pid,
    check_qid,
    is_pid,
    is_qid,
)
from creagraph.core.io import InputError
from creagraph.core.text import normalize, normalize_loose

__all__ = [
    "Category",
    "Edge",
    "EntityRecord",
    "InputError",
    "KnowledgeGraph",
    "PropertyRecord",
    "SearchHit",
    "UnknownIdError",
    "check_pid",
    "check_qid",
    "is_pid",
    "is_qid",
    "normalize",
    "normalize_loose",
]
