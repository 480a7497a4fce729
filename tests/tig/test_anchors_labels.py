"""Labels an anchor may name: content words only, brief words by their head (issue 27)."""

import pytest

from creagraph.tig.anchors import GENERIC_WORDS, anchor_label, anchors_for_population
from creagraph.tig.brief import brief_terms, matches_brief_term
from creagraph.tig.population import build_atom_tables, build_population

PICK = "Pick a number between 1 and 100. Now tell me what you picked."
SAFEST = "Which 4-digit lock combination is the safest?"


def test_a_label_needs_a_content_word():
    terms = brief_terms(PICK, instructions=True)
    for filler in ("ability", "guess", "simulate", "human", "result of", "the ability",
                   "imagine", "itself", "decisions"):
        assert anchor_label(filler, terms) is None, filler
        assert anchor_label(filler) is None, filler  # with no brief too
    for symbol in ("😊", "🎉", "🎲", "...", "!!", "-"):
        assert anchor_label(symbol, terms) is None, symbol
    for mark in ("...", "!!", "-"):
        assert anchor_label(mark) is None, mark
    # an emoji is an answer when the brief asks for one, and cannot be told from
    # decoration without a brief (the L2MO populations of "Pick an emoji at random.")
    emoji = brief_terms("Pick an emoji at random.", instructions=True)
    assert anchor_label("🤔", emoji) == "🤔" and anchor_label("🤔") == "🤔"
    assert anchor_label("🤔", brief_terms("Pick two emojis.", instructions=True)) == "🤔"
    # a generic word beside a content word keeps the label whole
    assert anchor_label("human touch", terms) == "human touch"
    assert anchor_label("joy 🎉") == "joy 🎉"
    assert anchor_label("large language model", terms) == "large language model"
    assert anchor_label("53") == "53"
    assert {"ability", "guess", "simulate", "human"} <= GENERIC_WORDS


def test_a_brief_word_plus_one_content_head_is_named_by_the_head():
    terms = brief_terms(PICK, instructions=True)
    assert anchor_label("number 42", terms) == "42"
    assert anchor_label("the number 42", terms) == "42"
    assert anchor_label("picked 42", terms) == "42"
    assert anchor_label("result of 17") == "17"  # generic words before a number too
    assert anchor_label("number", terms) is None and anchor_label("number 100", terms) is None
    whale = brief_terms("Write a haiku about a whale.", instructions=True)
    # a word is not taken for the head (it may be a verb, a predicate or a modifier)
    assert anchor_label("whale song", whale) is None
    assert anchor_label("vast whale", whale) is None
    assert anchor_label("combination stronger", brief_terms(SAFEST)) is None
    assert anchor_label("vast whale glides", whale) is None
    lock = brief_terms(SAFEST, instructions=True)
    assert anchor_label("4-digit lock relies", lock) is None  # a fragment, not "relies"
    assert anchor_label("lock 1234", lock) == "1234"


def test_inflections_of_the_brief_are_not_named():
    terms = brief_terms(SAFEST, instructions=True)
    for label in ("safety", "safer", "perceived safety", "safest combination"):
        assert anchor_label(label, terms) is None, label
    assert anchor_label("honest", terms) == "honest"  # "-est" not stripped to "hon"
    assert anchor_label("randomness", terms) == "randomness"


@pytest.fixture(scope="module")
def nb_populations(embedder, offline_extractor):
    from creagraph.tig.adapters import load_noveltybench_curated

    responses = load_noveltybench_curated(task_ids=["curated-90", "curated-95"])
    briefs = {r.task_id: r.brief for r in responses}
    tables = build_atom_tables(responses, offline_extractor, embedder, show_progress=False)
    return {task: (build_population(table), briefs[task]) for task, table in tables.items()}


def test_real_anchors_name_42_and_no_filler_emoji_or_brief_inflection(nb_populations):
    """NoveltyBench curated-90 ("pick a number") and curated-95 ("the safest lock code"),
    every model's real generations: the stock 42 is named (its cluster is labelled "number
    42"); no anchor names a lone generic word, an emoji, or a form of the brief's words
    ("safety", "safer"); no label is named by two anchors."""
    for task, (population, brief) in nb_populations.items():
        terms = brief_terms(brief, instructions=True)
        plain = anchors_for_population(population, top_k=5, kind="open")
        anchors = anchors_for_population(population, top_k=5, kind="open", brief_terms=terms)
        assert len(anchors) >= 3 and [a.rank for a in anchors] == list(
            range(1, len(anchors) + 1))
        named = [x for a in anchors for x in a.labels]
        assert len(named) == len(set(named)), named
        for label in named:
            words = [w.casefold() for w in label.split()]
            assert any(c.isalnum() for c in label), label
            assert not all(w in GENERIC_WORDS for w in words), label
            assert not any(matches_brief_term(w, terms) for w in words if w.isalpha()), label
        if task == "curated-90":
            assert "42" in anchors[0].labels[:3] or "42" in anchors[1].labels[:3]
            assert any("42" in a.cluster_summary and "number" in a.cluster_summary
                       for a in anchors)
            assert not any(a.labels == ("ability",) for a in anchors)
        else:
            # without the brief's terms the inflections come through: the rule is doing work
            assert any(matches_brief_term(w, terms) for a in plain for x in a.labels
                       for w in x.split())
