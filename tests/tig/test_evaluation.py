import itertools

import numpy as np
import pytest

from creagraph.tig.evaluation import adjusted_rand_index, response_labels
from creagraph.tig.population import build_atom_tables, build_population

from .conftest import calm_population


def _ari_by_pair_counting(a, b):
    pairs = list(itertools.combinations(range(len(a)), 2))
    same_a = np.array([a[i] == a[j] for i, j in pairs])
    same_b = np.array([b[i] == b[j] for i, j in pairs])
    index = float(np.sum(same_a & same_b))
    expected = same_a.sum() * same_b.sum() / len(pairs)
    maximum = (same_a.sum() + same_b.sum()) / 2
    return (index - expected) / (maximum - expected)


def test_known_values():
    # the example of scikit-learn's documentation and Hubert & Arabie's definition
    assert adjusted_rand_index([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]) == pytest.approx(
        0.24242424, abs=1e-8)
    assert adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0
    assert adjusted_rand_index([0, 0, 1, 2], [0, 0, 1, 1]) == pytest.approx(0.5714285714)
    assert adjusted_rand_index(["a", "a", "b"], [-1, -1, -2]) == 1.0  # any hashable labels
    assert adjusted_rand_index([0, 0, 0, 0], [0, 1, 2, 3]) == 0.0
    assert adjusted_rand_index([1], [2]) == 1.0
    with pytest.raises(ValueError):
        adjusted_rand_index([0, 1], [0])


def test_matches_pair_counting_on_random_labelings():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(3, 25))
        a = rng.integers(0, 4, n).tolist()
        b = rng.integers(0, 5, n).tolist()
        reference = _ari_by_pair_counting(a, b)
        if np.isfinite(reference):
            assert adjusted_rand_index(a, b) == pytest.approx(reference)


def test_response_labels(offline_extractor):
    table = build_atom_tables(calm_population(), offline_extractor,
                              show_progress=False)["calm"]
    population = build_population(table)
    primary = response_labels(table, population)
    signature = response_labels(table, population, mode="signature")
    assert set(primary) == {r.response_id for r in table.responses} == set(signature)
    cluster_ids = {c.id for c in population.clusters}
    for response_id, label in primary.items():
        assert len(label) == 1 and label[0] in cluster_ids
        assert set(label) <= set(signature[response_id])
    # two identical ideas get the same label
    twins = [r.response_id for r in table.responses
             if r.core_idea.startswith("A sleeping cat curled")]
    assert len(twins) == 3 and len({primary[t] for t in twins}) == 1
    with pytest.raises(ValueError):
        response_labels(table, population, mode="other")  # type: ignore[arg-type]
