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
        # (but for ``distinct``, which describes m1's own samples, not its reference)
        assert ({**after[rid].to_dict(), "distinct": None}
                == {**before[rid].to_dict(), "distinct": None})
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


def test_rarity_is_monotone_in_matched_responses_and_models():
    n, m = 120, 9
    responses = np.arange(0, n + 1)
    for models in range(m + 1):
        values = rarity_value(responses, n, np.full_like(responses, models), m)
        assert np.all(np.diff(values) < 0)  # strictly: more matches, less rare
    for matched in (0, 5, n):
        values = rarity_value(np.full(m + 1, matched), n, np.arange(m + 1), m)
        assert np.all(np.diff(values) < 0)
    assert rarity_value(0, n, 0, m) == 1.0 and rarity_value(n, n, m, m) == 0.0
    with pytest.raises(ValueError):
        rarity_value(0, 0, 0, 1)


def test_idea_novelty_is_monotone_in_rarity_and_distance():
    grid = np.linspace(0.0, 1.0, 11)
    for alpha in (0.25, 0.5, 0.75):
        for fixed in grid:
            assert np.all(np.diff(idea_novelty(grid, np.full_like(grid, fixed), alpha)) > 0)
            assert np.all(np.diff(idea_novelty(np.full_like(grid, fixed), grid, alpha)) > 0)
    assert idea_novelty(1.0, 1.0) == 1.0 and idea_novelty(0.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        ScoreConfig(rarity_weight=1.5)
    with pytest.raises(ValueError):
        ScoreConfig(match_threshold=0)


def _aut_prompt(shared_dir: Path, prompt: str, limit: int) -> list[Response]:
    rows = [r for r in _aut_rows(shared_dir, 100_000) if r["prompt"] == prompt][:limit]
    def group(row: dict[str, str]) -> str:
        return f"g{int(hashlib.sha1(row['participant'].encode()).hexdigest(), 16) % 5}"

    return [Response(prompt, row["question"], group(row), i, row["response"],
                     response_id=f"{prompt}|{i}") for i, row in enumerate(rows)]


def test_short_answer_is_one_idea_matched_to_its_paraphrases(embedder, offline_extractor,
                                                            shared_dir):
    """Uses answers (real human answers to the rope prompt): the whole answer is the idea;
    a paraphrase of a common answer is matched and rarer than an answer nobody gave."""
    responses = _aut_prompt(shared_dir, "rope", 300)
    common = max({r.core_idea.strip().casefold() for r in responses},
                 key=lambda t: sum(r.core_idea.strip().casefold() == t for r in responses))
    extra = [Response("rope", responses[0].brief, "user", 0, common.upper() + "!"),
             Response("rope", responses[0].brief, "user", 1,
                      "a tightrope for training circus snails")]
    run = score_responses(responses + extra, offline_extractor, embedder, show_progress=False)
    by_id = {s.response_id: s for s in run.scores}
    copy, rare = by_id["rope|user|0"], by_id["rope|user|1"]
    assert copy.kind == rare.kind == "use" and copy.clusters_hit == ()
    assert copy.matched["n_responses"] >= 3 and copy.matched["n_models"] >= 2
    assert copy.matched["similarity"] >= 0.8
    assert copy.rarity < rare.rarity and copy.novelty < rare.novelty
    assert all(s.rarity is not None and 0 <= s.novelty <= 1 for s in run.scores)
    assert all(s.n_reference_models == 5 for s in run.scores if s.model == "user")


def test_within_model_repetition_is_reported(embedder, offline_extractor):
    brief = "What is a surprising use for a BRICK?"
    varied = ["a doorstop", "a bookend", "grind it into pigment for paint",
              "a heat store in an oven"]
    repeated = ["a doorstop", "use it as a doorstop", "a door stop", "doorstop"]
    other = ["a paperweight", "build a wall", "a weapon", "a garden border"]
    responses = [Response("brick", brief, model, i, text)
                 for model, texts in (("varied", varied), ("repeats", repeated),
                                      ("other", other))
                 for i, text in enumerate(texts)]
    run = score_responses(responses, offline_extractor, embedder, show_progress=False)
    n, distinct = run.repetition[("brick", "repeats")]
    assert n == 4 and distinct <= 2 < run.repetition[("brick", "varied")][1]
    rows = {r["model"]: r for r in run.model_summary(n_boot=200)}
    assert rows["repeats"]["distinct_share"] < rows["varied"]["distinct_share"]
    assert {s.distinct for s in run.scores if s.model == "repeats"} == {distinct / 4}
    assert distinct_ideas(np.eye(3), 0.8).tolist() == [0, 1, 2]


def test_scoring_against_a_reference_population(embedder, offline_extractor, calm_run):
    """User models are scored against the reference models only, never each other; the
    reference's own scores are not produced; the summary has a bootstrap interval."""
    reference = calm_population()
    user = [Response("calm", reference[0].brief, model, i, text)
            for model, texts in (("u1", ["A potted fern with green leaves to evoke calm.",
                                         "A snail carrying a sleeping volcano."]),
                                 ("u2", ["A still lake at dawn seen from above.",
                                         "A still lake at sunrise, seen from above."]))
            for i, text in enumerate(texts)]
    tables = build_atom_tables(user + reference, offline_extractor, embedder,
                               show_progress=False)
    run = score_tables(tables, embedder, reference_models={r.model for r in reference},
                       show_progress=False)
    assert {s.model for s in run.scores} == {"u1", "u2"}
    assert all(s.n_reference_models == 6 and s.n_reference_responses == 18
               for s in run.scores)
    # u2 is not in u1's reference: adding u2 changes nothing of u1's scores
    alone = score_tables(build_atom_tables(user[:2] + reference, offline_extractor, embedder,
                                           show_progress=False), embedder,
                         reference_models={r.model for r in reference}, show_progress=False)
    assert [s.to_dict() for s in alone.scores] == [s.to_dict() for s in run.scores
                                                   if s.model == "u1"]
    rows = {r["model"]: r for r in run.model_summary(n_boot=500)}
    for row in rows.values():
        assert row["ci_low"] <= row["novelty_mean"] <= row["ci_high"]
        assert row["interval_over"] == "responses"
    missing = score_tables(tables, embedder, reference_models={"nobody"}, show_progress=False)
    assert "calm" in missing.skipped and "reference" in missing.skipped["calm"]
