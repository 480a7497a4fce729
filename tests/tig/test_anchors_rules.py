"""Anchor labels a person would keep (issue 27, session 8): no synonym of a brief word, no
lone word the responses use as a verb, no mixed cluster named by a minority's label."""

import json

import pytest

from creagraph.tig.anchors import (
    COMMON_WORD_SHARE,
    CRITERION_SIMILARITY,
    MIN_LABEL_SHARE,
    PARAPHRASE_SIMILARITY,
    SAME_IDEA_SIMILARITY,
    SHARED_ANSWERS,
    SINGLE_WORD_SIMILARITY,
    SYNONYM_SIMILARITY,
    anchor_label,
    anchors_for_population,
    brief_superlatives,
    brief_synonyms,
    common_words,
    core_ideas,
    hedged_share,
    intensifies_superlative,
    is_hedge_cluster,
    is_hedge_label,
    is_non_word,
    is_verb_in_usage,
    label_initials,
    label_share,
    trim_trailing_verb,
)
from creagraph.tig.brief import brief_terms
from creagraph.tig.population import build_atom_tables, build_population

SAFEST = "Which 4-digit lock combination is the safest?"
DOG = "Tell me a story in five sentences about a girl and her dog."
WHALE = "Write a haiku about a whale."
NEW_YEAR = "Write a happy new year text to a friend."


def test_brief_synonyms_by_word_embedding(embedder):
    # another word for a brief word, or for the criterion of a superlative brief
    assert brief_synonyms(["secure", "numbers"], SAFEST, embedder=embedder) == {
        "secure", "numbers"}
    assert brief_synonyms(["canine"], DOG, embedder=embedder) == {"canine"}
    # a hyponym, a setting, an associated word is an answer, not the brief again
    assert not brief_synonyms(["terrier"], DOG, embedder=embedder)
    assert not brief_synonyms(["sea", "ocean"], WHALE, embedder=embedder)
    assert not brief_synonyms(["joy", "laughter"], NEW_YEAR, embedder=embedder)
    assert not brief_synonyms(["randomness", "1234", "pattern"], SAFEST, embedder=embedder)
    # numbers, generic words and the brief's own words are never returned
    assert not brief_synonyms(["4", "ability", "lock"], SAFEST, embedder=embedder)
    assert 0.5 < CRITERION_SIMILARITY < SYNONYM_SIMILARITY < 0.8
    # the default embedder gives the same answer (and remembers it)
    assert brief_synonyms(["secure", "terrier"], SAFEST) == {"secure"}


def test_a_synonym_is_named_like_a_brief_word():
    terms = brief_terms(SAFEST, instructions=True)
    synonyms = frozenset({"secure", "security"})
    assert anchor_label("secure", terms) == "secure"  # the rule needs the synonyms
    assert anchor_label("secure", terms, synonyms) is None
    assert anchor_label("true security", terms, synonyms) is None
    assert anchor_label("lock 1234", terms, synonyms) == "1234"


def test_verb_in_usage():
    assert is_verb_in_usage("lands", ["Here we go: it lands on 14!", "It lands on 7."])
    # one verbal occurrence and no noun use: the die "rolls and lands on"
    assert is_verb_in_usage("lands", ["It lands on 14!", "The die rolls and lands on 2."])
    assert is_verb_in_usage("generate", ["I can generate a number.", "I generate it."])
    assert is_verb_in_usage("guess", ["It is hard to guess."])
    # nouns, even after "you" or beside a verbal use elsewhere
    assert not is_verb_in_usage("love", ["Wishing you love and joy.", "With love, Sam."])
    assert not is_verb_in_usage("joy", ["Wishing you joy!", "full of joy", "joy of life"])
    assert not is_verb_in_usage("lands", ["Distant lands await.", "the lands of ice"])
    assert not is_verb_in_usage("secure", ["All codes are equally secure from attack."])
    assert not is_verb_in_usage("harder", ["It makes it harder to guess.", "it harder for"])
    assert not is_verb_in_usage("lands", [])  # no occurrence: no evidence
    # a capital inside a sentence is a name; punctuation separates words
    assert not is_verb_in_usage("arjun", ["I'd name him Arjun, the hero.", "I suggest: Arjun"])


@pytest.fixture(scope="module")
def nb_tables(embedder, offline_extractor):
    from creagraph.tig.adapters import load_noveltybench_curated

    responses = load_noveltybench_curated(task_ids=["curated-42", "curated-88", "curated-95"])
    return build_atom_tables(responses, offline_extractor, embedder, show_progress=False)


def _anchors(table, **options):
    brief = table.responses[0].brief
    population = build_population(table)
    return population, anchors_for_population(
        population, top_k=5, kind="open", brief_terms=brief_terms(brief, instructions=True),
        **options)


def test_real_anchors_skip_brief_synonyms_and_narration_verbs(nb_tables, embedder):
    """NoveltyBench curated-95 ("the safest lock code"): the "secure" cluster restated the
    brief; curated-88 ("roll a make-believe 20-sided die"): "lands" narrated the roll."""
    for task, table in nb_tables.items():
        brief = table.responses[0].brief
        _, before = _anchors(table)
        population, after = _anchors(table, brief=brief,
                                     response_texts=core_ideas(table.responses),
                                     embedder=embedder)
        named_before = {x for a in before for x in a.labels}
        named_after = {x for a in after for x in a.labels}
        assert len(after) >= 3
        if task == "curated-42":
            continue
        if task == "curated-95":
            assert "secure" in named_before  # the rule is doing work
            assert "secure" not in named_after and "true security" not in named_after
            assert "1234" in named_after
        else:
            assert "lands" in named_before
            assert "lands" not in named_after
            assert any(x in named_after for x in ("14", "17"))
            assert not {"d20", "imaginary d20"} & named_after  # the brief's 20-sided die
            # a use, consequence or instance answer may be a verb ("pry"): no verb rule
            use = anchors_for_population(
                population, top_k=5, kind="use", brief=brief, embedder=embedder,
                brief_terms=brief_terms(brief, instructions=True),
                response_texts=core_ideas(table.responses))
            assert "lands" in {x for a in use for x in a.labels}


def _cosine(population, k, a, b):
    nodes = {population.canonical[n].label: n for n in range(len(population.canonical))
             if population.node_cluster[n] == k}
    return float(population.node_vectors[nodes[a]] @ population.node_vectors[nodes[b]])


def test_every_anchor_is_led_by_a_label_most_of_its_cluster_shares(nb_tables, embedder):
    for table in nb_tables.values():
        brief = table.responses[0].brief
        terms = brief_terms(brief, instructions=True)
        population, after = _anchors(table, brief=brief,
                                     response_texts=core_ideas(table.responses),
                                     embedder=embedder)
        index = {c.id: k for k, c in enumerate(population.clusters)}
        releds = 0
        for anchor in after:
            k = index[anchor.cluster_id]
            labels = population.clusters[k].labels
            lead = next(x for x in labels if anchor_label(x, terms) == anchor.labels[0])
            shares = [label_share(population, k, x) for x in labels[:10]]
            top = labels[shares.index(max(shares))]  # the label most members share
            assert label_share(population, k, lead) >= MIN_LABEL_SHARE or (
                lead == top or _cosine(population, k, lead, top) >= 0.6), anchor.labels
            first = next(x for x in labels if anchor_label(x, terms))
            releds += lead != first
        if table.task_id == "curated-95":
            # "randomness" is held by fewer than half the responses of its cluster, whose
            # members mostly say "avoid obvious / common patterns": that label leads
            assert releds >= 1
            assert after[0].labels[0] != "randomness"


def test_hedges_and_the_briefs_number_name_nothing():
    die = brief_terms("Roll a make-believe 20-sided die.", instructions=True)
    assert anchor_label("d20", die) is None and anchor_label("imaginary d20", die) is None
    assert anchor_label("d12", die) == "d12" and anchor_label("mp3 player", die) == "mp3 player"
    for hedge in ("individual", "specific needs", "certain circumstances", "the situation"):
        assert anchor_label(hedge) is None, hedge
    assert anchor_label("personal preference") == "personal preference"


def test_an_anchor_never_names_a_higher_ranks_idea_again(nb_tables, embedder):
    """NoveltyBench curated-42 ("which fruit makes the best pie filling"): "matter of
    personal preference" is "personal preference" again (cosine 0.91)."""
    table = nb_tables["curated-42"]
    brief = table.responses[0].brief
    population, after = _anchors(table, brief=brief, embedder=embedder,
                                 response_texts=core_ideas(table.responses))
    index = {c.id: k for k, c in enumerate(population.clusters)}
    leads = []
    for anchor in after:
        k = index[anchor.cluster_id]
        node = next(n for n in range(len(population.canonical))
                    if population.node_cluster[n] == k
                    and anchor.labels[0] in population.canonical[n].label)
        leads.append(population.node_vectors[node])
    for i in range(len(leads)):
        for j in range(i):
            assert float(leads[i] @ leads[j]) < SAME_IDEA_SIMILARITY
    named = [a.labels[0] for a in after]
    # "personal preference" is a hedge now (session 8, 27f), so neither leads an anchor
    assert "apple" in named and "matter of personal preference" not in named
    assert len(after) == 5


# --- session 8, 27f: hedges, paraphrases sharing answers, trailing verbs ---------------


def test_hedge_labels_and_hedge_clauses():
    for hedge in ("personal preference", "matter of personal taste", "individual circumstances",
                  "subjective"):
        assert is_hedge_label(hedge), hedge
    for answer in ("apple", "financial stress", "personal trainer", "program", "ability"):
        assert not is_hedge_label(answer), answer
    grad = ["It can vary greatly depending on the individual, their program and their "
            "field of study.", "The program is what students name first."]
    assert hedged_share("program", grad) == 0.5
    assert hedged_share("field of study", grad) == 1.0
    # "depends on X but rather on randomness" without a person or their lot: an answer
    digit = ["The safety does not depend on the first digit but rather on the randomness."]
    assert hedged_share("randomness", digit) == 0.0
    # named before the hedge: not what the answer depends on
    assert hedged_share("stress", ["Stress, though it depends on the individual."]) == 0.0
    assert hedged_share("stress", []) == 0.0
    assert is_hedge_cluster(["individual circumstances", "experience"], "experience", None)
    assert is_hedge_cluster(["program"], "program", grad[:1])
    assert not is_hedge_cluster(["program"], "program", grad[1:])
    assert anchor_label("ah") is None  # an interjection is a filler


@pytest.fixture(scope="module")
def opinion_tables(embedder, offline_extractor):
    from creagraph.tig.adapters import load_noveltybench_curated

    responses = load_noveltybench_curated(task_ids=["curated-37", "curated-45", "curated-97"])
    return build_atom_tables(responses, offline_extractor, embedder, show_progress=False)


def _open_anchors(table, embedder):
    brief = table.responses[0].brief
    return _anchors(table, brief=brief, response_texts=core_ideas(table.responses),
                    embedder=embedder)


def test_hedge_clusters_give_no_anchor(opinion_tables, nb_tables, embedder):
    """NoveltyBench curated-37 ("the worst part of being a grad student"): four of the five
    anchors were "depends on the individual / program / field of study / institution";
    curated-42: "personal preference" led the first anchor."""
    population, after = _open_anchors(opinion_tables["curated-37"], embedder)
    named = {x for a in after for x in a.labels}
    assert not {"program", "institution", "field of study", "individual circumstances"} & named
    assert "financial stress" in named and len(after) == 5
    index = {c.id: k for k, c in enumerate(population.clusters)}
    for anchor in after:
        assert not is_hedge_label(population.clusters[index[anchor.cluster_id]].labels[0])
    # the rule is doing work: the program cluster is there, ranked above some anchors
    ranked = [population.clusters[k].labels[0] for k in range(len(population.clusters))]
    assert "program" in ranked
    _, pie = _open_anchors(nb_tables["curated-42"], embedder)
    leads = [a.labels[0] for a in pie]
    assert "personal preference" not in leads and leads[0] == "apple"
    # the digit brief: "randomness" is what the safety depends on, an answer, kept
    _, digit = _open_anchors(opinion_tables["curated-97"], embedder)
    assert "randomness" in {x for a in digit for x in a.labels}


def _lead_node(population, k, label):
    return next(n for n in range(len(population.canonical))
                if population.node_cluster[n] == k and population.canonical[n].label == label)


def test_paraphrases_sharing_the_answers_merge(opinion_tables, embedder):
    """curated-45 ("why people don't get hired"): "necessary skills" (cosine 0.70 to "lack
    of relevant skills", under τ) held the same answers and named that idea again; on the
    digit brief "3" and "7" (0.73) are answers of different responses and both stay."""
    assert 0.5 < PARAPHRASE_SIMILARITY < SAME_IDEA_SIMILARITY and 0 < SHARED_ANSWERS <= 1
    table = opinion_tables["curated-45"]
    population, after = _open_anchors(table, embedder)
    leads = [a.labels[0] for a in after]
    assert "lack of relevant skills" in leads and "necessary skills" not in leads
    index = {c.id: k for k, c in enumerate(population.clusters)}
    k_skills = next(k for k, c in enumerate(population.clusters)
                    if c.labels and c.labels[0] == "necessary skills")
    k_lack = index[after[leads.index("lack of relevant skills")].cluster_id]
    vectors = population.node_vectors
    cos = float(vectors[_lead_node(population, k_skills, "necessary skills")]
                @ vectors[_lead_node(population, k_lack, "lack of relevant skills")])
    assert PARAPHRASE_SIMILARITY <= cos < SAME_IDEA_SIMILARITY  # only the new rule merges
    mine = {a[1] for a in population.cluster_atoms(k_skills)}
    theirs = {a[1] for a in population.cluster_atoms(k_lack)}
    assert len(mine & theirs) >= SHARED_ANSWERS * len(mine)
    _, digit = _open_anchors(opinion_tables["curated-97"], embedder)
    named = {x for a in digit for x in a.labels}
    assert {"3", "7"} <= named


def test_a_word_of_a_higher_anchors_label_gives_way(nb_tables, embedder):
    """curated-42: "sweet" after "balance of sweet" named the same idea again."""
    _, after = _open_anchors(nb_tables["curated-42"], embedder)
    words = [set(x.split()) for a in after for x in a.labels]
    seen: list[set[str]] = []
    for anchor in after:
        assert not any(set(anchor.labels[0].split()) <= w for w in seen), anchor.labels
        seen.extend(set(x.split()) for x in anchor.labels)
    assert any("sweet" in w for w in words)


def test_trailing_verbs_are_trimmed_on_evidence():
    haiku = ["Ocean giant sings,", "Ocean giant sings,", "In the vast ocean,"]
    assert trim_trailing_verb("ocean giant sings", haiku) == "ocean giant"
    assert trim_trailing_verb("ocean giant sings", haiku[:1]) == "ocean giant sings"  # once
    glide = ["A whale glides beneath the waves.", "The whale glides through the night."]
    assert trim_trailing_verb("whale glides", glide) == "whale"
    # nouns: a determiner before, "of" after, a name or title, a phrase inside sentences
    assert trim_trailing_verb("ocean waves", ["Ocean waves,", "Ocean waves,",
                                              "Whale breaches the waves."]) == "ocean waves"
    assert trim_trailing_verb("jon jones", ["Jon Jones", "Jon Jones."]) == "jon jones"
    assert trim_trailing_verb("security measures", [
        "Use strong security measures in place of a pin.",
        "Good security measures matter more than the digit."]) == "security measures"
    assert trim_trailing_verb("blue waves", ["Blue waves of the sea", "Blue waves"]) == \
        "blue waves"
    assert trim_trailing_verb("swims", ["It swims through."]) == "swims"  # one word
    assert trim_trailing_verb("number 42", ["number 42"]) == "number 42"


def test_haiku_anchor_drops_its_verb(embedder, offline_extractor):
    """NoveltyBench curated-3 ("a haiku about a whale"): "ocean giant swims / sings"."""
    from creagraph.tig.adapters import load_noveltybench_curated

    tables = build_atom_tables(load_noveltybench_curated(task_ids=["curated-3"]),
                               offline_extractor, embedder, show_progress=False)
    _, after = _open_anchors(tables["curated-3"], embedder)
    named = {x for a in after for x in a.labels}
    assert "ocean giant" in named
    assert not {"ocean giant swims", "ocean giant sings"} & named


# session 9: specificity from the data, brief inflections, one-word synonyms, non-words ----
HIRED = "What is the main reason people don't get hired for a job?"
INVENT = "What would you invent to make the world a more interesting place to live in?"
SUITED = "Which dog breed is the least well-suited for a first-time dog owner?"


def test_common_words_are_read_from_the_open_prompt_background():
    words = common_words("curated-43")
    # the vocabulary of model answers to any prompt, not this prompt's answers
    assert {"experience", "choice", "challenging", "means"} <= words
    assert not {"apple", "temperament", "terrier", "koala", "1234"} & words
    assert 0.3 < COMMON_WORD_SHARE < 0.5
    # a lower share makes more words common; the prompt's own answers never count
    assert common_words("curated-43", share=0.3) > words


def test_common_words_leave_the_prompt_itself_out(tmp_path):
    table = tmp_path / "words.json"
    # "pie" is used by prompts p0 and p1, "the" by all three
    table.write_text(json.dumps({"prompts": ["p0", "p1", "p2"],
                                 "words": {"pie": "3", "the": "7"}}), encoding="utf-8")
    path = str(table)
    assert common_words("p2", share=0.9, path=path) == {"pie", "the"}  # 2 of 2 others
    assert common_words("p0", share=0.9, path=path) == {"the"}  # p1 of p1, p2: 1 of 2
    assert common_words("user-task", share=0.6, path=path) == {"pie", "the"}  # 2 of 3
    assert common_words("user-task", share=0.7, path=path) == {"the"}


@pytest.mark.parametrize(("record", "field"), [
    ([], "JSON object"),
    ({"prompts": "p0", "words": {}}, "'prompts'"),
    ({"prompts": ["p0"], "words": []}, "'words'"),
    ({"prompts": ["p0"], "words": {"pie": "zz"}}, "words.pie"),
    ({"prompts": ["p0"], "words": {"pie": "4"}}, "words.pie"),  # bit 2 of one prompt
])
def test_a_bad_common_word_table_is_named(tmp_path, record, field):
    from creagraph.core.io import InputError

    table = tmp_path / "bad.json"
    table.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match=field) as info:
        common_words("p0", path=str(table))
    assert str(table) in str(info.value)


def test_a_label_of_common_words_or_non_words_names_nothing():
    terms = brief_terms(SUITED, instructions=True)
    common = frozenset({"experience", "choice", "classic"})
    assert anchor_label("experience", terms) == "experience"  # the rule needs the words
    assert anchor_label("experience", terms, common=common) is None
    assert anchor_label("classic choice", terms, common=common) is None
    assert anchor_label("experience level", terms, common=common) == "experience level"
    # one or two letters, an initial, a mixed-script fragment
    for label in ("k", "j", "uk", "j. k.", "یுஙகள"):
        assert anchor_label(label, terms) is None, label
    assert anchor_label("j.k. rowling", terms) == "j.k. rowling"
    assert anchor_label("7", terms) == "7" and anchor_label("東京", terms) == "東京"
    assert not is_non_word("koala") and not is_non_word("42") and is_non_word("ai")


def test_inflections_of_brief_words_restate_the_brief(embedder):
    # "hiring" for people "hired" (a stem under four letters), "inventor" for the
    # instruction word "invent" the brief itself uses
    assert "hiring" in brief_synonyms(["hiring", "context"], HIRED, embedder=embedder)
    assert "inventor" in brief_synonyms(["hypothetical", "inventor"], INVENT,
                                        embedder=embedder)
    assert not brief_synonyms(["qualifications", "skills"], HIRED, embedder=embedder)
    terms = brief_terms(HIRED, instructions=True)
    synonyms = brief_synonyms(["hiring", "context"], HIRED, embedder=embedder)
    assert anchor_label("hiring context", terms, synonyms) is None


def test_single_word_labels_meet_a_lower_synonym_threshold(embedder):
    assert CRITERION_SIMILARITY < SINGLE_WORD_SIMILARITY < SYNONYM_SIMILARITY
    # "fit" for "well-suited" (0.64): a synonym alone, not beside other words
    assert brief_synonyms(["fit"], SUITED, embedder=embedder,
                          similarity=SINGLE_WORD_SIMILARITY) == {"fit"}
    assert not brief_synonyms(["fit"], SUITED, embedder=embedder)
    # the one-word ideas kept nearest their brief words stay ("sea" 0.63, "joy" 0.61)
    assert not brief_synonyms(["sea"], WHALE, embedder=embedder,
                              similarity=SINGLE_WORD_SIMILARITY)
    assert not brief_synonyms(["joy"], NEW_YEAR, embedder=embedder,
                              similarity=SINGLE_WORD_SIMILARITY)


def test_intensifiers_and_initials():
    texts = ["The absolute worst breed is a husky.", "Absolute worst: a husky.",
             "An absolute must."]
    assert intensifies_superlative("absolute", texts)
    assert not intensifies_superlative("husky", texts)
    assert not intensifies_superlative("lush", ["A lush forest.", "The lush forest"])
    assert intensifies_superlative("very", ["the very easiest pie"])
    assert brief_superlatives(SAFEST) >= {"safest", "best", "worst"}
    assert label_initials("Brazilian jiu-jitsu") == "bjj"
    assert label_initials("mixed martial arts") == "mma"
    assert label_initials("boxing") is None and label_initials("7 or 3") is None


@pytest.fixture(scope="module")
def session9_tables(embedder, offline_extractor):
    from creagraph.tig.adapters import load_noveltybench_curated

    responses = load_noveltybench_curated(task_ids=["curated-43", "curated-74", "curated-76"])
    return build_atom_tables(responses, offline_extractor, embedder, show_progress=False)


def test_real_anchors_drop_fillers_fragments_and_restatements(
        session9_tables, opinion_tables, nb_tables, embedder):
    """The graded misses of issue 27 (27f): "k", "j" of "J.K." (curated-74), "bjj" after
    "brazilian jiu-jitsu" (curated-76), "fit" for "well-suited" (curated-43), "hiring
    context" for "hired" (curated-45), "challenging", "experiences" (curated-37) and
    "classic choice" (curated-42) common to any prompt's answers."""
    cases = [(session9_tables, "curated-74", {"k", "j"}, "sorcerer's stone"),
             (session9_tables, "curated-76", {"bjj"}, "brazilian jiu-jitsu"),
             (session9_tables, "curated-43", {"fit"}, "temperament"),
             (opinion_tables, "curated-45", {"hiring context"}, "lack of relevant skills"),
             (opinion_tables, "curated-37", {"challenging", "experiences"}, "financial stress"),
             (nb_tables, "curated-42", {"classic choice"}, "apple")]
    for tables, task, gone, kept in cases:
        table = tables[task]
        brief = table.responses[0].brief
        options = {"brief": brief, "response_texts": core_ideas(table.responses),
                   "embedder": embedder}
        population, after = _anchors(table, **options)
        named = {x for a in after for x in a.labels}
        assert not gone & named, (task, named)
        assert kept in named, (task, named)
        # the rules are doing work: without the common words those labels are named;
        # "bjj", "k" and "j" lead clusters of the population
        if task in ("curated-37", "curated-42"):
            _, without = _anchors(table, common=frozenset(), **options)
            assert gone & {x for a in without for x in a.labels}, task
        if task == "curated-76":
            assert any(c.labels and c.labels[0] == "bjj" for c in population.clusters)
        if task == "curated-74":
            assert any(c.labels and c.labels[0] in gone for c in population.clusters)
