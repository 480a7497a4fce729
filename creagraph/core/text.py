"""Text normalisation shared by every matcher (entity linking, validity, search)."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

__all__ = ["loosen", "normalize", "normalize_loose", "replace_lone_surrogates", "scrub_surrogates"]

_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Every ASCII character but letters and digits, to a space (:func:`loosen` of ASCII text).
_ASCII_NON_ALNUM = {i: " " for i in range(128) if not chr(i).isalnum()}


def normalize(text: str) -> str:
    """Case- and accent-insensitive form of ``text`` with whitespace collapsed.

    Punctuation is kept, so "Abdul-Jabbar" and "Abdul Jabbar" stay distinct here;
    use :func:`normalize_loose` to also fold punctuation.

    Examples
    --------
    >>> normalize("  António   GUTERRES ")
    'antonio guterres'
    """
    if text.isascii():  # NFKD leaves ASCII as it is, and it has no combining marks;
        # the same result, twice as fast (issue 31: an import normalises every name):
        # casefold is lower and \s is str.isspace on ASCII
        return " ".join(text.lower().split())
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", stripped.casefold()).strip()


@functools.lru_cache(maxsize=1 << 12)
def normalize_loose(text: str) -> str:
    """:func:`normalize`, then every run of punctuation becomes one space.

    Remembered for the last 4,096 texts (a warm kg-judged run normalises ~27,000 names,
    most of them again and again: issue 31); bounded small, so a streamed run's memory does
    not grow with its input (``tests/scoring/test_streaming.py``: 65,536 entries did).

    Examples
    --------
    >>> normalize_loose("Kareem Abdul-Jabbar")
    'kareem abdul jabbar'
    >>> normalize_loose("Lew Alcindor, Jr.")
    'lew alcindor jr'
    """
    return loosen(normalize(text))


def loosen(normalized: str) -> str:
    """:func:`normalize_loose` of a text whose :func:`normalize` form is ``normalized``
    (for callers that need both forms, without normalising twice).

    Examples
    --------
    >>> loosen(normalize("Lew Alcindor, Jr.")) == normalize_loose("Lew Alcindor, Jr.")
    True
    """
    if normalized.isascii():  # the same result, twice as fast: \w is [A-Za-z0-9_] on ASCII
        return " ".join(normalized.translate(_ASCII_NON_ALNUM).split())
    return _SPACE.sub(" ", _NON_WORD.sub(" ", normalized).replace("_", " ")).strip()


def replace_lone_surrogates(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate (``"\\ud800"`` in JSON: valid JSON, not encodable
    as UTF-8) replaced by U+FFFD, and how many there were.

    JSON decoding joins a valid surrogate pair into one character, so any surrogate left
    in a Python string is a lone one.

    Examples
    --------
    >>> replace_lone_surrogates("a\\ud800b")
    ('a\ufffdb', 1)
    """
    if not _SURROGATE.search(text):
        return text, 0
    return _SURROGATE.subn("\ufffd", text)


def scrub_surrogates(value: Any, where: str = "") -> tuple[Any, list[str]]:
    """Replace lone surrogates in every string of a JSON value (keys included).

    Returns the clean value (the input itself when nothing changed) and one reason per
    field that was changed, e.g. ``"field 'answer': 1 lone surrogate replaced by U+FFFD"``.

    Examples
    --------
    >>> scrub_surrogates({"a": ["x\\udc00"], "b": 1})
    ({'a': ['x\ufffd'], 'b': 1}, ["field 'a': 1 lone surrogate replaced by U+FFFD"])
    """
    issues: list[str] = []

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, str):
            clean, n = replace_lone_surrogates(item)
            if n:
                plural = "s" if n > 1 else ""
                issues.append(f"field {path!r}: {n} lone surrogate{plural} replaced by U+FFFD")
            return clean
        if isinstance(item, dict):
            return {walk(k, path or str(k)): walk(v, path or str(k)) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v, path) for v in item]
        return item

    clean = walk(value, where)
    return (clean if issues else value), issues
