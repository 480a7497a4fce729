"""Pieces shared by every knowledge-graph backend: inverse phrasing, and (re-exported from
:mod:`creagraph.core.graph`, where the shared search lives) ranking search hits."""

from __future__ import annotations

from creagraph.core.graph import id_number, id_prefix, rank_hits, search_text
from creagraph.core.paths import inverse_labels

__all__ = ["inverse_labels", "rank_hits", "id_number", "id_prefix", "search_text"]
