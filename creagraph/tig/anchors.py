"""Checklist anchors: natural-language novelty items from the top cliché clusters (SPEC §4.7).

Each anchor asks whether a response *avoids*, *transforms* or merely *repeats* a common
pattern of the reference population, phrased for the cluster's atom type, e.g. for a
calmness brief whose population converges on plants:

    "Does the idea avoid relying on plants, leaves or soft green growth as the carrier of
    calm, or transform them into something unexpected?"

An anchor keeps its provenance: the cluster id, the canonical atoms, every atom id and
response id of the reference population behind it, and the ClichéScore with its factors.

Examples
--------
>>> anchor_text("carrier", ["plants", "leaves", "soft green growth"], concept="calm")
'Does the idea avoid relying on plants, leaves or soft green growth as the carrier of calm, \
or transform them into something unexpected?'
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from creagraph.tig.anchor_writer import CANDIDATE_FACTOR, WriterCounts
from creagraph.tig.brief import (
    _FUNCTION_WORDS,
    _NUMBER,
    _WORD,
    TASK_KINDS,
    _is_instruction,
    brief_words,
    degree_base_words,
    is_short_answer,
    matches_brief_term,
    shares_inflection_root,
)
from creagraph.tig.config import DEFAULT_MIN_MODELS, DEFAULT_TOP_K
from creagraph.tig.population import Population
from creagraph.tig.schema import ATOM_TYPES, ChecklistAnchor, join_labels

__all__ = [
    "ANCHOR_TEMPLATES",
    "USE_TEMPLATE",
    "DEFAULT_LABEL_SIMILARITY",
    "anchor_text",
    "anchor_labels",
    "anchor_label",
    "GENERIC_WORDS",
    "SYNONYM_SIMILARITY",
    "SINGLE_WORD_SIMILARITY",
    "COMMON_WORD_SHARE",
    "common_words",
    "is_non_word",
    "brief_superlatives",
    "intensifies_superlative",
    "CRITERION_SIMILARITY",
    "MIN_LABEL_SHARE",
    "LEAD_CANDIDATES",
    "SAME_IDEA_SIMILARITY",
    "PARAPHRASE_SIMILARITY",
    "SHARED_ANSWERS",
    "HEDGE_WORDS",
    "is_hedge_label",
    "hedged_share",
    "is_hedge_cluster",
    "trim_trailing_verb",
    "label_initials",
    "brief_synonyms",
    "is_verb_in_usage",
    "core_ideas",
    "label_share",
    "select_cliche_clusters",
    "anchors_for_population",
    "anchor_steps",
    "next_anchors",
    "anchor_from_dict",
    "write_anchors",
    "read_anchors",
]

#: One question per atom type; ``{labels}`` is the cluster's top labels, ``{concept}`` the
#: brief's concept, ``{them}`` "them" or "it".
ANCHOR_TEMPLATES: dict[str, str] = {
    "carrier": (
        "Does the idea avoid relying on {labels} as the carrier of {concept}, or transform "
        "{them} into something unexpected?"
    ),
    "motif": (
        "Does the idea avoid the stock motif of {labels}, or give {them} a genuinely new "
        "role?"
    ),
    "mechanism": (
        "Does the idea make {concept} visible through something other than {labels}, or "
        "push that device somewhere unexpected?"
    ),
    "setting": (
        "Does the idea avoid the stock setting ({labels}), or reinvent it in a surprising "
        "way?"
    ),
    "purpose": (
        "Does the idea communicate something beyond {labels}, or reframe that message in a "
        "surprising way?"
    ),
    "perspective": (
        "Does the idea avoid the familiar framing ({labels}), or use it to reveal something "
        "unexpected?"
    ),
}

#: Use tasks ("a surprising use for a brick", SPEC §4.11) speak of uses and functions,
#: whatever the cluster's atom type.
USE_TEMPLATE = (
    "Does the answer find a use for {concept} other than {labels}, or turn that common "
    "function into something unexpected?"
)

#: The other short-answer and open kinds (SPEC §4.10, §4.11).
KIND_TEMPLATES = {
    "consequence": (
        "Does the answer foresee a consequence of {concept} other than {labels}, or take "
        "that common outcome somewhere unexpected?"
    ),
    "instance": (
        "Does the answer name {concept} other than {labels}, or find an unexpected "
        "example?"
    ),
    "open": (
        "Does the response go beyond the common answer ({labels}), or take the prompt "
        "somewhere unexpected?"
    ),
}
KIND_DEFAULT_CONCEPT = {"consequence": "the scenario", "instance": "an example"}

DEFAULT_CONCEPT = "the brief's concept"
DEFAULT_OBJECT = "the object"


def _pronoun(labels: Sequence[str]) -> str:
    if len(labels) > 1:
        return "them"
    word = labels[0].split()[-1] if labels and labels[0].split() else ""
    return "them" if word.endswith("s") and not word.endswith("ss") else "it"


def anchor_text(atom_type: str, labels: Sequence[str], *, concept: str | None = None,
                kind: str = "visual") -> str:
    """The checklist question for a cluster of ``atom_type`` with top ``labels``.

    Parameters
    ----------
    atom_type : str
        One of :data:`~creagraph.tig.schema.ATOM_TYPES`.
    labels : sequence of str
        The cluster's most frequent canonical labels (at most three are used).
    concept : str, optional
        The brief's concept ("calm"); default "the brief's concept" ("the object" for a
        use task).
    kind : {"visual", "use", "consequence", "instance", "open"}
        The task kind (:func:`creagraph.tig.brief.task_kind`): visual briefs speak of
        carriers, motifs and mechanisms; use tasks of uses and functions; consequence
        tasks of outcomes; instance tasks of examples; open prompts of the common answer
        (SPEC §4.11).

    Examples
    --------
    >>> anchor_text("setting", ["misty forest"])
    'Does the idea avoid the stock setting (misty forest), or reinvent it in a surprising way?'
    >>> anchor_text("carrier", ["doorstop", "paperweight"], concept="a brick", kind="use")
    'Does the answer find a use for a brick other than doorstop or paperweight, or turn \
that common function into something unexpected?'
    """
    if kind not in TASK_KINDS:
        raise ValueError(f"unknown task kind {kind!r} (expected one of {', '.join(TASK_KINDS)})")
    if atom_type not in ANCHOR_TEMPLATES:
        raise ValueError(f"unknown atom type {atom_type!r} (expected one of {ATOM_TYPES})")
    top = [str(x) for x in labels[:3] if str(x)]
    if not top:
        raise ValueError("an anchor needs at least one label")
    if kind == "use":
        return USE_TEMPLATE.format(labels=join_labels(top), concept=concept or DEFAULT_OBJECT)
    if kind in KIND_TEMPLATES:
        return KIND_TEMPLATES[kind].format(
            labels=join_labels(top), concept=concept or KIND_DEFAULT_CONCEPT.get(kind, ""))
    return ANCHOR_TEMPLATES[atom_type].format(
        labels=join_labels(top), concept=concept or DEFAULT_CONCEPT, them=_pronoun(top)
    )


#: Cosine similarity to a cluster's most frequent label for another label to be named in
#: its anchor (between the graph's similarity edge, 0.5, and the synonym threshold, 0.8).
DEFAULT_LABEL_SIMILARITY = 0.6


def anchor_labels(population: Population, cluster_index: int, *,
                  label_similarity: float = DEFAULT_LABEL_SIMILARITY,
                  lead: int = 0) -> tuple[str, ...]:
    """The labels an anchor names: the cluster's most frequent label (or its ``lead``-th
    label by frequency) and the other labels (most frequent first) within
    ``label_similarity`` of it.

    A Leiden cluster on the similarity graph can chain several ideas ("solar oven",
    "projector screen", "pinhole camera"); an anchor listing them would ask about no idea
    in particular (issue 27: mixed clusters). The anchor names the cluster's core idea
    and its near paraphrases; its provenance (atoms, responses) stays the whole cluster.
    Without node vectors every label is kept.
    """
    cluster = population.clusters[cluster_index]
    vectors = population.node_vectors
    ordered = (cluster.labels[lead], *cluster.labels[:lead], *cluster.labels[lead + 1:])
    if vectors is None or len(cluster.labels) < 2:
        return ordered
    node_of = {population.canonical[n].label: n
               for n in np.flatnonzero(population.node_cluster == cluster_index).tolist()}
    nodes = [node_of[label] for label in ordered if label in node_of]
    if len(nodes) != len(ordered):
        return ordered
    sims = vectors[nodes].astype(np.float64) @ vectors[nodes[0]].astype(np.float64)
    return tuple(label for i, (label, sim) in enumerate(zip(ordered, sims, strict=True))
                 if i == 0 or sim >= label_similarity - 1e-9)


#: Generic nouns and verbs that name no idea on their own (issue 27: graded anchors that were
#: a lone "ability", "guess", "simulate", "human", "call", "told", "result of"). They come
#: from the stock sentences of model answers, whatever the topic — disclaimers ("as an AI
#: I don't have the ability / capacity / preferences / opinions to make decisions", "not
#: a human"), narration ("I'll simulate a roll", "it's hard to guess", "the result of"),
#: explanation ("I'll generate", "it relies on", "it increases", "a variety of factors").
#: A label needs a content word outside this list, the brief and the vocabulary of task
#: instructions ("imagine", "create") to be named in an anchor; a longer label keeps them
#: ("human touch"). Exact forms, no stems: "party" is no "part", "meaning" no "mean".
#: The hedges of opinion answers name no answer either ("it depends on the individual",
#: "your specific needs", "certain / various circumstances", "the situation"; session 8),
#: nor does an interjection ("Ah, the million-dollar question!").
GENERIC_WORDS: frozenset[str] = frozenset(str.split("""
    ability abilities capability thing things stuff way ways kind kinds type types sort
    lot bit part fact case example result results reason time world life lived living
    people person human humans someone something anything everything nothing one
    simulate simulated simulating guess guessing think thought know knew feel felt
    believe say said tell told call called hear heard get got go went want try see saw
    help need seem let make made do done take took give gave hope mean able sure okay
    capacity factor factors aspect aspects variety generate generated generating
    provide provides offer offers ensure ensures rely relies increase increases include
    includes involve involves determine determines perform performs action actions
    decision decisions preference preferences opinion opinions
    itself himself herself themselves myself yourself ourselves
    individual individuals specific particular certain various needs circumstances
    situation situations
    ah oh ooh wow hmm hm alright
"""))


#: Brief words asking for symbols as answers: a symbol-only label (an emoji) is then an
#: answer, not decoration (NoveltyBench "Pick an emoji at random."); matched through
#: :func:`~creagraph.tig.brief.matches_brief_term`, so plurals need no entry.
SYMBOL_WORDS: tuple[str, ...] = ("emoji", "emoticon", "symbol", "icon", "glyph")


def _label_words(label: str) -> list[str]:
    """The words and numbers of a label, casefolded ("number 42" -> ["number", "42"]); an
    emoji or a symbol is no word."""
    return [m.group(0).casefold() for m in
            sorted([*_WORD.finditer(label), *_NUMBER.finditer(label)], key=lambda m: m.start())]


def _is_generic(word: str) -> bool:
    return word in _FUNCTION_WORDS or word in GENERIC_WORDS or _is_instruction(word)


#: Unicode script groups whose letters may share a word (Japanese writes kanji with kana).
_SCRIPT_GROUPS = {"CJK": "CJK", "HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "HANGUL"}


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    first = name.split(" ", 1)[0]
    return _SCRIPT_GROUPS.get(first, first)


def _mixed_script(token: str) -> bool:
    letters = [c for c in token if unicodedata.category(c)[0] in "LM"
               and not unicodedata.name(c, "").startswith("COMBINING")]
    return len({_script(c) for c in letters}) > 1


def is_non_word(word: str) -> bool:
    """True when a label's ``word`` is no word an anchor can name (issue 27, session 9):
    one or two letters ("k" and "j" of "J.K. Rowling", "uk"; an initial) of an alphabet,
    or letters of more than one script in one word ("یுஙகள", a garbled fragment).
    Numbers are words ("7", "42", "d12"), and so are one or two Chinese, Japanese or Korean
    characters; kanji and kana count as one script.

    Examples
    --------
    >>> is_non_word("k"), is_non_word("uk"), is_non_word("7"), is_non_word("koala")
    (True, True, False, False)
    >>> is_non_word("یுஙகள"), is_non_word("café"), is_non_word("東京")
    (True, False, False)
    """
    if any(c.isdigit() for c in word):
        return False  # a number, or a word written with one ("d12", "mp3")
    if _mixed_script(word):
        return True
    # a syllable or an ideograph is a word of its own ("東京"); a Latin letter is not
    letters = [c for c in word if unicodedata.category(c)[0] == "L"]
    return len(letters) <= 2 and not {_script(c) for c in letters} & {"CJK", "HANGUL"}


def _from_brief(word: str, terms: frozenset[str], synonyms: frozenset[str]) -> bool:
    """True when a label's ``word`` is the brief's: a brief number, a brief term (up to
    its endings), a word written with a brief number ("d20" for a "20-sided die"), or one
    of ``synonyms``."""
    if word[0].isdigit():
        return word in terms
    if any(c.isdigit() for c in word):
        return any(n in terms for n in re.findall(r"\d+", word)) or word in synonyms
    return word in synonyms or matches_brief_term(word, terms)


def anchor_label(label: str, brief_terms: frozenset[str] | None = None,
                 synonyms: frozenset[str] = frozenset(),
                 common: frozenset[str] = frozenset()) -> str | None:
    """The form of a cluster label an anchor may name, or ``None`` (issue 27).

    * A label names something only through a content word: a word or a number that is
      neither a function word, nor a generic word (:data:`GENERIC_WORDS`), nor a brief
      term (:func:`creagraph.tig.brief.matches_brief_term`: "safer" and "safety" restate a
      brief asking for the "safest" code), nor one of ``synonyms`` (the label words
      :func:`brief_synonyms` finds restating a brief word by another word: "secure" for
      the "safest" code), nor a word written with a number of the brief ("d20" for a
      "20-sided die"), nor one of ``common`` (the words the models use in answer to
      most prompts, :func:`common_words`: "experience", "choice"), nor a non-word
      (:func:`is_non_word`: "k", "j" of "J.K."). An emoji or a symbol-only label has
      none.
    * A label holding a brief term names nothing of its own ("vast whale glides" for a
      whale haiku).
    * A label made of brief and generic words followed by one number is named by the
      number, the head of the phrase: "number 42" and "picked 42" for "pick a number"
      are named "42", "result of 17" for "roll a die" "17". A word is not taken for
      the head: without a part-of-speech tagger it may be a verb or a predicate
      ("4-digit lock relies", "combination stronger" for a lock code brief), so "whale
      song" for a whale haiku is not named either.
    * A label of symbols alone (an emoji) names something only when the brief asks for
      symbols (:data:`SYMBOL_WORDS`: "pick an emoji" is answered by "🤔"), or when no
      brief is given; otherwise it is a reply's decoration ("😊" after a number).

    Examples
    --------
    >>> from creagraph.tig.brief import brief_terms
    >>> terms = brief_terms("Pick a number between 1 and 100.", instructions=True)
    >>> anchor_label("number 42", terms), anchor_label("ability", terms), anchor_label("😊", terms)
    ('42', None, None)
    >>> anchor_label("human touch", terms), anchor_label("number", terms)
    ('human touch', None)
    >>> anchor_label("number seven", terms) is None  # a word is not taken for the head
    True
    >>> anchor_label("🤔", brief_terms("Pick an emoji at random.", instructions=True))
    '🤔'
    """
    words = _label_words(label)
    terms = brief_terms or frozenset()
    if any(_mixed_script(token) for token in label.split()):
        return None  # a garbled fragment ("یுஙகள"): the word splits at a vowel sign
    if not words and any(unicodedata.category(c) == "So" for c in label):
        # an emoji; without the brief, an answer cannot be told from decoration
        asks_for_symbols = brief_terms is None or any(
            matches_brief_term(w, terms) for w in SYMBOL_WORDS)
        return label.strip() if asks_for_symbols else None

    def from_brief(w: str) -> bool:
        return _from_brief(w, terms, synonyms)

    content = [i for i, w in enumerate(words) if not _is_generic(w) and not from_brief(w)
               and w not in common and not is_non_word(w)]
    if not content:
        return None
    if len(words) > 1 and content == [len(words) - 1] and words[-1][0].isdigit():
        return words[-1]
    if not any(from_brief(w) for w in words):
        return label
    return None


#: Cosine of two words' embeddings (all-MiniLM-L6-v2) from which a label's word restates
#: a brief word by another word ("numbers" for the brief's "digit": 0.74; "canine" for
#: "dog": 0.93). Measured on the briefs and anchors graded for issue 27
#: (``benchmarks/anchor_grading_synonyms.py``): the answer words closest to a brief word
#: that a reader kept as ideas are "terrier" for a story about a dog (0.67), "sea" for a
#: whale haiku (0.63) and "joy" for a happy new year text (0.61), so a hyponym, a setting or
#: an associated word stays an idea below 0.7.
SYNONYM_SIMILARITY = 0.7
#: The same for the base of a superlative the brief asks for, the criterion an answer is to
#: meet ("secure" for the "safest" code: 0.64 to "safe"). An answer calling itself "secure",
#: "best" or "safe" restates the criterion; the criterion is an adjective, so the hyponyms
#: and settings above do not arise (see the benchmark script for the figures).
CRITERION_SIMILARITY = 0.6
#: The same for a label of a single word, which has no other word to name an idea by
#: (issue 27, session 9): "fit" for a breed "best suited" to a first-time owner (0.64).
#: Measured on the graded rows (``python benchmarks/anchor_grading_synonyms.py
#: --single``): the single-word labels kept as ideas lie at most at 0.628 ("sea" for a
#: whale haiku), then "joy" (0.61), "boxing" (0.60) for "combat sports"; "child" for a
#: "son" (0.58) and "candidate" for people "hired" (0.48) lie among them, so no cosine
#: reaches them. A thin margin, measured on the prompts it was read from.
SINGLE_WORD_SIMILARITY = 0.635

_SYNONYM_MEMO: dict[tuple[str, str], tuple[float, float]] = {}
_SYNONYM_MEMO_SIZE = 65_536


def _brief_anchor_words(brief: str) -> tuple[list[str], list[str]]:
    """The brief's content words (and the parts of hyphenated ones: "make-believe" ->
    "believe") and the base words of its superlatives ("safest" -> "safe")."""
    words: list[str] = []
    for word in brief_words(brief):
        words.append(word)
        words.extend(p for p in word.split("-")[1:] if len(p) > 2 and not _is_generic(p))
    criteria = sorted({b for w in words for b in degree_base_words(w, superlative_only=True)
                       if len(b) > 3})
    return list(dict.fromkeys(words)), criteria


def brief_synonyms(words: Iterable[str], brief: str, *, embedder: Any = None,
                   similarity: float = SYNONYM_SIMILARITY) -> frozenset[str]:
    """The words among ``words`` that restate a content word of ``brief`` by another word
    or another form (issue 27: "secure" for a brief asking for the "safest" lock code;
    "hiring" for people "hired").

    A word restates the brief when it is an inflection of a brief word (the same
    :func:`~creagraph.tig.brief.inflection_root`: "hiring" / "hired", "inventor" /
    "invent"), when the cosine of its embedding and a brief word's is at least
    ``similarity`` (:data:`SYNONYM_SIMILARITY`; :data:`SINGLE_WORD_SIMILARITY` for a
    label of one word), or that of its embedding and the base of a superlative of the
    brief ("safe" of "safest") at least :data:`CRITERION_SIMILARITY`. Numbers, function
    words, generic words and the brief's own terms are never returned (they are handled
    by :func:`anchor_label`).

    Parameters
    ----------
    words : iterable of str
        Casefolded words of labels.
    brief : str
        The task's brief.
    similarity : float
        Cosine to a brief word from which a word restates it.
    embedder : optional
        Any object with ``encode(texts) -> array``; default
        :func:`creagraph.core.embeddings.default_embedder` (cached MiniLM). Results with
        the default embedder are remembered per (brief, word) for the process.

    Examples
    --------
    >>> sorted(brief_synonyms(["secure", "randomness", "numbers", "1234"],
    ...                       "Which 4-digit lock combination is the safest?"))
    ['numbers', 'secure']
    """
    brief_list, criteria = _brief_anchor_words(brief)
    candidates = sorted({w for w in words if w and not w[0].isdigit() and not _is_generic(w)
                         and w not in brief_list})
    if not candidates:
        return frozenset()
    inflected = {w for w in candidates
                 if shares_inflection_root(w, brief_words(brief, instructions=True))}
    candidates = [w for w in candidates if w not in inflected]
    if not candidates or not (brief_list or criteria):
        return frozenset(inflected)
    memo = _SYNONYM_MEMO if embedder is None else {}
    todo = [w for w in candidates if (brief, w) not in memo]
    if todo:
        if embedder is None:
            from creagraph.core.embeddings import default_embedder

            embedder = default_embedder()
        texts = [*brief_list, *criteria, *todo]
        vectors = np.asarray(embedder.encode(texts), dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        n_brief, n_criteria = len(brief_list), len(criteria)
        sims = vectors[n_brief + n_criteria:] @ vectors[: n_brief + n_criteria].T
        if len(memo) + len(todo) > _SYNONYM_MEMO_SIZE:
            memo.clear()
        for i, word in enumerate(todo):
            memo[(brief, word)] = (float(sims[i, :n_brief].max()) if n_brief else -1.0,
                                   float(sims[i, n_brief:].max()) if n_criteria else -1.0)
    return frozenset(inflected) | frozenset(
        w for w in candidates if memo[(brief, w)][0] >= similarity - 1e-9
        or memo[(brief, w)][1] >= CRITERION_SIMILARITY - 1e-9)


#: Share of the other open prompts whose model answers use a word (in at least 0.5 % of
#: their generations) from which the word is common to answers of any prompt and names no
#: idea of this one (issue 27, session 9: "experience", "choice", "challenging", "means").
#: Measured on the graded rows (``python benchmarks/anchor_grading_common_words.py``):
#: a leading label all of whose content words reach 0.4 was graded not useful 10 times
#: and useful once ("love", a new-year wish graded borderline); the next kept ideas lie at
#: 0.39 ("family") and 0.37 ("connection"), so the margin below is thin.
COMMON_WORD_SHARE = 0.4
_COMMON_WORDS_FILE = "open_prompt_words.json"


def _common_words_path() -> str:
    from importlib import resources

    return str(resources.files("creagraph.tig") / "data" / _COMMON_WORDS_FILE)


@functools.lru_cache(maxsize=4)
def _open_prompt_words(path: str) -> tuple[tuple[str, ...], dict[str, int]]:
    """The prompts and word -> bit mask of ``open_prompt_words.json`` (see
    ``benchmarks/anchor_grading_common_words.py``)."""
    from creagraph.core.io import InputError

    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the common-word table ({exc})") from exc
    if not isinstance(record, dict):
        raise InputError(f"{path}: must hold a JSON object with 'prompts' and 'words'")
    prompts, words = record.get("prompts"), record.get("words")
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        raise InputError(f"{path}: field 'prompts' must be a list of prompt ids")
    if not isinstance(words, dict):
        raise InputError(f"{path}: field 'words' must map words to bit masks")
    masks: dict[str, int] = {}
    for word, mask in words.items():
        try:
            masks[word] = int(mask, 16)
        except (TypeError, ValueError):
            raise InputError(f"{path}: field 'words.{word}' must be a hexadecimal bit mask, "
                             f"got {mask!r}") from None
        if masks[word] >> len(prompts):
            raise InputError(f"{path}: field 'words.{word}' names prompts beyond the "
                             f"{len(prompts)} listed")
    return tuple(prompts), masks


@functools.lru_cache(maxsize=256)
def common_words(task_id: str | None = None, share: float = COMMON_WORD_SHARE,
                 path: str | None = None) -> frozenset[str]:
    """The words the models use in answer to at least ``share`` of the open prompts other
    than ``task_id`` (issue 27, session 9: specificity from the data).

    The background is the NoveltyBench curated generations (100 prompts, 24 models, whole
    generations; a prompt uses a word when at least 0.5 % of its generations hold it),
    shipped as ``creagraph/tig/data/open_prompt_words.json`` and rebuilt by
    ``python benchmarks/anchor_grading_common_words.py build``. A prompt of that set is
    left out of its own background, so its own answers never make a word common.

    Parameters
    ----------
    task_id : str, optional
        The prompt whose anchors are named.
    share : float
        :data:`COMMON_WORD_SHARE`.
    path : str, optional
        Another table of the same format (default: the shipped one).

    Examples
    --------
    >>> words = common_words("curated-43")
    >>> "experience" in words, "choice" in words, "apple" in words, "terrier" in words
    (True, True, False, False)
    """
    prompts, masks = _open_prompt_words(path or _common_words_path())
    own = prompts.index(task_id) if task_id in prompts else -1
    others = len(prompts) - (own >= 0)
    if not others:
        return frozenset()
    found = set()
    for word, mask in masks.items():
        count = mask.bit_count() - (own >= 0 and (mask >> own) & 1)
        if count >= share * others - 1e-9:
            found.add(word)
    return frozenset(found)


#: Superlatives without an "-est" ending; with the "-iest" forms ("easiest", "happiest")
#: and the brief's own "-est" words they are what :func:`intensifies_superlative` looks
#: for (a lone "-est" word may be a noun: "forest", "interest", "chest").
_IRREGULAR_SUPERLATIVES = frozenset({"best", "worst", "most", "least"})


def brief_superlatives(brief: str) -> frozenset[str]:
    """The superlatives a label word may intensify: best / worst / most / least and the
    brief's own "-est" words with a base (:func:`~creagraph.tig.brief.degree_base_words`:
    "safest" of "the safest code").

    Examples
    --------
    >>> sorted(brief_superlatives("Which 4-digit lock combination is the safest?"))
    ['best', 'least', 'most', 'safest', 'worst']
    """
    own = {w for w in brief_words(brief, instructions=True)
           if w.endswith("est") and degree_base_words(w, superlative_only=True)}
    return _IRREGULAR_SUPERLATIVES | frozenset(own)


def intensifies_superlative(word: str, texts: Iterable[str],
                            superlatives: Iterable[str] = _IRREGULAR_SUPERLATIVES) -> bool:
    """True when ``word`` is written just before a superlative (``superlatives``, or a
    word in "-iest") in at least half of its occurrences in ``texts``: it intensifies
    the answer's criterion ("the absolute worst breed", "the very best pie"), it is no
    idea of its own (issue 27, session 9: a lone "absolute" for the breed "least
    well-suited" to a first-time owner).

    Examples
    --------
    >>> intensifies_superlative("absolute", ["The absolute worst breed is…",
    ...                                      "Absolute worst: a husky."])
    True
    >>> intensifies_superlative("husky", ["A husky is the worst.", "Husky"])
    False
    """
    target, wanted = word.casefold(), frozenset(superlatives)
    before = total = 0
    for text in texts:
        tokens = [t.casefold() for t in _TOKEN.findall(text)]
        for i, token in enumerate(tokens):
            if token == target:
                total += 1
                after = tokens[i + 1] if i + 1 < len(tokens) else ""
                before += after in wanted or (len(after) > 5 and after.endswith("iest"))
    return before > 0 and 2 * before >= total


#: Words before which a lone word is used as a verb ("it lands on 14", "I'll simulate a
#: roll", "hard to guess"): subject pronouns, auxiliaries and the infinitive "to". "you"
#: is left out: in "wishing you joy" it is the object before a noun; after "it" only an
#: "-s" or "-ed" form is a verb ("it lands", not "makes it harder").
_VERB_BEFORE = frozenset(str.split("""
    i he she it we they to will 'll ’ll can could would should shall may might must did
    does do don't doesn't didn't can't cannot won't let's i'll we'll it'll i'd we'd
"""))
#: Words after which a lone word is used as a transitive verb ("generate a number").
_VERB_AFTER = frozenset(str.split("a an the my your his her our their them me him us"))
#: Words before which a lone word is used as a noun ("the land", "full of joy").
_NOUN_BEFORE = frozenset(str.split("""
    a an the my your his her its our their this that these those of with for some any no
    every each much many more lots full
"""))
_TOKEN = re.compile(r"[\w'’]+|[^\w\s]", re.UNICODE)  # punctuation separates words
_SENTENCE_END = frozenset(".!?:;\"“”()[]*#-–—")


def is_verb_in_usage(word: str, texts: Iterable[str]) -> bool:
    """True when ``word`` is used as a verb in at least half of its occurrences in ``texts``
    (issue 27: a lone "lands" from "it lands on 14" names no idea).

    An occurrence is verbal when the word before it is a subject pronoun, an auxiliary or
    "to" ("it lands", "I'll simulate", "hard to guess"), or the word after it an article,
    a possessive or an object pronoun ("generate a number"). A word with a verbal
    occurrence and none used as a noun (after an article, a possessive, "of", "with" …,
    or before "of") is a verb as well ("the die rolls and lands on 12" beside "it lands
    on 14"). A capitalised occurrence inside a sentence is a name ("I suggest Arjun"), and
    punctuation separates words. No part-of-speech tagger is needed: the responses' own
    wording decides, so "love" in "wishing you love and joy" stays a noun.

    Examples
    --------
    >>> is_verb_in_usage("lands", ["Here we go: it lands on 14!", "It lands on 7."])
    True
    >>> is_verb_in_usage("lands", ["It lands on 14!", "The die rolls and lands on 2.",
    ...                            "The die rolls and lands on 9."])
    True
    >>> is_verb_in_usage("love", ["Wishing you love and joy.", "Love, laughter and cake."])
    False
    """
    target = word.casefold()
    verbal = nominal = total = 0
    for text in texts:
        raw = _TOKEN.findall(text)
        tokens = [t.casefold().replace("’", "'") for t in raw]
        for i, token in enumerate(tokens):
            if token != target:
                continue
            total += 1
            before = tokens[i - 1] if i else ""
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            if raw[i][:1].isupper() and before and before not in _SENTENCE_END:
                nominal += 1  # a capital inside a sentence: a name ("I suggest Arjun")
            elif (before in _VERB_BEFORE and (before != "it" or token.endswith(("s", "ed")))
                  or after in _VERB_AFTER):
                verbal += 1  # "it" is an object too ("makes it harder"): "it lands" only
            elif before in _NOUN_BEFORE or after == "of":
                nominal += 1
    return verbal > 0 and (2 * verbal >= total or nominal == 0)


#: Words after which a word ending in "-s" or "-ed" is used as an intransitive verb ("a
#: giant swims through", "it glides beneath"): prepositions and adverbs of motion that
#: seldom follow a plural noun ("security measures in place", "patterns across" are kept
#: out: "in", "on", "over", "around" … follow nouns as often as verbs).
_MOTION_AFTER = frozenset(str.split("""
    through beneath across along past away toward towards onward onwards deep slowly
    gently softly freely gracefully upward downward
"""))


def trim_trailing_verb(label: str, texts: Iterable[str]) -> str:
    """``label`` without a trailing word the ``texts`` use as a verb (issue 27, session 8:
    a haiku's "ocean giant swims" names "ocean giant").

    The last word of a label of two or more words is a verb when it ends in "-s" or "-ed"
    and, written after the word before it as in the label, it is followed by a
    preposition or an adverb of motion (:data:`_MOTION_AFTER`) in at least half of those
    occurrences ("giant swims through", "whale glides beneath"; not "ocean waves crash",
    not "security measures in place"), or when at least two texts are a short line
    ending with it (at most one word more than the label), it never follows a determiner
    ("the", "a", "of" …), comes before "of" or is capitalised (a name, a title: "Jon
    Jones", "Mixed Martial Arts") in the ``texts``, and the word before it
    does not end in "-s" (a predicate closing a haiku's line: "Ocean giant sings," — not
    "the waves", "blue waves", nor "security measures" inside a sentence). A label of one
    word, or one ending in a number, is returned as it is (a lone verb is
    :func:`is_verb_in_usage`'s).

    Examples
    --------
    >>> trim_trailing_verb("ocean giant swims", ["Ocean giant swims / through the deep."])
    'ocean giant'
    >>> trim_trailing_verb("ocean waves", ["Ocean waves crash on the shore."])
    'ocean waves'
    """
    parts = label.split()
    if len(parts) < 2 or parts[-1][:1].isdigit():
        return label
    last, before = parts[-1].casefold(), parts[-2].casefold()
    if not last.endswith(("s", "ed")) or last.endswith("ss"):
        return label
    seen = verbal = nominal = lines = 0
    for text in texts:
        raw = [t for t in _TOKEN.findall(text) if any(c.isalnum() for c in t)]
        words = [t.casefold().replace("’", "'") for t in raw]  # no punctuation
        for i in range(len(words)):
            if words[i] != last:
                continue
            after = words[i + 1] if i + 1 < len(words) else ""
            nominal += ((i > 0 and words[i - 1] in _NOUN_BEFORE) or after == "of"
                        or raw[i][:1].isupper())  # a name or a title: "Jon Jones"
            if i and words[i - 1] == before:
                seen += 1
                verbal += after in _MOTION_AFTER
                lines += i + 1 == len(words) <= len(parts) + 1
    predicate = lines >= 2 and not nominal and not before.endswith("s")
    return " ".join(parts[:-1]) if seen and (2 * verbal >= seen or predicate) else label


#: A label names its cluster only when at least this share of the cluster's responses
#: hold it or a paraphrase of it (issue 27: mixed clusters).
MIN_LABEL_SHARE = 0.5


def label_share(population: Population, cluster_index: int, label: str, *,
                label_similarity: float = DEFAULT_LABEL_SIMILARITY,
                paraphrase: Any = None) -> float:
    """The share of a cluster's responses with an atom in the node labelled ``label`` or
    in a node within ``label_similarity`` of it (a paraphrase; without node vectors, the
    node alone); 0 when no node of the cluster has that label. ``paraphrase``, when
    given, is a test a near node's label must pass to count as a paraphrase (an anchor
    passes :func:`anchor_label`'s, so "secure" restating the "safest" code is no
    paraphrase of "true security")."""
    nodes = np.flatnonzero(population.node_cluster == cluster_index).tolist()
    responses = [{p[1] for p in population.canonical[n].provenance} for n in nodes]
    everyone = set().union(*responses) if responses else set()
    at = [i for i, n in enumerate(nodes) if population.canonical[n].label == label]
    if not at or not everyone:
        return 0.0
    vectors = population.node_vectors
    if vectors is None:
        close = at
    else:
        block = vectors[nodes].astype(np.float64)
        sims = block @ block[at[0]]
        close = [i for i in range(len(nodes)) if i in at or (
            sims[i] >= label_similarity - 1e-9
            and (paraphrase is None or paraphrase(population.canonical[nodes[i]].label)))]
    held = set().union(*(responses[i] for i in close))
    return len(held) / len(everyone)


def select_cliche_clusters(population: Population, *, top_k: int = DEFAULT_TOP_K,
                           min_models: int = DEFAULT_MIN_MODELS) -> list[int]:
    """Indices of the ``top_k`` clusters by ClichéScore hit by at least ``min_models``
    models (ties broken by cluster id)."""
    if top_k < 0:
        raise ValueError("top_k must be non-negative")
    eligible = [
        k for k, c in enumerate(population.clusters) if len(c.models) >= min_models
    ]
    eligible.sort(key=lambda k: (-population.clusters[k].cliche_score,
                                 population.clusters[k].id))
    return eligible[:top_k]


def _item_id(task_id: str, comparison: str, cluster_id: str) -> str:
    digest = hashlib.sha1(f"{task_id}\x00{comparison}\x00{cluster_id}".encode()).hexdigest()
    return f"anchor-{digest[:12]}"


#: Cosine of two anchors' leading labels from which they name one idea ("matter of
#: personal preference" after "personal preference": 0.91): the synonym threshold τ of
#: SPEC §4.10. The lower anchor gives way to the next cluster.
SAME_IDEA_SIMILARITY = 0.8

#: Cosine of two anchors' leading labels from which they name one idea when the lower
#: cluster's answers are mostly the higher one's (:data:`SHARED_ANSWERS`): "necessary
#: skills" under "lack of relevant skills" (0.70), below τ. Measured on the graded rows
#: (``python benchmarks/anchor_grading_same_idea.py``): the one-idea pairs lie at 0.27-0.91,
#: the pairs of two kept ideas up to 0.73 ("7" and "3", answers of different responses), so
#: the cosine alone cannot tell them apart; the shared answers do.
PARAPHRASE_SIMILARITY = 0.65

#: Share of a lower cluster's responses that are also a higher anchor's cluster's from
#: which the two clusters hold the same answers (one response worded one idea twice).
SHARED_ANSWERS = 0.5


#: Words of a label that hedges rather than answers ("personal preference", "individual
#: circumstances", "matter of personal taste"): a label made of these, generic and function
#: words only is a hedge (issue 27, session 8: the top clusters of opinion prompts).
HEDGE_WORDS: frozenset[str] = frozenset(str.split("""
    personal preference preferences taste tastes subjective subjectivity individual
    individuals circumstances circumstance situation situations opinion opinions matter
    depends depend depending varies vary varying differs differ everyone
"""))

#: The clause a hedge is stated in: "depends (heavily / not) on …", "… is subjective",
#: "varies from person to person", "a matter of (personal) taste". A label stated after
#: one, in the same sentence, is what the answer depends on, not an answer ("it varies
#: depending on the individual, their program and their field of study").
HEDGE_CUE = re.compile(
    r"\b(?:depend\w*(?:\s+\w+)?\s+(?:on|upon)|subjective|matter\s+of"
    r"|(?:varies|vary|differs|differ)\s+(?:from|by|between|among|across|with|according))\b",
    re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+")
#: A hedge puts the answer on the asker or on each case: after the cue, the sentence names
#: a person or their lot ("depends on the individual", "on your needs", "varies from
#: person to person"). "It does not depend on the first digit but rather on the overall
#: randomness" answers: "randomness" is no hedge.
_HEDGE_OBJECT = re.compile(
    r"\b(?:individual\w*|personal\w*|person|people's|preferences?|tastes?|your|their|"
    r"one's|you|everyone|circumstances?|situations?|needs)\b", re.IGNORECASE)


def is_hedge_label(label: str) -> bool:
    """True when ``label`` names a hedge, not an answer: all its words are hedge
    (:data:`HEDGE_WORDS`), generic or function words, and one is a hedge word.

    Examples
    --------
    >>> is_hedge_label("matter of personal preference"), is_hedge_label("apple")
    (True, False)
    """
    words = _label_words(label)
    return bool(words) and any(w in HEDGE_WORDS for w in words) and all(
        w in HEDGE_WORDS or w in _FUNCTION_WORDS or w in GENERIC_WORDS for w in words)


def hedged_share(label: str, texts: Iterable[str]) -> float:
    """The share of the ``texts`` naming ``label`` that name it only after a hedge cue
    (:data:`HEDGE_CUE`) followed, in the same sentence, by a person or their lot
    ("individual", "personal", "your", "their", "needs" …); 0 when none names it.

    Examples
    --------
    >>> hedged_share("program", ["It depends on the individual and their program.",
    ...                          "The program is hard."])
    0.5
    """
    pattern = re.compile(r"\b" + re.escape(label) + r"\b", re.IGNORECASE)
    naming = hedged = 0
    for text in texts:
        sentences = [m.group(0) for m in _SENTENCE.finditer(text) if pattern.search(m.group(0))]
        if not sentences:
            continue
        naming += 1
        hedged += all(any(cue.end() <= hit.start()
                          and _HEDGE_OBJECT.search(sentence, cue.end()) is not None
                          for cue in HEDGE_CUE.finditer(sentence))
                      for sentence in sentences for hit in pattern.finditer(sentence))
    return hedged / naming if naming else 0.0


def is_hedge_cluster(labels: Sequence[str], lead: str, texts: Sequence[str] | None) -> bool:
    """True when a cluster hedges rather than answers, so that it gives no anchor (issue
    27, session 8): its most frequent label or its leading label ``lead`` is a hedge
    (:func:`is_hedge_label`), or at least half of its responses (``texts``) naming the
    leading label name it as what the answer depends on (:func:`hedged_share`).

    An anchor asks whether a response avoids an answer of the population; "depends on
    the individual" is no answer, and an anchor "avoid relying on the program" would ask
    a reader to look for a word, not an idea (graded: 8 of 9 hedge anchors of opinion
    prompts not kept). The hedging itself is left to the within-model repetition and the
    novelty score: no "hedges: …" anchor is worded.
    """
    if any(is_hedge_label(x) for x in (labels[0], lead) if x):
        return True
    return texts is not None and hedged_share(lead, texts) >= 0.5 - 1e-9


def _label_vector(population: Population, cluster_index: int, label: str
                  ) -> np.ndarray | None:
    """The node vector of the cluster's node labelled ``label`` (``None`` without one)."""
    if population.node_vectors is None:
        return None
    for n in np.flatnonzero(population.node_cluster == cluster_index).tolist():
        if population.canonical[n].label == label:
            return population.node_vectors[n].astype(np.float64)
    return None


#: How many of a cluster's most frequent labels may lead its anchor.
LEAD_CANDIDATES = 10


def _label_synonyms(words: list[str], brief: str | None, embedder: Any) -> frozenset[str]:
    """:func:`brief_synonyms` of a label's ``words``, at :data:`SINGLE_WORD_SIMILARITY`
    when the label has a single word that is no function or generic word."""
    if not brief:
        return frozenset()
    single = sum(not _is_generic(w) for w in words if not w[0].isdigit()) == 1
    return brief_synonyms(words, brief, embedder=embedder,
                          similarity=SINGLE_WORD_SIMILARITY if single else SYNONYM_SIMILARITY)


def _nameable(label: str, terms: frozenset[str] | None, brief: str | None,
              texts: Sequence[str] | None, embedder: Any,
              common: frozenset[str] = frozenset(),
              superlatives: frozenset[str] = _IRREGULAR_SUPERLATIVES) -> str | None:
    """The form of ``label`` an anchor may name (:func:`anchor_label` with the brief's
    synonyms and the ``common`` words), ``None`` also for a lone word that ``texts`` (the
    cluster's responses) use as a verb or before a superlative (``superlatives``)."""
    named = anchor_label(label, terms, _label_synonyms(_label_words(label), brief, embedder),
                         common)
    if named is None or texts is None:
        return named
    words = _label_words(named)
    if len(words) == 1 and not words[0][0].isdigit() and (
            is_verb_in_usage(words[0], texts)
            or intensifies_superlative(words[0], texts, superlatives)):
        return None
    return trim_trailing_verb(named, texts)


def _restates(label: str, terms: frozenset[str] | None, brief: str | None,
              embedder: Any, common: frozenset[str] = frozenset()) -> bool:
    """True when ``label`` has no word of its own: every word and number is a function,
    generic, common or instruction word, a non-word, a brief term or a synonym of one
    ("secure", "100% safe" for the "safest" code; not "rope swing" for a rope)."""
    words = _label_words(label)
    synonyms = _label_synonyms(words, brief, embedder)
    return all(_is_generic(w) or w in common or is_non_word(w)
               or _from_brief(w, terms or frozenset(), synonyms) for w in words)


def _lead_label(population: Population, cluster_index: int, nameable: Any,
                restates: Any, label_similarity: float) -> int | None:
    """Index (by frequency) of the label that leads the cluster's anchor, or ``None`` when
    no label can be named or the label most members share names nothing (see
    :func:`anchors_for_population`)."""
    labels = population.clusters[cluster_index].labels[:LEAD_CANDIDATES]
    candidates = [i for i, label in enumerate(labels) if nameable(label)]
    if not candidates:
        return None
    if population.node_vectors is None:
        return candidates[0]
    if label_share(population, cluster_index, labels[candidates[0]],
                   label_similarity=label_similarity,
                   paraphrase=nameable) >= MIN_LABEL_SHARE - 1e-9:
        return candidates[0]
    shares = [label_share(population, cluster_index, label, label_similarity=label_similarity)
              for label in labels]
    best = max(range(len(labels)), key=lambda i: (shares[i], -i))
    if best in candidates:
        return best  # the label most members share leads
    if restates(labels[best]):
        return None  # it is the brief again (a brief word, a synonym, a filler)
    # it holds a word of its own beside the brief's ("rope swing" for a rope): its
    # nearest nameable paraphrase leads ("swing"), if it has one
    shared = _label_vector(population, cluster_index, labels[best])
    sims = [float(v @ shared) if shared is not None and v is not None else -1.0
            for v in (_label_vector(population, cluster_index, labels[i])
                      for i in candidates)]
    nearest = max(range(len(candidates)), key=lambda j: (sims[j], -j))
    return candidates[nearest] if sims[nearest] >= label_similarity - 1e-9 else None


def core_ideas(responses: Iterable[Any]) -> dict[str, str]:
    """Response id -> Core Idea (the text atoms are read from): ``response_texts`` of
    :func:`anchors_for_population`."""
    return {r.response_id: r.core_idea for r in responses}


def anchors_for_population(
    population: Population,
    *,
    top_k: int = DEFAULT_TOP_K,
    min_models: int = DEFAULT_MIN_MODELS,
    concept: str | None = None,
    kind: str = "visual",
    label_similarity: float = DEFAULT_LABEL_SIMILARITY,
    brief_terms: frozenset[str] | None = None,
    brief: str | None = None,
    response_texts: Mapping[str, str] | None = None,
    embedder: Any = None,
    common: frozenset[str] | None = None,
    writer: Any = None,
) -> list[ChecklistAnchor]:
    """Checklist anchors from a population's top cliché clusters, ranked 1..k.

    Parameters
    ----------
    population : Population
        A whole population, or an L2MO reference population.
    top_k : int
        Number of anchors (fewer when fewer clusters qualify).
    min_models : int
        A cluster must be hit by at least this many distinct models.
    concept : str, optional
        The brief's concept for the question text.
    kind : str
        Task kind (one of :data:`~creagraph.tig.brief.TASK_KINDS`), see :func:`anchor_text`.
    label_similarity : float
        See :func:`anchor_labels`: the labels an anchor names (its ``labels``; the
        cluster's full label list stays in ``cluster_summary`` and the provenance).
    brief_terms : frozenset of str, optional
        The brief's term stems (:func:`creagraph.tig.brief.brief_terms` with
        ``instructions=True``): an anchor never names a label holding one ("vast whale
        glides" for a whale haiku, "quaint rural kansas town" for a romcom set in rural
        Kansas) except by its content head ("number 42" is named "42"), nor a label
        without a content word (a lone generic word, an emoji; :func:`anchor_label`),
        nor a label a higher-ranked anchor names; a cluster whose first label a higher
        rank names ("number 42", then "picked 42": both "42") or left with no label
        gives no anchor; the next cluster by
        ClichéScore takes its rank (issue 27: brief words and fillers never anchors).
    brief : str, optional
        The task's brief: a label whose content words restate a brief word by another
        word is not named either (:func:`brief_synonyms`: "secure" for the "safest"
        code), with ``embedder`` (default: the cached MiniLM).
    response_texts : mapping of str to str, optional
        Response id -> the text its atoms were read from (the Core Idea): a lone word the
        cluster's responses use as a verb ("it lands on 14") is not named
        (:func:`is_verb_in_usage`); the cluster's next label candidate is. Not for the
        short-answer kinds (see Notes).
    embedder : optional
        See ``brief``.
    common : frozenset of str, optional
        Words that name no idea of this prompt because the models use them in answer to
        most prompts (:func:`common_words`): a label made only of these, generic, brief
        and function words is not named. Default: for open prompts, the common words of
        the shipped open-prompt background less this task's own answers
        (``common_words(population.task_id)``); for the other kinds none (the background
        is made of answers to open prompts).
    writer : AnchorWriter, optional
        Who keeps and names each cluster the rules let through
        (:mod:`creagraph.tig.anchor_writer`); default the offline rules alone. A cluster
        the writer refuses (or gets no usable reply for) gives its rank to the next; at
        most :data:`~creagraph.tig.anchor_writer.CANDIDATE_FACTOR` × ``top_k`` clusters
        are asked. A kept cluster is named by the writer's label, worded by
        :func:`anchor_text`; the record keeps the offline labels it replaced. A label
        the rules themselves refuse (it restates the brief, is a filler or a word common
        to other prompts) is overruled (counted in ``writer.counts.overruled``) and the
        cluster gives its rank to the next.

    Notes
    -----
    The label that leads an anchor is the cluster's most frequent nameable label among
    its first :data:`LEAD_CANDIDATES`, provided at least :data:`MIN_LABEL_SHARE` of the
    cluster's responses hold it or a paraphrase of it (:func:`label_share`); otherwise the
    label most of them share leads (issue 27: mixed clusters; "randomness" held by a
    third of a cluster whose members mostly say "avoid obvious patterns"); when that
    label names nothing (it restates the brief, by a synonym too: "secure" for the
    "safest" code), the cluster gives no anchor, rather than be named by a minority's
    label ("true security"); when it holds a brief word beside one of its own ("rope
    swing" for a rope), its nearest nameable paraphrase (within ``label_similarity``:
    "swing") leads, and without one the cluster gives no anchor. A mixed cluster
    otherwise keeps its anchor: its members are common answers, and dropping it would
    hand its rank to a rare idea. Without node vectors the share is not checked. A
    cluster whose leading label is within :data:`SAME_IDEA_SIMILARITY` of a higher
    anchor's leading label names the same idea and gives way to the next cluster; so
    does one within :data:`PARAPHRASE_SIMILARITY` whose responses are mostly
    (:data:`SHARED_ANSWERS`) that anchor's, and, for visual and open prompts, one whose
    leading label's words are all words of a label a higher anchor names ("sweet" after
    "balance of sweet"). A cluster that hedges (:func:`is_hedge_cluster`: "personal
    preference", "depends on the individual, their program") gives no anchor. A label's
    trailing verb is dropped (:func:`trim_trailing_verb`: "ocean giant swims").
    A label is not named when it is a non-word (:func:`is_non_word`: "k", "j" of
    "J.K."), an inflection of a brief word (:func:`brief_synonyms`: "hiring" for
    "hired"), a single word within :data:`SINGLE_WORD_SIMILARITY` of a brief word ("fit"
    for "best suited"), a lone word the responses write before a superlative
    (:func:`intensifies_superlative`: "absolute" of "absolute worst"), or made of
    ``common`` words ("experience", "choice"; session 9); a cluster led by the initials
    of a label a higher anchor names gives way (:func:`label_initials`: "bjj").
    The lone-verb rule holds for visual briefs and open prompts only: the answer to a
    use, consequence or instance task is an idea when it is a verb ("pry", "dig").

    Returns
    -------
    list of ChecklistAnchor
    """
    steps = anchor_steps(
        population, top_k=top_k, min_models=min_models, concept=concept, kind=kind,
        label_similarity=label_similarity, brief_terms=brief_terms, brief=brief,
        response_texts=response_texts, embedder=embedder, common=common, writer=writer)
    if writer is None:  # the rules alone: the steps ask nothing
        return next_anchors(steps)
    from creagraph.tig.anchor_writer import write_steps

    return write_steps([steps], writer)[0]


def next_anchors(steps: Generator[Any, Any, list[ChecklistAnchor]]) -> list[ChecklistAnchor]:
    """The anchors of ``steps`` (:func:`anchor_steps`) made without a writer."""
    try:
        next(steps)
    except StopIteration as done:
        return done.value
    raise RuntimeError("anchor steps without a writer asked for a decision")


def anchor_steps(
    population: Population,
    *,
    top_k: int = DEFAULT_TOP_K,
    min_models: int = DEFAULT_MIN_MODELS,
    concept: str | None = None,
    kind: str = "visual",
    label_similarity: float = DEFAULT_LABEL_SIMILARITY,
    brief_terms: frozenset[str] | None = None,
    brief: str | None = None,
    response_texts: Mapping[str, str] | None = None,
    embedder: Any = None,
    common: frozenset[str] | None = None,
    writer: Any = None,
) -> Generator[Any, Any, list[ChecklistAnchor]]:
    """:func:`anchors_for_population` one cluster at a time: with a ``writer``, each
    cluster the rules let through is yielded as an :class:`~creagraph.tig.anchor_writer.
    AnchorCandidate` and the writer's :class:`~creagraph.tig.anchor_writer.AnchorDecision`
    is sent back (:func:`creagraph.tig.anchor_writer.write_steps` drives many comparisons
    at once); the anchors are the generator's return value. Without one it yields nothing.
    """
    anchors: list[ChecklistAnchor] = []
    commons: frozenset[str] = common if common is not None else (
        common_words(population.task_id) if kind == "open" else frozenset())
    superlatives = brief_superlatives(brief) if brief else _IRREGULAR_SUPERLATIVES
    ranked = select_cliche_clusters(population, top_k=len(population.clusters),
                                    min_models=min_models)
    already_named: set[str] = set()  # a label named by a higher rank is not named again
    lead_vectors: list[np.ndarray] = []  # and an idea it names is not named again
    lead_answers: list[set[str]] = []  # the responses of each anchor's cluster
    named_words: list[set[str]] = []  # the words of each label an anchor names
    named_initials: set[str] = set()  # and their initials ("bjj", "mma")
    asked = 0  # clusters the writer was asked about
    for k in ranked:
        if len(anchors) >= top_k or (writer is not None and asked >= CANDIDATE_FACTOR * top_k):
            break
        atoms = population.cluster_atoms(k)
        answers = {a[1] for a in atoms}  # the responses of the cluster
        texts = None if response_texts is None or is_short_answer(kind) else [
            response_texts[r] for r in sorted(answers) if r in response_texts]

        def nameable(label: str, texts: list[str] | None = texts) -> str | None:
            return _nameable(label, brief_terms, brief, texts, embedder, commons,
                             superlatives)

        def restates(label: str) -> bool:
            return _restates(label, brief_terms, brief, embedder, commons)

        lead = _lead_label(population, k, nameable, restates, label_similarity)
        if lead is None:
            continue
        cluster_labels = population.clusters[k].labels
        if is_hedge_cluster(cluster_labels, cluster_labels[lead], texts):
            continue  # "depends on the individual": no answer to avoid
        lead_vector = _label_vector(population, k, cluster_labels[lead])
        if lead_vector is not None and any(
                float(lead_vector @ v) >= SAME_IDEA_SIMILARITY - 1e-9
                or (float(lead_vector @ v) >= PARAPHRASE_SIMILARITY - 1e-9
                    and len(answers & held) >= SHARED_ANSWERS * len(answers) - 1e-9)
                for v, held in zip(lead_vectors, lead_answers, strict=True)):
            continue  # a higher rank names this idea already
        lead_words = set(_label_words(cluster_labels[lead]))
        if texts is not None and lead_words and any(
                lead_words <= words for words in named_words):
            continue  # "sweet" after "balance of sweet": a word of a higher rank's idea
        if cluster_labels[lead].casefold() in named_initials:
            continue  # "bjj" after "brazilian jiu-jitsu": a higher rank's idea again
        labels = anchor_labels(population, k, label_similarity=label_similarity, lead=lead)
        named = [x for x in map(nameable, labels) if x]
        if not named or named[0] in already_named:
            continue  # the same idea as a higher rank's ("picked 42" after "number 42")
        labels = tuple(dict.fromkeys(x for x in named if x not in already_named))
        if not labels:
            continue
        offline_labels: tuple[str, ...] = ()
        if writer is not None:
            asked += 1
            decision = yield _candidate(population, k, labels, kind, brief,
                                        response_texts, answers, anchors)
            if not decision.keep:
                continue  # refused, or no usable reply: the next cluster takes the rank
            if decision.label and writer.name != "offline":
                if restates(decision.label) or nameable(decision.label) is None:
                    # the model named the brief, a filler or a common word: the rules win
                    counts = getattr(writer, "counts", None)
                    if isinstance(counts, WriterCounts):
                        counts.overruled += 1
                    continue
                offline_labels = labels
        already_named.update(labels)
        named_words.extend(set(_label_words(x)) for x in labels)
        named_initials.update(filter(None, map(label_initials, labels)))
        if offline_labels:  # the writer's label names the anchor; the rules' stay recorded
            labels = (decision.label,)
            already_named.add(decision.label)
        if lead_vector is not None:
            lead_vectors.append(lead_vector)
            lead_answers.append(answers)
        rank = len(anchors) + 1
        cluster = population.clusters[k]
        anchors.append(
            ChecklistAnchor(
                item_id=_item_id(population.task_id, population.comparison_key, cluster.id),
                task_id=population.task_id,
                comparison_key=population.comparison_key,
                rank=rank,
                text=anchor_text(cluster.type, labels, concept=concept, kind=kind),
                cluster_id=cluster.id,
                cluster_summary=cluster.summary,
                atom_type=cluster.type,
                labels=labels,
                canonical_ids=cluster.canonical_ids,
                atom_ids=tuple(sorted(a[0] for a in atoms)),
                response_ids=tuple(sorted(answers)),
                reference_models=population.models,
                cluster_models=cluster.models,
                cliche_score=cluster.cliche_score,
                coverage=cluster.coverage,
                centrality=cluster.centrality,
                convergence=cluster.convergence,
                model_share=cluster.model_share,
                response_share=cluster.response_share,
                **({} if not offline_labels else {
                    "writer": writer.name, "writer_model": writer.model,
                    "offline_labels": offline_labels, "writer_reason": decision.reason}),
            )
        )
    return anchors


def _candidate(population: Population, k: int, labels: tuple[str, ...], kind: str,
               brief: str | None, response_texts: Mapping[str, str] | None,
               answers: set[str], anchors: Sequence[ChecklistAnchor]) -> Any:
    """What a writer is shown of cluster ``k`` (:class:`~creagraph.tig.anchor_writer.
    AnchorCandidate`): its first labels, excerpts of its answers, the anchors kept."""
    from creagraph.tig.anchor_writer import AnchorCandidate, candidate_excerpts

    cluster = population.clusters[k]
    texts = [response_texts[r] for r in sorted(answers) if r in response_texts] \
        if response_texts is not None else []
    return AnchorCandidate(
        task_id=population.task_id, comparison_key=population.comparison_key,
        brief=brief or "", kind=kind, atom_type=cluster.type, labels=labels,
        cluster_labels=tuple(cluster.labels[:5]), excerpts=candidate_excerpts(texts),
        kept=tuple(a.labels[0] for a in anchors))


def label_initials(label: str) -> str | None:
    """The initials of a label of two words or more (hyphenated parts count as words),
    casefolded: "brazilian jiu-jitsu" -> "bjj", "mixed martial arts" -> "mma"; ``None``
    for a single word. A lower cluster led by a higher anchor's initials names its idea
    again (issue 27, session 9: "bjj" after "brazilian jiu-jitsu | mma").

    Examples
    --------
    >>> label_initials("Brazilian jiu-jitsu"), label_initials("boxing")
    ('bjj', None)
    """
    parts = [p for p in re.split(r"[\s\-‐–]+", label.casefold()) if p]
    letters = [p[0] for p in parts if p[0].isalpha()]
    return "".join(letters) if len(parts) >= 2 and len(letters) == len(parts) else None


def anchor_from_dict(record: dict, where: str = "<record>") -> ChecklistAnchor:
    """Rebuild a :class:`ChecklistAnchor` from its ``to_dict`` form.

    Raises
    ------
    InputError
        Naming ``where`` and the missing or mistyped field.
    """
    from dataclasses import MISSING, fields

    from creagraph.core.io import InputError

    values = {}
    for f in fields(ChecklistAnchor):
        if f.name not in record:
            if f.default is not MISSING:  # a field added later (anchors of older files)
                continue
            raise InputError(f"{where}: missing field {f.name!r}")
        value = record[f.name]
        if f.type.startswith("tuple"):
            if not isinstance(value, list):
                raise InputError(f"{where}: field {f.name!r} must be a list")
            value = tuple(value)
        elif f.type == "float":
            if not isinstance(value, int | float):
                raise InputError(f"{where}: field {f.name!r} must be a number")
            value = float(value)
        elif f.type == "int":
            if not isinstance(value, int):
                raise InputError(f"{where}: field {f.name!r} must be an integer")
        elif not isinstance(value, str):
            raise InputError(f"{where}: field {f.name!r} must be a string")
        values[f.name] = value
    return ChecklistAnchor(**values)


def write_anchors(path: str | os.PathLike[str], anchors: Sequence[ChecklistAnchor]) -> int:
    """Write anchors as JSON Lines (atomically); returns the count."""
    from creagraph.core.io import write_jsonl

    return write_jsonl(path, (a.to_dict() for a in anchors))


def read_anchors(path: str | os.PathLike[str]) -> list[ChecklistAnchor]:
    """Read anchors written by :func:`write_anchors` (file and line named on errors)."""
    from pathlib import Path

    from creagraph.core.io import iter_jsonl

    p = Path(path)
    anchors = []
    if p.exists():
        with p.open(encoding="utf-8") as handle:
            numbers = [i for i, text in enumerate(handle, start=1) if text.strip()]
    else:
        numbers = []
    for line, record in zip(numbers, iter_jsonl(p), strict=True):
        anchors.append(anchor_from_dict(record, f"{p}:{line}"))
    return anchors
