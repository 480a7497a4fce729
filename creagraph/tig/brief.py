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
* :func:`task_kind` — the task kind (SPEC §4.10, §4.11): ``"use"`` ("What is a surprising
  use for a ROPE?"), ``"consequence"`` ("What would happen if people no longer needed
  sleep?"), ``"instance"`` ("Name things that are round"), ``"visual"`` (a visual brief of
  the Abstraction / Combination / Transformation / Adaptation families) or ``"open"`` (any
  other prompt, e.g. NoveltyBench's); an explicit ``kind`` wins over what the brief says.

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
    "is_short_answer",
    "word_stem",
    "inflection_root",
    "shares_inflection_root",
    "degree_bases",
    "degree_base_words",
    "brief_words",
    "matches_brief_term",
]

#: Task kinds (SPEC §4.10); anchors are worded by kind (SPEC §4.11).
TASK_KINDS: tuple[str, ...] = ("visual", "use", "consequence", "instance", "open")

#: Kinds whose idea unit is the whole short answer (SPEC §4.10), not its typed atoms.
SHORT_ANSWER_KINDS: frozenset[str] = frozenset({"use", "consequence", "instance"})

#: The visual-brief families of SPEC §4.
VISUAL_FAMILIES: frozenset[str] = frozenset(
    {"abstraction", "combination", "transformation", "adaptation"})

def _split(text: str) -> list[str]:
    return text.split()


_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?", re.UNICODE)
#: A number written in digits ("42", "3.14", the "20" of "20-sided"): a content word of an
#: answer ("I picked the number 42" names more than the brief's "number").
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*")

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
    r"uses?\b|\buses?\s+(?:for|of)\s+(?:an?|the)\b|\bwhat\s+(?:else\s+)?"
    r"(?:can|could)\s+(?:you|one|we)\s+(?:do|use)\b",
    re.IGNORECASE,
)
_CONSEQUENCE_TASK = re.compile(
    r"\bwhat\s+(?:would|might|could|will)\s+(?:happen|be\s+the\s+(?:consequences?|results?))"
    r"\b|\bconsequences?\s+(?:of|if)\b|\bjust\s+suppose\b",
    re.IGNORECASE,
)
_CONSEQUENCE_SCENARIO = re.compile(
    r"\b(?:if|when|suppose|that)\s+((?:[^\W\d_][\w'’,-]*\s*)+?)\s*[?.!;:]?\s*$", re.IGNORECASE)
_INSTANCE_TASK = re.compile(
    r"\b(?:things?|objects?|items?|examples?)\s+(?:that|which)\s+(?:\w+\s+)?"
    r"(?:makes?|is|are|can|could|have|has)\b|\b(?:name|list)\s+(?:all\s+)?(?:the\s+)?"
    r"(?:things?|objects?|items?)\b",
    re.IGNORECASE,
)
_INSTANCE_CLASS = re.compile(
    r"\b((?:things?|objects?|items?|examples?)\s+(?:that|which)\s+[^?.!]*?)\s*[?.!]?\s*$",
    re.IGNORECASE,
)
_VISUAL_BRIEF = re.compile(
    r"\b(?:visual(?:ly|ise|ize)?|image|picture|depict|draw|illustrat\w*|paint\w*|poster|"
    r"photograph\w*|scene)\b",
    re.IGNORECASE,
)
_USE_OBJECT = re.compile(
    r"\b(?:uses?\s+(?:for|of)|do\s+with|makes?)\s+((?:an?\s+|the\s+)?[^\W\d_][\w'’ -]*?)"
    r"\s*(?:[?.!,;:]|$)",
    re.IGNORECASE,
)

#: Longest first where one ending contains another; a plural of a derivational ending
#: ("-ions", "-ers") is listed before "-s", so "combinations" and "combination" agree.
_SUFFIXES = ("nesses", "ness", "ments", "ment", "ings", "ing", "edly", "ed", "ful", "ly",
             "ity", "ies", "ions", "ers", "es", "s", "ion", "er", "y")


def word_stem(word: str) -> str:
    """A crude English stem: casefolded, possessive and one derivational ending removed
    (never below four letters), so "calm", "calmness", "calming" and "calms" agree.

    Examples
    --------
    >>> word_stem("calmness"), word_stem("Calming"), word_stem("clocks"), word_stem("tree")
    ('calm', 'calm', 'clock', 'tree')
    >>> word_stem("combinations") == word_stem("combination"), word_stem("players")
    (True, 'play')
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


#: Inflectional and agent endings :func:`inflection_root` strips, longest first: "-ing"
#: and "-ed" down to a three-letter root ("hiring", "hired" -> "hir"), the agent "-or"
#: and the noun "-ion" down to four ("inventor" -> "invent", "graduation" -> "graduat";
#: not "actor", "nation").
_INFLECTIONS = (("ings", 3), ("ing", 3), ("ors", 4), ("or", 4), ("ions", 4), ("ion", 4),
                ("ed", 3), ("es", 3), ("s", 3))


def inflection_root(word: str) -> str:
    """The root of an inflected word: casefolded, possessive and one ending of
    :data:`_INFLECTIONS` removed (the root keeps at least three letters), then a final
    "e" and a doubled final consonant dropped, so the "-ing" and "-ed" forms and the
    agent noun meet the plain word (issue 27, session 9: "hiring" for a brief about
    people "hired", "inventor" for "invent", "graduation" for "graduate").

    :func:`word_stem` keeps four letters and leaves "hiring" and "hired" apart; this
    root is only for comparing a label word with a brief word
    (:func:`shares_inflection_root`), where a rare false match ("station" for "state")
    drops one label, not for clustering.

    Examples
    --------
    >>> inflection_root("hiring"), inflection_root("hired"), inflection_root("hire")
    ('hir', 'hir', 'hir')
    >>> inflection_root("inventor"), inflection_root("invent"), inflection_root("running")
    ('invent', 'invent', 'run')
    >>> inflection_root("red"), inflection_root("sing"), inflection_root("actor")
    ('red', 'sing', 'actor')
    """
    word = normalize(word).replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for ending, keep in _INFLECTIONS:
        if word.endswith(ending) and len(word) - len(ending) >= keep and not (
                ending == "s" and word.endswith("ss")):
            word = word[: -len(ending)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def shares_inflection_root(word: str, brief_word_list: list[str] | tuple[str, ...]) -> bool:
    """True when ``word`` and one of ``brief_word_list`` (the brief's content words,
    :func:`brief_words`) have one :func:`inflection_root` of at least three letters:
    the label word is an inflection of a brief word ("hiring context" for "people …
    hired", "hypothetical inventor" for "what would you invent").

    Examples
    --------
    >>> shares_inflection_root("hiring", ["people", "hired"])
    True
    >>> shares_inflection_root("hire", ["higher"]), shares_inflection_root("red", ["reed"])
    (False, False)
    """
    root = inflection_root(word)
    return len(root) >= 3 and any(inflection_root(b) == root for b in brief_word_list)


#: Superlative and comparative endings, longest first, with what replaces them:
#: "happiest" / "happier" -> "happy", "safest" / "safer" -> "safe" or "saf", "biggest" ->
#: "big" (doubled consonant), "safety" -> "safe" (the "-ty" noun of an adjective).
_DEGREE_ENDINGS = (("iest", "y"), ("ier", "y"), ("est", ""), ("er", ""), ("ty", ""))
_SUPERLATIVE_ENDINGS = frozenset({"iest", "est"})


def degree_bases(word: str, *, superlative_only: bool = False) -> frozenset[str]:
    """Candidate base adjectives of a superlative, comparative or "-ty" form of ``word``
    ("safest", "safer", "safety" -> "safe"), as :func:`word_stem` stems; empty when
    ``word`` has none of those endings.

    The candidates are guesses ("interest" gives "inter"): a caller accepts one only when
    it is a brief term already (:func:`matches_brief_term`), so "interest" stays a word of
    its own for a brief asking for the "safest" code. With ``superlative_only`` only the
    "-est" forms count (what :func:`brief_terms` adds for the brief's own words: a brief's
    "-er" word is more often a noun, "flower", "corner", than a comparative).

    Examples
    --------
    >>> sorted(degree_bases("safest"))
    ['saf', 'safe']
    >>> sorted(degree_bases("happier")), sorted(degree_bases("biggest"))
    (['happ'], ['big', 'bigg', 'bigge'])
    >>> sorted(degree_bases("safety")), sorted(degree_bases("safety", superlative_only=True))
    (['safe'], [])
    """
    return frozenset(word_stem(b) for b in degree_base_words(
        word, superlative_only=superlative_only))


def degree_base_words(word: str, *, superlative_only: bool = False) -> frozenset[str]:
    """The candidate base words of a superlative, comparative or "-ty" form, as words
    (:func:`degree_bases` stems them): "safest" -> "saf", "safe"; "happiest" -> "happy".

    Examples
    --------
    >>> sorted(degree_base_words("safest")), sorted(degree_base_words("happiest"))
    (['saf', 'safe'], ['happy'])
    """
    word = normalize(word).replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    bases: set[str] = set()
    for ending, replacement in _DEGREE_ENDINGS:
        if superlative_only and ending not in _SUPERLATIVE_ENDINGS:
            continue
        if not word.endswith(ending) or len(word) - len(ending) < 3:
            continue
        root = word[: -len(ending)] + replacement
        bases.add(root)
        if not replacement and not root.endswith("e"):  # "saf" + "e"
            bases.add(root + "e")
        if not replacement and len(root) > 3 and root[-1] == root[-2]:  # "bigg" -> "big"
            bases.add(root[:-1])
        break
    return frozenset(b for b in bases if len(b) >= 3)


def matches_brief_term(word: str, terms: frozenset[str] | set[str]) -> bool:
    """True when ``word`` is a brief term: its :func:`word_stem` is one of ``terms``, or
    it is a superlative, comparative or "-ty" form whose base is one ("safer", "safety"
    for a brief asking for the "safest" code; the base must be a brief term, so
    "interest" is not read as "inter" + "-est").

    Examples
    --------
    >>> terms = brief_terms("Which 4-digit lock combination is the safest?")
    >>> [matches_brief_term(w, terms) for w in ("safety", "safer", "safe", "interest")]
    [True, True, True, False]
    """
    if word_stem(word) in terms:
        return True
    return any(b in terms for b in degree_bases(word))


_INSTRUCTION_STEMS = frozenset(word_stem(w) for w in _INSTRUCTION_WORDS)


def _is_instruction(word: str) -> bool:
    return word in _INSTRUCTION_WORDS or word_stem(word) in _INSTRUCTION_STEMS


def brief_words(brief: str, *, instructions: bool = False) -> list[str]:
    """The brief's content words (casefolded, in order): no function word, no instruction
    vocabulary (with ``instructions``, the instruction words the brief uses are kept:
    "invent" of "what would you invent").

    Examples
    --------
    >>> brief_words("Which 4-digit lock combination is the safest?")
    ['digit', 'lock', 'combination', 'safest']
    >>> brief_words("What would you invent?"), brief_words("What would you invent?",
    ...                                                    instructions=True)
    ([], ['invent'])
    """
    words = [w.casefold() for w in _WORD.findall(normalize(brief or ""))]
    return [w for w in words if w not in _FUNCTION_WORDS
            and (instructions or not _is_instruction(w))]


def _content_stems(text: str) -> list[str]:
    """Stems of the content words of ``text``, then its numbers written in digits."""
    normal = normalize(text)
    words = [w.casefold() for w in _WORD.findall(normal)]
    return [word_stem(w) for w in words if w not in _FUNCTION_WORDS] + _NUMBER.findall(normal)


def brief_terms(brief: str, concept: str | None = None, *,
                instructions: bool = False) -> frozenset[str]:
    """Stems of the brief's content words, without instruction vocabulary; with
    ``concept``, its words are added (an explicit concept overrides nothing it would lose);
    with ``instructions``, the instruction words the brief itself uses ("invent",
    "interesting", "surprising") are added too — an atom made only of the brief's words,
    instruction or not, restates the brief (what atoms are checked against).

    Examples
    --------
    >>> sorted(brief_terms("Create a visual concept that makes calm visible."))
    ['calm']
    >>> sorted(brief_terms("Show it.", concept="quiet joy"))
    ['joy', 'quiet']
    >>> sorted(brief_terms("Invent an interesting gadget.", instructions=True))
    ['gadget', 'interest', 'invent']
    """
    words = brief_words(brief)
    terms = {word_stem(w) for w in words}
    for w in words:  # "safest" is a term as "safe" too (the base of a superlative)
        terms.update(degree_bases(w, superlative_only=True))
    terms.update(_NUMBER.findall(normalize(brief or "")))
    if concept:
        terms.update(_content_stems(concept))
    if instructions:
        words = [w.casefold() for w in _WORD.findall(normalize(brief or ""))]
        terms.update(word_stem(w) for w in words if w not in _FUNCTION_WORDS
                     and _is_instruction(w))
    return frozenset(t for t in terms if t)


def is_from_brief(atom_text: str, terms: frozenset[str] | set[str]) -> bool:
    """True when every content word of ``atom_text`` is a brief term (SPEC §4.9).

    An atom with no content word at all is not from the brief (it is not an atom). A
    number the brief does not write is a content word of its own.

    Examples
    --------
    >>> terms = brief_terms("Pick a number between 1 and 100.", instructions=True)
    >>> is_from_brief("the number", terms), is_from_brief("number 42", terms)
    (True, False)
    >>> is_from_brief("number 100", terms)
    True
    """
    normal = normalize(atom_text)
    words = [w.casefold() for w in _WORD.findall(normal) if w.casefold() not in _FUNCTION_WORDS]
    numbers = _NUMBER.findall(normal)
    return bool(words or numbers) and all(matches_brief_term(w, terms) for w in words) \
        and all(n in terms for n in numbers)


def task_kind(brief: str, family: str | None = None, kind: str | None = None) -> str:
    """The task kind of a brief (SPEC §4.10): one of :data:`TASK_KINDS`.

    ``kind``, when given, wins (it must be one of :data:`TASK_KINDS`); then a family
    naming the kind ("Alternative Uses", "Consequences", "Instances", a visual family);
    then the brief's wording; a brief that fits no kind is ``"open"``.

    Examples
    --------
    >>> task_kind("Create a visual concept that makes calm visible.")
    'visual'
    >>> task_kind("anything", family="Alternative Uses")
    'use'
    >>> task_kind("What would happen if people no longer needed sleep?")
    'consequence'
    >>> task_kind("What is a surprising thing that makes a NOISE?")
    'instance'
    >>> task_kind("Tell me a joke about a cat.")
    'open'
    """
    if kind:
        value = kind.strip().casefold()
        if value not in TASK_KINDS:
            raise ValueError(
                f"unknown task kind {kind!r} (expected one of {', '.join(TASK_KINDS)})")
        return value
    folded = (family or "").casefold()
    if "alternative use" in folded or folded in ("uses", "use", "aut"):
        return "use"
    if folded.startswith("consequence"):
        return "consequence"
    if folded.startswith("instance"):
        return "instance"
    if folded in VISUAL_FAMILIES:
        return "visual"
    text = brief or ""
    if _USE_TASK.search(text):
        return "use"
    if _CONSEQUENCE_TASK.search(text):
        return "consequence"
    if _INSTANCE_TASK.search(text):
        return "instance"
    if _VISUAL_BRIEF.search(text):
        return "visual"
    return "open"


def is_short_answer(kind: str) -> bool:
    """True for the kinds whose idea unit is the whole answer (uses, consequences,
    instances; SPEC §4.10)."""
    return kind in SHORT_ANSWER_KINDS


def brief_concept(brief: str, concept: str | None = None, kind: str | None = None
                  ) -> str | None:
    """The concept anchors name: ``concept`` when given; for a use task its object with
    its article ("a rope"); for a consequence task its scenario ("people no longer needed
    sleep"); for an instance task its class ("a thing that makes a noise"); for a visual
    brief its content words as a phrase ("calm", "a clock and a tree"); ``None`` for an
    open prompt or when the brief has no content word.

    Examples
    --------
    >>> brief_concept("List alternative uses for a brick.")
    'a brick'
    >>> brief_concept("Create a visual concept that makes calm visible.")
    'calm'
    >>> brief_concept("Create a visual concept that fuses a clock and a tree.")
    'a clock and a tree'
    >>> brief_concept("What would happen if people no longer needed sleep?")
    'people no longer needed sleep'
    >>> brief_concept("What is a surprising thing that makes a NOISE?")
    'a thing that makes a noise'
    """
    if concept:
        return concept
    found_kind = task_kind(brief, kind=kind)
    text = normalize(brief or "")
    if found_kind == "use":
        found = _USE_OBJECT.search(brief or "")
        if found:
            return normalize(found.group(1)).strip()
    if found_kind == "consequence":
        scenario = _CONSEQUENCE_SCENARIO.search(brief or "")
        if scenario:
            return normalize(scenario.group(1)).strip(" ,")
        return None
    if found_kind == "instance":
        found = _INSTANCE_CLASS.search(brief or "")
        if found:
            phrase = normalize(found.group(1)).strip()
            return phrase if re.match(r"(?:things|objects|items|examples)\b", phrase) \
                else f"a {phrase}"
        return None
    if found_kind == "open":
        return None
    return _concept_phrase(text)


def _concept_phrase(text: str) -> str | None:
    """The brief's content words as the shortest phrase of the brief holding them all
    (with the words between, an article before): "a clock and a tree"."""
    words = _WORD.findall(text)
    content = [i for i, w in enumerate(words)
               if w.casefold() not in _FUNCTION_WORDS and not _is_instruction(w.casefold())]
    if not content:
        return None
    if len(content) == 1:
        return words[content[0]].casefold()
    start, end = content[0], content[-1]
    if start > 0 and words[start - 1].casefold() in ("a", "an", "the"):
        start -= 1
    return " ".join(w.casefold() for w in words[start : end + 1])
