"""Query phrasing: articles, templates for every catalogued property, published sentence shape."""

from __future__ import annotations

import re

import pytest

from creagraph.querygen import (
    compose_query,
    condition_phrase,
    describe_entity,
    fill_template,
    holder_phrase,
    indefinite_article,
    load_holder_types,
    load_phrasing,
    needs_definite_article,
    relation_phrase,
)

PREFIX = "What are different ways of connecting "
# Targets of each kind: common nouns (vowel and consonant sounds), names with and
# without "the", a year-led event, an initialism, a plural team.
TARGETS = [
    "painter",
    "actor",
    "university",
    "honorary doctorate",
    "Paris",
    "United States of America",
    "Royal Society",
    "2012 Summer Olympics",
    "NATO",
    "Boston Celtics",
    "Academy Award for Best Actor",
]


@pytest.mark.parametrize(
    ("phrase", "article"),
    [
        ("actor", "an"),
        ("painter", "a"),
        ("university", "a"),
        ("unidentified flying object", "an"),
        ("European", "a"),
        ("one-off", "a"),
        ("hour", "an"),
        ("honorary doctorate", "an"),
        ("MP", "an"),
        ("FBI agent", "an"),
        ("BBC presenter", "a"),
        ("NASA astronaut", "a"),
        ("8-bit game", "an"),
        ("18th-century poet", "an"),
        ("1990 film", "a"),
        ("1820s novel", "an"),
        ("Ugandan runner", "a"),
        ("Italian singer", "an"),
        ("", "a"),
    ],
)
def test_indefinite_article(phrase, article):
    assert indefinite_article(phrase) == article


@pytest.mark.parametrize(
    ("label", "team", "expected"),
    [
        ("United Kingdom", False, True),
        ("Netherlands", False, True),
        ("University of Oxford", False, True),
        ("Harvard University", False, False),
        ("Royal Swedish Academy of Sciences", False, True),
        ("Democratic Party", False, True),
        ("2012 Summer Olympics", False, True),
        ("World War II", False, False),
        ("France", False, False),
        ("NATO", False, False),
        ("The Beatles", False, False),
        ("rock music", False, False),
        ("Boston Celtics", True, True),
        ("Boston Celtics", False, False),
        ("FC Barcelona", True, False),
        ("Paris Saint-Germain F.C.", True, False),
    ],
)
def test_needs_definite_article(label, team, expected):
    assert needs_definite_article(label, team=team) is expected


def test_spot_list_of_full_queries():
    phrasing = load_phrasing()
    types = load_holder_types()
    someone = holder_phrase(["Q5"], types)
    cases = [
        (
            (
                "Robbie Vinton",
                "American actor",
                someone,
                condition_phrase("P106", "painter", phrasing),
            ),
            "What are different ways of connecting Robbie Vinton, an American actor, "
            "and someone who is a painter?",
        ),
        (
            (
                "Marie Curie",
                "Polish-French physicist and chemist (1867–1934)",
                someone,
                condition_phrase("P166", "Nobel Prize in Physics", phrasing),
            ),
            "What are different ways of connecting Marie Curie, a Polish-French physicist and "
            "chemist (1867–1934), and someone who received the Nobel Prize in Physics?",
        ),
        (
            (
                "Goodfellas",
                "1990 film by Martin Scorsese",
                holder_phrase(["Q11424"], types),
                condition_phrase("P161", "Joe Pesci", phrasing),
            ),
            "What are different ways of connecting Goodfellas, a 1990 film by Martin Scorsese, "
            "and a film that features Joe Pesci in its cast?",
        ),
        (
            (
                "Frédéric Chopin",
                "Polish composer",
                someone,
                condition_phrase("P22", "Nicolas Chopin", phrasing),
            ),
            "What are different ways of connecting Frédéric Chopin, a Polish composer, and "
            "someone whose father is Nicolas Chopin?",
        ),
        (
            (
                "Tunisia",
                "country in northern Africa",
                holder_phrase(["Q3624078"], types),
                condition_phrase("P463", "United Nations", phrasing),
            ),
            "What are different ways of connecting Tunisia, a country in northern Africa, and "
            "a country that is a member of the United Nations?",
        ),
        (
            (
                "Brad Miller",
                "American basketball player",
                someone,
                condition_phrase("P54", "Chicago Bulls", phrasing),
            ),
            "What are different ways of connecting Brad Miller, an American basketball player, "
            "and someone who played for the Chicago Bulls?",
        ),
        (
            (
                "Ada",
                None,
                holder_phrase([], types),
                condition_phrase("P69", "University of Oxford", phrasing),
            ),
            "What are different ways of connecting Ada and something that was educated at the "
            "University of Oxford?",
        ),
        (
            (
                "Al Gore",
                "45th Vice President of the United States",
                someone,
                condition_phrase("P1303", "piano", phrasing),
            ),
            "What are different ways of connecting Al Gore, the 45th Vice President of the "
            "United States, and someone who plays the piano?",
        ),
    ]
    for args, expected in cases:
        assert compose_query(*args) == expected


def _check_sentence(text: str, where: str) -> None:
    assert text.startswith(PREFIX), where
    assert text.endswith("?") and text.count("?") == 1, where
    assert "{" not in text and "}" not in text, where
    assert "  " not in text and " ," not in text, where
    lowered = text.lower()
    for doubled in (
        "a a ",
        "an an ",
        "the the ",
        "a the ",
        "the a ",
        "an the ",
        "who who",
        "that that",
    ):
        assert doubled not in lowered, f"{where}: {doubled!r} in {text!r}"
    for article, word in re.findall(r"\b(a|an) ([\w'-]+)", text):
        assert indefinite_article(word) == article, f"{where}: {article} {word} in {text!r}"


@pytest.mark.parametrize("voice", ["active", "passive"])
def test_every_catalogued_property_phrases_grammatically(voice):
    phrasing = load_phrasing()
    types = load_holder_types()
    assert len(phrasing) >= 100
    for pid, entry in phrasing.items():
        for target in TARGETS:
            for holder in (
                holder_phrase(["Q5"], types),
                holder_phrase(["Q11424"], types),
                holder_phrase([], types),
            ):
                condition = condition_phrase(pid, target, phrasing, voice=voice)
                assert target in condition
                text = compose_query("Robbie Vinton", "American actor", holder, condition)
                _check_sentence(text, f"{pid} {voice} {target!r}")
                assert entry.label


def test_unknown_property_falls_back_to_its_label():
    assert condition_phrase("P99999", "Springfield", {}, property_label="home town") == (
        "whose home town is Springfield"
    )
    assert condition_phrase(
        "P99999", "Springfield", {}, property_label="home town", voice="passive"
    ) == ("is the home town of Springfield")
    with pytest.raises(ValueError):
        condition_phrase("P106", "painter", load_phrasing(), voice="middle")


def test_fill_template_placeholders():
    assert fill_template("is {a y}", "engineer") == "is an engineer"
    assert fill_template("received {the y}", "Order of Lenin") == "received the Order of Lenin"
    assert fill_template("received {the y}", "the Golden Bear") == "received the Golden Bear"
    assert fill_template("is a citizen of {y}", "France") == "is a citizen of France"
    assert (
        fill_template("played for {team y}", "New York Yankees")
        == "played for the New York Yankees"
    )
    with pytest.raises(ValueError):
        fill_template("has no placeholder", "x")


def test_relation_phrase_for_path_steps():
    phrasing = load_phrasing()
    assert relation_phrase("P161", True, phrasing, property_label="cast member") == "cast member"
    assert relation_phrase("P161", False, phrasing, property_label="cast member") == "appeared in"
    assert relation_phrase("P57", False, phrasing, property_label="director") == "directed"
    assert relation_phrase(
        "P99999", False, {}, property_label="widget", inverse_label="widget of x"
    ) == ("widget of x")
    assert relation_phrase("P99999", False, {}, property_label="widget") == "widget of"


def test_describe_entity_edge_cases():
    assert describe_entity("X", "  the capital of France. ") == "X, the capital of France"
    assert describe_entity("X", "") == "X"
    assert (
        describe_entity("  Spaced   Name ", "one of the founders")
        == "Spaced Name, one of the founders"
    )
    assert describe_entity("X", "island in the Pacific") == "X, an island in the Pacific"


def test_holder_phrase_priority_and_fallbacks():
    types = load_holder_types()
    assert holder_phrase(["Q11424", "Q5"], types) == ("someone", "who")  # Q5 comes first
    assert holder_phrase(["Q476028"], types) == ("a football club", "that")
    assert holder_phrase(["Q999999999"], types, person_like=True) == ("someone", "who")
    assert holder_phrase([], types) == ("something", "that")
