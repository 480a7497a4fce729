"""Brief words matched through superlative, comparative and "-ty" bases (issue 27)."""

from creagraph.tig.brief import brief_terms, degree_bases, is_from_brief, matches_brief_term

SAFEST = "Which 4-digit lock combination is the safest?"


def test_superlative_comparative_and_ty_forms_of_a_brief_word_are_brief_terms():
    terms = brief_terms(SAFEST, instructions=True)
    for word in ("safest", "safer", "safety", "safe", "Safety's"):
        assert matches_brief_term(word, terms), word
    assert is_from_brief("perceived safety", terms) is False  # "perceived" is its own word
    assert is_from_brief("safer", terms) and is_from_brief("the safest lock", terms)
    # the comparative of a plain brief adjective, both ways
    assert matches_brief_term("happiest", brief_terms("Write a happy poem."))
    assert matches_brief_term("bigger", brief_terms("Draw a big dog."))
    assert matches_brief_term("biggest", brief_terms("Draw a big dog."))


def test_a_stripped_ending_counts_only_when_the_base_is_a_brief_term():
    terms = brief_terms(SAFEST, instructions=True)
    for word in ("interest", "forest", "water", "secure", "number"):
        assert not matches_brief_term(word, terms), word
    assert not is_from_brief("interest", terms)
    # a brief's own "-ty" word adds no base to the terms (only its superlatives do)
    assert brief_terms("Draw safety.") == {"safet"}


def test_degree_bases():
    assert degree_bases("safest") == {"saf", "safe"}
    assert degree_bases("happier") == {"happ"}  # word_stem("happy")
    assert "big" in degree_bases("biggest")
    assert degree_bases("safety") == {"safe"}
    assert degree_bases("safety", superlative_only=True) == frozenset()
    assert degree_bases("calm") == frozenset() and degree_bases("est") == frozenset()
