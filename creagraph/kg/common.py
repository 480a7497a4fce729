"""Pieces shared by every knowledge-graph backend: ranking search hits, inverse phrasing."""

from __future__ import annotations

import re
from collections.abc import Callable

from creagraph.core.graph import SearchHit
from creagraph.core.paths import inverse_labels

__all__ = ["inverse_labels", "rank_hits", "id_number", "id_prefix", "search_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def search_text(text: str) -> str:
    r"""Search text as a backend can use it: a lone UTF-16 surrogate (valid in JSON as
    ``"\ud800"``, and what undecodable bytes in a command line become) is no character
    and cannot be encoded; it becomes U+FFFD, which matches no name, instead of an error.

    Examples
    --------
    >>> search_text("Paris\ud800") == "Paris\ufffd"
    True
    """
    return _SURROGATE.sub("\ufffd", text)


def id_prefix(kind: str) -> str:
    """``"Q"`` for ``kind="entity"``, ``"P"`` for ``kind="property"``; else ``ValueError``."""
    if kind not in ("entity", "property"):
        raise ValueError(f"kind must be 'entity' or 'property', not {kind!r}")
    return "Q" if kind == "entity" else "P"


def id_number(ident: str) -> int:
    """Numeric part of a QID/PID, for a stable sort order."""
    return int(ident[1:])


def rank_hits(
    hits: list[SearchHit],
    limit: int,
    popularity: Callable[[list[str]], dict[str, int]],
    labels: Callable[[list[str]], dict[str, str]],
) -> list[SearchHit]:
    """Merge hits per id and order them the same way in every backend.

    Order: exact matches first, then higher fuzzy score, label matches before alias
    matches, more statements (popularity) first, then the smaller id.
    """
    best: dict[str, SearchHit] = {}
    for hit in hits:
        current = best.get(hit.id)
        rank = (hit.exact, hit.score, hit.kind == "label", hit.matched)
        if current is None or rank > (
            current.exact,
            current.score,
            current.kind == "label",
            current.matched,
        ):
            best[hit.id] = hit
    ids = list(best)
    pop = popularity(ids) if ids else {}
    ordered = sorted(
        best.values(),
        key=lambda h: (
            not h.exact,
            -h.score,
            h.kind != "label",
            -pop.get(h.id, 0),
            id_number(h.id),
        ),
    )[:limit]
    names = labels([h.id for h in ordered])
    return [SearchHit(h.id, names.get(h.id), h.matched, h.kind, h.score, h.exact) for h in ordered]
