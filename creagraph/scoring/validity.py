"""Structural validity of a path (SPEC §3.3), with a reason for every failure.

Two modes:

- ``"paper"`` (default): whole-name matching after normalisation (case, accents,
  punctuation; a trailing parenthetical such as "(gene)" may be dropped), with the graph's
  aliases of the start/target entities when known, and the final relation accepted when it
  equals ``rel_b`` after normalisation or links to the same property.
- ``"published"``: the published rule, reproduced with its quirks: lower-cased substring
  containment against the printed triple, and a continuity loop whose verdict overwrites
  the endpoint checks for multi-triple paths. The stored published labels are the arbiter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from creagraph.core.text import normalize_loose

__all__ = ["Validity", "check_validity", "check_validity_published", "name_forms"]

_PAREN = re.compile(r"\s*\([^)]*\)\s*$")


@dataclass(frozen=True)
class Validity:
    """Verdict for one path: ``valid`` and the reasons it is not."""

    valid: bool
    reasons: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


@lru_cache(maxsize=4096)
def _loose(text: str) -> str:
    # A query's paths repeat the same few names: cache the folding. Kept small (a few MiB at
    # most) so scoring's memory stays flat on long streamed runs.
    return normalize_loose(text)


@lru_cache(maxsize=4096)
def name_forms(name: str) -> frozenset[str]:
    """Normalised forms a whole name may take (with and without a trailing parenthetical).

    Examples
    --------
    >>> sorted(name_forms("INTS7 (gene)"))
    ['ints7', 'ints7 gene']
    """
    forms = {_loose(name)}
    stripped = _PAREN.sub("", name)
    if stripped and stripped != name:
        forms.add(_loose(stripped))
    forms.discard("")
    return frozenset(forms)


def _matches(text: str, names: frozenset[str] | set[str]) -> bool:
    return bool(name_forms(text) & names)


def check_validity(
    triples: Sequence[Sequence[str]],
    entity_a: str,
    entity_b: str,
    rel_b: str,
    *,
    aliases_a: Iterable[str] = (),
    aliases_b: Iterable[str] = (),
    same_relation: Callable[[str, str], bool] | None = None,
) -> Validity:
    """Whole-name structural validity (SPEC §3.3, default mode).

    Parameters
    ----------
    triples : sequence of (head, relation, tail)
    entity_a, entity_b, rel_b : str
        Start entity, target tail and target relation of the query.
    aliases_a, aliases_b : iterable of str
        Other names of the start and target entities (e.g. from the knowledge graph).
    same_relation : callable, optional
        ``same_relation(phrase, rel_b)`` returns true when a phrase links to the same
        property as ``rel_b`` (relation linking); normalised equality is always accepted.

    Examples
    --------
    >>> check_validity([("Ann", "spouse", "Bob"), ("Bob", "occupation", "poet")],
    ...                "Ann", "poet", "occupation").valid
    True
    >>> check_validity([("Anne Hathaway", "spouse", "Bob"), ("Bob", "occupation", "poet")],
    ...                "Ann", "poet", "occupation").reasons
    ('the first triple does not contain the start entity',)
    """
    reasons: list[str] = []
    if not triples:
        return Validity(False, ("the path is empty",))
    for i, t in enumerate(triples):
        if len(t) != 3:
            reasons.append(f"triple {i} has {len(t)} parts, not three")
        elif any(not str(x).strip() for x in t):
            reasons.append(f"triple {i} has an empty part")
    if reasons:
        return Validity(False, tuple(reasons))
    triples = [tuple(str(x) for x in t) for t in triples]
    names_a = set().union(*(name_forms(n) for n in [entity_a, *aliases_a]))
    names_b = set().union(*(name_forms(n) for n in [entity_b, *aliases_b]))
    first, last = triples[0], triples[-1]
    if not (_matches(first[0], names_a) or _matches(first[2], names_a)):
        reasons.append("the first triple does not contain the start entity")
    rel_ok = _loose(last[1]) == _loose(rel_b) or (
        same_relation is not None and same_relation(last[1], rel_b)
    )
    if not rel_ok:
        reasons.append(f"the last triple's relation {last[1]!r} is not {rel_b!r}")
    if not _matches(last[2], names_b):
        reasons.append(f"the last triple's tail {last[2]!r} is not {entity_b!r}")
    if _loose(last[0]) == _loose(last[2]):
        reasons.append("the last triple has the same subject and object")
    for i in range(len(triples) - 1):
        prev_names = name_forms(triples[i][0]) | name_forms(triples[i][2])
        nxt = triples[i + 1]
        if not (name_forms(nxt[0]) & prev_names or name_forms(nxt[2]) & prev_names):
            reasons.append(f"there is no continuity between triples {i} and {i + 1}")
    return Validity(not reasons, tuple(reasons))


def check_validity_published(
    triples: Sequence[Sequence[str]], entity_a: str, entity_b: str
) -> Validity:
    """The published validity rule, quirks included (SPEC §3.3, ``published`` mode).

    Substring containment of the lower-cased names in the printed first/last triple; the
    last triple's head must differ from its tail; then, for multi-triple paths, each
    consecutive pair must share a head/tail by substring, and the *last* continuity
    verdict replaces the endpoint verdict (as the published control flow does).

    Examples
    --------
    >>> check_validity_published([("Anne Hathaway", "r", "X")], "Ann", "x").valid
    True
    """
    if not triples:
        return Validity(False, ("path is empty",))
    path = [[str(x) for x in t] for t in triples]
    for i, t in enumerate(path):
        if len(t) != 3:
            return Validity(False, (f"triple {i} is not length three",))
    valid = entity_a.lower() in str(path[0]).lower() and entity_b.lower() in str(path[-1]).lower()
    reason = "" if valid else "the endpoints are not in the first/last triple"
    if path[-1][0].lower() == path[-1][2].lower():
        valid = False
        reason = "the last triple has the same subject and object"
    for i in range(len(path) - 1):
        a, b = path[i], path[i + 1]
        heads = (a[0].lower().strip(), a[-1].lower().strip())
        if any(x.lower().strip() in h for x in (b[0], b[-1]) for h in heads):
            valid = True
        else:
            valid = False
            reason = f"there is no continuity for the pair ({i}, {i + 1})"
            break
    return Validity(valid, () if valid else (reason,))
