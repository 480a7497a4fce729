import csv
import json

import pytest

from creagraph.core.io import InputError
from creagraph.tig.anchors import (
    anchor_from_dict,
    anchor_text,
    anchors_for_population,
    read_anchors,
    select_cliche_clusters,
    write_anchors,
)
from creagraph.tig.audit import (
    AUDIT_FIELDS,
    audit_records_for_anchors,
    leakage_violations,
    read_audit,
    validate_audit_record,
    write_audit,
)
from creagraph.tig.l2mo import l2mo_population
from creagraph.tig.population import build_atom_tables, build_population
from creagraph.tig.schema import ATOM_TYPES, CRITERIA, AuditRecord

from .conftest import calm_population


@pytest.fixture(scope="module")
def calm_table(offline_extractor):
    return build_atom_tables(calm_population(), offline_extractor, show_progress=False)["calm"]


def test_anchor_text_per_type():
    assert anchor_text("carrier", ["plants", "leaves", "soft green growth"], concept="calm") == (
        "Does the idea avoid relying on plants, leaves or soft green growth as the carrier "
        "of calm, or transform them into something unexpected?")
    assert anchor_text("carrier", ["fern"]).endswith("transform it into something unexpected?")
    assert "the brief's concept" in anchor_text("mechanism", ["melting"])
    for kind in ATOM_TYPES:
        text = anchor_text(kind, ["alpha", "beta", "gamma", "delta"])
        assert text.startswith("Does the idea") and text.endswith("?")
        assert "alpha, beta or gamma" in text and "delta" not in text
    with pytest.raises(ValueError):
        anchor_text("colour", ["red"])
    with pytest.raises(ValueError):
        anchor_text("motif", [])


def test_whole_population_anchors_find_the_calm_cliches(calm_table):
    population = build_population(calm_table)
    anchors = anchors_for_population(population, top_k=3, concept="calm")
    assert [a.rank for a in anchors] == [1, 2, 3]
    scores = [a.cliche_score for a in anchors]
    assert scores == sorted(scores, reverse=True)
    top_labels = " ".join(" ".join(a.labels) for a in anchors)
    assert "leaves" in top_labels or "plant" in top_labels  # the planted cliché
    for anchor in anchors:
        cluster = next(c for c in population.clusters if c.id == anchor.cluster_id)
        assert anchor.canonical_ids == cluster.canonical_ids
        assert len(anchor.cluster_models) >= 2
        nodes = [c for c in population.canonical if c.id in set(anchor.canonical_ids)]
        assert sorted(anchor.atom_ids) == sorted(p[0] for c in nodes for p in c.provenance)
        assert anchor.comparison_key == "" and anchor.reference_models == population.models
        if anchor.atom_type in ("carrier", "mechanism"):
            assert "calm" in anchor.text


def test_selection_respects_min_models_and_top_k(calm_table):
    population = build_population(calm_table)
    assert len(select_cliche_clusters(population, top_k=2)) == 2
    strict = select_cliche_clusters(population, top_k=100, min_models=5)
    assert all(len(population.clusters[k].models) >= 5 for k in strict)
    everything = select_cliche_clusters(population, top_k=10_000, min_models=0)
    assert len(everything) == len(population.clusters)
    with pytest.raises(ValueError):
        select_cliche_clusters(population, top_k=-1)


def test_anchor_file_round_trip(calm_table, tmp_path):
    anchors = anchors_for_population(l2mo_population(calm_table, ("m1", "m2")))
    write_anchors(tmp_path / "a.jsonl", anchors)
    assert read_anchors(tmp_path / "a.jsonl") == anchors
    broken = anchors[0].to_dict()
    del broken["cluster_id"]
    with pytest.raises(InputError, match="<x>: missing field 'cluster_id'"):
        anchor_from_dict(broken, "<x>")
    (tmp_path / "bad.jsonl").write_text(json.dumps({**anchors[0].to_dict(), "rank": "1"}) + "\n")
    with pytest.raises(InputError, match="bad.jsonl:1: field 'rank' must be an integer"):
        read_anchors(tmp_path / "bad.jsonl")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_audit_round_trip(calm_table, tmp_path, suffix):
    anchors = anchors_for_population(l2mo_population(calm_table, ("m3", "m5")))
    blank = audit_records_for_anchors(anchors, annotator_id="ann-1")
    assert len({r.audit_id for r in blank}) == len(blank)
    assert all(r.comparison_key == "m3||m5" and r.overall_action == "" for r in blank)
    filled = [
        AuditRecord(**{**r.to_dict(), **dict.fromkeys(CRITERIA, "yes"),
                       "cluster_validity": "partly", "overall_action": action,
                       "revision_note": 'Say "leaves", not plants,\nthen merge.',
                       "timestamp": "2026-01-02T03:04:05+00:00"})
        for r, action in zip(blank, ["accept", "revise", "exclude", "accept", "revise"],
                             strict=False)
    ]
    path = tmp_path / f"audit{suffix}"
    assert write_audit(path, filled) == len(filled)
    assert read_audit(path) == filled
    if suffix == ".csv":
        with path.open(newline="") as handle:
            assert tuple(next(csv.reader(handle))) == AUDIT_FIELDS


def test_audit_validation_errors(tmp_path):
    good = AuditRecord("a1", "t", "x||y", "anchor-1", "Does…?", "carrier-1", "plants").to_dict()
    assert validate_audit_record({**good, "overall_action": "ACCEPT"}, "w").overall_action == (
        "accept")
    cases = [
        ({"cluster_validity": "maybe"}, "field 'cluster_validity' is 'maybe'"),
        ({"overall_action": "keep"}, "field 'overall_action' is 'keep'"),
        ({"timestamp": "yesterday"}, "field 'timestamp' is not ISO 8601"),
        ({"checklist_item_id": ""}, "missing field 'checklist_item_id'"),
        ({"colour": "red"}, "unknown field(s) colour"),
    ]
    for change, message in cases:
        with pytest.raises(InputError) as info:
            validate_audit_record({**good, **change}, "f.csv:7")
        assert str(info.value).startswith("f.csv:7: ") and message in str(info.value)
    path = tmp_path / "a.csv"
    write_audit(path, [AuditRecord(**good)])
    text = path.read_text().splitlines()
    path.write_text("\n".join([text[0], text[1], text[1].replace("a1,", "a2,", 1)
                               .replace(",,,,,,,,,", ",no,no,no,no,no,drop,,,", 1)]) + "\n")
    with pytest.raises(InputError, match=r"a.csv:3: field 'overall_action' is 'drop'"):
        read_audit(path)
    path.write_text("\n".join([text[0], text[1], text[1]]) + "\n")
    with pytest.raises(InputError, match="duplicate audit_id 'a1'"):
        read_audit(path)
    with pytest.raises(InputError, match="unsupported audit file type"):
        write_audit(tmp_path / "a.xlsx", [])


def test_leakage_check(calm_table):
    population = l2mo_population(calm_table, ("m1", "m4"))
    anchors = anchors_for_population(population, min_models=1, top_k=50)
    models = {r.response_id: r.model for r in calm_table.responses}
    assert all(leakage_violations(a, models) == [] for a in anchors)
    # the same clusters judged as if m2 were a candidate: its responses are in provenance
    leaked = [a for a in anchors if "m2" in a.cluster_models]
    assert leaked
    relabelled = type(leaked[0])(**{**leaked[0].__dict__, "comparison_key": "m2||m9"})
    problems = leakage_violations(relabelled, models)
    assert any("candidate model(s) ['m2'] in the reference models" in p for p in problems)
    assert any("of candidate 'm2' in provenance" in p for p in problems)


def test_anchor_wording_follows_the_task_kind():
    from creagraph.tig.brief import brief_concept, task_kind

    brief = "What is a surprising use for a BRICK?"
    assert task_kind(brief) == "use" and brief_concept(brief) == "a brick"
    assert brief_concept("What is a surprising use for PANTS?") == "pants"
    text = anchor_text("carrier", ["doorstop", "paperweight"], concept="a brick", kind="use")
    assert "use for a brick" in text and "carrier" not in text
    visual = anchor_text("carrier", ["plants"], concept="calm")
    assert "carrier of calm" in visual
    with pytest.raises(ValueError, match="task kind"):
        anchor_text("carrier", ["x"], kind="poem")


def test_plants_and_leaves_form_one_cluster_with_coherence(embedder, offline_extractor):
    """SPEC §4.7's example: the calm population's plants/leaves (5 of 6 models) are its top
    cliché, with its coherence in the output. Since the offline extractor keeps content
    phrases only ("potted fern", not "potted fern unfurling"; issue 27), Leiden puts the
    leaves and the potted plants in two neighbouring clusters: the two top carriers."""
    from creagraph.tig.population import build_atom_tables, build_population

    tables = build_atom_tables(calm_population(), offline_extractor, embedder,
                               show_progress=False)
    population = build_population(tables["calm"])
    top = max(population.clusters, key=lambda c: c.cliche_score)
    assert top.type == "carrier" and len(top.models) >= 5
    assert any("leaves" in label for label in top.labels)
    plant_clusters = {population.node_cluster[i] for i, c in enumerate(population.canonical)
                      if c.label in ("potted plant", "leaves", "soft green leaves")}
    assert len(plant_clusters) <= 2
    carriers = sorted((k for k, c in enumerate(population.clusters) if c.type == "carrier"),
                      key=lambda k: -population.clusters[k].cliche_score)
    assert set(carriers[: len(plant_clusters)]) == plant_clusters
    assert len({m for k in plant_clusters for m in population.clusters[k].models}) >= 5
    assert top.to_dict()["coherence"] == top.convergence > 0.5
    anchors = anchors_for_population(population, top_k=5, concept="calm")
    assert anchors[0].cluster_id == top.id and anchors[0].to_dict()["coherence"] > 0.5


def _restates(anchor, brief):
    from creagraph.tig.atoms import modifies_a_brief_term
    from creagraph.tig.brief import brief_terms, is_from_brief

    terms = brief_terms(brief, instructions=True)
    return any(is_from_brief(label, terms) or modifies_a_brief_term(label, terms)
               for label in anchor.labels[:3])


def test_no_top_anchor_restates_the_brief_spec_examples(embedder, offline_extractor):
    from creagraph.tig.l2mo import l2mo_results
    from creagraph.tig.population import build_atom_tables

    ideas = {
        f"m{i}": [
            "A clock whose numbers grow like leaves on a tree trunk.",
            "A tree with clock faces hanging from its branches like fruit.",
            f"A clock tree shedding its {kind} in autumn wind.",
        ]
        for i, kind in enumerate(["hands", "gears", "numbers", "springs", "bells"])
    }
    fuse = "Create a visual concept that fuses a clock and a tree."
    responses = [r.__class__(**{**r.to_dict(), "task_id": "fuse", "brief": fuse,
                                "response_id": ""})
                 for r in calm_population(ideas, task_id="fuse")]
    tables = build_atom_tables(calm_population() + responses, offline_extractor, embedder,
                               show_progress=False)
    results = list(l2mo_results(tables, top_k=5, show_progress=False))
    assert {r.task_id for r in results} == {"calm", "fuse"}
    briefs = {"calm": calm_population()[0].brief, "fuse": fuse}
    for result in results:
        assert result.anchors
        for anchor in result.anchors[:5]:
            assert not _restates(anchor, briefs[result.task_id]), anchor.text
            assert "calm or" not in anchor.text and "relying on calm" not in anchor.text


def test_no_top_anchor_restates_noveltybench_briefs(embedder, offline_extractor):
    """NoveltyBench curated prompts (real generations; 8 models keep it quick): no top-5
    anchor of any comparison restates the prompt (e.g. "Alice, Bob or Mallory")."""
    from creagraph.tig.adapters import load_noveltybench_curated
    from creagraph.tig.l2mo import l2mo_results
    from creagraph.tig.population import build_atom_tables

    responses = load_noveltybench_curated(task_ids=["curated-10", "curated-1", "curated-22"])
    models = sorted({r.model for r in responses})[:8]
    responses = [r for r in responses if r.model in models]
    briefs = {r.task_id: r.brief for r in responses}
    tables = build_atom_tables(responses, offline_extractor, embedder, show_progress=False)
    count = 0
    for result in l2mo_results(tables, top_k=5, show_progress=False):
        for anchor in result.anchors[:5]:
            count += 1
            assert not _restates(anchor, briefs[result.task_id]), anchor.text
            for name in ("alice", "bob", "mallory"):
                if result.task_id == "curated-10":
                    assert name not in [label.casefold() for label in anchor.labels[:3]]
    assert count > 0


def test_task_kinds_read_from_the_brief_family_or_an_explicit_kind():
    from creagraph.tig.brief import brief_concept, task_kind

    assert task_kind("What is a surprising use for a ROPE?") == "use"
    assert task_kind("What is a surprising thing that makes a NOISE?") == "instance"
    assert task_kind("Name things that are round.") == "instance"
    assert task_kind("What would happen if people no longer needed sleep?") == "consequence"
    assert task_kind("Create a visual concept that makes calm visible.") == "visual"
    assert task_kind("Merge a violin and a river.", family="Combination") == "visual"
    assert task_kind("What would you invent to make commuting fun?") == "open"
    assert task_kind("What would you invent?", kind="use") == "use"
    with pytest.raises(ValueError, match="task kind"):
        task_kind("x", kind="poem")
    assert brief_concept("What would happen if people no longer needed sleep?") == \
        "people no longer needed sleep"
    assert brief_concept("What is a surprising thing that makes a NOISE?") == \
        "a thing that makes a noise"
    # a multi-word visual brief has a concept phrase, never "the brief's concept"
    assert brief_concept("Create a visual concept that fuses a clock and a tree.") == \
        "a clock and a tree"
    assert brief_concept("What would you invent to make commuting fun?") is None


def test_anchor_wording_for_consequence_instance_and_open_kinds():
    text = anchor_text("carrier", ["more free time", "longer work days"],
                       concept="people no longer needed sleep", kind="consequence")
    assert "consequence of people no longer needed sleep" in text and "carrier" not in text
    text = anchor_text("carrier", ["alarm clock", "dog"], concept="a thing that makes a noise",
                       kind="instance")
    assert text.startswith("Does the answer name a thing that makes a noise other than")
    text = anchor_text("motif", ["robot", "time machine"], kind="open")
    assert "robot or time machine" in text and "brief's concept" not in text


def test_the_briefs_instruction_words_never_become_anchors(embedder, offline_extractor):
    """An atom made only of the brief's own words — instruction words such as "invent" and
    "interesting" included — restates the brief: flagged, kept out of clusters."""
    from creagraph.tig.population import build_atom_tables, build_population
    from creagraph.tig.schema import Response

    brief = "What would you invent to make an interesting place?"
    ideas = ["An interesting place.", "An interesting place with a floating garden.",
             "An interesting place under the sea.", "A library inside a whale.",
             "An interesting place made of glass bridges."]
    responses = [Response("invent", brief, f"m{i}", 0, text) for i, text in enumerate(ideas)]
    table = build_atom_tables(responses, offline_extractor, embedder,
                              show_progress=False)["invent"]
    flagged = {table.atom_text[a] for a in range(table.n_atoms) if table.atom_from_brief[a]}
    assert any("interesting place" in t.casefold() for t in flagged)
    population = build_population(table)
    labels = [label.casefold() for c in population.clusters for label in c.labels]
    assert not any(label in ("interesting place", "an interesting place") for label in labels)


def test_anchor_labels_name_only_the_clusters_core(calm_table):
    """Issue 27 (mixed clusters): an anchor names the cluster's most frequent label and the
    labels near it; the cluster's provenance stays whole."""
    import numpy as np

    from creagraph.tig.anchors import DEFAULT_LABEL_SIMILARITY, anchor_labels

    population = build_population(calm_table)
    assert population.node_vectors is not None
    checked = 0
    for k, cluster in enumerate(population.clusters):
        labels = anchor_labels(population, k)
        assert labels[0] == cluster.labels[0] and set(labels) <= set(cluster.labels)
        assert anchor_labels(population, k, label_similarity=-1.0) == cluster.labels
        assert anchor_labels(population, k, label_similarity=1.01) == cluster.labels[:1]
        node_of = {population.canonical[n].label: n
                   for n in np.flatnonzero(population.node_cluster == k).tolist()}
        top = population.node_vectors[node_of[cluster.labels[0]]]
        for label in cluster.labels:
            near = float(population.node_vectors[node_of[label]] @ top)
            assert (label in labels) == (near >= DEFAULT_LABEL_SIMILARITY - 1e-9)
        checked += len(cluster.labels) > 1
    assert checked > 0
    for anchor in anchors_for_population(population, top_k=5):
        k = next(i for i, c in enumerate(population.clusters) if c.id == anchor.cluster_id)
        assert anchor.labels == anchor_labels(population, k)
        assert anchor.cluster_summary == population.clusters[k].summary
        assert anchor.model_share == population.clusters[k].model_share
        assert anchor.response_share == population.clusters[k].response_share


def test_modified_brief_terms_never_become_anchors(embedder, offline_extractor):
    """"young girl" for "a story about a girl and her dog" restates the brief (real
    NoveltyBench generations): flagged, so no anchor names it."""
    from creagraph.tig.adapters import load_noveltybench_curated

    responses = load_noveltybench_curated(task_ids=["curated-0"])
    table = build_atom_tables(responses, offline_extractor, embedder,
                              show_progress=False)["curated-0"]
    flagged = {table.atom_text[a].casefold() for a in range(table.n_atoms)
               if table.atom_from_brief[a]}
    assert "young girl" in flagged
    anchors = anchors_for_population(build_population(table), top_k=5, kind="open")
    assert anchors and not any(_restates(a, responses[0].brief) for a in anchors)


def test_anchor_file_without_the_share_fields_still_reads(calm_table, tmp_path):
    """Anchors written before the model and response shares existed read with 0 shares."""
    anchors = anchors_for_population(build_population(calm_table), top_k=1)
    record = anchors[0].to_dict()
    del record["model_share"], record["response_share"]
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (old,) = read_anchors(path)
    assert old.model_share == old.response_share == 0.0 and old.text == anchors[0].text


def test_no_anchor_names_a_brief_word_whole_population(embedder, offline_extractor):
    """A whale-and-walnut-tree haiku (real NoveltyBench generations): the population's
    top clusters are the whale's own actions ("vast whale glides"); no anchor names a
    label holding a brief word, the next clusters take their ranks."""
    from creagraph.tig.adapters import load_noveltybench_curated
    from creagraph.tig.brief import brief_terms, word_stem

    responses = load_noveltybench_curated(task_ids=["curated-3"])
    table = build_atom_tables(responses, offline_extractor, embedder,
                              show_progress=False)["curated-3"]
    population = build_population(table)
    terms = brief_terms(responses[0].brief, instructions=True)
    plain = anchors_for_population(population, top_k=5, kind="open")
    kept = anchors_for_population(population, top_k=5, kind="open", brief_terms=terms)
    assert any(word_stem(w) in terms for a in plain for x in a.labels for w in x.split())
    assert len(kept) == 5 and [a.rank for a in kept] == [1, 2, 3, 4, 5]
    for anchor in kept:
        assert anchor.labels and not any(word_stem(w.removesuffix("'s")) in terms
                                         for x in anchor.labels for w in x.split())
        assert anchor.text.count("(") == 1
    scores = [a.cliche_score for a in kept]
    assert scores == sorted(scores, reverse=True)
