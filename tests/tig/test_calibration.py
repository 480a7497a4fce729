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
    calibrate_run,
    concept_distances,
    default_calibration_path,
    fit_calibration,
    load_calibration,
    predict_rating,
)
from creagraph.tig.io import write_responses
from creagraph.tig.population import build_atom_tables
from creagraph.tig.schema import Response
from creagraph.tig.score import ScoreConfig, score_tables
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
    coef, intercept = fit_calibration(features, ratings)
    assert coef[0] == pytest.approx(2.0, abs=0.1) and coef[1] == pytest.approx(1.0, abs=0.1)
    assert coef[2] == 0.0
    pooled = np.vstack(list(features.values()))
    assert predict_rating(pooled, coef, intercept).mean() == pytest.approx(
        np.concatenate(list(ratings.values())).mean())
    with pytest.raises(ValueError):
        fit_calibration({"a": np.zeros((1, 3))}, {"a": np.zeros(1)})


def test_shipped_calibration_loads_and_is_monotone_in_each_feature():
    calibration = load_calibration()
    assert calibration.source == str(default_calibration_path())
    assert len(calibration.coef) == len(FEATURES) and all(c >= 0 for c in calibration.coef)
    assert "use" in calibration.kinds and "visual" not in calibration.kinds
    assert calibration.fitted_on["prompts"] and calibration.fitted_on["sha256"]
    grid = np.linspace(0.0, 1.0, 11)
    for f in range(len(FEATURES)):      # farther, rarer, farther from the concept → higher
        rows = np.full((len(grid), len(FEATURES)), 0.5)
        rows[:, f] = grid
        rating, novelty = calibration.novelty(rows)
        assert np.all(np.diff(rating) >= 0) and np.all(np.diff(novelty) >= 0)
        assert np.all((novelty >= 0) & (novelty <= 1))
    assert any(c > 0 for c in calibration.coef)


def _edited(tmp_path: Path, **changes: object) -> Path:
    record = json.loads(default_calibration_path().read_text(encoding="utf-8"))
    record.update(changes)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


@pytest.mark.parametrize(("changes", "message"), [
    ({"feature_version": FEATURE_VERSION + 1}, "stale calibration: field 'feature_version'"),
    ({"features": ["distance", "rarity"]}, "stale calibration: field 'features'"),
    ({"coef": [0.5, -0.1, 0.2]}, "field 'coef' must be non-negative"),
    ({"coef": [0.5, 0.2]}, "field 'coef' must list 3 numbers"),
    ({"intercept": "one"}, "field 'intercept' must be a finite number"),
    ({"rating_scale": [5, 1]}, "field 'rating_scale'"),
    ({"kinds": ["uses"]}, "field 'kinds'"),
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
    for before, after in zip(run.scores, calibrated.scores, strict=True):
        assert after.uncalibrated_novelty == before.novelty
        assert after.concept_distance == pytest.approx(concept[before.response_id], abs=1e-6)
        x = np.array([[before.distance, before.rarity, concept[before.response_id]]])
        rating, novelty = calibration.novelty(x)
        assert after.predicted_rating == pytest.approx(rating[0], abs=1e-5)
        assert after.novelty == pytest.approx(novelty[0], abs=1e-5)
        record = after.to_dict()
        assert record["uncalibrated_novelty"] == before.novelty
        assert "predicted_rating" not in before.to_dict()
    # the calibrated order follows the features: a response farther, rarer and farther from
    # the concept than another never ranks below it
    rows = [(s.distance, s.rarity, s.concept_distance, s.novelty) for s in calibrated.scores]
    for a in rows[:40]:
        for b in rows[:40]:
            if a[0] >= b[0] and a[1] >= b[1] and a[2] >= b[2]:
                assert a[3] >= b[3] - 1e-6
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
