"""The optional novelty calibration (SPEC §4.10; creagraph.tig.calibration)."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from creagraph.cli import main
from creagraph.core.io import InputError
from creagraph.tig.calibration import (
    FEATURE_VERSION,
    FEATURES,
    MIN_PROBE_PROMPTS,
    PromptData,
    calibrate_run,
    centred_unit,
    concept_distances,
    default_calibration_path,
    feature_matrix,
    fit_calibration,
    fit_kind_models,
    leave_one_prompt_out,
    load_calibration,
    predict_rating,
    select_probe_ridge,
)
from creagraph.tig.io import write_responses
from creagraph.tig.population import build_atom_tables
from creagraph.tig.schema import Response
from creagraph.tig.score import ScoreConfig, idea_text, score_tables
from tests.shareddata import shared_file

from .conftest import calm_population


def _rope_answers(shared_dir: Path, limit: int = 120) -> list[Response]:
    """Real human answers to the rope prompt, participants hashed into four groups."""
    path = shared_file(shared_dir, "external", "aut-human", "aut_human_dev.csv")
    rows = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["prompt"] == "rope" and row["response"].strip():
                rows.append(row)
            if len(rows) == limit:
                break
    return [Response("rope", row["question"],
                     f"g{int(hashlib.sha1(row['participant'].encode()).hexdigest(), 16) % 4}",
                     i, row["response"], response_id=f"rope|{i}")
            for i, row in enumerate(rows)]


def test_fit_recovers_within_prompt_weights_and_never_goes_negative():
    """Per-prompt offsets do not leak into the weights; a feature that lowers the rating
    gets weight 0, never a negative one (the score must stay monotone)."""
    rng = np.random.default_rng(1)
    features, ratings = {}, {}
    for p, offset in enumerate((0.0, 3.0, -2.0)):
        x = rng.uniform(size=(400, 3)) + offset          # feature levels differ by prompt
        y = 2.0 * x[:, 0] + 1.0 * x[:, 1] - 0.5 * x[:, 2] - 5 * offset
        features[f"p{p}"], ratings[f"p{p}"] = x, y + rng.normal(scale=0.05, size=400)
    model = fit_calibration(features, ratings)
    coef = np.array(model.coef)
    assert coef[0] == pytest.approx(2.0, abs=0.1) and coef[1] == pytest.approx(1.0, abs=0.1)
    assert coef[2] == 0.0 and model.probe is None
    pooled = np.vstack(list(features.values()))
    assert predict_rating(pooled, coef, model.intercept).mean() == pytest.approx(
        np.concatenate(list(ratings.values())).mean())
    # the same minimum as a general bounded least squares on the stacked, centred rows
    from scipy.optimize import lsq_linear
    x = np.vstack([f - f.mean(axis=0) for f in features.values()] + [np.eye(3)])
    y = np.concatenate([r - r.mean() for r in ratings.values()] + [np.zeros(3)])
    assert coef == pytest.approx(lsq_linear(x, y, bounds=(0, np.inf)).x, abs=1e-6)
    with pytest.raises(ValueError):
        fit_calibration({"a": np.zeros((1, 3))}, {"a": np.zeros(1)})
    with pytest.raises(ValueError, match="probe_ridge"):
        fit_calibration(features, ratings, vectors={p: np.ones((400, 4)) for p in features})


def _planted(n_prompts: int, kind: str, seed: int, sign: float = 1.0) -> dict[str, PromptData]:
    """Prompts whose ratings follow the features and one direction of the answer vectors;
    each prompt's vectors sit around their own centre (the brief)."""
    rng = np.random.default_rng(seed)
    direction = np.eye(16)[3]
    found = {}
    for p in range(n_prompts):
        centre = rng.normal(size=16) * 3
        v = centre + rng.normal(size=(300, 16))
        unit = v / np.linalg.norm(v, axis=1, keepdims=True)
        x = rng.uniform(size=(300, 3))
        y = 1.0 * x[:, 0] + sign * 8.0 * (unit - unit.mean(axis=0)) @ direction \
            + rng.normal(scale=0.1, size=300) + p
        found[f"{kind}{p}"] = PromptData(kind, x, y, v)
    return found


def test_probe_learns_a_direction_across_prompts_and_only_for_kinds_with_enough_prompts():
    """The probe reads the within-prompt direction people reward, whatever each prompt's
    centre; a kind with fewer than MIN_PROBE_PROMPTS prompts gets the features-only model
    fitted on all prompts."""
    from scipy.stats import spearmanr

    uses = _planted(4, "use", 2)
    instances = _planted(MIN_PROBE_PROMPTS - 1, "instance", 3, sign=-1.0)
    models = fit_kind_models(uses | instances)
    assert models["use"].probe is not None and models["instance"].probe is None
    assert models["use"].probe_ridge in (1.0, 3.0, 10.0, 30.0, 100.0)
    assert models["instance"] == fit_calibration(
        {p: d.features for p, d in (uses | instances).items()},
        {p: d.ratings for p, d in (uses | instances).items()})
    probe = models["use"].probe
    assert int(np.argmax(np.abs(probe))) == 3 and probe[3] > 0
    predicted = leave_one_prompt_out(uses | instances)
    for p, d in uses.items():       # held-out use prompts ranked by the learned probe
        assert spearmanr(predicted[p], d.ratings).statistic > 0.8
    x = {p: d.features for p, d in uses.items()}
    y = {p: d.ratings for p, d in uses.items()}
    v = {p: d.vectors for p, d in uses.items()}
    assert select_probe_ridge(x, y, v, (5.0,)) == 5.0
    with pytest.raises(ValueError, match="two prompts"):
        select_probe_ridge({"a": x["use0"]}, {"a": y["use0"]}, {"a": v["use0"]})
    with pytest.raises(ValueError, match="probe"):
        models["use"].rating(uses["use0"].features)


def test_shipped_calibration_loads_and_is_monotone_in_each_feature():
    calibration = load_calibration()
    assert calibration.source == str(default_calibration_path())
    assert calibration.kinds == {"use", "instance"}
    use, instance = calibration.models["use"], calibration.models["instance"]
    assert use.probe is not None and len(use.probe) == calibration.embedding_dim == 384
    assert instance.probe is None          # one instances prompt: no probe for that kind
    assert calibration.fitted_on["prompts"] and calibration.fitted_on["sha256"]
    grid = np.linspace(0.0, 1.0, 11)
    vectors = centred_unit(np.random.default_rng(0).normal(size=(len(grid), 384)))[[0] * 11]
    for kind, model in calibration.models.items():
        assert len(model.coef) == len(FEATURES) and all(c >= 0 for c in model.coef)
        assert any(c > 0 for c in model.coef)
        for f in range(len(FEATURES)):  # farther, rarer, farther from the concept → higher
            rows = np.full((len(grid), len(FEATURES)), 0.5)
            rows[:, f] = grid
            rating, novelty = calibration.novelty(
                kind, rows, vectors if model.probe is not None else None)
            assert np.all(np.diff(rating) >= 0) and np.all(np.diff(novelty) >= 0)
            assert np.all((novelty >= 0) & (novelty <= 1))
    with pytest.raises(InputError, match="no model for task kind 'consequence'"):
        calibration.novelty("consequence", np.zeros((1, 3)))


def _edited(tmp_path: Path, **changes: object) -> Path:
    record = json.loads(default_calibration_path().read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key.startswith("use_"):
            record["models"]["use"][key[4:]] = value
        elif key.startswith("settings_"):
            record["settings"][key[9:]] = value
        else:
            record[key] = value
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


@pytest.mark.parametrize(("changes", "message"), [
    ({"feature_version": FEATURE_VERSION + 1}, "stale calibration: field 'feature_version'"),
    ({"feature_version": 1}, "stale calibration: field 'feature_version'"),
    ({"features": ["distance", "rarity"]}, "stale calibration: field 'features'"),
    ({"use_coef": [0.5, -0.1, 0.2]}, r"models.use: field 'coef' must be non-negative"),
    ({"use_coef": [0.5, 0.2]}, r"models.use: field 'coef' must list 3 numbers"),
    ({"use_intercept": "one"}, r"models.use: field 'intercept' must be a finite number"),
    ({"use_probe": [0.1] * 383}, r"models.use: field 'probe' must list 384 numbers"),
    ({"use_probe": [0.1] * 383 + [float("nan")]}, "field 'probe' must be a finite number"),
    ({"settings_embedding_dim": 0}, "field 'settings.embedding_dim'"),
    ({"rating_scale": [5, 1]}, "field 'rating_scale'"),
    ({"models": {"uses": {}}}, "field 'models'"),
    ({"models": {}}, "field 'models'"),
    ({"format": "something-else"}, "field 'format'"),
])
def test_stale_or_malformed_calibration_is_refused_naming_file_and_field(tmp_path, changes,
                                                                         message):
    path = _edited(tmp_path, **changes)
    with pytest.raises(InputError, match=message) as caught:
        load_calibration(path)
    assert str(path) in str(caught.value)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON calibration file"):
        load_calibration(broken)
    with pytest.raises(InputError, match="cannot read"):
        load_calibration(tmp_path / "missing.json")


def test_calibration_refuses_other_settings_and_embedders():
    calibration = load_calibration()
    calibration.check_run(calibration.match_threshold, calibration.neighbour_share,
                          calibration.embedder)
    with pytest.raises(InputError, match="match_threshold"):
        calibration.check_run(0.7, calibration.neighbour_share, None)
    with pytest.raises(InputError, match="neighbour_share"):
        calibration.check_run(calibration.match_threshold, 0.3, None)
    with pytest.raises(InputError, match="embeds with 'hashing-256'"):
        calibration.check_run(calibration.match_threshold, calibration.neighbour_share,
                              "hashing-256")


def test_calibrated_run_keeps_the_uncalibrated_score_and_tracks_its_features(
        embedder, offline_extractor, shared_dir):
    responses = _rope_answers(shared_dir)
    tables = build_atom_tables(responses, offline_extractor, embedder, show_progress=False)
    run = score_tables(tables, embedder, show_progress=False)
    calibration = load_calibration()
    config = ScoreConfig()
    calibrated = calibrate_run(run, tables, calibration, embedder,
                               match_threshold=config.match_threshold,
                               neighbour_share=config.neighbour_share)
    assert len(calibrated.scores) == len(run.scores) == len(responses)
    concept = concept_distances(responses, embedder)
    # the numbers of the fitting script (benchmarks/fit_novelty_calibration.py): features of
    # the scores, "brief + answer" vectors of the task's answers, the use model's rating
    model = calibration.models["use"]
    by_id = {r.response_id: r for r in responses}
    data = PromptData("use", feature_matrix(run.scores, concept),
                      np.zeros(len(run.scores)),
                      np.asarray(embedder.encode([idea_text(by_id[s.response_id])
                                                  for s in run.scores])))
    script = model.rating(data.features, centred_unit(data.vectors))
    lo, hi = calibration.rating_scale
    for before, after, expected in zip(run.scores, calibrated.scores, script, strict=True):
        assert after.kind == "use"
        assert after.uncalibrated_novelty == before.novelty
        assert after.concept_distance == pytest.approx(concept[before.response_id], abs=1e-6)
        assert after.predicted_rating == pytest.approx(expected, abs=1e-5)
        assert after.novelty == pytest.approx(np.clip((expected - lo) / (hi - lo), 0, 1),
                                              abs=1e-5)
        record = after.to_dict()
        assert record["uncalibrated_novelty"] == before.novelty
        assert "predicted_rating" not in before.to_dict()
    # the probe moves the order: it is not the features-only model
    features_only = predict_rating(data.features, np.array(model.coef), model.intercept)
    assert not np.allclose(script, features_only, atol=1e-3)
    # and the same rating, for the same answer, rises with each feature
    for f in range(len(FEATURES)):
        raised = data.features.copy()
        raised[:, f] += 0.1
        assert np.all(model.rating(raised, centred_unit(data.vectors)) >= script - 1e-12)
    # the concept distance reads the brief's object ("a rope")
    assert concept_distances([Response("rope", responses[0].brief, "x", 0, "a rope")],
                             embedder)["rope|x|0"] == pytest.approx(0.0, abs=1e-5)


def test_calibration_refuses_kinds_it_was_not_fitted_on(embedder, offline_extractor):
    population = calm_population()
    tables = build_atom_tables(population, offline_extractor, embedder, show_progress=False)
    run = score_tables(tables, embedder, show_progress=False)
    with pytest.raises(InputError, match=r"cannot calibrate 1 task\(s\).*'calm' \(visual\)"):
        calibrate_run(run, tables, load_calibration(), embedder,
                      match_threshold=0.8, neighbour_share=0.15)
    # consequences tasks have no human ratings here: no model, refused by name
    brief = "What would happen if people no longer needed sleep?"
    answers = ["more time to work", "night shifts vanish", "dreams disappear",
               "coffee shops close", "cities never go dark", "beds become sofas"]
    population = [Response("sleep", brief, f"m{i % 2}", i // 2, a) for i, a in
                  enumerate(answers)]
    tables = build_atom_tables(population, offline_extractor, embedder, show_progress=False)
    run = score_tables(tables, embedder, show_progress=False)
    assert {s.kind for s in run.scores} == {"consequence"}
    with pytest.raises(InputError, match=r"'sleep' \(consequence\)"):
        calibrate_run(run, tables, load_calibration(), embedder,
                      match_threshold=0.8, neighbour_share=0.15)


def test_score_command_calibrated_records_the_calibration(shared_dir, tmp_path, capsys):
    responses = tmp_path / "rope.jsonl"
    write_responses(responses, _rope_answers(shared_dir, 60))
    out = tmp_path / "scores.jsonl"
    assert main(["tig", "score", str(responses), "--out", str(out), "--calibrated"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 60
    assert all(0 <= r["novelty"] <= 1 and r["predicted_rating"] is not None
               and r["uncalibrated_novelty"] is not None for r in rows)
    manifest = json.loads((tmp_path / "scores.jsonl.run.json").read_text())
    recorded = json.dumps(manifest)
    assert load_calibration().sha256 in recorded and "novelty_calibration.json" in recorded
    capsys.readouterr()
    # a stale file is refused before anything is written; --calibration needs --calibrated
    stale = _edited(tmp_path, feature_version=0)
    out2 = tmp_path / "other.jsonl"
    assert main(["tig", "score", str(responses), "--out", str(out2), "--calibrated",
                 "--calibration", str(stale)]) == 2
    assert "stale calibration" in capsys.readouterr().err and not out2.exists()
    assert main(["tig", "score", str(responses), "--out", str(out2), "--calibration",
                 str(stale)]) == 2
    assert "--calibration needs --calibrated" in capsys.readouterr().err
    assert main(["tig", "score", str(responses), "--out", str(out2), "--calibrated",
                 "--match-threshold", "0.7"]) == 2
    assert "match_threshold" in capsys.readouterr().err and not out2.exists()


def test_calibrated_score_against_a_reference_population(shared_dir, tmp_path):
    """A user's model scored against a shared population gets calibrated novelty, and only
    its own answers are calibrated (the reference is not scored)."""
    answers = _rope_answers(shared_dir, 80)
    reference = [r for r in answers if r.model != "g3"]
    mine = [Response("rope", r.brief, "mine", i, r.core_idea, response_id=f"mine|{i}")
            for i, r in enumerate(a for a in answers if a.model == "g3")]
    ref_file, mine_file = tmp_path / "ref.jsonl", tmp_path / "mine.jsonl"
    write_responses(ref_file, reference)
    write_responses(mine_file, mine)
    out, summary = tmp_path / "scores.jsonl", tmp_path / "summary.json"
    assert main(["tig", "score", str(mine_file), "--reference", str(ref_file), "--out",
                 str(out), "--summary", str(summary), "--calibrated"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(mine) and {r["model"] for r in rows} == {"mine"}
    assert all(r["predicted_rating"] is not None for r in rows)
    (model,) = json.loads(summary.read_text())["models"]
    assert model["novelty_mean"] == pytest.approx(np.mean([r["novelty"] for r in rows]),
                                                  abs=1e-6)
