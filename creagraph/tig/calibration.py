"""Optional calibration of the novelty score to human originality ratings (SPEC §4.10).

Off by default (``creagraph tig score --calibrated``). The uncalibrated novelty ``N``
(:mod:`creagraph.tig.score`) is a fixed formula; the calibration is a small linear model over
the score's own features, fitted on the human-rated Alternative Uses / Instances answers of
``../shared/external/aut-human/`` only, and shipped as ``data/novelty_calibration.json``
with the command that fitted it and its leave-one-prompt-out validation.

Definition
----------
Features of a short answer r of a task t (:data:`FEATURES`):

* ``distance`` — the plain distance ``D(r)`` (SPEC §4.10,
  :func:`~creagraph.tig.score.knn_distance`);
* ``rarity`` — the idea rarity ``R(r)`` (:func:`~creagraph.tig.score.rarity_value`);
* ``concept_distance`` — ``C(r) = 1 − cos(e(answer), e(concept))``: the bare answer's
  distance from the brief's concept phrase (:func:`creagraph.tig.brief.brief_concept`,
  "a rope"), the classic semantic-distance measure of divergent thinking.

The model predicts the human rating ``ŷ = b + Σ_f β_f·x_f`` with ``β_f ≥ 0`` (so the
calibrated score stays non-decreasing in distance, rarity and concept distance). The
coefficients are fitted *within prompts* (:func:`fit_calibration`: features and ratings
centred per prompt, then a non-negative ridge), because the level of a feature differs from
prompt to prompt while only the order within a prompt is what people rated; ``b`` sets the
pooled mean. The calibrated novelty is ``ŷ`` rescaled from the rating scale ``[lo, hi]`` to
[0, 1] and clipped: ``(ŷ − lo)/(hi − lo)``.

A data file is refused (:class:`~creagraph.core.io.InputError` naming the file and the
field) when it is malformed, when its feature definition (:data:`FEATURE_VERSION`,
:data:`FEATURES`) or embedder differs from this creagraph's, when the run's τ or ρ differ
from those it was fitted with, and when a task's kind is not one it was fitted on (visual
briefs and open prompts are never calibrated: there are no human ratings of them here).

Examples
--------
>>> x = {"a": np.array([[0.2, 0.1, 0.5], [0.6, 0.9, 0.7]]),
...      "b": np.array([[0.3, 0.2, 0.6], [0.5, 0.8, 0.9]])}
>>> y = {"a": np.array([1.0, 3.0]), "b": np.array([1.5, 3.5])}
>>> coef, intercept = fit_calibration(x, y)
>>> bool(np.all(coef >= 0)), bool(predict_rating(x["a"], coef, intercept)[1] > 2)
(True, True)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.io import InputError

__all__ = [
    "FEATURES",
    "FEATURE_VERSION",
    "FORMAT",
    "NoveltyCalibration",
    "default_calibration_path",
    "load_calibration",
    "fit_calibration",
    "predict_rating",
    "concept_distances",
    "feature_matrix",
    "calibrate_run",
]

#: The calibration's features, in the order of its coefficients (module docstring).
FEATURES: tuple[str, ...] = ("distance", "rarity", "concept_distance")
#: Bumped whenever the definition of a feature changes: older data files are then stale.
FEATURE_VERSION = 1
#: The ``format`` field of a calibration data file.
FORMAT = "creagraph-novelty-calibration"
_DATA_FILE = "novelty_calibration.json"


@dataclass(frozen=True)
class NoveltyCalibration:
    """A loaded calibration (see the module docstring); ``source`` is the file it came
    from and ``sha256`` its digest, recorded in a run's manifest."""

    coef: tuple[float, ...]
    intercept: float
    rating_scale: tuple[float, float]
    kinds: frozenset[str]
    match_threshold: float
    neighbour_share: float
    embedder: str
    source: str
    sha256: str
    fitted_on: dict[str, Any] = field(default_factory=dict, compare=False)

    def check_run(self, match_threshold: float, neighbour_share: float,
                  embedder_name: str | None) -> None:
        """Refuse a run whose settings differ from those the calibration was fitted with."""
        for name, ours, theirs in (("match_threshold", match_threshold, self.match_threshold),
                                   ("neighbour_share", neighbour_share, self.neighbour_share)):
            if not math.isclose(ours, theirs, rel_tol=0, abs_tol=1e-9):
                raise InputError(
                    f"{self.source}: fitted with {name} = {theirs}, but this run uses {ours}; "
                    "score with the fitted setting or refit the calibration")
        if embedder_name is not None and embedder_name != self.embedder:
            raise InputError(
                f"{self.source}: fitted on vectors of {self.embedder!r}, but this run embeds "
                f"with {embedder_name!r}; refit the calibration for that embedder")

    def novelty(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(predicted rating ŷ, calibrated novelty in [0, 1])`` of feature rows."""
        rating = predict_rating(features, np.asarray(self.coef), self.intercept)
        lo, hi = self.rating_scale
        return rating, np.clip((rating - lo) / (hi - lo), 0.0, 1.0)


def default_calibration_path() -> Path:
    """The calibration file shipped with the package."""
    return Path(str(resources.files("creagraph.tig") / "data" / _DATA_FILE))


def _number(path: str, record: Mapping[str, Any], key: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{path}: field {key!r} must be a finite number, got {value!r}")
    return float(value)


def load_calibration(path: str | os.PathLike[str] | None = None) -> NoveltyCalibration:
    """Read and check a calibration data file (default: the shipped one).

    Raises
    ------
    InputError
        Naming the file and the field: not JSON, another format or version, features or
        feature version other than this creagraph's (a stale file), coefficients that are
        missing, negative or not finite, a bad rating scale or task kind.
    """
    import hashlib

    from creagraph.tig.brief import TASK_KINDS

    where = Path(path) if path is not None else default_calibration_path()
    try:
        data = where.read_bytes()
    except OSError as exc:
        raise InputError(f"{where}: cannot read the calibration file ({exc.strerror})") from exc
    name = str(where)
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{name}: not a JSON calibration file ({exc})") from exc
    if not isinstance(record, dict):
        raise InputError(f"{name}: a calibration file holds one JSON object")
    if record.get("format") != FORMAT:
        raise InputError(f"{name}: field 'format' must be {FORMAT!r}, got "
                         f"{record.get('format')!r}")
    refit = f"; refit it ({record.get('command') or 'benchmarks/fit_novelty_calibration.py'})"
    if record.get("feature_version") != FEATURE_VERSION:
        raise InputError(f"{name}: stale calibration: field 'feature_version' is "
                         f"{record.get('feature_version')!r}, this creagraph computes version "
                         f"{FEATURE_VERSION}{refit}")
    if record.get("features") != list(FEATURES):
        raise InputError(f"{name}: stale calibration: field 'features' is "
                         f"{record.get('features')!r}, this creagraph computes "
                         f"{list(FEATURES)}{refit}")
    coef = record.get("coef")
    if not isinstance(coef, list) or len(coef) != len(FEATURES):
        raise InputError(f"{name}: field 'coef' must list {len(FEATURES)} numbers (one per "
                         "feature)")
    coefs = tuple(_number(name, {"coef": c}, "coef") for c in coef)
    if any(c < 0 for c in coefs):
        raise InputError(f"{name}: field 'coef' must be non-negative (the calibrated score "
                         f"must not fall as an idea gets rarer or farther), got {coef}")
    scale = record.get("rating_scale")
    if (not isinstance(scale, list) or len(scale) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in scale)
            or not scale[0] < scale[1]):
        raise InputError(f"{name}: field 'rating_scale' must be [low, high] with low < high, "
                         f"got {scale!r}")
    kinds = record.get("kinds")
    if (not isinstance(kinds, list) or not kinds
            or not all(isinstance(k, str) and k in TASK_KINDS for k in kinds)):
        raise InputError(f"{name}: field 'kinds' must list task kinds among "
                         f"{list(TASK_KINDS)}, got {kinds!r}")
    settings = record.get("settings")
    if not isinstance(settings, dict):
        raise InputError(f"{name}: field 'settings' must be an object")
    embedder = settings.get("embedder")
    if not isinstance(embedder, str) or not embedder:
        raise InputError(f"{name}: field 'settings.embedder' must name the embedder")
    fitted_on = record.get("fitted_on")
    return NoveltyCalibration(
        coef=coefs,
        intercept=_number(name, record, "intercept"),
        rating_scale=(float(scale[0]), float(scale[1])),
        kinds=frozenset(kinds),
        match_threshold=_number(f"{name}: settings", settings, "match_threshold"),
        neighbour_share=_number(f"{name}: settings", settings, "neighbour_share"),
        embedder=embedder,
        source=name,
        sha256=hashlib.sha256(data).hexdigest(),
        fitted_on=fitted_on if isinstance(fitted_on, dict) else {},
    )


def fit_calibration(features: Mapping[str, np.ndarray], ratings: Mapping[str, np.ndarray],
                    ridge: float = 1.0) -> tuple[np.ndarray, float]:
    """Non-negative ridge fitted within prompts: ``(coefficients, intercept)``.

    Parameters
    ----------
    features : mapping prompt → array (n, len(FEATURES))
    ratings : mapping prompt → array (n,)
        Human ratings of the same rows.
    ridge : float
        L2 penalty of the centred fit.

    Each prompt's features and ratings are centred on their means before the fit (a
    fixed-effects fit: only the order within a prompt is learned); the intercept makes the
    pooled mean prediction equal the pooled mean rating.
    """
    from sklearn.linear_model import Ridge

    if not features or set(features) != set(ratings):
        raise ValueError("features and ratings must cover the same, non-empty set of prompts")
    xs, ys = [], []
    for prompt, x in features.items():
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(ratings[prompt], dtype=np.float64)
        if x.ndim != 2 or len(x) != len(y) or len(y) < 2:
            raise ValueError(f"prompt {prompt!r}: need ≥ 2 rows of features with a rating each")
        xs.append(x - x.mean(axis=0))
        ys.append(y - y.mean())
    model = Ridge(alpha=ridge, fit_intercept=False, positive=True)
    model.fit(np.vstack(xs), np.concatenate(ys))
    coef = np.asarray(model.coef_, dtype=np.float64)
    pooled_x = np.vstack([np.asarray(x, dtype=np.float64) for x in features.values()])
    pooled_y = np.concatenate([np.asarray(y, dtype=np.float64) for y in ratings.values()])
    intercept = float(pooled_y.mean() - pooled_x.mean(axis=0) @ coef)
    return coef, intercept


def predict_rating(features: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """``ŷ = b + X·β`` (module docstring)."""
    return intercept + np.asarray(features, dtype=np.float64) @ np.asarray(coef, np.float64)


def concept_distances(responses: Sequence[Any], embedder: Any,
                      concepts: Mapping[str, str] | None = None) -> dict[str, float]:
    """``C(r) = 1 − cos(e(answer), e(concept))`` by response id; every distinct text is
    embedded once. A response whose brief has no concept phrase is absent."""
    from creagraph.tig.brief import brief_concept, task_kind

    concept_of: dict[str, str | None] = {}
    for r in responses:
        if r.task_id not in concept_of:
            given = (concepts or {}).get(r.task_id)
            concept_of[r.task_id] = brief_concept(
                r.brief, given, task_kind(r.brief, r.family, r.kind))
    texts = list(dict.fromkeys([c for c in concept_of.values() if c]
                               + [r.core_idea.strip() for r in responses]))
    if not texts:
        return {}
    raw = np.asarray(embedder.encode(texts), dtype=np.float64)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    unit = dict(zip(texts, raw / np.where(norms > 0, norms, 1.0), strict=True))
    found = {}
    for r in responses:
        concept = concept_of[r.task_id]
        if concept:
            found[r.response_id] = float(1.0 - unit[r.core_idea.strip()] @ unit[concept])
    return found


def feature_matrix(scores: Sequence[Any], concept_distance: Mapping[str, float]) -> np.ndarray:
    """Rows of :data:`FEATURES` for ``scores`` (:class:`~creagraph.tig.score.ResponseScore`)."""
    rows = []
    for s in scores:
        if s.rarity is None or s.response_id not in concept_distance:
            raise InputError(f"response {s.response_id!r} (task {s.task_id!r}): no "
                             "rarity or concept to calibrate")
        rows.append((s.distance, s.rarity, concept_distance[s.response_id]))
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))


def calibrate_run(run: Any, tables: Mapping[str, Any], calibration: NoveltyCalibration,
                  embedder: Any, *, match_threshold: float, neighbour_share: float,
                  concepts: Mapping[str, str] | None = None) -> Any:
    """A copy of ``run`` (:class:`~creagraph.tig.score.ScoreRun`) whose novelty is the
    calibrated one; each score keeps its uncalibrated novelty and predicted rating.

    Raises
    ------
    InputError
        When the run's settings or embedder differ from the calibration's, or a scored task
        is of a kind the calibration was not fitted on.
    """
    import dataclasses

    calibration.check_run(match_threshold, neighbour_share, getattr(embedder, "name", None))
    wrong = sorted({(s.task_id, s.kind) for s in run.scores
                    if s.kind not in calibration.kinds})
    if wrong:
        listed = ", ".join(f"{t!r} ({k})" for t, k in wrong[:5])
        raise InputError(
            f"{calibration.source}: fitted on {', '.join(sorted(calibration.kinds))} tasks "
            f"only; cannot calibrate {len(wrong)} task(s) of another kind: {listed}; "
            "score them without --calibrated")
    scored = {s.response_id for s in run.scores}
    responses = [r for task_id in dict.fromkeys(s.task_id for s in run.scores)
                 for r in tables[task_id].responses if r.response_id in scored]
    distances = concept_distances(responses, embedder, concepts)
    x = feature_matrix(run.scores, distances)
    rating, novelty = calibration.novelty(x)
    scores = [dataclasses.replace(
        s, novelty=round(float(n), 6), uncalibrated_novelty=s.novelty,
        predicted_rating=round(float(y), 6), concept_distance=round(float(row[2]), 6))
        for s, n, y, row in zip(run.scores, novelty, rating, x, strict=True)]
    return dataclasses.replace(run, scores=scores)
