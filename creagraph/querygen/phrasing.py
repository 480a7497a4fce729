"""Natural-language CREATE queries without an LLM (SPEC §3.1 step 6).

A query reads like the published ones::

    What are different ways of connecting Robbie Vinton, an American actor, and someone
    who is a painter?

It is built from three parts, each a pure function over plain strings:

- the start entity and its short description with an indefinite article
  (:func:`describe_entity`: ``"Robbie Vinton, an American actor"``);
- the holder of the target condition, named from its P31 types
  (:func:`holder_phrase`: ``("someone", "who")``, ``("a film", "that")``);
- the target condition, from the per-property template in ``wikidata/phrasing.tsv``
  (:func:`condition_phrase`: ``"is a painter"``, ``"received the Nobel Prize in Physics"``).

English details handled here: *a* / *an* by sound (:func:`indefinite_article`: "an
actor", "a university", "an MP", "an 1820s"), *the* before names that take it
(:func:`needs_definite_article`: "the United States", "the Royal Society", "the 2012
Summer Olympics", "the Boston Celtics" for teams), templates that start with "whose"
replacing the relative pronoun, and the first letter of the question capitalised.

Examples
--------
>>> q = compose_query("Robbie Vinton", "American actor", ("someone", "who"), "is a painter")
>>> q.endswith("Robbie Vinton, an American actor, and someone who is a painter?")
True
>>> fill_template("received {the y}", "Nobel Prize in Physics")
'received the Nobel Prize in Physics'
>>> fill_template("is a citizen of {y}", "United States of America")
'is a citizen of the United States of America'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from creagraph.querygen.catalogue import HolderType, Phrasing

__all__ = [
    "indefinite_article",
    "with_indefinite_article",
    "needs_definite_article",
    "fill_template",
    "condition_phrase",
    "relation_phrase",
    "holder_phrase",
    "describe_entity",
    "compose_query",
    "short_description",
    "label_problem",
    "is_mass_noun",
    "ends_in_modifier",
    "PERSON_PROPERTIES",
    "MAX_DESCRIPTION_WORDS",
]

MAX_DESCRIPTION_WORDS = 12

# Properties only people have: a holder with one of them is "someone" even without P31.
PERSON_PROPERTIES = ("P21", "P106", "P569", "P19", "P27")

_SILENT_H = ("hour", "honest", "honor", "honour", "heir", "herb")
_YOU_SOUND = (
    "use",
    "usu",
    "uti",
    "ura",
    "uro",
    "eu",
    "ewe",
    "ufo",
    "ubiq",
    "ukr",
    "uga",
    "ute",
    "uk",
)
_ONE_SOUND = ("one", "once")
_UNI_VOWEL = ("unin", "unid", "unim", "unint", "unif")
_VOWEL_LETTERS = set("AEFHILMNORSX")  # letters whose names start with a vowel sound

_FIRST_WORDS = {
    "United",
    "University",
    "College",
    "Republic",
    "Kingdom",
    "Order",
    "Battle",
    "Siege",
    "War",
    "Museum",
    "Academy",
    "Institute",
    "Royal",
    "Society",
    "Federation",
    "Union",
    "League",
    "Council",
    "House",
    "Ministry",
    "Department",
    "Bank",
    "Church",
    "Commonwealth",
    "Empire",
    "Duchy",
    "Principality",
    "State",
    "Federal",
    "National",
    "International",
    "European",
    "Soviet",
    "Holy",
    "Imperial",
    "Supreme",
    "Grand",
}
_INSTITUTION_WORDS = {
    "Academy",
    "Society",
    "Association",
    "Union",
    "Organization",
    "Organisation",
    "League",
    "Party",
    "Council",
    "Committee",
    "Institute",
    "Foundation",
    "Federation",
    "Alliance",
    "Guild",
    "Assembly",
    "Commission",
    "Conference",
    "Club",
    "Army",
    "Navy",
    "Senate",
    "Parliament",
    "Congress",
    "Republic",
    "Empire",
    "Museum",
    "Hall",
    "Court",
    "Corps",
    "Orchestra",
    "Agency",
    "Bureau",
    "Command",
    "Movement",
    "Conservatory",
}
# club names that start with their own prefix take no article ("HC Davos", "FC Rostov")
_CLUB_PREFIXES = frozenset(
    ["FC", "F.C.", "AC", "A.C.", "HC", "SC", "CF", "CD", "SK", "SV", "VfB", "VfL", "AS", "SS",
     "US", "Club", "Real", "Sporting", "Atlético", "Olympique", "Racing", "Dynamo", "Dinamo",
     "Borussia", "Hertha", "Eintracht", "KK", "BC", "KS", "NK", "FK", "GNK", "HNK", "PFC"]
)  # fmt: skip
# last words of names said without "the" ("Boston College", "Stanford University")
_NO_ARTICLE_LAST = frozenset(["College", "University", "School", "Airport", "Stadium"])
# last words of names said with "the" ("the Vietnam War", "the Stanley Cup")
_ARTICLE_LAST = frozenset(
    ["War", "Cup", "Championship", "Championships", "Games", "Olympics", "Revolution",
     "Rebellion", "Uprising", "Crisis", "Campaign", "Offensive", "Expedition", "Award",
     "Trophy", "Medal", "Series", "Tour", "Classic", "Invasion", "Occupation", "Blockade",
     "Massacre", "Conference", "Convention", "Treaty", "Congress", "Council", "Games"]
)  # fmt: skip
_PLURAL_NAMES = {
    "Netherlands",
    "Philippines",
    "Bahamas",
    "Maldives",
    "Gambia",
    "Comoros",
    "Seychelles",
    "Solomon Islands",
    "Marshall Islands",
    "Faroe Islands",
    "Cayman Islands",
    "Falkland Islands",
    "Bronx",
    "Hague",
    "Vatican",
    "Balkans",
    "Alps",
    "Himalayas",
    "Andes",
}
_ARTICLES = ("a ", "an ", "the ")


def indefinite_article(phrase: str) -> str:
    """``"a"`` or ``"an"`` for ``phrase``, by the sound of its first word.

    Handles silent *h* ("an hour"), *u*/*eu*/*one* read with a consonant ("a university",
    "a European", "a one-off"), initialisms read letter by letter ("an MP", "a BBC
    presenter") and numbers ("an 1820s", "an 8", "a 1990 film").

    Examples
    --------
    >>> words = ("actor", "painter", "university", "hour", "MP", "1990 film", "18th")
    >>> [indefinite_article(w) for w in words]
    ['an', 'a', 'a', 'an', 'an', 'a', 'an']
    """
    words = phrase.strip().split()
    word = words[0].strip("\"'“”‘’([") if words else ""
    if not word:
        return "a"
    if word[0].isdigit():
        digits = re.match(r"\d+", word).group(0)  # type: ignore[union-attr]
        if digits.startswith("8"):
            return "an"
        if digits[:2] in ("11", "18") and len(digits) in (2, 4, 5):
            return "an"
        return "a"
    letters = re.sub(r"[^A-Za-z]", "", word)
    if not letters:
        return "a"
    if (
        len(letters) >= 2
        and letters.isupper()
        and not re.search(r"[aeiou]", word.lower()[1:2] or "x")
    ):
        return "an" if letters[0] in _VOWEL_LETTERS else "a"
    if len(letters) == 1 and letters.isupper():
        return "an" if letters in _VOWEL_LETTERS else "a"
    lower = word.lower()
    if lower.startswith(_SILENT_H):
        return "an"
    if lower.startswith(_ONE_SOUND) or lower.startswith(_YOU_SOUND):
        return "a"
    if lower.startswith("uni") and not lower.startswith(_UNI_VOWEL):
        return "a"
    return "an" if lower[0] in "aeiou" else "a"


def with_indefinite_article(phrase: str) -> str:
    """``phrase`` with *a*/*an* in front, unless it already starts with an article.

    Examples
    --------
    >>> with_indefinite_article("American actor"), with_indefinite_article("the painter")
    ('an American actor', 'the painter')
    """
    text = phrase.strip()
    if text.lower().startswith(_ARTICLES):
        return text
    return f"{indefinite_article(text)} {text}"


def needs_definite_article(label: str, *, team: bool = False) -> bool:
    """Whether an English name takes *the* inside a sentence.

    True for names starting with a year ("the 2012 Summer Olympics"), with a word such
    as *United*, *University*, *Royal*, *Order*, *Battle* ("the University of Oxford",
    "the Order of Lenin"), containing an institution word (*Society*, *Party*,
    *Academy*, …: "the Royal Swedish Academy of Sciences", "the Democratic Party"), and
    plural place names ("the Netherlands"). With ``team`` also plural team names ("the
    Boston Celtics"). False for names already starting with *the*, lower-case common
    nouns and initialisms ("NATO").

    Examples
    --------
    >>> names = ("United Kingdom", "France", "Royal Society", "NATO", "Harvard University")
    >>> [needs_definite_article(x) for x in names]
    [True, False, True, False, False]
    >>> [needs_definite_article(x, team=True) for x in ("Boston Celtics", "FC Barcelona")]
    [True, False]
    """
    text = label.strip()
    words = text.split()
    if not words or text.lower().startswith("the "):
        return False
    if not words[0][:1].isupper() and not words[0][:1].isdigit():
        return False
    if text in _PLURAL_NAMES:
        return True
    if re.fullmatch(r"\d{4}(s|–\d{2,4}|-\d{2,4})?", words[0]) and len(words) >= 2:
        return True
    if len(words) < 2:
        return False
    if words[0] in _CLUB_PREFIXES:  # "FC Barcelona", "HC Davos", "Club Atlético Colón"
        return False
    last = words[-1].strip(",()")
    if last in _NO_ARTICLE_LAST and words[-2] != "of":  # "Boston College", not "the …"
        return False
    if last in _ARTICLE_LAST:  # "the Vietnam War", "the … Player Award" (not "World War II")
        return True
    if words[0] in _FIRST_WORDS:
        return True
    if any(w.strip(",()") in _INSTITUTION_WORDS for w in words):
        return True
    if team and all(w[:1].isupper() or w[:1].isdigit() for w in words):
        last = words[-1]
        if last.endswith("s") and not last.endswith(("ss", "us", "is")) and last[:-1].isalpha():
            return True
    return False


def fill_template(template: str, label: str) -> str:
    """Replace the one placeholder of a phrasing template with the target label.

    ``{y}``: the label, with *the* where :func:`needs_definite_article` says so;
    ``{the y}``: *the* before capitalised names, *a/an* before common nouns;
    ``{a y}``: *a/an* + label; ``{team y}``: like ``{y}`` and *the* before plural team names;
    ``{def y}``: always *the* (unless the label starts with an article).

    Examples
    --------
    >>> fill_template("is {a y}", "actor"), fill_template("received {the y}", "honorary doctorate")
    ('is an actor', 'received an honorary doctorate')
    >>> fill_template("played for {team y}", "Boston Celtics")
    'played for the Boston Celtics'
    """
    y = label.strip()
    if "{a y}" in template:
        return template.replace("{a y}", with_indefinite_article(y))
    if "{the y}" in template:
        if y.lower().startswith(_ARTICLES):
            value = y
        elif y[:1].isupper() or y[:1].isdigit():
            value = f"the {y}"
        else:
            value = with_indefinite_article(y)
        return template.replace("{the y}", value)
    if "{def y}" in template:
        return template.replace("{def y}", y if y.lower().startswith(_ARTICLES) else f"the {y}")
    if "{team y}" in template:
        return template.replace(
            "{team y}", f"the {y}" if needs_definite_article(y, team=True) else y
        )
    if "{y}" in template:
        return template.replace("{y}", f"the {y}" if needs_definite_article(y) else y)
    raise ValueError(f"template has no placeholder for the target: {template!r}")


def condition_phrase(
    pid: str,
    target_label: str,
    phrasing: Mapping[str, Phrasing],
    *,
    property_label: str | None = None,
    voice: str = "active",
) -> str:
    """The target condition as a relative clause body: ``"is a painter"``.

    ``voice="active"`` describes a holder x of ``(x, pid, y)``; ``"passive"`` a holder of
    ``(y, pid, x)``. A property without a template falls back to ``"whose <label> is
    <y>"`` (active) or ``"is the <label> of <y>"`` (passive).

    Examples
    --------
    >>> condition_phrase("P999", "Springfield", {}, property_label="home town")
    'whose home town is Springfield'
    """
    if voice not in ("active", "passive"):
        raise ValueError(f"voice must be 'active' or 'passive', not {voice!r}")
    entry = phrasing.get(pid)
    if entry is not None:
        return fill_template(entry.active if voice == "active" else entry.passive, target_label)
    name = (property_label or pid).strip()
    if voice == "active":
        return fill_template(f"whose {name} is {{y}}", target_label)
    return fill_template(f"is the {name} of {{y}}", target_label)


def relation_phrase(
    pid: str,
    forward: bool,
    phrasing: Mapping[str, Phrasing],
    *,
    property_label: str | None = None,
    inverse_label: str | None = None,
) -> str:
    """How a path step reads from the node it leaves to the node it reaches.

    A forward step is the property label; a step walked against Wikidata's direction
    reads as the passive template without its placeholder (``"appeared in"`` for P161),
    else the graph's inverse label, else ``"<label> of"``.

    Examples
    --------
    >>> from creagraph.querygen.catalogue import load_phrasing
    >>> relation_phrase("P161", False, load_phrasing(), property_label="cast member")
    'appeared in'
    >>> relation_phrase("P161", True, load_phrasing(), property_label="cast member")
    'cast member'
    """
    label = (property_label or pid).strip()
    if forward:
        return label
    entry = phrasing.get(pid)
    if entry is not None:
        return re.sub(r"\s*\{[^{}]*\}\s*", " ", entry.passive).strip()
    if inverse_label:
        return inverse_label
    return f"{label} of"


def holder_phrase(
    types: Iterable[str],
    holder_types: Sequence[HolderType],
    *,
    person_like: bool = False,
) -> tuple[str, str]:
    """``(noun phrase, relative pronoun)`` naming the unknown holder of a target.

    The first class of ``holder_types`` (priority order) among the holder's P31
    ``types`` wins; with none, ``("someone", "who")`` if ``person_like`` else
    ``("something", "that")``.

    Examples
    --------
    >>> from creagraph.querygen.catalogue import load_holder_types
    >>> holder_phrase(["Q11424"], load_holder_types()), holder_phrase([], load_holder_types())
    (('a film', 'that'), ('something', 'that'))
    """
    have = set(types)
    for entry in holder_types:
        if entry.qid in have:
            return entry.noun, entry.pronoun
    return ("someone", "who") if person_like else ("something", "that")


def describe_entity(label: str, description: str | None) -> str:
    """``"Label, a description"`` as the published queries name the start entity.

    The description gets *a/an* unless it already has an article; a trailing full stop
    is dropped; an empty description leaves the bare label.

    Examples
    --------
    >>> describe_entity("Robbie Vinton", "American actor")
    'Robbie Vinton, an American actor'
    >>> describe_entity("Goodfellas", "1990 film by Martin Scorsese.")
    'Goodfellas, a 1990 film by Martin Scorsese'
    >>> describe_entity("Al Gore", "45th Vice President of the United States")
    'Al Gore, the 45th Vice President of the United States'
    >>> describe_entity("Emmanuel Macron", "twenty-fifth President of the French Republic")
    'Emmanuel Macron, the twenty-fifth President of the French Republic'
    >>> describe_entity("X", None)
    'X'
    """
    name = " ".join(label.split())
    desc = " ".join((description or "").split()).rstrip(".").strip()
    if not desc:
        return name
    if desc.lower().startswith(("one of ", "any of ")):
        return f"{name}, {desc}"
    if re.match(r"\d+(st|nd|rd|th)\b", desc) or _ORDINAL.match(desc):
        return f"{name}, the {desc}"
    return f"{name}, {with_indefinite_article(desc)}"


def compose_query(
    start_label: str,
    start_description: str | None,
    holder: tuple[str, str],
    condition: str,
) -> str:
    """The full question (SPEC §3.1 step 6).

    ``condition`` is a :func:`condition_phrase`; one starting with *whose* replaces the
    relative pronoun ("someone whose father is …").

    Examples
    --------
    >>> compose_query("Ann", None, ("someone", "who"), "whose father is Bob")
    'What are different ways of connecting Ann and someone whose father is Bob?'
    """
    noun, pronoun = holder
    start = describe_entity(start_label, start_description)
    clause = condition if condition.startswith("whose ") else f"{pronoun} {condition}"
    separator = ", and" if start != " ".join(start_label.split()) else " and"
    text = f"What are different ways of connecting {start}{separator} {noun} {clause}?"
    text = " ".join(text.split())
    return text[:1].upper() + text[1:]


_ORDINAL = re.compile(
    r"(?i)((twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-)?"
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    r"\w+teenth|\w+tieth|hundredth|last|only|current|incumbent)\b"
)
_CUT_BEFORE = re.compile(
    r"\s*(;|:|\s[-–—]\s|,|\swho\b|\swhich\b|\sthat\b|\swhose\b|\s(best |well )?known\b|"
    r"\sborn\b|\sfrom \d{3,4}\b)"
)
_COMMON_LEADS = frozenset(
    w.capitalize()
    for w in [
        "former",
        "retired",
        "professional",
        "late",
        "fictional",
        "famous",
        "noted",
        "renowned",
        "notable",
        "film",
        "television",
        "actor",
        "actress",
        "singer",
        "artist",
        "politician",
        "writer",
        "musician",
        "footballer",
        "player",
        "businessman",
        "businesswoman",
        "author",
        "composer",
        "painter",
        "poet",
        "director",
        "producer",
        "screenwriter",
        "journalist",
        "scientist",
        "physicist",
        "chemist",
        "engineer",
        "architect",
        "lawyer",
    ]
)
_TRAILING_JOINERS = re.compile(r"(?i)\s+(and|or|of|in|for|with|by|the|a|an|&)$")


def short_description(
    description: str | None,
    demonyms: Mapping[str, str] | None = None,
    *,
    max_words: int = MAX_DESCRIPTION_WORDS,
) -> str | None:
    """A Wikidata description cut to a short noun phrase for a query (SPEC §3.1 step 6).

    The published queries name the start entity with a few words ("the American actor",
    4.8 words on average). A description is cut before its first clause or list
    separator (``,``, ``;``, `` - ``, *who*, *which*, *known*, *born*, parentheses); a
    country name used as an adjective becomes its demonym ("Belgium actress" → "Belgian
    actress", from ``demonyms``); a phrase still longer than ``max_words`` words, or one
    with no letters, gives ``None`` (the query names the entity without a descriptor).

    Examples
    --------
    >>> short_description("American film director, screenwriter, producer, and entrepreneur")
    'American film director'
    >>> short_description("Belgium actress", {"Belgium": "Belgian"})
    'Belgian actress'
    >>> short_description("Retired American basketball player")
    'retired American basketball player'
    >>> short_description("american actor (1899-1970)", {"United States": "American"})
    'American actor'
    >>> short_description("American actor (1899-1970)")
    'American actor'
    >>> short_description("American-born Bahamian actor, film director, and diplomat")
    'American-born Bahamian actor'
    """
    text = " ".join((description or "").split())
    text = re.sub(r"\s*[(\[][^)\]]*[)\]]", "", text).strip().rstrip(".").strip()
    if not text:
        return None
    text = _BORN_ADJECTIVE.sub(r"\1-born ", text)  # "Nigerian born actor" -> "Nigerian-born actor"
    match = _CUT_BEFORE.search(text)
    if match is not None and match.start() > 0:
        cut = text[: match.start()].strip()
        if match.group(1) == ",":
            cut = _keep_head_noun(cut, text, demonyms)
        text = cut
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING_JOINERS.sub("", text).strip()
    if demonyms:
        for name in sorted(demonyms, key=len, reverse=True):
            if text.startswith(name + " "):
                rest = text[len(name) + 1 :]
                if rest[:1].islower():
                    text = f"{demonyms[name]} {rest}"
                break
        first, _, rest = text.partition(" ")
        adjectives = {a.lower(): a for a in demonyms.values()}
        if first in adjectives:  # "french engineering school" -> "French engineering school"
            text = f"{adjectives[first]} {rest}".strip()
    first, _, rest = text.partition(" ")
    if first in _COMMON_LEADS:  # "Retired American basketball player" -> "retired …"
        text = f"{first.lower()} {rest}".strip()
    words = text.split()
    if not words or len(words) > max_words or not re.search(r"[^\W\d_]", text):
        return None
    if ends_in_modifier(text, description, demonyms):  # no head noun left: say nothing
        return None
    return text


# words that modify a following head noun in descriptions ("film" in "American film actor")
MODIFIER_WORDS = frozenset(
    [
        "film", "television", "stage", "voice", "radio", "theatre", "theater", "musical", "screen",
        "comic", "character", "tv", "music", "rock", "pop", "jazz", "classical", "opera",
        "session", "video", "soap", "silent", "emmy", "oscar", "grammy", "winning",
        "award-winning", "former", "retired", "professional", "amateur", "child",
    ]
)
_BORN_ADJECTIVE = re.compile(
    r"\b([A-Z][\w-]*) born (?!(?:in|on|at|to|into|from|c\.|circa|of|as|\d)\b)(?=[A-Za-z])"
)
_STRONG_END = re.compile(r"\s*(;|:|\s[-–—]\s|\swho\b|\swhich\b|\sthat\b|\swhose\b|\sknown\b)")


def _is_modifier(word: str, demonyms: Mapping[str, str] | None) -> bool:
    bare = word.strip(",.;:").lower()
    adjectives = {a.lower() for a in (demonyms or {}).values()}
    return bare in MODIFIER_WORDS or bare in adjectives or bare.endswith(("-born", "-winning"))


def _keep_head_noun(cut: str, text: str, demonyms: Mapping[str, str] | None) -> str:
    """``cut`` (``text`` cut at its first comma) with the head noun of the list it cut
    through: "American film, stage and television actor" -> "American film actor"."""
    words = cut.split()
    if not words or not _is_modifier(words[-1], demonyms):
        return cut
    end = _STRONG_END.search(text)
    clause = text[: end.start()] if end is not None and end.start() > 0 else text
    items = [i for i in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+", clause) if i]
    if len(items) < 2 or any(len(i.split()) != 1 for i in items[1:-1]):
        return cut
    last = items[-1].split()
    if len(last) < 2 or _is_modifier(last[-1], demonyms):
        return cut
    return f"{cut} {last[-1]}"


def ends_in_modifier(
    descriptor: str | None, description: str | None, demonyms: Mapping[str, str] | None = None
) -> bool:
    """Whether ``descriptor`` was cut to a modifier with no head noun ("an American film"
    from "American film, stage and television actress"; "a Nigerian").

    A descriptor that is the whole description ("2011 American film") is never cut.

    Examples
    --------
    >>> ends_in_modifier("American film", "American film, stage and television actress")
    True
    >>> ends_in_modifier("2011 American film", "2011 American film")
    False
    """
    words = (descriptor or "").split()
    if not words or not _is_modifier(words[-1], demonyms):
        return False
    full = " ".join(re.sub(r"\s*[(\[][^)\]]*[)\]]", "", description or "").split()).rstrip(".")
    return full.lower() != " ".join(words).lower()


_SCRIPT_GROUPS = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "CJK": "CJK", "HANGUL": "HANGUL"}
_PROFANITY = frozenset(
    [
        "fuck",
        "fucking",
        "shit",
        "poop",
        "penis",
        "dick",
        "dickhead",
        "lol",
        "lmao",
        "xd",
        "haha",
        "hahaha",
        "stupid",
        "idiot",
        "sucks",
        "noob",
        "butt",
        "asshole",
        "bitch",
        "gay",
        "nazi",
        "loser",
        "dumb",
    ]
)
_NAME_PARTICLES = frozenset(
    [
        "of",
        "the",
        "and",
        "y",
        "e",
        "i",
        "de",
        "del",
        "della",
        "der",
        "den",
        "di",
        "da",
        "das",
        "do",
        "dos",
        "du",
        "la",
        "le",
        "les",
        "van",
        "von",
        "vom",
        "zu",
        "zur",
        "bin",
        "ibn",
        "bint",
        "al",
        "el",
        "ben",
        "af",
        "av",
        "ter",
        "ten",
        "op",
        "st.",
        "d'",
        "mac",
    ]
)


def _script(ch: str) -> str | None:
    if not ch.isalpha():
        return None
    try:
        first = unicodedata.name(ch).split()[0]
    except ValueError:
        return None
    return _SCRIPT_GROUPS.get(first, first)


def label_problem(label: str | None, *, person: bool = False) -> str | None:
    """Why a label cannot be shown in a query, or ``None`` when it looks sane.

    ``"empty"``; ``"mixed_script"`` (letters of two writing systems, e.g. Latin and
    Cyrillic look-alikes); ``"repeated_token"`` (a word repeated in a row in a label of
    three or more words, a word three times, or a letter four times in a row);
    ``"vandalism"`` (profanity, a URL or handle, a lone capital letter after a lower-case
    word as in "Thomas Brodie-Sangster y niza R", and — with ``person`` — a lower-case
    word in a person's name that is not a name particle such as *van*, *de*, *bin*).

    Examples
    --------
    >>> label_problem("Thomas Brodie-Sangster y niza R", person=True)
    'vandalism'
    >>> label_problem("Mоscow")  # the second letter is Cyrillic
    'mixed_script'
    >>> label_problem("Duran Duran"), label_problem("Ludwig van Beethoven", person=True)
    (None, None)
    """
    text = " ".join((label or "").split())
    if not text:
        return "empty"
    scripts = {s for s in map(_script, text) if s is not None}
    if len(scripts) > 1:
        return "mixed_script"
    tokens = text.split()
    lowered = [t.lower().strip(",.") for t in tokens]
    if len(tokens) >= 3 and any(a == b and a.isalpha() for a, b in zip(lowered, lowered[1:])):
        return "repeated_token"
    if any(
        lowered.count(t) >= 3
        for t in set(lowered)
        if t.isalpha() and len(t) > 3 and t not in _NAME_PARTICLES
    ):
        return "repeated_token"
    if re.search(r"([^\W\d_])\1{3,}", text, flags=re.IGNORECASE):
        return "repeated_token"
    if any(t.strip("!?.,") in _PROFANITY for t in lowered):
        return "vandalism"
    if re.search(r"https?://|www\.|@\w", text):
        return "vandalism"
    if re.search(r"\b[a-z]{2,}\s+[A-Z]$", text):
        return "vandalism"
    if person and tokens[0][:1].isupper():
        for tok in tokens[1:]:
            bare = tok.strip(",.()")
            if bare[:1].islower() and bare.lower() not in _NAME_PARTICLES and "'" not in bare:
                return "vandalism"
    return None


def is_mass_noun(label: str) -> bool:
    """Whether ``label`` names an activity that takes no *a/an* ("acting", "modelling").

    Examples
    --------
    >>> is_mass_noun("acting"), is_mass_noun("actor"), is_mass_noun("King")
    (True, False, False)
    """
    words = label.strip().split()
    return bool(words) and words[-1].islower() and words[-1].endswith("ing") and len(words) <= 2
