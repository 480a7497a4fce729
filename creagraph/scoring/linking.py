"""Linking entity mentions to graph ids, knowing when it does not know (SPEC §3.4).

:class:`EntityLinker` finds candidates for a mention by label/alias search (exact after
normalisation first). It is careful where a wrong link would turn into a wrong verdict:

- a parenthetical or comma qualifier ("Michael Jackson (singer)", "The Office (U.S. TV
  series)", "Gary, Indiana") is a disambiguation hint when the whole mention has no exact
  match: the bare name is searched and its candidates are ordered by how many hint words
  their label and description share;
- a fuzzy match is accepted only when every distinctive name token agrees (same number of
  tokens after dropping "the/a/an/of/and"; tokens equal, a plural, or one edit apart in
  words of at least five letters, never on the first letter): "Dan Marino" never links to
  Daniel Martin, "Robert Boyle" never to Robert F. Boyle, "Prussian Academy" never to the
  Russian Academy;
- every link carries a confidence: 1.0 for a unique exact match, 0.9 when a hint singled
  the candidate out, 1/k among k equally good exact matches, at most 0.6 for a fuzzy one.

Ranking by the property's expected types and by the query's entities needs the triple, so
it happens in :mod:`creagraph.scoring.grounding`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.text import normalize_loose

if TYPE_CHECKING:
    from creagraph.scoring.groundcache import GroundingCache

__all__ = ["EntityLink", "EntityLinker", "same_name", "split_qualifier"]

_STOP = frozenset({"the", "a", "an", "of", "and"})
_PAREN = re.compile(r"^(?P<base>.*?)\s*[(\[](?P<hint>[^()\[\]]*)[)\]]\s*$")


@dataclass(frozen=True)
class EntityLink:
    """One candidate id for a mention. ``method``: ``label``, ``alias`` (exact), ``hint``
    (exact on the name without its qualifier), ``fuzzy`` or ``query`` (the query's own
    entity); ``score`` is the search score (100 exact); ``confidence`` as in the module
    docstring."""

    qid: str
    label: str | None
    method: str
    score: float
    confidence: float = 1.0


def split_qualifier(mention: str) -> tuple[str, str] | None:
    """``(name, hint)`` for "name (hint)" or "name, hint"; ``None`` without a qualifier.

    Examples
    --------
    >>> split_qualifier("Michael Jackson (singer)")
    ('Michael Jackson', 'singer')
    >>> split_qualifier("Gary, Indiana")
    ('Gary', 'Indiana')
    >>> split_qualifier("Harvey Keitel") is None
    True
    """
    m = _PAREN.match(mention.strip())
    if m and m.group("base").strip() and m.group("hint").strip():
        return m.group("base").strip(), m.group("hint").strip()
    if "," in mention:
        base, _, hint = mention.rpartition(",")
        if base.strip() and hint.strip():
            return base.strip(), hint.strip()
    return None


def _tokens(text: str) -> list[str]:
    return [t for t in normalize_loose(text).split() if t not in _STOP]


def _close(a: str, b: str) -> bool:
    if a == b:
        return True
    if a.rstrip("s") == b.rstrip("s") and min(len(a), len(b)) >= 3:
        return True
    if any(ch.isdigit() for ch in a + b) or min(len(a), len(b)) < 5 or a[0] != b[0]:
        return False  # no edit on the first letter: "Prussian" is not "Russian"
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(a, b) <= 1


def same_name(a: str, b: str) -> bool:
    """Whether two names agree on every distinctive token (the fuzzy-link rule).

    Examples
    --------
    >>> same_name("Tchaikovsky Pyotr", "Pyotr Tchaikowsky")
    True
    >>> same_name("Dan Marino", "Daniel Martin"), same_name("Robert Boyle", "Robert F. Boyle")
    (False, False)
    """
    ta, left = _tokens(a), _tokens(b)
    if not ta or len(ta) != len(left):
        return False
    for t in ta:
        match = next((u for u in left if _close(t, u)), None)
        if match is None:
            return False
        left.remove(match)
    return True


class EntityLinker:
    """Link entity mentions to QIDs (see the module docstring for the rules).

    Parameters
    ----------
    kg : KnowledgeGraph
    candidates : int
        Most candidates returned per mention.
    min_fuzzy : float
        Minimum fuzzy search score (0–100) before the token rule is applied.
    cache : GroundingCache, optional
        Links kept between runs (:mod:`creagraph.scoring.groundcache`); a
        :class:`~creagraph.scoring.grounding.Grounder` given a cache shares it with its
        entity linker when the linker has none.
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        *,
        candidates: int = 3,
        min_fuzzy: float = 90.0,
        cache: GroundingCache | None = None,
    ):
        self.kg = kg
        self.candidates = candidates
        self.min_fuzzy = min_fuzzy
        self.cache = cache
        self._cache: dict[str, list[EntityLink]] = {}
        self._cache_context: str | None = None  # computed on first use

    def _exact(self, text: str) -> list:
        hits = self.kg.search(text, limit=10, fuzzy=False)
        return list({h.id: h for h in hits if h.exact}.values())

    def link(self, mention: str) -> list[EntityLink]:
        """Up to ``candidates`` links, best first (empty when nothing matches)."""
        key = normalize_loose(mention)
        if key in self._cache:
            return self._cache[key]
        links: list[EntityLink] = []
        if key:
            links = self._kept(mention)
        self._cache[key] = links
        return links

    def _kept(self, mention: str) -> list[EntityLink]:
        """The links from :attr:`cache` when it holds them, else linked (and kept)."""
        if self.cache is None:
            return self._link(mention)
        if self._cache_context is None:
            from creagraph.scoring.groundcache import linker_context

            self._cache_context = linker_context(self) or ""
        if not self._cache_context:  # a graph without a store: nothing identifies it
            return self._link(mention)
        key = self.cache.key(self._cache_context, (mention,), ())
        kept = self.cache.get(key)
        if kept is not None:
            return [EntityLink(**fields) for fields in kept]
        links = self._link(mention)
        self.cache.put(key, [asdict(link) for link in links])
        return links

    def _link(self, mention: str) -> list[EntityLink]:
        exact = self._exact(mention)
        if exact:
            k = len(exact)
            return [
                EntityLink(h.id, h.label, h.kind, h.score, 1.0 / k)
                for h in exact[: self.candidates]
            ]
        split = split_qualifier(mention)
        if split is not None:
            base, hint = split
            exact = self._exact(base)
            if exact:
                return self._by_hint(exact, hint)
        hits = self.kg.search(mention, limit=10, fuzzy=True, min_score=self.min_fuzzy)
        fuzzy = [h for h in hits if not h.exact and same_name(mention, h.matched)]
        fuzzy = list({h.id: h for h in fuzzy}.values())
        return [
            EntityLink(h.id, h.label, "fuzzy", h.score, 0.6 * h.score / 100 / len(fuzzy))
            for h in fuzzy[: self.candidates]
        ]

    def _by_hint(self, hits: list, hint: str) -> list[EntityLink]:
        words = set(_tokens(hint))
        scored = []
        for order, h in enumerate(hits):
            record = self.kg.entity(h.id)
            text = " ".join(x for x in (record.label, record.description) if x) if record else ""
            scored.append((len(words & set(_tokens(text))), -order, h))
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        best = scored[0][0]
        unique = best > 0 and (len(scored) == 1 or scored[1][0] < best)
        tied = sum(1 for s in scored if s[0] == best)
        out = []
        for rank, (overlap, _, h) in enumerate(scored[: self.candidates]):
            if len(scored) == 1:
                conf = 1.0 if best > 0 else 0.5
            elif rank == 0 and unique:
                conf = 0.9
            else:
                conf = (1.0 / tied) if overlap == best else 0.1
            out.append(EntityLink(h.id, h.label, "hint", h.score, conf))
        return out
