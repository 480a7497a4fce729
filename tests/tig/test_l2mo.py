import numpy as np
import pytest

from creagraph.tig.adapters import load_noveltybench_curated
from creagraph.tig.anchors import anchors_for_population
from creagraph.tig.l2mo import (
    l2mo_population,
    l2mo_population_from_scratch,
    l2mo_results,
    model_pairs,
    reference_models,
)
from creagraph.tig.population import TigConfig, build_atom_tables

from .conftest import CALM_IDEAS, calm_population

WORDS = ["glass", "whale", "moon", "ladder", "ocean", "fern", "cat", "lake", "dawn", "honey",
         "clock", "storm", "lantern", "spiral", "paper", "mountain", "ribbon", "smoke",
         "mirror", "seed", "thread", "bridge", "window", "silence"]


def assert_same_population(a, b):
    assert a.task_id == b.task_id and a.comparison_key == b.comparison_key
    assert a.models == b.models and a.response_ids == b.response_ids
    assert a.canonical == b.canonical
    assert a.clusters == b.clusters
    for name in ("kind", "source", "target", "relation", "weight"):
        assert np.array_equal(getattr(a.edges, name), getattr(b.edges, name)), name
    assert np.array_equal(a.node_cluster, b.node_cluster)


def _anchor_view(population):
    return [a.to_dict() for a in anchors_for_population(population, top_k=50, min_models=1)]


def _arbitrary_ideas(rng, n):
    ideas = []
    for _ in range(n):
        words = rng.choice(WORDS, size=rng.integers(1, 12))
        ideas.append(" ".join(words).capitalize() + rng.choice([".", "!", "", ", in a jar."]))
    return ideas


def test_pairs_and_reference_models():
    assert model_pairs(["b", "a", "c", "a"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert reference_models(["a", "b", "c"], ("c", "a")) == ["b"]
    with pytest.raises(ValueError, match="two different models"):
        reference_models(["a", "b"], ("a", "a"))
    with pytest.raises(ValueError, match="without responses"):
        reference_models(["a", "b"], ("a", "z"))


def test_anchors_invariant_to_the_candidates_responses(offline_extractor):
    """For every pair, rewriting both candidates' responses arbitrarily (other texts, other
    numbers of samples, copies of the population's clichés) leaves the reference population
    and its anchors unchanged."""
    rng = np.random.default_rng(11)
    config = TigConfig()
    table = build_atom_tables(calm_population(), offline_extractor,
                              show_progress=False)["calm"]
    for pair in model_pairs(CALM_IDEAS):
        reference = l2mo_population(table, pair, config)
        assert reference.models == tuple(m for m in sorted(CALM_IDEAS) if m not in pair)
        expected = _anchor_view(reference)
        assert expected, "the reference population must yield anchors"
        cliches = [t for m in CALM_IDEAS if m not in pair for t in CALM_IDEAS[m]]
        variants = [
            {pair[0]: _arbitrary_ideas(rng, 5), pair[1]: _arbitrary_ideas(rng, 1)},
            {pair[0]: cliches[:4] * 2, pair[1]: [cliches[0]] * 7},
        ]
        for replacement in variants:
            changed = {**CALM_IDEAS, **replacement}
            changed_table = build_atom_tables(calm_population(changed), offline_extractor,
                                              show_progress=False)["calm"]
            assert changed_table.form_text != table.form_text  # the table did change
            again = l2mo_population(changed_table, pair, config)
            assert_same_population(again, reference)
            assert _anchor_view(again) == expected


def test_anchors_do_change_when_a_reference_model_changes(offline_extractor):
    """The invariant above is not vacuous: rewriting a model that is *not* a candidate
    changes the reference population and its anchors."""
    pair = ("m1", "m2")
    table = build_atom_tables(calm_population(), offline_extractor, show_progress=False)["calm"]
    before = _anchor_view(l2mo_population(table, pair))
    changed = {**CALM_IDEAS, "m3": ["A still lake at dawn reflecting a heron, seen from above."
                                    ] * 3}
    changed_table = build_atom_tables(calm_population(changed), offline_extractor,
                                      show_progress=False)["calm"]
    assert _anchor_view(l2mo_population(changed_table, pair)) != before


def test_incremental_equals_from_scratch_on_every_pair(offline_extractor, embedder):
    responses = calm_population()
    config = TigConfig(cluster_method="leidenalg")
    table = build_atom_tables(responses, offline_extractor, show_progress=False)["calm"]
    for pair in model_pairs(CALM_IDEAS):
        incremental = l2mo_population(table, pair, config)
        scratch = l2mo_population_from_scratch(responses, pair, offline_extractor, embedder,
                                               config)
        assert_same_population(incremental, scratch)
        assert _anchor_view(incremental) == _anchor_view(scratch)


@pytest.mark.parametrize("method", ["leidenalg", "igraph", "components"])
def test_incremental_equals_from_scratch_on_noveltybench(offline_extractor, embedder, method):
    responses = load_noveltybench_curated(task_ids=["curated-7"])
    config = TigConfig(cluster_method=method, hierarchical=method != "components",
                       min_split_size=6)
    table = build_atom_tables(responses, offline_extractor, show_progress=False)["curated-7"]
    pairs = model_pairs(table.models)
    for pair in (pairs[0], pairs[len(pairs) // 2]):
        incremental = l2mo_population(table, pair, config)
        assert incremental.n_responses == 220 and len(incremental.models) == 22
        scratch = l2mo_population_from_scratch(responses, pair, offline_extractor, embedder,
                                               config)
        assert_same_population(incremental, scratch)


def test_l2mo_results_sizes_and_parallel_equivalence(offline_extractor):
    responses = calm_population() + calm_population(
        {m: ideas[:2] for m, ideas in CALM_IDEAS.items() if m != "m6"}, task_id="calm-2")
    tables = build_atom_tables(responses, offline_extractor, show_progress=False)
    serial = list(l2mo_results(tables, show_progress=False))
    assert [(r.task_id, r.comparison_key) for r in serial] == (
        [("calm", f"{a}||{b}") for a, b in model_pairs(CALM_IDEAS)]
        + [("calm-2", f"{a}||{b}") for a, b in model_pairs(["m1", "m2", "m3", "m4", "m5"])])
    for result in serial:
        per_model = 3 if result.task_id == "calm" else 2
        n_models = 6 if result.task_id == "calm" else 5
        assert len(result.reference_models) == n_models - 2
        assert result.n_reference_responses == (n_models - 2) * per_model
        candidates = set(result.comparison_key.split("||"))
        for anchor in result.anchors:
            assert not candidates & set(anchor.reference_models)
            assert not candidates & set(anchor.cluster_models)
            assert not any(rid.split("|")[1] in candidates for rid in anchor.response_ids)
    parallel = list(l2mo_results(tables, n_jobs=2, show_progress=False))
    assert parallel == serial
    only = list(l2mo_results(tables, pairs=[("m6", "m1")], show_progress=False))
    assert [(r.task_id, r.comparison_key) for r in only] == [("calm", "m1||m6")]
    with pytest.raises(ValueError, match="no models left"):
        two = build_atom_tables(calm_population({"a": ["A fern."], "b": ["A cat."]}),
                                offline_extractor, show_progress=False)
        l2mo_population(two["calm"], ("a", "b"))
