"""Response novelty against the other models' population (SPEC §4.10)."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from creagraph.tig.population import build_atom_tables
from creagraph.tig.schema import Response
from creagraph.tig.score import (
    ScoreConfig,
    distinct_ideas,
    idea_novelty,
    idea_text,
    knn_distance,
    novelty_value,
    rarity_value,
    score_responses,
    score_tables,
    write_scores,
)
from tests.shareddata import shared_file

from .conftest import CALM_IDEAS, calm_population


def test_novelty_is_monotone_in_distance_and_cliche():
    grid = np.linspace(0.0, 1.0, 21)
    for w in (0.1, 0.5, 1.0):
        for h in grid[:-1]:  # strictly increasing in D while H < 1/w
            values = novelty_value(grid, np.full_like(grid, h), w)
            assert np.all(np.diff(values) >= 0)
            if h < 1 / w:
                assert np.all(np.diff(values) > 0)
        for d in grid[1:]:  # strictly decreasing in H while D > 0
            values = novelty_value(np.full_like(grid, d), grid, w)
            assert np.all(np.diff(values) < 0)
    assert novelty_value(0.0, 0.0) == 0.0 and novelty_value(1.0, 0.0) == 1.0
    assert 0 <= novelty_value(0.7, 0.9, 0.5) <= 1
    with pytest.raises(ValueError):
        ScoreConfig(cliche_weight=1.5)
    with pytest.raises(ValueError):
        ScoreConfig(neighbour_share=0)


def test_knn_distance_matches_brute_force():
    rng = np.random.default_rng(0)
    queries = rng.normal(size=(37, 8))
    reference = rng.normal(size=(53, 8))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    for k in (1, 5, 53, 80):
        distance, nearest = knn_distance(queries, reference, k, block=10)
        sims = queries @ reference.T
        expected = 1 - np.sort(sims, axis=1)[:, ::-1][:, : min(k, 53)].mean(axis=1)
        assert np.allclose(distance, np.clip(expected, 0, 1), atol=1e-5)
        assert np.array_equal(nearest, sims.argmax(axis=1))
    with pytest.raises(ValueError, match="empty"):
        knn_distance(queries, reference[:0], 3)


@pytest.fixture(scope="module")
def calm_run(embedder, offline_extractor):
    return score_responses(calm_population(), offline_extractor, embedder, show_progress=False)


def test_every_response_scored_with_evidence(calm_run, tmp_path):
    run = calm_run
    assert len(run.scores) == sum(len(v) for v in CALM_IDEAS.values())
    assert not run.skipped
    for s in run.scores:
        assert 0 <= s.novelty <= 1 and 0 <= s.cliche <= 1
        assert s.rarity is not None and 0 <= s.rarity <= 1
        assert s.novelty == pytest.approx(idea_novelty(s.rarity, s.distance), abs=2e-6)
        # own model left out: 5 other models × 3 samples
        assert s.n_reference_models == 5 and s.n_reference_responses == 15
        assert s.nearest_response_id.split("|")[1] != s.model
        for atom in s.atoms:
            if not atom["from_brief"]:
                assert atom["nearest"]["similarity"] <= 1.0 + 1e-6
        for cluster in s.clusters_hit:
            assert set(cluster) >= {"cluster_id", "cliche_score", "coherence", "summary"}
    # "calm" restates the brief: marked, never matched to a cluster
    calm_atoms = [a for s in run.scores for a in s.atoms if a["text"] == "calm"]
    assert calm_atoms and all(a["from_brief"] and "nearest" not in a for a in calm_atoms)
    path = tmp_path / "scores.jsonl"
    assert write_scores(path, run.scores) == len(run.scores)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert {"response_id", "novelty", "clusters_hit", "atoms"} <= set(rows[0])


def test_cliche_answers_score_below_singular_ones(calm_run):
    by_id = {s.response_id: s for s in calm_run.scores}
    plant = by_id["calm|m6|2"]  # houseplant with soft green leaves: the population's cliché
    whale = by_id["calm|m6|1"]  # a ribbon of smoke becoming a sleeping whale
    assert plant.novelty < whale.novelty
    assert plant.clusters_hit and plant.cliche > whale.cliche
    # the lake-at-dawn-from-above answers repeat one another across models
    lakes = [by_id[f"calm|{m}|{i}"] for m, i in (("m1", 1), ("m2", 2), ("m4", 0), ("m6", 0))]
    singular = [by_id[r] for r in ("calm|m1|2", "calm|m3|1", "calm|m5|1", "calm|m6|1")]
    assert max(s.novelty for s in lakes) < min(s.novelty for s in singular)


def test_own_model_never_shapes_its_score(embedder, offline_extractor, calm_run):
    changed = {model: list(ideas) for model, ideas in CALM_IDEAS.items()}
    changed["m1"][2] = "A still lake at dawn, seen from above, with a potted plant."
    run = score_responses(calm_population(changed), offline_extractor, embedder,
                          show_progress=False)
    before = {s.response_id: s for s in calm_run.scores}
    after = {s.response_id: s for s in run.scores}
    for rid in ("calm|m1|0", "calm|m1|1"):  # only m1 changed: m1's other scores stay
        assert after[rid].to_dict() == before[rid].to_dict()
    assert after["calm|m2|0"].to_dict() != before["calm|m2|0"].to_dict()


def test_single_model_task_is_skipped_with_reason(embedder, offline_extractor):
    responses = calm_population() + [
        Response("solo", "Make joy visible.", "m1", 0, "A kite made of laughter."),
        Response("solo", "Make joy visible.", "m1", 1, "A dog leaping into a lake."),
    ]
    tables = build_atom_tables(responses, offline_extractor, embedder, show_progress=False)
    run = score_tables(tables, embedder, show_progress=False)
    assert "solo" in run.skipped and "one model" in run.skipped["solo"]
    assert {s.task_id for s in run.scores} == {"calm"}


def test_idea_text_reads_the_idea_in_the_brief():
    r = Response("t", "What is a surprising use for a ROPE?", "m", 0, " a bracelet ")
    assert idea_text(r) == "What is a surprising use for a ROPE? a bracelet"


def _aut_rows(shared_dir: Path, limit_per_prompt: int) -> list[dict[str, str]]:
    path = shared_file(shared_dir, "external", "aut-human", "aut_human_dev.csv")
    rows: dict[str, list[dict[str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            bucket = rows.setdefault(row["prompt"], [])
            if len(bucket) < limit_per_prompt:
                bucket.append(row)
    return [r for bucket in rows.values() for r in bucket]


def test_human_rated_answers_have_atoms_and_novelty_tracks_ratings(embedder,
                                                                     offline_extractor,
                                                                     shared_dir):
    """On real human-rated Alternative Uses answers (dev file): fewer than 2 % of answers
    lack an atom beyond the brief, and novelty agrees with the human ratings (Spearman
    clearly positive on every prompt; the full benchmark is benchmarks/novelty_human.py)."""
    from scipy.stats import spearmanr

    rows = _aut_rows(shared_dir, 250)
    responses, targets = [], {}
    for i, row in enumerate(rows):
        group = int(hashlib.sha1(row["participant"].encode()).hexdigest(), 16) % 5
        r = Response(row["prompt"], row["question"], f"g{group}", i, row["response"],
                     response_id=f"{row['prompt']}|{i}")
        responses.append(r)
        targets[r.response_id] = float(row["target"])
    run = score_responses(responses, offline_extractor, embedder, show_progress=False)
    assert len(run.scores) == len(responses)
    no_atoms = [s for s in run.scores if not any(not a["from_brief"] for a in s.atoms)]
    assert len(no_atoms) / len(run.scores) < 0.02
    by_task: dict[str, list] = {}
    for s in run.scores:
        by_task.setdefault(s.task_id, []).append(s)
    rhos = []
    for scores in by_task.values():
        rho = spearmanr([s.novelty for s in scores],
                        [targets[s.response_id] for s in scores]).statistic
        rhos.append(rho)
        assert rho > 0.1
    assert np.mean(rhos) > 0.3
