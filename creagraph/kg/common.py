"""Pieces shared by every knowledge-graph backend: ranking search hits, inverse phrasing."""

from __future__ import annotations

import functools
from collections.abc import Callable

from creagraph.core.graph import SearchHit
from creagraph.core.paths import wikidata_dir

__all__ = ["inverse_labels", "rank_hits", "id_number"]


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
