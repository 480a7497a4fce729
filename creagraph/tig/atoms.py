"""Typed atom extraction from Core Ideas (SPEC §4.1), with three backends.

Every backend implements :class:`AtomExtractor`: ``extract(responses)`` returns, for each
response, 3–7 :class:`~creagraph.tig.schema.Atom` whose text is taken from the response's
Core Idea (no invented atoms; an idea with fewer than three content words yields fewer).

* :class:`PreExtractedAtoms` — atoms already extracted (a file or a mapping by response id);
  every atom is checked to be grounded in its idea.
* :class:`OpenAIChatExtractor` — an LLM behind an OpenAI-compatible ``/chat/completions``
  endpoint (via :class:`creagraph.core.llm.ChatClient`); the reply is parsed leniently
  (:func:`parse_json_lenient` repairs fenced, commented and trailing-comma JSON) and
  ungrounded atoms are dropped.
* :class:`OfflineExtractor` — no LLM: regex chunking into noun/verb phrases around
  stopwords (:func:`chunk_phrases`), then typing each phrase by embedding similarity to the
  type prototypes of :data:`~creagraph.tig.schema.TYPE_PROTOTYPES` with the packaged
  all-MiniLM-L6-v2 (:func:`assign_types`), plus small cue bonuses from the words around it.

This module holds the offline backend. What every backend shares (atom forms, the grounding
check, the count bounds, the protocol) is in :mod:`creagraph.tig.atoms_base`; the LLM and
pre-extracted backends are in :mod:`creagraph.tig.atoms_llm`. Every public name of both is
re-exported here, so ``from creagraph.tig.atoms import …`` covers them all.

References
----------
SPEC §4.1. The chunker follows the classic stopword-delimited candidate phrases of RAKE
(Rose et al., 2010, "Automatic keyword extraction from individual documents").

Examples
--------
>>> [p.text for p in chunk_phrases("A jellyfish made of stained glass drifts in a cathedral.")]
['jellyfish', 'made of stained glass', 'cathedral']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from creagraph.tig.atoms_base import (
    _PICTOGRAPH,
    _WORD,
    MAX_ATOMS,
    MIN_ATOMS,
    AtomExtractor,
    atom_form,
    is_grounded,
)
from creagraph.tig.atoms_llm import (
    OpenAIChatExtractor,
    PreExtractedAtoms,
    atoms_from_llm_reply,
    build_extraction_messages,
    parse_json_lenient,
)
from creagraph.tig.schema import (
    ATOM_TYPES,
    EXCLUDED_ASPECT_PROTOTYPES,
    TYPE_PROTOTYPES,
    Atom,
    Response,
)

__all__ = [
    "MIN_ATOMS",
    "MAX_ATOMS",
    "MAX_IDEA_WORDS",
    "idea_head",
    "AtomExtractor",
    "Phrase",
    "atom_form",
    "is_grounded",
    "chunk_phrases",
    "short_answer_idea",
    "modifies_a_brief_term",
    "assign_types",
    "OfflineExtractor",
    "PreExtractedAtoms",
    "OpenAIChatExtractor",
    "parse_json_lenient",
    "atoms_from_llm_reply",
    "build_extraction_messages",
]

# --------------------------------------------------------------------------- chunking


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _wordset(
    """
    a an the this that these those some any each every either neither no another such
    i me my mine we us our ours you your yours he him his she her hers it its they them
    their theirs one ones someone something anything everything nothing who whom whose
    which what whatever whoever where when why how there here
    is am are was were be been being do does did done have has had having will would shall
    should can could may might must ought let lets
    and or but nor so yet for because although though while whereas if unless until than
    as like whether then also too very really just quite rather only even still almost
    of to in into onto on at by with without within from about above below under over
    between among amongst amid amidst through throughout across along around against
    toward towards upon after before during beside besides beyond behind near inside
    outside off out up down via per atop beneath underneath
    not never always often sometimes perhaps maybe
    once ever yes no okay ok sure please thanks thank well etc
    don't doesn't didn't can't cannot couldn't won't wouldn't isn't aren't wasn't weren't
    i'm i've i'd i'll you're you've you'd you'll it's that's there's here's what's let's
    he's she's we're we've they're they've
    s t d ll re ve m
    """
)

#: Filler verbs and nouns (SPEC §4.9): they carry no idea ("use it as a doorstop" is the
#: doorstop), so like function words they delimit phrases and never become atoms.
_FILLER_WORDS = _wordset(
    """
    use uses used using usage put puts putting get gets getting got gotten make makes
    making
    thing things stuff way ways something anything everything kind kinds sort sorts type
    types bit bits lot lots more less much many most least few several various
    seem seems seemed appear appears appeared remain remains remained feature features
    featuring featured depict depicts depicted depicting render renders rendered show
    shows showing shown reveal reveals revealed revealing capture captures captured
    seen viewed
    """
)

#: Posture and state verbs ("stands", "sits", "hangs", "floats"): content words (an
#: Alternative Uses answer "sit on it" is the sitting), but in a visual idea they only
#: link the subject to its place. Each starts a phrase of its own, and a phrase made only
#: of them is dropped when the idea has other phrases.
_POSTURE_VERBS = _wordset(
    """
    stands stand standing sits sit sitting floats float floating hangs hang hanging rises
    rise rising lies lie lying rests rest resting drifts drift drifting hovers hover
    hovering glows glow glowing shines shine shining waits wait waiting looms loom looming
    perches perch perched leans lean leaning stretches stretch stretching spills spill
    pours pour fills fill filled covers cover covered holds hold holding
    """
)

#: Base forms of posture verbs that, right after a content word, end a noun compound
#: ("phone stand", "arm rest", "pot cover") rather than start a verb phrase.
_POSTURE_NOUNS = _wordset("stand rest cover hold fill float")

#: Determiners and quantifiers the stopword list lacks: they delimit phrases ("Both the …",
#: "all of them") and never begin an atom.
_EXTRA_DELIMITERS = _wordset("both all own same other others whose since ago ever")

#: Generic modifiers of a short answer ("makeshift projector screen", "miniature
#: catapult", "emergency zipper pull"): stripped from the front of a phrase, so that
#: phrases meet on their idea, not on the modifier (issue 27: modifier clusters).
_GENERIC_MODIFIERS = _wordset(
    """
    makeshift improvised improvized temporary emergency homemade home-made diy quick easy
    simple basic cheap portable decorative creative unique unusual surprising fun cute
    nice great good perfect special mini miniature tiny small little fancy handy practical
    useful clever custom personalized personalised
    two three four five six seven eight nine ten eleven twelve hundred thousand million
    first second third
    """
)

_NUMBER_WORDS = _wordset(
    "two three four five six seven eight nine ten eleven twelve hundred thousand million")

#: Adjectives that, alone, are no idea ("inseparable", "special", "impossible"): a phrase
#: of one such word is dropped when the idea has others (with the suffix rule of
#: :func:`_is_adjective`).
_ADJECTIVES = _wordset(
    """
    good great best better bad worse worst big bigger biggest small smaller large larger
    little new old young long short high low important different popular possible
    impossible real true simple easy hard difficult strong weak beautiful happy sad funny
    interesting perfect nice cool warm hot quiet loud fast slow rich poor full empty free
    safe clear deep wide ripe elegant noble subjective objective tough unique common rare
    classic favorite favourite famous personal general specific single double entire whole
    main certain sure able likely unlikely various numerous optimistic pessimistic romantic
    dramatic typical ideal final original natural social cultural historical political
    actual basic major minor early late recent modern ancient fresh wild brave loyal
    curious clever smart wise silly strange weird odd quaint cozy cosy charming lovely
    adorable gentle shy proud fun fine okay ok great huge tiny giant enormous massive
    vast endless countless inseparable unforgettable incredible amazing wonderful
    fantastic terrible horrible awful scary creepy cute pretty ugly crazy busy lazy
    ready unable willing eager fond afraid alone alive asleep awake aware glad
    """
)
_ADJECTIVE_SUFFIXES = ("ous", "ful", "less", "able", "ible", "ive", "ical")
#: Nouns with those endings (and a few more) that are ideas, not adjectives.
_NOT_ADJECTIVES = _wordset(
    """
    table tables cable cables vegetable vegetables stable stables fable fables bible
    timetable turntable constable syllable parable olive olives hive hives drive drives
    archive archives detective detectives native natives relative relatives motive
    motives objective objectives executive executives representative alternative
    adhesive explosive explosives preservative additive incentive initiative perspective
    locomotive captive handful spoonful mouthful cupful armful bowlful fish dish wish
    radish polish relish parish english spanish
    """
)

#: Irregular past forms and unambiguous verbs: never an atom on their own, never the
#: tail of one ("Andrew Wiles won", "the mushroom go", "I told").
_VERBS = _wordset(
    """
    go goes went gone come comes came say says said tell tells told know knows knew known
    think thinks thought want wants wanted seem become becomes became give gives gave
    given take takes took taken find finds found keep keeps kept try tries tried ask asks
    asked feel feels felt leave hear hears heard happen happens happened
    believe believes include includes included depend depends vary varies won win wins
    sat stood ran grew fell led met meant decide decides decided
    recommend recommends call calls called let lets wonders begin begins began begun bring brings
    brought buy buys bought choose chooses chose chosen speak speaks spoke spoken wake
    woke break breaks broke broken rode drove hide hid hung lit
    shook sang swam wore tore threw thrown drew drawn flew flown wrote written seen
    would could should might must needed loved enjoy enjoys enjoyed hoped decide
    continue continues continued remember remembers named arrive arrives coming going
    doing having stung struck swung clung flung sprang sprung spun dug fled slid slept
    swept wept crept knelt leapt spent sent caught taught sought fought
    returns travels helps help moves meets learns discovers starts works lives plans
    inherits reunites agrees teaches falls
    remembered realize realizes realized realise realises realised
    """
)

#: Generic nouns that, alone, carry no idea ("time", "world", "life", "people"); inside a
#: phrase they stay ("time capsule", "world map").
_GENERIC_NOUNS = _wordset(
    """
    time times day days year years moment moments world life lives place places people
    person everyone everybody anyone anybody part parts number result results situation
    question answer example examples reason reasons fact facts case cases point points
    end side others bit name names man men woman women guy guys home character
    characters hint hints story stories plot
    """
)

#: Words after which a trailing ``-ing`` word is a verb taking an object or a complement
#: ("moving a steel ball", "exploring the woods", "coursing through my veins").
_VERB_CONTEXT = _wordset(
    """
    a an the this that these those my your his her its our their some any every each no
    me him us them it you
    to in into on onto at by with from through across along around over under toward
    towards against about for of up down out off away back inside within beneath behind
    beside near above below atop among between
    """
)
_PLACE_PREPOSITIONS = _wordset("on in at under over beside near above below against atop")
_ING_NOUNS = _wordset(
    """
    building buildings painting paintings ceiling ceilings wedding weddings morning
    mornings evening evenings spring springs string strings clothing ending endings
    beginning beginnings feeling feelings meaning meanings setting settings sibling
    siblings pudding lightning bedding frosting icing stuffing seasoning dressing filling
    fillings stocking stockings offering gathering meeting meetings drawing drawings
    carving carvings coating lining railing railings fencing siding flooring roofing
    plumbing wiring lighting heating housing ring rings king kings wing wings thing things
    sing swing swings sling slings awning awnings being beings darling earring earrings
    """
)

_SETTING_CUES = _wordset(
    "in inside within at on under beneath underneath among amongst amid amidst across "
    "through throughout over atop along around near"
)
_PURPOSE_CUE_WORDS = _wordset(
    """
    symbolize symbolizes symbolized symbolizing symbolise symbolises symbolised symbolising
    represent represents representing represented evoke evokes evoking evoked convey
    conveys conveying conveyed express expresses expressing expressed suggest suggests
    suggesting signify signifies signifying embody embodies embodying celebrate celebrates
    celebrating illustrate illustrates illustrating symbol symbols metaphor metaphors
    representation allegory emblem
    """
)
_MECHANISM_STEMS = (
    "transform",
    "turn",
    "becom",
    "became",
    "merg",
    "fus",
    "melt",
    "dissolv",
    "morph",
    "made",
    "built",
    "woven",
    "weav",
    "carv",
    "grow",
    "grew",
    "sprout",
    "replac",
    "emerg",
    "reshap",
    "shatter",
    "unravel",
    "bloom",
    "blend",
    "swap",
    "stitch",
    "sculpt",
    "fold",
    "dissolv",
    "reassembl",
    "crumbl",
    "evaporat",
    "metamorph",
)
_JOINERS = frozenset({"of", "into"})
#: a mechanism stem ending like a noun ("replacement", "weaver") does not start a phrase
_NOUN_ENDINGS = ("ment", "ments", "tion", "tions", "sion", "sions", "er", "ers")
_PERSPECTIVE_PATTERN = re.compile(
    r"\b(?:(?:seen|viewed|shown|shot|photographed|framed|observed|glimpsed|looking|looked)"
    r"\s+(?:from|through|at|down|up)(?:\s+(?:the|a|an))?(?:\s+[^\W\d_][\w'’-]*){1,2}"
    r"|from\s+(?:above|below|afar|behind|overhead|inside|within)"
    r"|(?:bird|worm|fish)[’']?s[- ]eye(?:\s+view)?"
    r"|close[- ]up|extreme\s+close[- ]up|macro\s+(?:view|shot|lens)|aerial\s+(?:view|shot)"
    r"|top[- ]down(?:\s+view)?|wide[- ]angle(?:\s+view|\s+shot)?|panoramic\s+(?:view|shot)"
    r"|first[- ]person(?:\s+view)?|in\s+miniature|at\s+(?:a\s+)?(?:giant|monumental|tiny|"
    r"microscopic)\s+scale)",
    re.IGNORECASE,
)
_BOUNDARY = re.compile(r"[,;:.!?()\[\]{}\"“”«»—–/|]|\s-\s|\.\.\.")
_MAX_PHRASE_WORDS = 5

#: Words of a Core Idea the offline extractor reads. A Core Idea is one sentence; a runaway
#: response (100,000 words) would otherwise have every phrase embedded, stalling ``tig
#: build`` for minutes. The idea text is embedded through MiniLM's 256 tokens anyway.
MAX_IDEA_WORDS = 400
_WORDS_AHEAD = re.compile(r"\S+")


def idea_head(idea: str, max_words: int = MAX_IDEA_WORDS) -> str:
    """The first ``max_words`` whitespace-separated words of ``idea`` (all of a shorter
    one, unchanged).

    Examples
    --------
    >>> idea_head("a b c d", 2)
    'a b'
    """
    for match_index, match in enumerate(_WORDS_AHEAD.finditer(idea)):
        if match_index == max_words - 1:
            return idea[: match.end()]
    return idea


@dataclass(frozen=True)
class Phrase:
    """A candidate atom: its span in the idea and the cue type the context suggests."""

    text: str
    start: int
    end: int
    cue: str | None = None


def _has_mechanism_verb(words: Sequence[str]) -> bool:
    return any(w.startswith(_MECHANISM_STEMS) for w in words)


def chunk_phrases(idea: str) -> list[Phrase]:
    """Split a Core Idea into candidate phrases (RAKE-style), in text order.

    Phrases are maximal runs of content words between stopwords and punctuation; ``of`` and
    ``into`` join two runs (``made of glass``, ``turning prayers into light``) while the
    result has at most five words. Perspective expressions (``seen from above``,
    ``bird's-eye view``, ``close-up``) are kept whole. Words that announce a purpose
    (``symbolizing``, ``to evoke``, ``a metaphor for``) are not part of a phrase but mark
    the next one with cue ``"purpose"``; a setting preposition (``in``, ``under``,
    ``among`` …) right before a phrase marks it ``"setting"``; a transformation verb inside
    a phrase marks it ``"mechanism"``. Filler verbs and nouns ("use", "put", "get",
    "thing", "way"; SPEC §4.9) delimit phrases like function words and are never part of
    one. Phrases are never split into single words to reach a count: ``"George
    Washington!"`` gives one atom, ``George Washington``.

    An atom is a content phrase (issue 27): generic modifiers ("makeshift", "miniature")
    and adverbs are trimmed from a phrase's front, adverbs and verbs ("Andrew Wiles
    *won*", "a village *surrounded*", "a toy *moving* [a ball]") from its back, and a
    phrase of one word that is a verb form, an adjective, an adverb or a generic noun
    ("inseparable", "called", "time") is dropped when the idea has other phrases.

    Parameters
    ----------
    idea : str
        The Core Idea text.

    Returns
    -------
    list of Phrase
        Unique by :func:`atom_form`, each ``idea[start:end] == text``.

    Examples
    --------
    >>> [(p.text, p.cue) for p in chunk_phrases("A fox seen from above, sleeping in snow.")]
    [('fox', None), ('seen from above', 'perspective'), ('snow', 'setting')]
    >>> [p.text for p in chunk_phrases("Emma and Max were inseparable, exploring the woods.")]
    ['Emma', 'Max', 'woods']
    """
    taken = [False] * len(idea)
    phrases = _perspective_phrases(idea, taken)
    tokens = [m for m in _WORD.finditer(idea) if not taken[m.start()]]
    runs, run_cues = _content_runs(idea, tokens, taken)
    for whole_run, cue in zip(runs, run_cues, strict=True):
        run = whole_run if cue in ("purpose", "perspective") else _trim_run(idea, whole_run)
        start, end = run[0].start(), run[-1].end()
        words = [m.group(0).casefold() for m in run]
        if cue is None and _has_mechanism_verb(words):
            cue = "mechanism"
        phrases.append(Phrase(idea[start:end], start, end, cue))

    phrases.sort(key=lambda p: p.start)
    phrases = _unique_phrases(phrases)
    content = [p for p in phrases if not _is_bare_word(idea, p)]
    if content:
        phrases = content
    linking = [p for p in phrases
               if all(w.casefold() in _POSTURE_VERBS for w in _WORD.findall(p.text))]
    if len(linking) < len(phrases):
        phrases = [p for p in phrases if p not in linking]
    return phrases


def _fold(word: str) -> str:
    return word.casefold().replace("’", "'")


_LY_NOUNS = _wordset(
    "family lily butterfly dragonfly firefly jelly belly holly bully ally supply assembly "
    "july rally anomaly monopoly reply italy fly jolly folly gully melancholy")
_FOLLOWING = re.compile(r"\s*([^\W\d_][\w'’-]*)")


def _is_adverb(word: str) -> bool:
    return len(word) > 4 and word.endswith("ly") and word not in _LY_NOUNS


def _is_adjective(word: str) -> bool:
    if word in _ADJECTIVES:
        return True
    return word not in _NOT_ADJECTIVES and any(
        word.endswith(suffix) and len(word) >= len(suffix) + 3
        for suffix in _ADJECTIVE_SUFFIXES)


def _is_participle(word: str) -> bool:
    """A past participle by its ending ("nestled", "adjusted"; not "speed", "bed")."""
    return len(word) > 4 and word.endswith("ed") and not word.endswith("eed")


def _is_verbal_ing(word: str, following: str | None) -> bool:
    """An ``-ing`` word used as a verb: followed by an object or a complement."""
    return (len(word) > 4 and word.endswith("ing") and word not in _ING_NOUNS
            and following in _VERB_CONTEXT)


def _next_word(idea: str, end: int) -> str | None:
    """The word right after ``end`` in ``idea`` (None at a punctuation boundary or the end)."""
    found = _FOLLOWING.match(idea, end)
    if found is None or _BOUNDARY.search(idea[end : found.start(1)]):
        return None
    return _fold(found.group(1))


_SUBJECT_PRONOUNS = _wordset("i you he she we they who")
_PRECEDING = re.compile(r"([^\W\d_][\w'’-]*)\s*$")


def _previous_word(idea: str, start: int) -> str | None:
    """The word right before ``start`` (None after a punctuation boundary or at the start)."""
    found = _PRECEDING.search(idea, max(0, start - 64), start)  # a bounded look back
    if found is None or _BOUNDARY.search(idea[found.end(1) : start]):
        return None
    return _fold(found.group(1))


def _trim_run(idea: str, run: list[re.Match[str]]) -> list[re.Match[str]]:
    """A content run without its non-content edges (issue 27: ideas, not fragments).

    From the front: generic modifiers ("makeshift", "miniature", "two") and adverbs;
    from the back: adverbs and verbs ("Andrew Wiles won", "small village surrounded",
    "toy moving [a steel ball]", "individual dogs vary greatly"). One word always stays.
    """
    words = [_fold(t.group(0)) for t in run]
    start, end = 0, len(run)
    while end - start > 1 and (words[start] in _GENERIC_MODIFIERS
                               or words[start] in _EXTRA_DELIMITERS
                               or words[start] in _VERBS
                               or _is_adverb(words[start])):
        start += 1
    while end - start > 1:
        last = words[end - 1]
        following = words[end] if end < len(run) else _next_word(idea, run[-1].end())
        if (_is_adverb(last) or last in _VERBS or _is_participle(last)
                or _is_verbal_ing(last, following)
                or ((last in _POSTURE_NOUNS or last == "set")
                    and following in _PLACE_PREPOSITIONS)):
            end -= 1
        else:
            break
    return run[start:end]


def _is_noun_like(word: str) -> bool:
    """Not an ``-ing`` form, adjective, modifier or adverb: a participle after it is a verb
    ("Alice walked"), not an adjective ("aerating compacted soil", "old weathered boat")."""
    return not (word.endswith("ing") or _is_adjective(word) or _is_adverb(word)
                or word in _GENERIC_MODIFIERS or _is_participle(word))


_AGE = re.compile(r"(?:\d+|[a-z]+)-years?-old")


_COLOURS = _wordset(
    "red orange yellow green blue purple pink brown black white gray grey golden silver")


def _is_modifier(word: str) -> bool:
    """An adjective, participle, colour, count, age or adverb: a word that only modifies."""
    return (_is_adjective(word) or word in _GENERIC_MODIFIERS or word in _NUMBER_WORDS
            or word in _COLOURS or _is_participle(word) or _is_adverb(word)
            or (word.endswith("ing") and word not in _ING_NOUNS)
            or _AGE.fullmatch(word) is not None)


def modifies_a_brief_term(form: str, terms: frozenset[str] | set[str]) -> bool:
    """True when ``form`` is a brief term with only modifiers before it ("young girl",
    "mischievous girl", "ten-year-old boy" for "a girl and her dog"): it restates the
    brief as much as the bare term does (SPEC §4.9; issue 27: anchors never restate the
    brief). ``terms`` are :func:`creagraph.tig.brief.brief_terms` stems.

    Examples
    --------
    >>> terms = frozenset({"girl", "dog"})
    >>> modifies_a_brief_term("young girl", terms), modifies_a_brief_term("girl scout", terms)
    (True, False)
    """
    from creagraph.tig.brief import word_stem

    words = [_fold(w) for w in _WORD.findall(form)]
    if len(words) < 2 or word_stem(words[-1]) not in terms:
        return False
    return all(_is_modifier(w) or w in _STOPWORDS for w in words[:-1])


def _is_bare_word(idea: str, phrase: Phrase) -> bool:
    """A phrase that is no idea on its own: one word that is a verb form, an adjective,
    an adverb, a generic noun or modifier ("inseparable", "called", "knowing [more]",
    "time"), or modifiers of a generic noun ("compelling character"). Purpose and
    perspective phrases are never bare (a visual brief's "calm")."""
    words = [_fold(w) for w in _WORD.findall(phrase.text)]
    if phrase.cue in ("purpose", "perspective"):
        return False
    if len(words) > 1:
        # "compelling character", "intriguing story": modifiers of a generic noun
        return words[-1] in _GENERIC_NOUNS and all(_is_modifier(w) for w in words[:-1])
    word = words[0]
    if _previous_word(idea, phrase.start) in _SUBJECT_PRONOUNS:
        return True  # "she *returns*", "who *travels*": a verb
    following = _next_word(idea, phrase.end)
    if word.endswith("ing") and len(word) > 4 and word not in _ING_NOUNS:
        return following not in (None, "and", "or")
    return (word in _VERBS or word in _GENERIC_NOUNS or word in _GENERIC_MODIFIERS
            or word in _COLOURS or word in _EXTRA_DELIMITERS or _is_adjective(word)
            or _is_adverb(word) or _is_participle(word))


def _perspective_phrases(idea: str, taken: list[bool]) -> list[Phrase]:
    """The perspective expressions of ``idea``, whole; marks their characters ``taken``."""
    phrases: list[Phrase] = []
    for match in _PERSPECTIVE_PATTERN.finditer(idea):
        phrases.append(Phrase(match.group(0), match.start(), match.end(), "perspective"))
        for i in range(match.start(), match.end()):
            taken[i] = True
    return phrases


class _Runs:
    """The runs of content words :func:`chunk_phrases` collects, token by token, with the
    cue type announced before each run."""

    def __init__(self) -> None:
        self.runs: list[list[re.Match[str]]] = []
        self.cues: list[str | None] = []
        self.current: list[re.Match[str]] = []
        self.pending_cue: str | None = None
        self.joined = False  # the last token of ``current`` is a joiner ("of", "into")

    def close(self) -> None:
        """End the current run (a joiner not followed by content is dropped)."""
        if self.joined:
            self.current.pop()
        if self.current:
            self.runs.append(self.current)
            self.cues.append(self.pending_cue)
            self.pending_cue = None
        self.current = []
        self.joined = False

    def add(self, token: re.Match[str]) -> None:
        """Extend, end or start a run with one word token."""
        word = token.group(0).casefold().replace("’", "'")
        if _PICTOGRAPH.fullmatch(word):
            self.close()  # an emoji is a phrase of its own
            self.current = [token]
            self.close()
        elif word in _PURPOSE_CUE_WORDS:
            self.close()
            self.pending_cue = "purpose"
        elif word in _FILLER_WORDS or word in _EXTRA_DELIMITERS:
            self.close()
        elif word in _STOPWORDS:
            if (self.current and not self.joined and word in _JOINERS
                    and len(self.current) < _MAX_PHRASE_WORDS):
                self.current.append(token)
                self.joined = True
                return
            self.close()
            if word in _SETTING_CUES:
                self.pending_cue = "setting"
        elif self.current and not self.joined and "-" not in word and (
                word in _VERBS or (_is_participle(word)
                                   and _is_noun_like(_fold(self.current[-1].group(0))))):
            # a verb after content words ends a phrase ("salt spray | stung her face",
            # "Alice and Bob | walked hand-in-hand"): it starts a verb phrase of its own
            self.close()
            self.current.append(token)
        elif word in _NUMBER_WORDS and self.current:
            self.close()  # "the local shelter | three years ago": a count starts a phrase
            self.current.append(token)
        elif word in _POSTURE_VERBS and not (
                word in _POSTURE_NOUNS and self.current and not self.joined):
            self.close()
            self.current.append(token)
        else:
            if len(self.current) >= _MAX_PHRASE_WORDS or (
                self.current and not self.joined and word.startswith(_MECHANISM_STEMS)
                and not word.endswith(_NOUN_ENDINGS)
            ):
                self.close()
            self.current.append(token)
            self.joined = False


def _content_runs(
    idea: str, tokens: Sequence[re.Match[str]], taken: Sequence[bool]
) -> tuple[list[list[re.Match[str]]], list[str | None]]:
    """Runs of content-word tokens between stopwords and punctuation, and each run's cue."""
    runs = _Runs()
    previous_end = 0
    for token in tokens:
        gap = idea[previous_end : token.start()]
        if _BOUNDARY.search(gap) or any(taken[previous_end : token.start()]):
            runs.close()
            runs.pending_cue = None
        previous_end = token.end()
        runs.add(token)
    runs.close()
    return runs.runs, runs.cues


def _unique_phrases(phrases: list[Phrase]) -> list[Phrase]:
    seen: set[str] = set()
    unique: list[Phrase] = []
    for phrase in phrases:
        form = atom_form(phrase.text)
        if form and form not in seen:
            seen.add(form)
            unique.append(phrase)
    return unique


# --------------------------------------------------------------------------- typing


def assign_types(
    phrase_vectors: np.ndarray,
    prototype_vectors: Mapping[str, np.ndarray],
    cues: Sequence[str | None],
    *,
    cue_bonus: float = 0.15,
    bias: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Type phrases by their best cosine similarity to each type's prototypes.

    ``score[i, t] = max_p cos(phrase_i, prototype_{t,p}) + cue_bonus · [cue_i == t]
    + bias[i, t]`` and the type is the argmax over :data:`ATOM_TYPES` (earlier type on
    ties).

    Parameters
    ----------
    phrase_vectors : ndarray, shape (n, d)
        L2-normalised phrase embeddings.
    prototype_vectors : mapping type → ndarray (k_t, d)
        L2-normalised prototype embeddings of every type in :data:`ATOM_TYPES`.
    cues : sequence of str or None
        Cue type of each phrase (from :func:`chunk_phrases`).
    cue_bonus : float
        Added to the cue type's score.
    bias : ndarray, shape (n, len(ATOM_TYPES)), optional
        Further additive priors (e.g. position in the sentence).

    Returns
    -------
    types : ndarray of int, shape (n,)
        Index into :data:`ATOM_TYPES`.
    scores : ndarray, shape (n, len(ATOM_TYPES))
        The scores above.

    Examples
    --------
    >>> v = np.eye(2, dtype=np.float32)
    >>> protos = {t: v[[0]] if t == "carrier" else v[[1]] for t in ATOM_TYPES}
    >>> assign_types(v, protos, [None, None])[0].tolist()
    [0, 1]
    """
    n = phrase_vectors.shape[0]
    scores = np.zeros((n, len(ATOM_TYPES)), dtype=np.float64)
    for t, kind in enumerate(ATOM_TYPES):
        protos = np.asarray(prototype_vectors[kind], dtype=np.float64)
        if n:
            scores[:, t] = (phrase_vectors.astype(np.float64) @ protos.T).max(axis=1)
    for i, cue in enumerate(cues):
        if cue is not None:
            scores[i, ATOM_TYPES.index(cue)] += cue_bonus
    if bias is not None:
        scores += np.asarray(bias, dtype=np.float64)
    return scores.argmax(axis=1) if n else np.zeros(0, dtype=int), scores


#: One-word heads that name no use on their own ("Tool for aerating soil", "Surface for
#: sharpening knives"): a use answer's idea is then its next phrase.
_GENERIC_USE_HEADS = _wordset(
    """
    tool tools device devices component components material materials element elements
    object objects item items accessory accessories substitute replacement alternative
    aid aids craft crafts project projects piece pieces surface base way method means
    """
)

#: Words of a consequence answer kept as its one idea (the first clause, at most).
_MAX_CONSEQUENCE_WORDS = 10


def short_answer_idea(idea: str, kind: str, brief: str = "") -> Phrase | None:
    """The one idea of a short answer (SPEC §4.10: uses, consequences, instances), a
    verbatim span of ``idea`` with cue ``"idea"``; ``None`` for the other kinds or an
    answer without a content phrase.

    A use or an instance is its first content phrase that does not merely restate the
    brief ("Doorstop for heavy doors" → "Doorstop"; "Makeshift compass needle when
    magnetized" → "compass needle"): the use or the thing named, without what follows
    it; a head that is only a generic word ("tool", "surface") gives way to the next
    phrase. A consequence is its first clause from its first to its last content phrase (at
    most ten words): the outcome as a whole.

    Examples
    --------
    >>> short_answer_idea("Makeshift compass needle when magnetized", "use").text
    'compass needle'
    >>> short_answer_idea("Brick wall art for the garden", "use", "uses for a brick").text
    'Brick wall art'
    >>> short_answer_idea("Tool for aerating compacted soil", "use").text
    'aerating compacted soil'
    >>> short_answer_idea("Everyone would have more free time, so ...", "consequence").text
    'Everyone would have more free time'
    >>> short_answer_idea("A fern in a jar", "visual") is None
    True
    """
    from creagraph.tig.brief import brief_terms, is_from_brief

    if kind not in ("use", "instance", "consequence"):
        return None
    phrases = chunk_phrases(idea_head(idea))
    if not phrases:
        return None
    if kind == "consequence":
        clause_end = _BOUNDARY.search(idea, phrases[0].end)
        limit = clause_end.start() if clause_end else len(idea)
        inside = [p for p in phrases if p.end <= limit] or phrases[:1]
        start = inside[0].start
        end = inside[-1].end
        words = list(_WORD.finditer(idea, start, end))
        if len(words) > _MAX_CONSEQUENCE_WORDS:
            end = words[_MAX_CONSEQUENCE_WORDS - 1].end()
        return Phrase(idea[start:end], start, end, "idea")
    terms = brief_terms(brief, instructions=True)
    candidates = [p for p in phrases if not is_from_brief(p.text, terms)] or phrases[:1]
    head = next((p for p in candidates if _fold(p.text) not in _GENERIC_USE_HEADS),
                candidates[0])
    return Phrase(head.text, head.start, head.end, "idea")


#: Sentences after the Core Idea read, at most, when the Core Idea only restates the brief.
FALLBACK_SENTENCES = 3


def _restates_brief(text: str, terms: frozenset[str]) -> bool:
    from creagraph.tig.brief import is_from_brief

    form = atom_form(text)
    return is_from_brief(form, terms) or modifies_a_brief_term(form, terms)


def following_sentence_phrases(response: Response, terms: frozenset[str]
                               ) -> list[Phrase] | None:
    """The phrases of the first sentence after the Core Idea, in the response's full text
    (``visual_description``), that says more than the brief: read when the Core Idea only
    restates the brief ("Happy New Year!" for a new-year text; SPEC §4.9). At most
    :data:`FALLBACK_SENTENCES` sentences are read; filler ("Here are some options:") is
    skipped. ``None`` when no such sentence follows. The phrases are verbatim spans of
    that sentence. ``terms`` are :func:`creagraph.tig.brief.brief_terms` stems (with the
    instruction words).

    Examples
    --------
    >>> from creagraph.tig.brief import brief_terms
    >>> brief = "Write a one-sentence happy new year text to my friend."
    >>> r = Response("t", brief, "m", 0, "Happy New Year!",
    ...     visual_description="Happy New Year! A year filled with joy, laughter, and adventure.")
    >>> [p.text for p in following_sentence_phrases(r, brief_terms(brief, instructions=True))]
    ['joy', 'laughter', 'adventure']
    """
    from creagraph.tig.adapters import content_sentences, is_filler_sentence

    text = (response.visual_description or "").strip()
    core = response.core_idea.strip()
    if not text or not core or text == core:
        return None
    sentences = content_sentences(text)
    start = next((i + 1 for i, s in enumerate(sentences) if core in s or s in core), 0)
    read = 0
    for sentence in sentences[start:]:
        if sentence == core or is_filler_sentence(sentence):
            continue
        phrases = chunk_phrases(idea_head(sentence))
        if any(not _restates_brief(p.text, terms) for p in phrases):
            return phrases
        read += 1
        if read >= FALLBACK_SENTENCES:
            break
    return None


def _idea_phrases(response: Response) -> list[Phrase]:
    """The phrases the offline extractor types: a short answer's one idea, else the
    Core Idea's phrases — or, when those only restate the brief, the phrases of the next
    sentence that does not (:func:`following_sentence_phrases`)."""
    from creagraph.tig.brief import brief_terms, task_kind

    try:
        kind = task_kind(response.brief, response.family, response.kind)
    except ValueError:
        kind = "open"
    one = short_answer_idea(response.core_idea, kind, response.brief)
    if one is not None:
        return [one]
    phrases = chunk_phrases(idea_head(response.core_idea))
    terms = brief_terms(response.brief, instructions=True)
    if any(not _restates_brief(p.text, terms) for p in phrases):
        return phrases
    return following_sentence_phrases(response, terms) or phrases


class OfflineExtractor:
    """Atoms without an LLM: :func:`chunk_phrases`, then :func:`assign_types`.

    Phrases closest to an excluded visual aspect (lighting, colour, texture, composition;
    :data:`~creagraph.tig.schema.EXCLUDED_ASPECT_PROTOTYPES`) — similarity above both
    ``exclude_threshold`` and the phrase's best type score without cue — are dropped while
    more than three phrases remain. Beyond seven phrases, those with the highest type score
    are kept (in text order). Unique phrase forms are embedded once per call.

    Parameters
    ----------
    embedder : Embedder, optional
        Default :func:`creagraph.core.embeddings.default_embedder` (cached MiniLM).
    cue_bonus : float
        See :func:`assign_types`.
    subject_bonus : float
        Added to ``carrier`` for the first phrase when it has no cue (the sentence's
        subject usually carries the concept).
    perspective_penalty : float
        Subtracted from ``perspective`` for phrases without a perspective cue (viewpoints
        are nearly always announced by the expressions :func:`chunk_phrases` recognises).
    exclude_threshold : float
        Minimum similarity to an excluded aspect for dropping a phrase.

    Examples
    --------
    >>> ex = OfflineExtractor()                                      # doctest: +SKIP
    >>> r = Response("t", "calm", "m", 0, "A fern unfurling in a glass jar to evoke calm.")
    >>> [(a.type, a.text) for a in ex.extract([r])[0]]               # doctest: +SKIP
    [('carrier', 'fern unfurling'), ('setting', 'glass jar'), ('purpose', 'calm')]
    """

    name = "offline"

    def __init__(
        self,
        embedder: Any = None,
        *,
        cue_bonus: float = 0.15,
        subject_bonus: float = 0.1,
        perspective_penalty: float = 0.1,
        exclude_threshold: float = 0.5,
    ):
        self._embedder = embedder
        self.cue_bonus = cue_bonus
        self.subject_bonus = subject_bonus
        self.perspective_penalty = perspective_penalty
        self.exclude_threshold = exclude_threshold
        self._prototypes: dict[str, np.ndarray] | None = None
        self._excluded: np.ndarray | None = None

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from creagraph.core.embeddings import default_embedder

            self._embedder = default_embedder()
        return self._embedder

    def _prototype_vectors(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        if self._prototypes is None or self._excluded is None:
            texts = [p for kind in ATOM_TYPES for p in TYPE_PROTOTYPES[kind]]
            vectors = self.embedder.encode(texts + list(EXCLUDED_ASPECT_PROTOTYPES))
            prototypes: dict[str, np.ndarray] = {}
            offset = 0
            for kind in ATOM_TYPES:
                k = len(TYPE_PROTOTYPES[kind])
                prototypes[kind] = vectors[offset : offset + k]
                offset += k
            self._prototypes = prototypes
            self._excluded = vectors[offset:]
        return self._prototypes, self._excluded

    def _bias(self, cues: Sequence[str | None]) -> np.ndarray:
        bias = np.zeros((len(cues), len(ATOM_TYPES)))
        if cues and cues[0] is None:
            bias[0, ATOM_TYPES.index("carrier")] += self.subject_bonus
        for i, cue in enumerate(cues):
            if cue != "perspective":
                bias[i, ATOM_TYPES.index("perspective")] -= self.perspective_penalty
        return bias

    def extract(self, responses: Sequence[Response]) -> list[list[Atom]]:
        chunked = [_idea_phrases(r) for r in responses]
        forms = sorted({atom_form(p.text) for phrases in chunked for p in phrases})
        index = {form: i for i, form in enumerate(forms)}
        vectors = (
            self.embedder.encode(forms) if forms else np.zeros((0, 1), dtype=np.float32)
        )
        prototypes, excluded = self._prototype_vectors()
        result: list[list[Atom]] = []
        for phrases in chunked:
            if not phrases:
                result.append([])
                continue
            if len(phrases) == 1 and phrases[0].cue == "idea":
                # a short answer's one idea (SPEC §4.10): it carries the answer
                result.append([Atom("carrier", phrases[0].text)])
                continue
            rows = vectors[[index[atom_form(p.text)] for p in phrases]]
            cues = [p.cue for p in phrases]
            types, scores = assign_types(
                rows, prototypes, cues, cue_bonus=self.cue_bonus, bias=self._bias(cues)
            )
            best = scores.max(axis=1)
            _, plain = assign_types(rows, prototypes, [None] * len(phrases), cue_bonus=0.0)
            plain_best = plain.max(axis=1)
            aspect = (rows.astype(np.float64) @ excluded.T.astype(np.float64)).max(axis=1)
            keep = list(range(len(phrases)))
            droppable = [
                i
                for i in keep
                if cues[i] in (None, "setting")
                and aspect[i] >= self.exclude_threshold
                and aspect[i] > plain_best[i]
            ]
            for i in sorted(droppable, key=lambda i: (-aspect[i], i)):
                if len(keep) <= MIN_ATOMS:
                    break
                keep.remove(i)
            if len(keep) > MAX_ATOMS:
                keep = sorted(sorted(keep, key=lambda i: (-best[i], i))[:MAX_ATOMS])
            result.append([Atom(ATOM_TYPES[int(types[i])], phrases[i].text) for i in keep])
        return result


