"""Optional calibration of the novelty score to human originality ratings (SPEC §4.10).

Off by default (``creagraph tig score --calibrated``). The uncalibrated novelty ``N``
(:mod:`creagraph.tig.score`) is a fixed formula; the calibration is a small linear model,
fitted on the human-rated Alternative Uses / Instances answers of
``../shared/external/aut-human/`` only, and shipped as ``data/novelty_calibration.json``
with the command that fitted it and its leave-one-prompt-out validation
(``benchmarks/fit_novelty_calibration.py``).

Definition
----------
Features of a short answer r of a task t (:data:`FEATURES`):

* ``distance`` — the plain distance ``D(r)`` (SPEC §4.10,
  :func:`~creagraph.tig.score.knn_distance`);
* ``rarity`` — the idea rarity ``R(r)`` (:func:`~creagraph.tig.score.rarity_value`);
* ``concept_distance`` — ``C(r) = 1 − cos(e(answer), e(concept))``: the bare answer's
  distance from the brief's concept phrase (:func:`creagraph.tig.brief.brief_concept`,
  "a rope"), the classic semantic-distance measure of divergent thinking;

and, for a kind with a *probe*, the answer's own embedding: ``v(r) = u(r) − ū_t`` where
``u(r)`` is the unit MiniLM vector of "brief + answer"
(:func:`~creagraph.tig.score.idea_text`) and ``ū_t`` the mean of those vectors over the
task's responses (all models, the reference population included). The probe is a linear
read-out of the kinds of answers people rate as original (elaborate, figurative, using the
object's material rather than its function …) learned across prompts.

One model per task kind k predicts the human rating

    ŷ(r) = b_k + Σ_f β_{k,f}·x_f(r) + w_k · v(r),      β_{k,f} ≥ 0

(``w_k = 0`` for a kind without a probe), so the calibrated score is non-decreasing in
distance, rarity and concept distance. Fitting (:func:`fit_calibration`) is *within
prompts*: features, vectors and ratings are centred per prompt (only the order within a
prompt is what people rated; ``v`` is centred by construction), then a ridge with penalty
``FEATURE_RIDGE`` on ``β`` and ``λ`` on ``w`` is solved with ``β ≥ 0``; ``b`` sets the pooled
mean. ``λ`` is chosen by leave-one-prompt-out inside the training prompts
(:func:`select_probe_ridge`). A kind gets a probe only when the training data hold at
least :data:`MIN_PROBE_PROMPTS` prompts of that kind, fitted on those prompts alone (a
probe learned on uses did not transfer to the one instances prompt; see
``benchmarks/RESULTS.md``); any other kind gets the features-only model fitted on all
prompts (:func:`fit_kind_models`). The calibrated novelty is ``ŷ`` rescaled from the
rating scale ``[lo, hi]`` to [0, 1] and clipped: ``(ŷ − lo)/(hi − lo)``.

A data file is refused (:class:`~creagraph.core.io.InputError` naming the file and the
field) when it is malformed, when its feature definition (:data:`FEATURE_VERSION`,
:data:`FEATURES`) or embedder differs from this creagraph's, when a probe's length is not
the embedder's dimension, when the run's τ or ρ differ from those it was fitted with, and
when a task's kind is not one it was fitted on (visual briefs, open prompts and
consequences tasks are never calibrated: there are no human ratings of them here).

Validity
--------
On the nine dev prompts the shipped file agrees with human originality at mean Spearman
0.535 leave-one-prompt-out, against 0.481 for the plain distance; fitted only on prompts of
*other rating studies* than the held-out one (leave-study-out: five of the nine prompts come
from one study) it reads 0.474, no better than the plain distance
(``benchmarks/novelty_graph_features.py``, ``benchmarks/RESULTS.md``, session 9). The gain
is the probe's and depends on the raters' study: use it for answers rated like the dev
studies' and compare with the uncalibrated score before trusting it elsewhere.

Examples
--------
>>> x = {"a": np.array([[0.2, 0.1, 0.5], [0.6, 0.9, 0.7]]),
...      "b": np.array([[0.3, 0.2, 0.6], [0.5, 0.8, 0.9]])}
>>> y = {"a": np.array([1.0, 3.0]), "b": np.array([1.5, 3.5])}
>>> model = fit_calibration(x, y)
>>> bool(np.all(np.array(model.coef) >= 0)), bool(model.rating(x["a"])[1] > 2)
(True, True)
"""

from __future__ import annotations

import json
import math
import os
import statistics
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
    "FEATURE_RIDGE",
    "MIN_PROBE_PROMPTS",
    "PROBE_RIDGES",
    "KindModel",
    "PromptData",
    "NoveltyCalibration",
    "default_calibration_path",
    "load_calibration",
    "fit_calibration",
    "select_probe_ridge",
    "fit_kind_models",
    "leave_one_prompt_out",
    "predict_rating",
    "centred_unit",
    "concept_distances",
    "feature_matrix",
    "calibrate_run",
]

#: The calibration's features, in the order of its coefficients (module docstring).
FEATURES: tuple[str, ...] = ("distance", "rarity", "concept_distance")
#: Bumped whenever the definition of a feature or of the model changes: older data files
#: are then stale (version 2 added the per-kind models and the probe).
FEATURE_VERSION = 2
#: The ``format`` field of a calibration data file.
FORMAT = "creagraph-novelty-calibration"
#: The ridge penalty on the feature coefficients ``β``.
FEATURE_RIDGE = 1.0
#: The probe penalties ``λ`` tried by :func:`select_probe_ridge`.
PROBE_RIDGES: tuple[float, ...] = (1.0, 3.0, 10.0, 30.0, 100.0)
#: A kind gets a probe only with at least this many training prompts of that kind.
MIN_PROBE_PROMPTS = 3
_DATA_FILE = "novelty_calibration.json"


def centred_unit(vectors: np.ndarray) -> np.ndarray:
    """Unit rows minus their mean: the probe's input ``v`` for one task (module docstring)."""
    x = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.where(norms > 0, norms, 1.0)
    return x - x.mean(axis=0) if len(x) else x


@dataclass(frozen=True)
class KindModel:
    """The model of one task kind: ``ŷ = intercept + features·coef + v·probe``."""

    coef: tuple[float, ...]
    intercept: float
    probe: np.ndarray | None = field(default=None, compare=False)
    probe_ridge: float | None = None

    def rating(self, features: np.ndarray, vectors: np.ndarray | None = None) -> np.ndarray:
        """Predicted rating of feature rows; ``vectors`` are the rows' probe inputs
        (:func:`centred_unit`), needed when the model has a probe."""
        rating = predict_rating(features, np.asarray(self.coef), self.intercept)
        if self.probe is not None:
            if vectors is None:
                raise ValueError("this model has a probe: pass the answers' centred vectors")
            rating = rating + np.asarray(vectors, dtype=np.float64) @ self.probe
        return rating

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of a data file's ``models`` entry."""
        return {"coef": [round(float(c), 6) for c in self.coef],
                "intercept": round(float(self.intercept), 6),
                "probe": None if self.probe is None else [float(w) for w in self.probe],
                "probe_ridge": self.probe_ridge}


@dataclass(frozen=True)
class PromptData:
    """One human-rated prompt for fitting: its kind, feature rows (n, len(FEATURES)),
    ratings (n,) and the raw "brief + answer" vectors (n, dim) of the same rows."""

    kind: str
    features: np.ndarray
    ratings: np.ndarray
    vectors: np.ndarray


@dataclass(frozen=True)
class NoveltyCalibration:
    """A loaded calibration (see the module docstring); ``source`` is the file it came
    from and ``sha256`` its digest, recorded in a run's manifest."""

    models: Mapping[str, KindModel]
    rating_scale: tuple[float, float]
    match_threshold: float
    neighbour_share: float
    embedder: str
    embedding_dim: int
    source: str
    sha256: str
    fitted_on: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def kinds(self) -> frozenset[str]:
        """The task kinds this calibration was fitted for."""
        return frozenset(self.models)

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

    def novelty(self, kind: str, features: np.ndarray,
                vectors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(predicted rating ŷ, calibrated novelty in [0, 1])`` of feature rows of one
        kind; ``vectors`` (:func:`centred_unit`) when that kind's model has a probe."""
        if kind not in self.models:
            raise InputError(f"{self.source}: no model for task kind {kind!r}")
        rating = self.models[kind].rating(features, vectors)
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


def _kind_model(name: str, kind: str, entry: Any, dim: int) -> KindModel:
    where = f"{name}: models.{kind}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be an object with 'coef' and 'intercept'")
    coef = entry.get("coef")
    if not isinstance(coef, list) or len(coef) != len(FEATURES):
        raise InputError(f"{where}: field 'coef' must list {len(FEATURES)} numbers (one per "
                         "feature)")
    coefs = tuple(_number(where, {"coef": c}, "coef") for c in coef)
    if any(c < 0 for c in coefs):
        raise InputError(f"{where}: field 'coef' must be non-negative (the calibrated score "
                         f"must not fall as an idea gets rarer or farther), got {coef}")
    probe = entry.get("probe")
    weights = None
    if probe is not None:
        if not isinstance(probe, list) or len(probe) != dim:
            raise InputError(f"{where}: field 'probe' must list {dim} numbers (the embedder's "
                             f"dimension, settings.embedding_dim), got "
                             f"{len(probe) if isinstance(probe, list) else type(probe).__name__}")
        weights = np.array([_number(where, {"probe": w}, "probe") for w in probe])
    ridge = entry.get("probe_ridge")
    return KindModel(coef=coefs, intercept=_number(where, entry, "intercept"), probe=weights,
                     probe_ridge=float(ridge) if isinstance(ridge, int | float) else None)


def load_calibration(path: str | os.PathLike[str] | None = None) -> NoveltyCalibration:
    """Read and check a calibration data file (default: the shipped one).

    Raises
    ------
    InputError
        Naming the file and the field: not JSON, another format or version, features or
        feature version other than this creagraph's (a stale file), coefficients that are
        missing, negative or not finite, a probe of the wrong length, a bad rating scale or
        task kind.
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
    scale = record.get("rating_scale")
    if (not isinstance(scale, list) or len(scale) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in scale)
            or not scale[0] < scale[1]):
        raise InputError(f"{name}: field 'rating_scale' must be [low, high] with low < high, "
                         f"got {scale!r}")
    settings = record.get("settings")
    if not isinstance(settings, dict):
        raise InputError(f"{name}: field 'settings' must be an object")
    embedder = settings.get("embedder")
    if not isinstance(embedder, str) or not embedder:
        raise InputError(f"{name}: field 'settings.embedder' must name the embedder")
    dim = settings.get("embedding_dim")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise InputError(f"{name}: field 'settings.embedding_dim' must be a positive integer, "
                         f"got {dim!r}")
    models = record.get("models")
    if (not isinstance(models, dict) or not models
            or not all(isinstance(k, str) and k in TASK_KINDS for k in models)):
        raise InputError(f"{name}: field 'models' must map task kinds among "
                         f"{list(TASK_KINDS)} to models, got "
                         f"{list(models) if isinstance(models, dict) else models!r}")
    fitted_on = record.get("fitted_on")
    return NoveltyCalibration(
        models={kind: _kind_model(name, kind, entry, dim) for kind, entry in models.items()},
        rating_scale=(float(scale[0]), float(scale[1])),
        match_threshold=_number(f"{name}: settings", settings, "match_threshold"),
        neighbour_share=_number(f"{name}: settings", settings, "neighbour_share"),
        embedder=embedder,
        embedding_dim=dim,
        source=name,
        sha256=hashlib.sha256(data).hexdigest(),
        fitted_on=fitted_on if isinstance(fitted_on, dict) else {},
    )


def _nonneg_ridge(gram: np.ndarray, moment: np.ndarray, penalty: np.ndarray,
                  n_bounded: int) -> np.ndarray:
    """argmin ``‖Xw − y‖² + Σ penalty·w²`` with ``w[:n_bounded] ≥ 0``, from ``XᵀX`` and
    ``Xᵀy``.

    The objective is strictly convex, so its minimum is the unconstrained minimum on one
    face ``{w_S = 0}`` of the bounded coordinates: every face is solved (2^n_bounded linear
    systems; n_bounded is the handful of features) and the best feasible one is kept.
    """
    from itertools import combinations

    a = gram + np.diag(penalty)
    width = len(moment)
    best: tuple[float, np.ndarray] | None = None
    for size in range(n_bounded + 1):
        for fixed in combinations(range(n_bounded), size):
            free = np.setdiff1d(np.arange(width), fixed)
            w = np.zeros(width)
            w[free] = np.linalg.solve(a[np.ix_(free, free)], moment[free])
            if np.any(w[:n_bounded] < 0):
                continue
            if size == 0:          # the unconstrained minimum is feasible: it is the minimum
                return w
            value = float(w @ a @ w - 2.0 * moment @ w)
            if best is None or value < best[0] - 1e-12:
                best = (value, w)
    assert best is not None        # the face with every bounded coordinate at 0 is feasible
    return best[1]


def _centred_blocks(features: Mapping[str, np.ndarray], ratings: Mapping[str, np.ndarray],
                    vectors: Mapping[str, np.ndarray] | None
                    ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per prompt: centred design X, centred ratings y, XᵀX and Xᵀy."""
    if not features or set(features) != set(ratings) or (
            vectors is not None and set(vectors) != set(features)):
        raise ValueError("features, ratings (and vectors) must cover the same, non-empty set "
                         "of prompts")
    blocks = {}
    for prompt, x in features.items():
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(ratings[prompt], dtype=np.float64)
        if x.ndim != 2 or len(x) != len(y) or len(y) < 2:
            raise ValueError(f"prompt {prompt!r}: need ≥ 2 rows of features with a rating each")
        parts = [x - x.mean(axis=0)]
        if vectors is not None:
            v = np.asarray(vectors[prompt])
            if len(v) != len(y):
                raise ValueError(f"prompt {prompt!r}: {len(v)} vectors for {len(y)} ratings")
            parts.append(centred_unit(v))
        design, centred = np.hstack(parts), y - y.mean()
        blocks[prompt] = (design, centred, design.T @ design, design.T @ centred)
    return blocks


def _solve(blocks: Mapping[str, tuple[np.ndarray, ...]], prompts: Sequence[str],
           n_features: int, ridge: float, probe_ridge: float | None) -> np.ndarray:
    gram = sum(blocks[p][2] for p in prompts)
    moment = sum(blocks[p][3] for p in prompts)
    width = blocks[prompts[0]][0].shape[1]
    penalty = np.r_[np.full(n_features, ridge),
                    np.full(width - n_features, probe_ridge if probe_ridge else 0.0)]
    return _nonneg_ridge(np.asarray(gram), np.asarray(moment), penalty, n_features)


def fit_calibration(features: Mapping[str, np.ndarray], ratings: Mapping[str, np.ndarray],
                    ridge: float = FEATURE_RIDGE, *,
                    vectors: Mapping[str, np.ndarray] | None = None,
                    probe_ridge: float | None = None) -> KindModel:
    """The within-prompt ridge of the module docstring, with ``β ≥ 0``.

    Parameters
    ----------
    features : mapping prompt → array (n, n_features)
    ratings : mapping prompt → array (n,)
        Human ratings of the same rows.
    ridge : float
        L2 penalty on the feature coefficients.
    vectors : mapping prompt → array (n, dim), optional
        Raw "brief + answer" vectors of the same rows: fit a probe on them (unit, centred
        per prompt), with L2 penalty ``probe_ridge`` (required then).

    Each prompt's features and ratings are centred on their means before the fit (a
    fixed-effects fit: only the order within a prompt is learned); the intercept makes the
    pooled mean prediction equal the pooled mean rating.
    """
    if vectors is not None and (probe_ridge is None or probe_ridge <= 0):
        raise ValueError("a probe needs a positive probe_ridge")
    blocks = _centred_blocks(features, ratings, vectors)
    n_features = np.asarray(next(iter(features.values()))).shape[1]
    w = _solve(blocks, list(blocks), n_features, ridge, probe_ridge)
    coef = w[:n_features]
    pooled_x = np.vstack([np.asarray(x, dtype=np.float64) for x in features.values()])
    pooled_y = np.concatenate([np.asarray(y, dtype=np.float64) for y in ratings.values()])
    intercept = float(pooled_y.mean() - pooled_x.mean(axis=0) @ coef)
    return KindModel(coef=tuple(float(c) for c in coef), intercept=intercept,
                     probe=w[n_features:] if vectors is not None else None,
                     probe_ridge=probe_ridge if vectors is not None else None)


def select_probe_ridge(features: Mapping[str, np.ndarray], ratings: Mapping[str, np.ndarray],
                       vectors: Mapping[str, np.ndarray],
                       ridges: Sequence[float] = PROBE_RIDGES) -> float:
    """The probe penalty with the best mean Spearman ρ, leave-one-prompt-out within these
    prompts (fit on all but one, rank the held-out one); ties go to the larger penalty."""
    from scipy.stats import spearmanr

    prompts = sorted(features)
    if len(prompts) < 2:
        raise ValueError("choosing the probe penalty needs at least two prompts")
    blocks = _centred_blocks(features, ratings, vectors)
    n_features = np.asarray(features[prompts[0]]).shape[1]
    best: tuple[float, float] | None = None
    for ridge in sorted(ridges, reverse=True):
        rhos = []
        for held in prompts:
            w = _solve(blocks, [p for p in prompts if p != held], n_features, FEATURE_RIDGE,
                       ridge)
            rhos.append(float(spearmanr(blocks[held][0] @ w, ratings[held]).statistic))
        mean = statistics.fmean(rhos)
        if best is None or mean > best[0] + 1e-12:
            best = (mean, ridge)
    assert best is not None
    return best[1]


def fit_kind_models(prompts: Mapping[str, PromptData], kinds: Sequence[str] | None = None,
                    ridges: Sequence[float] = PROBE_RIDGES) -> dict[str, KindModel]:
    """One model per kind (module docstring): a probe model fitted on the kind's own
    prompts when there are at least :data:`MIN_PROBE_PROMPTS`, else the features-only model
    fitted on all prompts. ``kinds`` defaults to the prompts' kinds (a kind absent from the
    prompts gets the features-only model)."""
    wanted = sorted(set(kinds) if kinds is not None else {d.kind for d in prompts.values()})
    models: dict[str, KindModel] = {}
    shared: KindModel | None = None
    for kind in wanted:
        own = {p: d for p, d in prompts.items() if d.kind == kind}
        if len(own) >= MIN_PROBE_PROMPTS:
            x = {p: d.features for p, d in own.items()}
            y = {p: d.ratings for p, d in own.items()}
            v = {p: d.vectors for p, d in own.items()}
            models[kind] = fit_calibration(
                x, y, vectors=v, probe_ridge=select_probe_ridge(x, y, v, ridges))
        else:
            if shared is None:
                shared = fit_calibration({p: d.features for p, d in prompts.items()},
                                         {p: d.ratings for p, d in prompts.items()})
            models[kind] = shared
    return models


def predict_rating(features: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """``b + X·β`` (module docstring; the probe term is :meth:`KindModel.rating`'s)."""
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

    A probe's input is centred on all the task's responses in ``tables`` (the reference
    population included), as in the fit.

    Raises
    ------
    InputError
        When the run's settings or embedder differ from the calibration's, a scored task is
        of a kind the calibration was not fitted on, or the embedder's vectors are not of
        the probe's dimension.
    """
    import dataclasses

    from creagraph.tig.score import idea_text

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
    task_ids = list(dict.fromkeys(s.task_id for s in run.scores))
    responses = [r for task_id in task_ids
                 for r in tables[task_id].responses if r.response_id in scored]
    distances = concept_distances(responses, embedder, concepts)
    x = feature_matrix(run.scores, distances)
    kind_of = {s.task_id: s.kind for s in run.scores}
    probed = [t for t in task_ids if calibration.models[kind_of[t]].probe is not None]
    vectors: dict[str, np.ndarray] = {}
    if probed:
        texts = {r.response_id: idea_text(r) for t in probed for r in tables[t].responses}
        distinct = list(dict.fromkeys(texts.values()))
        raw = np.asarray(embedder.encode(distinct), dtype=np.float64)
        if raw.ndim != 2 or raw.shape[1] != calibration.embedding_dim:
            raise InputError(f"{calibration.source}: its probe reads {calibration.embedding_dim}"
                             f"-dimensional vectors, the embedder gives {raw.shape[-1]}")
        row = {text: i for i, text in enumerate(distinct)}
        for t in probed:
            ids = [r.response_id for r in tables[t].responses]
            centred = centred_unit(raw[[row[texts[i]] for i in ids]])
            vectors.update(zip(ids, centred, strict=True))
    rating = np.zeros(len(run.scores))
    novelty = np.zeros(len(run.scores))
    kinds = np.array([s.kind for s in run.scores])
    for kind in sorted(set(kinds.tolist())):
        rows = np.flatnonzero(kinds == kind)
        v = (np.stack([vectors[run.scores[i].response_id] for i in rows])
             if calibration.models[kind].probe is not None else None)
        rating[rows], novelty[rows] = calibration.novelty(kind, x[rows], v)
    scores = [dataclasses.replace(
        s, novelty=round(float(n), 6), uncalibrated_novelty=s.novelty,
        predicted_rating=round(float(y), 6), concept_distance=round(float(row_x[2]), 6))
        for s, n, y, row_x in zip(run.scores, novelty, rating, x, strict=True)]
    return dataclasses.replace(run, scores=scores)


def leave_one_prompt_out(prompts: Mapping[str, PromptData],
                         ridges: Sequence[float] = PROBE_RIDGES) -> dict[str, np.ndarray]:
    """Predicted ratings of each prompt by the models :func:`fit_kind_models` fits on the
    other prompts (the probe penalty chosen among those alone): the calibration's
    cross-prompt validation."""
    kinds = sorted({d.kind for d in prompts.values()})
    found = {}
    for held, data in prompts.items():
        models = fit_kind_models({p: d for p, d in prompts.items() if p != held}, kinds, ridges)
        model = models[data.kind]
        found[held] = model.rating(data.features, centred_unit(data.vectors)
                                   if model.probe is not None else None)
    return found
