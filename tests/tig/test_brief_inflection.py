"""Brief words matched through their inflections (issue 27, session 9: "hiring" for a
brief about people "hired", "inventor" for "invent")."""

import pytest

from creagraph.tig.brief import brief_words, inflection_root, shares_inflection_root


@pytest.mark.parametrize(("a", "b"), [
    ("hiring", "hired"), ("hire", "hires"), ("inventor", "invent"), ("inventors", "invent"),
    ("graduation", "graduate"), ("running", "run"), ("Hiring's", "hire"),
])
def test_inflections_meet_at_one_root(a, b):
    assert inflection_root(a) == inflection_root(b)
    assert shares_inflection_root(a, [b])


@pytest.mark.parametrize(("a", "b"), [
    ("red", "reed"), ("sing", "song"), ("actor", "act"), ("nation", "nat"),
    ("higher", "hire"), ("class", "cla"), ("bed", "b"),
])
def test_other_words_stay_apart(a, b):
    assert not shares_inflection_root(a, [b])


def test_short_roots_are_not_stripped():
    # a root keeps three letters (four for "-or", "-ion"), so short words stay whole
    assert inflection_root("red") == "red" and inflection_root("sing") == "sing"
    assert inflection_root("actor") == "actor" and inflection_root("kisses") == "kiss"
    assert not shares_inflection_root("ed", ["ed"])  # under three letters: no root


def test_brief_words_with_its_instruction_words():
    brief = "What would you invent to make the world a more interesting place?"
    assert "invent" not in brief_words(brief)
    assert brief_words(brief, instructions=True)[:2] == ["invent", "make"]
