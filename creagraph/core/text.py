"""Text normalisation shared by every matcher (entity linking, validity, search)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize", "normalize_loose"]

_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


def normalize(text: str) -> str:
    """Case- and accent-insensitive form of ``text`` with whitespace collapsed.

    Punctuation is kept, so "Abdul-Jabbar" and "Abdul Jabbar" stay distinct here;
    use :func:`normalize_loose` to also fold punctuation.

    Examples
    --------
    >>> normalize("  António   GUTERRES ")
    'antonio guterres'
    """
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", stripped.casefold()).strip()


def normalize_loose(text: str) -> str:
    """:func:`normalize`, then every run of punctuation becomes one space.

    Examples
    --------
    >>> normalize_loose("Kareem Abdul-Jabbar")
    'kareem abdul jabbar'
    >>> normalize_loose("Lew Alcindor, Jr.")
    'lew alcindor jr'
    """
    return _SPACE.sub(" ", _NON_WORD.sub(" ", normalize(text)).replace("_", " ")).strip()
