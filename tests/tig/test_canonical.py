import numpy as np
import pytest

from creagraph.tig.canonical import (
    canonical_id,
    canonical_leaders,
    canonical_order,
    round_similarity,
    stem_key,
)


def test_stem_key_folds_plurals_possessives_and_punctuation():
    assert stem_key("Plants") == stem_key("plant")
    assert stem_key("butterflies") == stem_key("butterfly")
    assert stem_key("bird's-eye view") == "bird eye view"
    assert stem_key("glass") == "glass"


def test_canonical_order_count_then_text():
    assert canonical_order(["b", "a", "c", "d"], [2, 2, 5, 1]).tolist() == [2, 1, 0, 3]
    with pytest.raises(ValueError):
        canonical_order(["a"], [1, 2])


def test_leaders_join_most_similar_leader_or_stem():
    forms = ["plant", "plants", "green plant", "lamp", "desk lamp", "sea"]
    sims = np.eye(6)
    sims[0, 2] = sims[2, 0] = 0.85
    sims[3, 4] = sims[4, 3] = 0.82
    sims[2, 3] = sims[3, 2] = 0.79  # just below the threshold
    leaders = canonical_leaders(sims, forms, threshold=0.8)
    # "plants" joins "plant" by its stem although its similarity is 0 here
    assert leaders.tolist() == [0, 0, 0, 3, 3, 5]


def test_leader_groups_are_a_partition_and_use_real_embeddings(embedder):
    forms = ["potted plant", "potted plants", "houseplant", "green leaves", "leaves",
             "still lake", "calm lake", "sleeping cat", "cat", "lighthouse"]
    counts = [5, 1, 3, 4, 2, 6, 1, 3, 2, 1]
    order = canonical_order(forms, counts)
    ordered = [forms[i] for i in order]
    vectors = embedder.encode(ordered).astype(np.float64)
    leaders = canonical_leaders(round_similarity(vectors @ vectors.T), ordered, threshold=0.8)
    groups: dict[str, list[str]] = {}
    for form, leader in zip(ordered, leaders.tolist(), strict=True):
        groups.setdefault(ordered[leader], []).append(form)
    assert sorted(f for g in groups.values() for f in g) == sorted(forms)  # exactly once
    assert all(leader in members for leader, members in groups.items())  # label is a member
    assert "potted plants" in groups["potted plant"]
    assert "lighthouse" in groups and groups["lighthouse"] == ["lighthouse"]
    assert not any("lake" in f for f in groups.get("sleeping cat", []))


def test_leaders_reject_bad_shapes():
    with pytest.raises(ValueError, match="2×2"):
        canonical_leaders(np.eye(3), ["a", "b"])


def test_round_similarity_and_ids():
    a = np.array([[0.12345649999, 1.0]])
    assert round_similarity(a).tolist() == [[0.123456, 1.0]]
    assert canonical_id("t", "carrier", "fern") == canonical_id("t", "carrier", "fern")
    assert canonical_id("t", "carrier", "fern") != canonical_id("t", "motif", "fern")
    assert canonical_id("t", "carrier", "fern").startswith("carrier:")
