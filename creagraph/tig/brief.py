"""What a brief asks for: its terms, its task kind, atoms restating it (SPEC §4.9, §4.11).

SPEC §4.9: the brief's concept and required sources (the "calm" of a calmness brief; "clock"
and "tree" when the brief says fuse a clock and a tree; the object of an Alternative Uses
prompt) are expected in every answer, so they are not clichés. This module reads them from
each task's brief:

* :func:`brief_terms` — the brief's content-word stems (function words and the generic
  vocabulary of task instructions — "create", "visual", "concept", "surprising", "use" —
  removed), plus the words of an explicit ``concept`` when one is given (``--concept``
  overrides what is read from the brief);
* :func:`is_from_brief` — an atom all of whose content words are brief terms (up to an
  English derivational ending: "calm" ~ "calmness" ~ "calming") restates the brief;
* :func:`brief_concept` — the phrase anchors name as the concept ("calm", "a rope");
* :func:`task_kind` — ``"use"`` for Alternative Uses style tasks ("What is a surprising use
  for a ROPE?", "List alternative uses for a brick"), else ``"visual"`` (SPEC §4.11).

Examples
--------
>>> terms = brief_terms("Create a visual concept that fuses a clock and a tree.")
>>> sorted(terms)
['clock', 'tree']
>>> is_from_brief("old clock", terms), is_from_brief("clock tree", terms)
(False, True)
>>> task_kind("What is a surprising use for a ROPE?")
'use'
>>> brief_concept("What is a surprising use for a ROPE?")
'a rope'
"""

from __future__ import annotations

import re

from creagraph.core.text import normalize

__all__ = [
    "TASK_KINDS",
    "brief_terms",
    "brief_concept",
    "is_from_brief",
    "task_kind",
    "word_stem",
]

#: Task kinds whose anchors are worded differently (SPEC §4.11).
TASK_KINDS: tuple[str, ...] = ("visual", "use")

def _split(text: str) -> list[str]:
    return text.split()


_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?", re.UNICODE)

#: Generic words of task instructions: never the concept a brief asks about.
_INSTRUCTION_WORDS = frozenset(
    _split("""
    create make design draw show depict imagine invent propose describe give list name
    write generate produce come think find tell suggest provide develop compose offer
    pick choose visual visually concept concepts idea ideas image images picture
    pictures illustration scene artwork art piece representation description response
    answer answers sentence brief task prompt question words word one two three four
    five six seven eight nine ten surprising unusual creative original novel interesting
    clever new different alternative alternatives possible many several some single
    short simple unique uncommon common use uses using used usage purpose purposes
    function functions thing things way ways something anything everything visible evoke
    evokes convey conveys express expresses capture captures communicate communicates
    combine combines combining fuse fuses fusing fusion merge merges blend blends
    transform transforms transformation please exactly least most more less much very
    really also other else another every each following
    """)
)

_FUNCTION_WORDS = frozenset(
    _split("""
    a an the this that these those some any each every either neither no such i me my we
    us our you your he him his she her it its they them their who whom whose which what
    where when why how there here is am are was were be been being do does did have has
    had will would shall should can could may might must let and or but nor so yet for
    because if than as like whether then also too of to in into onto on at by with
    without within from about above below under over between among through across along
    around against toward towards upon after before during beside beyond behind near
    inside outside off out up down via per not never don't doesn't can't won't i'm it's
    what's that's
    """)
)

_USE_TASK = re.compile(
    r"\b(?:alternative|surprising|unusual|creative|different|possible|other|new|original)\s+"
    r"uses?\b|\buses?\s+(?:for|of)\s+(?:an?|the)\b|\bwhat\s+(?:else\s+)?(?:can|could)\s+"
    r"(?:you|one|we)\s+(?:do|use)\b|\bthings?\s+(?:that|which)\s+(?:makes?|is|are)\b",
    re.IGNORECASE,
)
_USE_OBJECT = re.compile(
    r"\b(?:uses?\s+(?:for|of)|do\s+with|makes?)\s+((?:an?\s+|the\s+)?[^\W\d_][\w'’ -]*?)"
    r"\s*(?:[?.!,;:]|$)",
    re.IGNORECASE,
)

_SUFFIXES = ("nesses", "ness", "ments", "ment", "ings", "ing", "edly", "ed", "ful", "ly",
             "ity", "ies", "es", "s", "ion", "er", "y")


def word_stem(word: str) -> str:
    """A crude English stem: casefolded, possessive and one derivational ending removed
    (never below four letters), so "calm", "calmness", "calming" and "calms" agree.

    Examples
    --------
    >>> word_stem("calmness"), word_stem("Calming"), word_stem("clocks"), word_stem("tree")
    ('calm', 'calm', 'clock', 'tree')
    """
    word = normalize(word).replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_INSTRUCTION_STEMS = frozenset(word_stem(w) for w in _INSTRUCTION_WORDS)


def _is_instruction(word: str) -> bool:
    return word in _INSTRUCTION_WORDS or word_stem(word) in _INSTRUCTION_STEMS


def _brief_words(brief: str) -> list[str]:
    """The brief's content words (casefolded, in order): no function word, no instruction
    vocabulary."""
    words = [w.casefold() for w in _WORD.findall(normalize(brief or ""))]
    return [w for w in words if w not in _FUNCTION_WORDS and not _is_instruction(w)]


def _content_stems(text: str) -> list[str]:
    words = [w.casefold() for w in _WORD.findall(normalize(text))]
    return [word_stem(w) for w in words if w not in _FUNCTION_WORDS]


def brief_terms(brief: str, concept: str | None = None) -> frozenset[str]:
    """Stems of the brief's content words, without instruction vocabulary; with
    ``concept``, its words are added (an explicit concept overrides nothing it would lose).

    Examples
    --------
    >>> sorted(brief_terms("Create a visual concept that makes calm visible."))
    ['calm']
    >>> sorted(brief_terms("Show it.", concept="quiet joy"))
    ['joy', 'quiet']
    """
    terms = {word_stem(w) for w in _brief_words(brief)}
    if concept:
        terms.update(_content_stems(concept))
    return frozenset(t for t in terms if t)


def is_from_brief(atom_text: str, terms: frozenset[str] | set[str]) -> bool:
    """True when every content word of ``atom_text`` is a brief term (SPEC §4.9).

    An atom with no content word at all is not from the brief (it is not an atom).
    """
    stems = _content_stems(atom_text)
    return bool(stems) and all(s in terms for s in stems)


def task_kind(brief: str, family: str | None = None) -> str:
    """``"use"`` for an Alternative Uses style task, else ``"visual"`` (SPEC §4.11).

    Examples
    --------
    >>> task_kind("Create a visual concept that makes calm visible.")
    'visual'
    >>> task_kind("anything", family="Alternative Uses")
    'use'
    """
    if family and "alternative use" in family.casefold():
        return "use"
    return "use" if _USE_TASK.search(brief or "") else "visual"


def brief_concept(brief: str, concept: str | None = None) -> str | None:
    """The concept anchors name: ``concept`` when given; for a use task its object with
    its article ("a rope"); for a visual brief with a single content term, that term; else ``None``.

    Examples
    --------
    >>> brief_concept("List alternative uses for a brick.")
    'a brick'
    >>> brief_concept("Create a visual concept that makes calm visible.")
    'calm'
    """
    if concept:
        return concept
    if task_kind(brief) == "use":
        found = _USE_OBJECT.search(brief or "")
        if found:
            return normalize(found.group(1)).strip()
    unique = list(dict.fromkeys(_brief_words(brief)))
    return unique[0] if len(unique) == 1 else None
