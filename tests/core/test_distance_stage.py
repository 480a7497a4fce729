"""The lean distance stage: blockwise greedy order and mean distances in O(n·d) memory,
equal to the full-matrix functions (issue 12 item 8, issue 19 item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from creagraph.core.metrics import (
    distance_matrix,
    greedy_order,
    greedy_order_from_vectors,
    mean_pairwise_distance,
    pairwise_distance_means,
    path_set_distances,
    set_utilities,
    utilities_from_order,
    utility_curve,
)


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _cases():
    rng = np.random.default_rng(7)
    d = 24
    random = _unit(rng.standard_normal((300, d)))
    centres = rng.standard_normal((6, d))
    clustered = _unit(centres[rng.integers(0, 6, 300)] + 0.3 * rng.standard_normal((300, d)))
    duplicates = np.repeat(clustered[:40], 5, axis=0)  # exact ties in distance
    near = _unit(np.ones((120, d)) + 1e-3 * rng.standard_normal((120, d)))  # all close
    for name, v in [("random", random), ("clustered", clustered), ("duplicates", duplicates),
                    ("near", near)]:
        for qname, q in [("ints", rng.integers(0, 6, len(v)).astype(float)),
                         ("equal", np.full(len(v), 3.0)),
                         ("real", rng.uniform(0, 5, len(v)))]:
            yield f"{name}-{qname}", q, v


@pytest.mark.parametrize(("name", "quality", "vectors"), list(_cases()))
@pytest.mark.parametrize("mode", ["paper", "published"])
def test_set_utilities_is_the_matrix_utility(name, quality, vectors, mode):
    """The one utility path (scoring and the oracle ceiling, issue 30): bit for bit the
    matrix formula for a set in one block (as the oracle's ≤ 256 paths are), to rounding
    blockwise; an empty set scores the mode's empty-set utility."""
    gammas = (0.0, 0.7, 0.9, 1.0)
    expected = utility_curve(quality, distance_matrix(vectors, mode), gammas, mode)
    got, stats = set_utilities(quality, vectors, gammas, mode)
    assert got == expected
    assert stats == path_set_distances(quality, vectors, mode)
    blockwise, _ = set_utilities(quality, vectors, gammas, mode, block_elements=len(quality))
    assert np.allclose(blockwise, expected, rtol=0, atol=1e-9)
    empty, _ = set_utilities([], np.zeros((0, vectors.shape[1])), gammas, mode)
    assert empty == [1.0 if mode == "published" else 0.0] * len(gammas)


@pytest.mark.parametrize(("name", "quality", "vectors"), list(_cases()))
@pytest.mark.parametrize("mode", ["paper", "published"])
def test_blockwise_equals_the_full_matrix(name, quality, vectors, mode):
    d = distance_matrix(vectors, mode)
    raw = distance_matrix(vectors, mode, transformed=False)
    order, mins = greedy_order(quality, d)
    for batch in (1, 3, 32):
        got_order, got_mins = greedy_order_from_vectors(quality, vectors, mode, batch_rows=batch)
        assert got_order == order
        assert np.allclose(got_mins, mins, rtol=0, atol=1e-12)
    gammas = (0.0, 0.5, 0.7, 0.9, 1.0)
    expected = utility_curve(quality, d, gammas, mode)
    for block in (len(quality) ** 2, 7 * len(quality), 1):  # one block, several, one row each
        stats = path_set_distances(quality, vectors, mode, block_elements=block)
        assert stats.order == order
        got = utilities_from_order(quality, stats.order, stats.min_distances, gammas, mode)
        assert np.allclose(got, expected, rtol=0, atol=1e-9)
        assert abs(stats.mean_distance - mean_pairwise_distance(d)) < 1e-9
        assert abs(stats.mean_raw_distance - mean_pairwise_distance(raw)) < 1e-9
        md, mr = pairwise_distance_means(vectors, mode, block_elements=block)
        assert (md, mr) == (stats.mean_distance, stats.mean_raw_distance) or block == len(
            quality
        ) ** 2


def test_real_embeddings_of_the_published_answers(sample_paths_vectors):
    quality, vectors = sample_paths_vectors
    d = distance_matrix(vectors)
    order, mins = greedy_order(quality, d)
    stats = path_set_distances(quality, vectors, block_elements=5 * len(quality))
    assert stats.order == order
    assert np.allclose(stats.min_distances, mins, rtol=0, atol=1e-9)
    assert abs(stats.mean_distance - mean_pairwise_distance(d)) < 1e-9


@pytest.fixture(scope="module")
def sample_paths_vectors(shared_dir):
    """Kept-path strings of the published sample answers, embedded with MiniLM."""
    from creagraph.core.embeddings import default_embedder
    from creagraph.core.metrics import path_string
    from creagraph.scoring.parse import parse_answer

    samples = shared_dir / "external" / "create-leaderboard" / "sample_outputs"
    strings = []
    for f in sorted(samples.glob("*.jsonl"))[:2]:
        for line in f.read_text().splitlines()[:6]:
            row = json.loads(line)
            for p in parse_answer(row["path_prediction"]).paths:
                if p.triples and all(len(t) == 3 for t in p.triples):
                    strings.append(path_string(p.triples))
    strings = sorted(set(strings))
    assert len(strings) > 100
    vectors = default_embedder().encode(strings)
    quality = np.random.default_rng(1).integers(1, 6, len(strings)).astype(float)
    return quality, vectors


def test_empty_and_single():
    assert path_set_distances([], np.zeros((0, 4))).order == []
    one = path_set_distances([2.0], np.eye(1, 4))
    assert one.order == [0] and one.min_distances == [1.0] and np.isnan(one.mean_distance)
    assert utilities_from_order([], [], [], [0.7], "published") == [1.0]


_RSS_SCRIPT = """
import json, sys, numpy as np
from threadpoolctl import threadpool_limits
from creagraph.scoring.synthetic import peak_rss_mib
n, d, full = int(sys.argv[1]), 384, sys.argv[2] == "full"
rng = np.random.default_rng(0)
v = rng.standard_normal((n, d)).astype(np.float32)
v /= np.linalg.norm(v, axis=1, keepdims=True)
q = rng.integers(1, 6, n).astype(float)
before = peak_rss_mib()
with threadpool_limits(1):
    if full:
        from creagraph.core.metrics import distance_matrix, greedy_order, mean_pairwise_distance
        dm = distance_matrix(v); raw = distance_matrix(v, transformed=False)
        greedy_order(q, dm); mean_pairwise_distance(dm); mean_pairwise_distance(raw)
    else:
        from creagraph.core.metrics import path_set_distances
        path_set_distances(q, v)
print(json.dumps({"before": before, "peak": peak_rss_mib()}))
"""


def _peak_growth(n: int, how: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(n), how], env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(done.stdout)
    return result["peak"] - result["before"]


def test_memory_is_linear_in_the_number_of_paths():
    """4,000 paths of dimension 384: the full matrices would need ~128 MB each (the old
    stage peaked at several of them); the blockwise stage stays within its blocks."""
    growth = _peak_growth(4000, "lean")
    full_matrix_mib = 4000 * 4000 * 8 / 2**20
    assert growth < full_matrix_mib, growth
