"""What every atom source shares (SPEC §4.1): the atom count bounds, the extractor
protocol, atom forms and the grounding check.

:mod:`creagraph.tig.atoms` (offline extraction) and :mod:`creagraph.tig.atoms_llm`
(LLM and pre-extracted atoms) build on these; import the public names from
:mod:`creagraph.tig.atoms`, which re-exports them.

Examples
--------
>>> atom_form("Glass Jars!"), is_grounded("glass jars", "A glass jar of fireflies")
('glass jars', True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from creagraph.core.text import normalize
from creagraph.tig.schema import Atom, Response

__all__ = ["MIN_ATOMS", "MAX_ATOMS", "AtomExtractor", "atom_form", "is_grounded"]

MIN_ATOMS = 3
MAX_ATOMS = 7


@runtime_checkable
class AtomExtractor(Protocol):
    """Turns responses into typed atoms taken from their Core Ideas."""

    name: str

    def extract(self, responses: Sequence[Response]) -> list[list[Atom]]:
        """One list of atoms per response, in the same order."""
        ...


# --------------------------------------------------------------------------- text helpers

#: pictographic symbols: an emoji is a legitimate one-token idea ("Pick an emoji")
_PICTOGRAPHS = "\u2190-\u21FF\u2300-\u23FF\u2600-\u27BF\u2B00-\u2BFF\U0001F000-\U0001FAFF"
_EDGE_PUNCT = re.compile(
    f"^(?:[^\\w{_PICTOGRAPHS}]|_)+|(?:[^\\w{_PICTOGRAPHS}]|_)+$", re.UNICODE
)
_PICTOGRAPH = re.compile(f"[{_PICTOGRAPHS}]")
_WORD = re.compile(f"[^\\W_](?:[\\w'’-]*[^\\W_])?|[{_PICTOGRAPHS}]", re.UNICODE)


def atom_form(text: str) -> str:
    """The normalised form of an atom: :func:`~creagraph.core.text.normalize` minus edge
    punctuation. Atoms with the same form are the same atom.

    Examples
    --------
    >>> atom_form("  “Stained GLASS”, ")
    'stained glass'
    """
    return _EDGE_PUNCT.sub("", normalize(text).replace("’", "'"))


def _word_stem(word: str) -> str:
    word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _content_words(text: str) -> list[str]:
    return [_word_stem(w) for w in _WORD.findall(normalize(text))]


def is_grounded(atom_text: str, idea: str) -> bool:
    """True when every word of ``atom_text`` occurs in ``idea`` (case, accents and plural
    endings ignored), so the atom is not invented.

    Examples
    --------
    >>> is_grounded("leaves", "A single leaf falls")
    False
    >>> is_grounded("Glass jars", "a glass jar of fireflies")
    True
    """
    words = _content_words(atom_text)
    if not words:
        return False
    vocabulary = set(_content_words(idea))
    return all(w in vocabulary for w in words)


