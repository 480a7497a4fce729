import json

import numpy as np
import pytest

from creagraph.tig.atoms import PreExtractedAtoms
from creagraph.tig.graph import (
    EDGE_KINDS,
    RELATION_NAMES,
    graph_to_json,
    to_igraph,
    write_graph_json,
    write_graphml,
)
from creagraph.tig.population import TigConfig, build_atom_tables, build_population
from creagraph.tig.schema import ATOM_TYPES, Response

from .conftest import atoms_by_text

IDEAS = {
    ("A", 0): ("A potted plant on a windowsill to evoke calm.",
               [("carrier", "potted plant"), ("setting", "windowsill"), ("purpose", "calm")]),
    ("A", 1): ("Potted plants in a quiet room to evoke calm.",
               [("carrier", "Potted plants"), ("setting", "quiet room"), ("purpose", "calm")]),
    ("A", 2): ("A houseplant in an empty bedroom.",
               [("carrier", "houseplant"), ("setting", "empty bedroom")]),
    ("B", 0): ("A still lake at dawn, seen from above, to evoke calm.",
               [("carrier", "still lake"), ("setting", "dawn"),
                ("perspective", "seen from above"), ("purpose", "calm")]),
    ("C", 0): ("A potted plant melting into mist by a still lake.",
               [("carrier", "potted plant"), ("mechanism", "melting into mist"),
                ("setting", "still lake")]),
}


@pytest.fixture(scope="module")
def small(embedder):
    responses = [Response("calm", "Make calm visible.", m, s, text)
                 for (m, s), (text, _) in IDEAS.items()]
    spec = {text: atoms for text, atoms in IDEAS.values()}
    tables = build_atom_tables(responses, PreExtractedAtoms(atoms_by_text(responses, spec)),
                               embedder, show_progress=False)
    table = tables["calm"]
    return table, build_population(table, config=TigConfig(keep_embeddings=True))


def _node(population, kind, label):
    (index,) = [i for i, c in enumerate(population.canonical)
                if c.type == kind and c.label == label]
    return index


def test_table(small):
    table, _ = small
    assert table.models == ["A", "B", "C"] and table.n_atoms == 15
    assert [r.response_id for r in table.responses] == sorted(r.response_id
                                                               for r in table.responses)
    assert table.model_responses() == {"A": 3, "B": 1, "C": 1}
    start, end = table.type_slices["carrier"]
    assert table.form_text[start:end] == ["houseplant", "potted plant", "potted plants",
                                          "still lake"]
    block = table.similarity("carrier")
    assert block.shape == (4, 4) and np.allclose(np.diag(block), 1.0, atol=1e-5)


def test_canonical_atoms_partition_the_atoms(small):
    table, population = small
    assert population.models == ("A", "B", "C") and population.n_responses == 5
    provenance = [p for c in population.canonical for p in c.provenance]
    # every atom but those restating the brief ("calm", SPEC §4.9) is in one group
    assert table.atom_from_brief.sum() == 3
    assert {table.atom_text[a] for a in range(table.n_atoms) if table.atom_from_brief[a]} == {
        "calm"}
    assert sorted(p[0] for p in provenance) == sorted(
        table.atom_id(a) for a in range(table.n_atoms) if not table.atom_from_brief[a])
    assert "calm" not in {c.label for c in population.canonical}
    plant = population.canonical[_node(population, "carrier", "potted plant")]
    assert plant.aliases == ("potted plants",) and plant.count == 3
    assert {p[2] for p in plant.provenance} == {"A", "C"}
    assert all(p[3] == "calm" for p in plant.provenance)
    assert plant.embedding is not None and len(plant.embedding) == 384
    # one type per form: "still lake" is a carrier once and a setting once → carrier
    # (the earlier type on a tie), one canonical atom holding both occurrences
    (lake,) = [c for c in population.canonical if c.label == "still lake"]
    assert lake.type == "carrier" and lake.count == 2
    types = [ATOM_TYPES.index(c.type) for c in population.canonical]
    assert types == sorted(types)


def test_edges(small):
    _, population = small
    edges = population.edges
    plant = _node(population, "carrier", "potted plant")
    sill = _node(population, "setting", "windowsill")

    def find(kind, source, target, relation=""):
        mask = ((edges.kind == EDGE_KINDS.index(kind)) & (edges.source == source)
                & (edges.target == target)
                & (edges.relation == RELATION_NAMES.index(relation)))
        return edges.weight[mask].tolist()

    assert find("cooccurrence", min(plant, sill), max(plant, sill)) == [1.0]
    # typed relations only where an extractor gave one (none here): never a copy of the
    # co-occurrence edges, which would count each pair twice in PageRank
    assert not (edges.kind == EDGE_KINDS.index("relation")).any()
    sim = edges.of_kind("similarity")
    room, bedroom = _node(population, "setting", "quiet room"), _node(population, "setting",
                                                                       "empty bedroom")
    assert find("similarity", min(room, bedroom), max(room, bedroom)) == [
        pytest.approx(0.59, abs=0.02)]
    types = population.node_type
    assert np.all(types[sim.source] == types[sim.target])
    assert np.all(sim.weight >= 0.5) and np.all(sim.source < sim.target)
    order = np.lexsort((edges.relation, edges.target, edges.source, edges.kind))
    assert np.array_equal(order, np.arange(len(edges)))


def test_clusters_and_scores(small):
    _, population = small
    assert (population.node_cluster >= 0).all()
    members = [cid for c in population.clusters for cid in c.canonical_ids]
    assert sorted(members) == sorted(c.id for c in population.canonical)
    for k, cluster in enumerate(population.clusters):
        nodes = np.flatnonzero(population.node_cluster == k)
        assert {population.canonical[n].type for n in nodes} == {cluster.type}
        assert 0 <= cluster.cliche_score <= 1
        assert cluster.model_share == pytest.approx(len(cluster.models) / 3)
        # coverage combines the shares of models and of responses (issue 27)
        responses = {p[1] for n in nodes for p in population.canonical[n].provenance}
        assert cluster.response_share == pytest.approx(
            len(responses) / population.n_responses, abs=1e-6)
        assert cluster.coverage == pytest.approx(
            (cluster.model_share * cluster.response_share) ** 0.5, abs=1e-5)
    plant_cluster = population.clusters[
        population.node_cluster[_node(population, "carrier", "potted plant")]]
    # model A hits the plants with three samples: coverage counts models, not samples
    assert "A" in plant_cluster.models and "C" in plant_cluster.models
    assert plant_cluster.model_share == pytest.approx(len(plant_cluster.models) / 3)
    assert max(c.centrality for c in population.clusters) == pytest.approx(1.0)


def test_model_subset_and_validation(small):
    table, _ = small
    only_a = build_population(table, ["A"])
    assert only_a.models == ("A",) and only_a.n_responses == 3
    assert all(p[2] == "A" for c in only_a.canonical for p in c.provenance)
    with pytest.raises(ValueError, match="no responses from"):
        build_population(table, ["Z"])
    with pytest.raises(ValueError, match="at least one model"):
        build_population(table, [])
    with pytest.raises(ValueError, match="similarity_threshold"):
        TigConfig(similarity_threshold=0.9, canonical_threshold=0.8)


def test_exports(small, tmp_path):
    import igraph

    _, population = small
    graph = to_igraph(population)
    assert graph.vcount() == len(population.canonical) and graph.ecount() == len(
        population.edges)
    write_graphml(population, tmp_path / "g.graphml")
    again = igraph.Graph.Read_GraphML(str(tmp_path / "g.graphml"))
    assert again.vcount() == graph.vcount() and again.ecount() == graph.ecount()
    assert sorted(again.vs["label"]) == sorted(c.label for c in population.canonical)
    assert set(again.es["kind"]) == {"cooccurrence", "similarity"}
    write_graph_json(population, tmp_path / "g.json")
    document = json.loads((tmp_path / "g.json").read_text())
    assert document == json.loads(json.dumps(graph_to_json(population)))
    assert len(document["nodes"]) == graph.vcount() and len(document["links"]) == graph.ecount()
    assert {n["cluster"] for n in document["nodes"]} == {c["id"] for c in document["clusters"]}


def test_networkx_export_holds_the_graph(small):
    import networkx

    _, population = small
    graph = population.to_networkx()
    assert isinstance(graph, networkx.MultiGraph) and not graph.is_directed()
    document = graph_to_json(population)
    assert graph.graph == {"task_id": "calm", "comparison_key": "",
                           "models": tuple(population.models)}
    assert dict(graph.nodes(data="label")) == {n["id"]: n["label"] for n in document["nodes"]}
    assert dict(graph.nodes(data="cluster")) == {n["id"]: n["cluster"]
                                                 for n in document["nodes"]}
    potted = population.canonical[_node(population, "carrier", "potted plant")]
    assert graph.nodes[potted.id]["count"] == potted.count == 3
    assert graph.nodes[potted.id]["n_models"] == 2
    assert graph.nodes[potted.id]["aliases"] == potted.aliases
    links = sorted((*sorted((link["source"], link["target"])), link["kind"], link["weight"])
                   for link in document["links"])
    assert sorted((*sorted((u, v)), key, d["weight"])
                  for u, v, key, d in graph.edges(keys=True, data=True)) == links
    assert all(key == d["kind"] for *_, key, d in graph.edges(keys=True, data=True))
    # parallel edges of different kinds (co-occurring similar ideas) stay apart by key
    assert graph.number_of_edges() == len(population.edges)


def test_coverage_separates_clusters_every_model_hits(embedder):
    """Issue 27: an idea in every answer and one in a single answer per model both have a
    model share of 1; the coverage (with the response share) separates them, and the
    ClichéScore ranks the idea of every answer first."""
    from creagraph.tig.anchors import select_cliche_clusters

    ideas = {}
    for model in ("X", "Y", "Z"):
        for sample in range(4):
            atoms = [("carrier", "doorstop")]
            text = f"{model} {sample}: a doorstop"
            if sample == 0:
                atoms.append(("carrier", "pizza oven"))
                text += " and a pizza oven"
            ideas[(model, sample)] = (text, atoms)
    responses = [Response("brick", "Uses for a brick.", m, s, text)
                 for (m, s), (text, _) in ideas.items()]
    spec = {text: atoms for text, atoms in ideas.values()}
    tables = build_atom_tables(responses, PreExtractedAtoms(atoms_by_text(responses, spec)),
                               embedder, show_progress=False)
    population = build_population(tables["brick"])
    by_label = {c.labels[0]: c for c in population.clusters}
    door, book = by_label["doorstop"], by_label["pizza oven"]
    assert door.model_share == book.model_share == 1.0
    assert door.response_share == 1.0 and book.response_share == pytest.approx(0.25)
    assert door.coverage == pytest.approx(1.0) and book.coverage == pytest.approx(0.5)
    assert door.cliche_score > book.cliche_score
    top = select_cliche_clusters(population, top_k=1)
    assert population.clusters[top[0]].labels[0] == "doorstop"
