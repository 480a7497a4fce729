"""The kg judge's verdicts (SPEC §3.4): verified / refuted / unknown, both directions,
inverse and symmetric properties, careful linking; and the same verdicts from both backends."""

import gzip
import json

import pytest

from creagraph.core.embeddings import default_embedder
from creagraph.scoring.grounding import (
    EntityLinker,
    Grounder,
    RelationLinker,
    complete_properties,
    inverse_properties,
    load_negatives,
    query_context,
    symmetric_properties,
)
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.judges import KgJudge
from creagraph.scoring.linking import same_name, split_qualifier
from creagraph.scoring.parse import parse_answer


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


@pytest.fixture(scope="module")
def grounder(kg, embedder):
    return Grounder(kg, EntityLinker(kg), RelationLinker(kg, embedder))


def test_property_data_files_are_consistent():
    inv, sym, complete = inverse_properties(), symmetric_properties(), complete_properties()
    assert "P22" in inv["P40"] and "P25" in inv["P40"] and inv["P22"] == ("P40",)
    assert {"P26", "P47", "P3373", "P530"} <= sym
    assert {"P19", "P22", "P25"} <= set(complete) and set(complete.values()) <= {"place", "item"}
    assert not sym & set(inv), "a symmetric property is its own inverse, not a declared pair"


def test_relation_tables_load_in_core_not_in_a_job():
    """The inverse/symmetric tables are read by core (grounding and query generation both
    use them; jobs import core, never each other): grounding re-exports the same loaders,
    and querygen/filters.py imports nothing from creagraph.scoring."""
    import ast
    import inspect

    from creagraph.core import relations
    from creagraph.querygen import filters
    from creagraph.scoring import grounding

    assert grounding.inverse_properties is relations.inverse_properties
    assert grounding.symmetric_properties is relations.symmetric_properties
    assert relations.inverse_properties()["P2175"] == ("P2176",)
    imported = [
        node.module or ""
        for node in ast.walk(ast.parse(inspect.getsource(filters)))
        if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(ast.parse(inspect.getsource(filters)))
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert "creagraph.core.relations" in imported
    assert not [m for m in imported if m.startswith("creagraph.scoring")], imported


def test_symmetric_property_read_either_way(grounder):
    a = grounder.ground("Minnesota", "shares border with", "Iowa")
    b = grounder.ground("Iowa", "shares border with", "Minnesota")
    assert a.status == b.status == "verified" and a.factual == 1.0
    assert {a.evidence["via"], b.evidence["via"]} == {"stated", "symmetric"}
    assert a.evidence["statement"] == b.evidence["statement"]


def test_statement_stored_the_other_way_round(grounder):
    g = grounder.ground("Thelma Schoonmaker", "edited", "Goodfellas")
    assert g.status == "verified"
    assert g.evidence["statement"][1] == "P1040"  # (Goodfellas, film editor, Schoonmaker)
    assert g.evidence["statement"][0] == g.evidence["links"]["tail"]["qid"]


def test_inverse_phrase_links_to_inverse_direction(grounder):
    g = grounder.ground("Kareem Abdul-Jabbar", "appeared in", "Scrubs")
    assert g.status == "verified"
    assert g.evidence["statement"] == ["Q485668", "P161", "Q179051"]


def test_declared_inverse_property(kg, grounder):
    # a (x, father, y) statement without its (y, child, x) mirror, asked as "y child x"
    for edge in (e for e in kg.random_statements(400_000, seed=1) if e.property == "P22"):
        if kg.has_triple(edge.object, "P40", edge.subject):
            continue
        labels = kg.labels([edge.subject, edge.object])
        father, child = labels.get(edge.object), labels.get(edge.subject)
        if not father or not child:
            continue
        g = grounder.ground(father, "child", child)
        if g.evidence.get("links", {}).get("head", {}).get("qid") != edge.object:
            continue  # a homonym: try another pair
        assert g.status == "verified" and g.evidence["via"] == "inverse:P22"
        assert g.evidence["statement"] == list(edge.as_tuple())
        return
    pytest.fail("no father statement without its child mirror in the slice")


def test_refuted_only_with_completeness_evidence(kg, grounder):
    # Kareem Abdul-Jabbar was born in New York City (Q60), not Los Angeles
    g = grounder.ground("Kareem Abdul-Jabbar", "born in", "Los Angeles")
    assert g.status == "refuted" and g.factual == 0.0
    assert "Q60" in g.evidence["values"] and "partial-completeness" in g.reason
    assert g.specificity is not None
    # absent, but cast member is not a property whose values are complete: unknown
    u = grounder.ground("Mean Streets", "cast member", "Harvey Keitel")
    if not kg.has_triple(u.subject or "Q1", "P161", u.object or "Q1"):
        assert u.status == "unknown" and u.factual is None and u.reason.startswith("absent")
        assert u.specificity is not None  # all three linked: σ of the best reading


def test_place_at_another_granularity_is_not_refuted(kg, grounder):
    # someone born in a place that lies inside a bigger place, asked with the bigger one
    for edge in kg.random_statements(400_000, seed=2):
        if edge.property != "P19":
            continue
        ups = [e.object for e in kg.out_edges(edge.object, "P131")]
        if not ups:
            continue
        labels = kg.labels([edge.subject, ups[0]])
        if len(labels) < 2 or kg.has_triple(edge.subject, "P19", ups[0]):
            continue
        g = grounder.ground(labels[edge.subject], "place of birth", labels[ups[0]])
        if g.evidence["head_candidates"][:1] != [edge.subject]:
            continue
        if g.evidence["tail_candidates"][:1] != [ups[0]]:
            continue
        assert g.status == "verified" and g.evidence["via"] == "contained"
        break
    else:
        pytest.fail("no birthplace located in another place in the slice")
    # Stephen Harper was born in Toronto, Ontario; "Ontario" also names a Californian city,
    # which fits the usual birthplace types better: a homonym is no refutation
    assert grounder.ground("Stephen Harper", "place of birth", "Ontario").status != "refuted"


def test_known_negatives_are_refuted(kg, embedder, negatives_path):
    negatives = load_negatives(negatives_path)
    assert len(negatives) > 8000
    grounder = Grounder(kg, EntityLinker(kg), RelationLinker(kg, embedder), negatives=negatives)
    refuted = 0
    with gzip.open(negatives_path, "rt") as handle:
        rows = [line.split() for line in handle.readlines()[1:80]]
    for s, p, o in rows:
        labels = kg.labels([s, p, o])
        if len(labels) < 3:
            continue
        g = grounder.ground(labels[s], labels[p], labels[o])
        assert g.status != "verified" or kg.has_triple(*g.evidence["statement"])
        if (g.subject, g.property, g.object) == (s, p, o):
            assert g.status == "refuted", g.as_dict()
            refuted += g.reason == "a known negative statement"
    assert refuted > 0


def test_unlinked_end_has_unknown_sigma(grounder):
    u = grounder.ground("Zzyzx Qwertyuiop", "frobnicated", "Nowhere Land 9000")
    assert u.status == "unknown" and u.factual is None and u.specificity is None
    assert set(u.evidence["unlinked"]) >= {"head", "tail"}
    assert "not linked" in u.reason


def test_qualifiers_and_distinctive_tokens(kg):
    linker = EntityLinker(kg)
    assert split_qualifier("The Office (U.S. TV series)") == ("The Office", "U.S. TV series")
    mj = linker.link("Michael Jackson (singer)")
    assert mj and mj[0].qid == "Q2831" and mj[0].method == "hint"
    # the fuzzy search finds look-alike names, the token rule refuses them
    for mention in ("Dan Marino", "Robert Boyle"):
        fuzzy = [h for h in kg.search(mention, fuzzy=True, min_score=85) if not h.exact]
        links = linker.link(mention)
        assert all(same_name(mention, kg.labels([link.qid])[link.qid]) for link in links)
        assert not any(
            h.id in {link.qid for link in links} for h in fuzzy if not same_name(mention, h.matched)
        )
    assert not same_name("Rocky II", "Rocky III") and same_name("The Beatles", "Beatles")


def test_type_fit_ranks_candidates_by_the_property(grounder):
    # cast members are humans, films are not
    assert grounder.type_fit("Q179051", "P161", "object") == 1.0  # a human
    assert grounder.type_fit("Q485668", "P161", "object") < 0.1  # a TV series
    assert grounder.type_fit("Q42047", "P161", "subject") == 1.0  # a film
    assert grounder.type_fit("Q42047", "P161", "object") == 0.0


def test_query_entities_link_first(kg, sample_files, grounder):
    rows = read_answers(sample_files)
    ctx = query_context(rows[0].extra, rows[0].entity_a, rows[0].entity_b)
    assert ctx["morton gould"] == "Q1352656" and ctx["benny carter"] == "Q356715"
    checked = 0
    for row in rows:
        ctx = query_context(row.extra, row.entity_a, row.entity_b)
        for i in range(1, 4):
            ids, labels = row.extra.get(f"triple{i}"), row.extra.get(f"triple{i}_labels")
            if not ids or not kg.has_triple(*ids):
                continue
            g = grounder.ground(labels[0], labels[1], labels[2], ctx)
            assert g.status == "verified", (labels, g.as_dict())
            assert g.evidence["statement"] == ids
            checked += 1
    assert checked >= 10


def _verdicts(grounder, rows):
    judge = KgJudge(grounder)
    out = []
    for row in rows:
        for i, path in enumerate(parse_answer(row.answer).paths):
            for j in judge.judge(row, i, path.triples):
                d = j.as_dict()
                out.append(
                    (
                        d["status"],
                        d.get("reason"),
                        d.get("ids"),
                        d.get("specificity"),
                        d.get("statement"),
                        d.get("via"),
                    )
                )
    return out


@pytest.mark.slow  # ~21 s measured: every sample triple grounded over SPARQL too
def test_embedded_and_sparql_backends_give_the_same_verdicts(sample_files, kg, sparql_kg, embedder):
    rows = [r for f in sample_files for r in read_answers([f])[:1]]
    a = _verdicts(Grounder(kg, EntityLinker(kg), RelationLinker(kg, embedder)), rows)
    b = _verdicts(
        Grounder(sparql_kg, EntityLinker(sparql_kg), RelationLinker(sparql_kg, embedder)), rows
    )
    assert len(a) > 100
    assert {s for s, *_ in a} >= {"verified", "unknown"}
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert not diff, json.dumps(diff[:5], indent=1)


def test_no_fuzzy_edit_on_a_first_letter():
    assert not same_name("Prussian Academy of Sciences", "Russian Academy of Sciences")
    assert same_name("Tchaikovsky Pyotr", "Pyotr Tchaikowsky")  # an edit inside a word


def test_a_query_entity_outside_the_graph_is_not_linked(grounder):
    g = grounder.ground("Queens", "part of", "New York City", context={"queens": "Q999999999"})
    assert "Q999999999" not in g.evidence["head_candidates"]
    assert g.status == "verified" and g.evidence["links"]["head"]["method"] != "query"


def test_embedding_neighbours_far_behind_the_best_are_not_tried(kg, embedder):
    # "country of headquarters" names no property exactly; the neighbour that finds the
    # statement is 0.235 behind the best one (issue 28: a link needs a margin over the next)
    links = RelationLinker(kg, embedder)
    triple = ("British Broadcasting Corporation", "country of headquarters", "United Kingdom")
    wide = Grounder(kg, EntityLinker(kg), links, embedding_margin=1.0).ground(*triple)
    assert wide.status == "verified" and wide.evidence["relation_behind"] > 0.2
    assert Grounder(kg, EntityLinker(kg), links).ground(*triple).status == "verified"
    narrow = Grounder(kg, EntityLinker(kg), links, embedding_margin=0.1).ground(*triple)
    assert narrow.evidence.get("relation_behind", 0.0) <= 0.1
    assert narrow.evidence["relation_candidates"] == wide.evidence["relation_candidates"]
