"""Novelty of one response against the population of the other models (SPEC §4.10).

Definition
----------
Let r be a response of model m to task t, and P₋ₘ the *reference population*: every
response of every other model to t (its own model left out, as in L2MO, so a model's
samples never make each other look common and scores compare across models). With a
separate reference (``tig score --reference``) P₋ₘ is the reference population's responses
to t, never a scored model's own.

* **Task kind** (:func:`creagraph.tig.brief.task_kind`): for uses, consequences and
  instances the idea unit is the whole short answer; for visual briefs and open prompts
  it is each typed atom of the Core Idea that does not restate the brief (SPEC §4.9).
* **Idea vector** ``e(r)``: the unit MiniLM embedding of ``"<brief> <core idea>"`` — the idea
  read in the brief's context, so what every answer shares (the brief) cancels out.
* **Distance** ``D(r) = 1 − (1/k) Σ_{j ∈ kNN(r)} cos(e(r), e(j))`` over the k nearest
  reference responses, ``k = max(1, ⌈ρ·|P₋ₘ|⌉)`` with ``ρ = 0.15``; clipped to [0, 1]. This
  is the *plain-distance baseline* (no atoms, graph or clusters).
* **Matched idea**: the reference ideas that are paraphrases of r's idea — cosine at least
  the synonym threshold ``τ = 0.8`` (not the looser similarity-edge threshold). For a
  short answer, the reference answers whose idea vectors lie within τ of ``e(r)``; for an
  atom, the TIG cluster (SPEC §4.4) of its nearest
  canonical atom of P₋ₘ's graph when that is within τ. Let ``n_r`` be the reference
  responses and ``n_m`` the reference models in the matched idea, of ``N`` responses and
  ``M`` models.
* **Rarity** ``R = ½·[ln((N+1)/(n_r+1)) / ln(N+1) + ln((M+1)/(n_m+1)) / ln(M+1)]``
  (:func:`rarity_value`): the smoothed surprisal of the idea's share of reference
  responses and of models, each scaled to [0, 1] — 1 for an idea no reference response
  has, 0 for one every reference response of every model has. A response with several
  atoms has the mean rarity of its atoms (an atom that matches nothing has rarity 1); a
  response with no atom beyond the brief has no rarity and is scored by ``D`` alone.
* **Novelty** ``N(r) = α·R(r) + (1 − α)·D(r)`` with ``α = 0.5`` (:func:`idea_novelty`):
  rarity carries the number; distance orders the ideas that share a rarity (the many
  that match no paraphrase, and the ideas of one cluster).

``N`` lies in [0, 1], higher = more original; it is non-increasing in ``n_r`` and ``n_m``
and non-decreasing in ``D`` (tested in ``tests/tig/test_score.py``). Beside it each score
keeps the cliché hit ``H(r)`` of the atoms (mean ClichéScore, SPEC §4.5, of the clusters
its atoms hit at the similarity threshold) and the baseline formula of earlier versions,
``novelty_value(D, H) = D·(1 − 0.1·H)``.

**Calibration** (optional, off by default; :mod:`creagraph.tig.calibration`): per task
kind, a ridge over ``D``, ``R`` and the answer's distance from the brief's concept
(non-negative weights) plus, for uses, a linear probe on the answer's idea vector, fitted
within prompts on human originality ratings, replaces ``N`` for uses and instances answers
when asked for (``tig score --calibrated``); each score then keeps its uncalibrated ``N``.

**Within-model repetition** (NoveltyBench's distinct-k): the responses of one model to one
task are grouped greedily into ideas at τ (a response joins the first earlier group whose
leader is a paraphrase of it); ``distinct = groups / responses``. A model repeating one idea
over k samples has 1/k; it is reported per model beside the novelty mean
(:meth:`ScoreRun.model_summary`), whose 95 % interval is a percentile bootstrap over tasks
(over responses when the model answered fewer than five tasks).

Speed: every distinct text is embedded once, in one batched call through the cached
embedder; nearest neighbours and matches are blockwise NumPy matrix products (memory
bounded by ``block × |P₋ₘ|``); short-answer tasks build no per-model graph (their ideas
are the answers), so only visual and open tasks build one reference population per
(task, model).

Examples
--------
>>> round(novelty_value(0.4, 0.0), 6), round(novelty_value(0.4, 1.0), 6)
(0.4, 0.36)
>>> rarity_value(0, 100, 0, 9), rarity_value(100, 100, 9, 9)
(1.0, 0.0)
>>> round(idea_novelty(1.0, 0.2), 6)
0.6
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from creagraph.core.progress import progress
from creagraph.tig.config import ScoreConfig
from creagraph.tig.population import AtomTable, Population, TigConfig, build_population
from creagraph.tig.schema import ATOM_TYPES, Response

__all__ = [
    "ScoreConfig",
    "ResponseScore",
    "ScoreRun",
    "novelty_value",
    "rarity_value",
    "idea_novelty",
    "distinct_ideas",
    "idea_text",
    "knn_distance",
    "score_tables",
    "score_responses",
    "write_scores",
]


def novelty_value(distance: float | np.ndarray, cliche: float | np.ndarray,
                  cliche_weight: float = 0.1) -> float | np.ndarray:
    """The earlier baseline ``B = D · (1 − w·H)`` for distance ``D`` and cliché hit ``H``,
    both in [0, 1].

    Examples
    --------
    >>> novelty_value(0.5, 0.2) > novelty_value(0.5, 0.4)
    True
    """
    d = np.clip(np.asarray(distance, dtype=np.float64), 0.0, 1.0)
    h = np.clip(np.asarray(cliche, dtype=np.float64), 0.0, 1.0)
    value = d * (1.0 - cliche_weight * h)
    return float(value) if value.ndim == 0 else value


def rarity_value(matched_responses: int | np.ndarray, n_responses: int,
                 matched_models: int | np.ndarray, n_models: int) -> float | np.ndarray:
    """Rarity ``R`` of an idea matched by ``matched_responses`` of ``n_responses``
    reference responses and ``matched_models`` of ``n_models`` models (module docstring).

    Examples
    --------
    >>> rarity_value(1, 100, 1, 9) > rarity_value(5, 100, 1, 9) > rarity_value(5, 100, 4, 9)
    True
    """
    if n_responses < 1 or n_models < 1:
        raise ValueError("a reference population needs at least one response and one model")
    n_r = np.clip(np.asarray(matched_responses, dtype=np.float64), 0, n_responses)
    n_m = np.clip(np.asarray(matched_models, dtype=np.float64), 0, n_models)
    by_responses = np.log((n_responses + 1) / (n_r + 1)) / math.log(n_responses + 1)
    by_models = np.log((n_models + 1) / (n_m + 1)) / math.log(n_models + 1)
    value = np.clip(0.5 * (by_responses + by_models), 0.0, 1.0)
    return float(value) if value.ndim == 0 else value


def idea_novelty(rarity: float | np.ndarray, distance: float | np.ndarray,
                 rarity_weight: float = 0.5) -> float | np.ndarray:
    """``N = α·R + (1 − α)·D`` for rarity ``R`` and distance ``D`` in [0, 1].

    Examples
    --------
    >>> idea_novelty(0.9, 0.3) > idea_novelty(0.5, 0.3)
    True
    """
    r = np.clip(np.asarray(rarity, dtype=np.float64), 0.0, 1.0)
    d = np.clip(np.asarray(distance, dtype=np.float64), 0.0, 1.0)
    value = rarity_weight * r + (1.0 - rarity_weight) * d
    return float(value) if value.ndim == 0 else value


def distinct_ideas(vectors: np.ndarray, threshold: float) -> np.ndarray:
    """Greedy idea groups of unit ``vectors`` (in order): a row joins the first group
    whose leader it matches at ``threshold``, else leads a new group. Returns each
    row's group index.

    Examples
    --------
    >>> v = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> distinct_ideas(v, 0.8).tolist()
    [0, 0, 1]
    """
    group = np.zeros(len(vectors), dtype=np.int64)
    leaders: list[int] = []
    if not len(vectors):
        return group
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    for i in range(len(vectors)):
        for g, leader in enumerate(leaders):
            if sims[i, leader] >= threshold:
                group[i] = g
                break
        else:
            group[i] = len(leaders)
            leaders.append(i)
    return group


def idea_text(response: Response) -> str:
    """The text embedded as a response's idea: ``"<brief> <core idea>"``."""
    return f"{response.brief.strip()} {response.core_idea.strip()}".strip()


def knn_distance(queries: np.ndarray, reference: np.ndarray, k: int,
                 block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``1 − mean cosine`` to the ``k`` nearest reference rows, and the nearest row's index.

    Rows must be unit vectors. Computed in blocks of ``block`` query rows.

    Examples
    --------
    >>> q = np.array([[1.0, 0.0]]); r = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> d, nearest = knn_distance(q, r, 1)
    >>> d.round(6).tolist(), nearest.tolist()
    ([0.0], [0])
    """
    n, m = len(queries), len(reference)
    if m == 0:
        raise ValueError("the reference population is empty")
    k = max(1, min(int(k), m))
    distance = np.zeros(n)
    nearest = np.zeros(n, dtype=np.int64)
    ref = np.ascontiguousarray(reference, dtype=np.float32)
    for start in range(0, n, block):
        sims = np.ascontiguousarray(queries[start : start + block], dtype=np.float32) @ ref.T
        nearest[start : start + block] = sims.argmax(axis=1)
        top = np.partition(sims, m - k, axis=1)[:, m - k:] if k < m else sims
        distance[start : start + block] = 1.0 - top.astype(np.float64).mean(axis=1)
    return np.clip(distance, 0.0, 1.0), nearest


@dataclass(frozen=True)
class ResponseScore:
    """The novelty of one response with its evidence (see the module docstring).

    ``distance`` is the plain-distance baseline ``D``; ``rarity`` is ``None`` for a
    response with no idea beyond the brief (its novelty is ``D``); ``matched`` describes the
    matched idea of a short answer (reference responses and models in it, the nearest
    paraphrase); ``distinct`` is the within-model repetition of its (task, model). A
    calibrated score (:func:`creagraph.tig.calibration.calibrate_run`) has the calibrated
    novelty, and keeps the ``uncalibrated_novelty``, the ``predicted_rating`` and the
    ``concept_distance`` feature.
    """

    response_id: str
    task_id: str
    model: str
    novelty: float
    distance: float
    cliche: float
    n_reference_responses: int
    n_reference_models: int
    nearest_response_id: str
    atoms: tuple[dict[str, Any], ...]
    clusters_hit: tuple[dict[str, Any], ...]
    kind: str = "visual"
    rarity: float | None = None
    matched: dict[str, Any] | None = None
    distinct: float | None = None
    uncalibrated_novelty: float | None = None
    predicted_rating: float | None = None
    concept_distance: float | None = None

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "response_id": self.response_id,
            "task_id": self.task_id,
            "model": self.model,
            "kind": self.kind,
            "novelty": self.novelty,
            "rarity": self.rarity,
            "distance": self.distance,
            "cliche": self.cliche,
            "distinct": self.distinct,
            "n_reference_responses": self.n_reference_responses,
            "n_reference_models": self.n_reference_models,
            "nearest_response_id": self.nearest_response_id,
            "matched": dict(self.matched) if self.matched is not None else None,
            "atoms": [dict(a) for a in self.atoms],
            "clusters_hit": [dict(c) for c in self.clusters_hit],
        }
        if self.predicted_rating is not None:  # calibrated (creagraph.tig.calibration)
            record.update(uncalibrated_novelty=self.uncalibrated_novelty,
                          predicted_rating=self.predicted_rating,
                          concept_distance=self.concept_distance)
        return record


@dataclass
class ScoreRun:
    """Scores of a run, with the tasks skipped and why (a task with one model cannot be
    compared), and warnings. ``repetition[(task_id, model)] = (responses, distinct
    ideas)``."""

    scores: list[ResponseScore] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    repetition: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    @property
    def n_without_atoms(self) -> int:
        """Scored responses with no atom beyond the brief: their novelty rests on distance
        alone."""
        return sum(1 for s in self.scores if not any(not a["from_brief"] for a in s.atoms))

    def model_summary(self, n_boot: int = 2000, seed: int = 0,
                      level: float = 0.95) -> list[dict[str, Any]]:
        """Per model: responses and tasks scored, novelty mean with a percentile
        bootstrap interval (over tasks; over responses under five tasks), plain-distance
        mean, and the within-model distinct share (mean over tasks of distinct ideas /
        responses).

        Examples
        --------
        >>> run.model_summary()[0]["novelty_mean"]      # doctest: +SKIP
        """
        by_model: dict[str, dict[str, list[float]]] = {}
        distance: dict[str, list[float]] = {}
        for s in self.scores:
            by_model.setdefault(s.model, {}).setdefault(s.task_id, []).append(s.novelty)
            distance.setdefault(s.model, []).append(s.distance)
        rng = np.random.default_rng(seed)
        rows = []
        for model in sorted(by_model):
            tasks = by_model[model]
            values = np.array([v for vs in tasks.values() for v in vs])
            low = high = float("nan")
            unit = "tasks" if len(tasks) >= 5 else "responses"
            if n_boot > 0 and len(values) > 1:
                if unit == "tasks":
                    sums = np.array([sum(v) for v in tasks.values()])
                    counts = np.array([len(v) for v in tasks.values()])
                    pick = rng.integers(0, len(tasks), size=(n_boot, len(tasks)))
                    means = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
                else:
                    pick = rng.integers(0, len(values), size=(n_boot, len(values)))
                    means = values[pick].mean(axis=1)
                low, high = (float(x) for x in np.quantile(
                    means, [(1 - level) / 2, 1 - (1 - level) / 2]))
            reps = [self.repetition[(t, model)] for t in tasks if (t, model) in self.repetition]
            distinct = [d / n for n, d in reps if n]
            rows.append({
                "model": model,
                "n_responses": len(values),
                "n_tasks": len(tasks),
                "novelty_mean": round(float(values.mean()), 6),
                "ci_low": round(low, 6),
                "ci_high": round(high, 6),
                "interval_over": unit,
                "distance_mean": round(float(np.mean(distance[model])), 6),
                "distinct_share": round(float(np.mean(distinct)), 6) if distinct else None,
            })
        return rows


def _node_vectors(table: AtomTable, population: Population) -> np.ndarray:
    text_of_form, rep = table.form_texts()
    index = {table.form_text[f]: f for f in rep.tolist()}
    if not population.canonical:
        return np.zeros((0, table.form_vectors.shape[1]), dtype=np.float32)
    return table.form_vectors[[index[c.label] for c in population.canonical]]


def _reference_rows(table: AtomTable, model: str, reference: Sequence[str] | None
                    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(own rows, reference rows, reference models)`` of one scored model: the other
    models, or the given reference models except the model itself."""
    model_id = table.models.index(model)
    others = [m for m in (reference if reference is not None else table.models) if m != model]
    other_ids = np.array([table.models.index(m) for m in others], dtype=np.int64)
    own = np.flatnonzero(table.response_model == model_id)
    ref = np.flatnonzero(np.isin(table.response_model, other_ids))
    return own, ref, others


def _distinct(vectors: np.ndarray, own: np.ndarray, threshold: float) -> tuple[int, int]:
    groups = distinct_ideas(vectors[own], threshold)
    return len(own), int(groups.max()) + 1 if len(own) else 0


def _score_model(table: AtomTable, model: str, idea_vectors: np.ndarray,
                 config: TigConfig, score_config: ScoreConfig, *,
                 match_vectors: np.ndarray | None = None, kind: str = "visual",
                 reference: Sequence[str] | None = None
                 ) -> tuple[list[ResponseScore], tuple[int, int]]:
    """Scores of one model's responses to one task (visual and open kinds: ideas are
    atoms) and its ``(responses, distinct ideas)``."""
    own, ref, others = _reference_rows(table, model, reference)
    match_vectors = idea_vectors if match_vectors is None else match_vectors
    population = build_population(table, others, config, comparison_key=f"-{model}")
    model_id = table.models.index(model)
    k = max(1, math.ceil(score_config.neighbour_share * len(ref)))
    distance, nearest = knn_distance(idea_vectors[own], idea_vectors[ref], k,
                                     score_config.block)
    own_atoms = np.flatnonzero(table.response_model[table.atom_response] == model_id)
    atoms_of: dict[int, list[int]] = {}
    for a in own_atoms.tolist():
        atoms_of.setdefault(int(table.atom_response[a]), []).append(a)
    evidence = _AtomEvidence(table, population, own_atoms, config.similarity_threshold,
                             score_config.block, score_config.match_threshold)
    repetition = _distinct(match_vectors, own, score_config.match_threshold)
    distinct = repetition[1] / repetition[0] if repetition[0] else None
    scores = []
    for row, r in enumerate(own.tolist()):
        atom_records, hits, hit_clusters, rarities = evidence.of_atoms(atoms_of.get(r, []))
        cliche = float(np.mean(hits)) if hits else 0.0
        d = float(distance[row])
        rarity = float(np.mean(rarities)) if rarities else None
        novelty = d if rarity is None else float(
            idea_novelty(rarity, d, score_config.rarity_weight))
        scores.append(
            ResponseScore(
                response_id=table.responses[r].response_id,
                task_id=table.task_id,
                model=model,
                novelty=round(novelty, 6),
                distance=round(d, 6),
                cliche=round(cliche, 6),
                n_reference_responses=len(ref),
                n_reference_models=len(others),
                nearest_response_id=table.responses[int(ref[nearest[row]])].response_id,
                atoms=tuple(atom_records),
                clusters_hit=tuple(_clusters_hit(population, hit_clusters)),
                kind=kind,
                rarity=None if rarity is None else round(rarity, 6),
                distinct=None if distinct is None else round(distinct, 6),
            )
        )
    return scores, repetition


def _score_short(table: AtomTable, model: str, idea_vectors: np.ndarray,
                 match_vectors: np.ndarray, score_config: ScoreConfig, *, kind: str,
                 reference: Sequence[str] | None = None
                 ) -> tuple[list[ResponseScore], tuple[int, int]]:
    """Scores of one model's short answers (uses, consequences, instances): the whole
    answer is the idea, matched to its paraphrases among the reference answers."""
    own, ref, others = _reference_rows(table, model, reference)
    k = max(1, math.ceil(score_config.neighbour_share * len(ref)))
    distance, nearest = knn_distance(idea_vectors[own], idea_vectors[ref], k,
                                     score_config.block)
    ref_knn = ref
    # reference rows grouped by model, so a model's hits are one contiguous slice
    ref = ref[np.argsort(table.response_model[ref], kind="stable")]
    ref_models = table.response_model[ref]
    starts = np.flatnonzero(np.r_[True, ref_models[1:] != ref_models[:-1]])
    ref_t = np.ascontiguousarray(match_vectors[ref].T, dtype=np.float32)
    tau = score_config.match_threshold
    n_matched = np.zeros(len(own), dtype=np.int64)
    m_matched = np.zeros(len(own), dtype=np.int64)
    best = np.zeros(len(own), dtype=np.int64)
    best_sim = np.zeros(len(own))
    for start in range(0, len(own), score_config.block):
        sims = np.ascontiguousarray(match_vectors[own[start : start + score_config.block]],
                                    dtype=np.float32) @ ref_t
        hit = sims >= tau
        n_matched[start : start + len(sims)] = hit.sum(axis=1)
        m_matched[start : start + len(sims)] = (
            np.add.reduceat(hit.astype(np.int32), starts, axis=1) > 0).sum(axis=1)
        best[start : start + len(sims)] = sims.argmax(axis=1)
        best_sim[start : start + len(sims)] = sims.max(axis=1)
    rarity = np.asarray(rarity_value(n_matched, len(ref), m_matched, len(others)))
    novelty = np.asarray(idea_novelty(rarity, distance, score_config.rarity_weight))
    repetition = _distinct(match_vectors, own, tau)
    distinct = repetition[1] / repetition[0] if repetition[0] else None
    from_brief = table.atom_from_brief
    atoms_of: dict[int, list[dict[str, Any]]] = {}
    for a in np.flatnonzero(table.response_model[table.atom_response]
                            == table.models.index(model)).tolist():
        atoms_of.setdefault(int(table.atom_response[a]), []).append({
            "text": table.atom_text[a],
            "type": ATOM_TYPES[int(table.form_type[table.atom_form[a]])],
            "from_brief": bool(from_brief[a]),
        })
    scores = []
    for row, r in enumerate(own.tolist()):
        paraphrase = table.responses[int(ref[best[row]])]
        scores.append(ResponseScore(
            response_id=table.responses[r].response_id,
            task_id=table.task_id,
            model=model,
            novelty=round(float(novelty[row]), 6),
            distance=round(float(distance[row]), 6),
            cliche=0.0,
            n_reference_responses=len(ref),
            n_reference_models=len(others),
            nearest_response_id=table.responses[int(ref_knn[nearest[row]])].response_id,
            atoms=tuple(atoms_of.get(r, [])),
            clusters_hit=(),
            kind=kind,
            rarity=round(float(rarity[row]), 6),
            matched={"n_responses": int(n_matched[row]), "n_models": int(m_matched[row]),
                     "nearest_paraphrase": paraphrase.core_idea,
                     "nearest_paraphrase_id": paraphrase.response_id,
                     "similarity": round(float(best_sim[row]), 6)},
            distinct=None if distinct is None else round(distinct, 6),
        ))
    return scores, repetition


class _AtomEvidence:
    """Each own atom's nearest canonical atom of the reference population and the cluster
    it hits (when similar enough): the evidence behind a response's cliché share."""

    def __init__(self, table: AtomTable, population: Population, own_atoms: np.ndarray,
                 threshold: float, block: int, match_threshold: float = 0.8):
        self.table = table
        self.population = population
        self.threshold = threshold
        self.match_threshold = match_threshold
        self.cluster_score = np.array([c.cliche_score for c in population.clusters])
        n_ref, n_models = max(1, population.n_responses), max(1, len(population.models))
        # rarity of each cluster: its share of reference responses and of models
        self.cluster_rarity = np.array([
            rarity_value(len({a[1] for a in population.cluster_atoms(k)}), n_ref,
                         len(c.models), n_models)
            for k, c in enumerate(population.clusters)])
        self.from_brief = table.atom_from_brief
        node_vectors = _node_vectors(table, population)
        self.has_nodes = bool(len(node_vectors))
        # nearest reference canonical atom of every own atom: one blockwise product
        self.best_node = np.zeros(table.n_atoms, dtype=np.int64)
        self.best_sim = np.zeros(table.n_atoms)
        if len(node_vectors) and len(own_atoms):
            nodes_t = np.ascontiguousarray(node_vectors.T, dtype=np.float32)
            for start in range(0, len(own_atoms), block):
                chunk = own_atoms[start : start + block]
                sims = table.form_vectors[table.atom_form[chunk]].astype(np.float32) @ nodes_t
                best = sims.argmax(axis=1)
                self.best_node[chunk] = best
                self.best_sim[chunk] = sims[np.arange(len(chunk)), best]

    def of_atoms(self, atoms: Sequence[int]
                 ) -> tuple[list[dict[str, Any]], list[float], dict[int, None], list[float]]:
        """``(atom records, cliché hit of each atom not from the brief, clusters hit in
        order, rarity of each atom not from the brief)`` of one response's atoms."""
        table, population = self.table, self.population
        atom_records: list[dict[str, Any]] = []
        hits: list[float] = []
        rarities: list[float] = []
        hit_clusters: dict[int, None] = {}
        for a in atoms:
            record: dict[str, Any] = {
                "text": table.atom_text[a],
                "type": ATOM_TYPES[int(table.form_type[table.atom_form[a]])],
                "from_brief": bool(self.from_brief[a]),
            }
            if not self.from_brief[a] and self.has_nodes:
                node = int(self.best_node[a])
                similarity = round(float(self.best_sim[a]), 6)
                record["nearest"] = {"label": population.canonical[node].label,
                                     "type": population.canonical[node].type,
                                     "similarity": similarity}
                k_match = int(population.node_cluster[node])
                if similarity >= self.match_threshold:
                    record["rarity"] = round(float(self.cluster_rarity[k_match]), 6)
                    rarities.append(float(self.cluster_rarity[k_match]))
                else:
                    rarities.append(1.0)
                if similarity >= self.threshold:
                    k_cluster = k_match
                    record["cluster_id"] = population.clusters[k_cluster].id
                    hits.append(float(self.cluster_score[k_cluster]))
                    hit_clusters[k_cluster] = None
                else:
                    record["cluster_id"] = None
                    hits.append(0.0)
            elif not self.from_brief[a]:
                hits.append(0.0)
                rarities.append(1.0)
            atom_records.append(record)
        return atom_records, hits, hit_clusters, rarities


def _clusters_hit(population: Population, hit_clusters: Iterable[int]) -> list[dict[str, Any]]:
    """The clusters a response hit, most cliché first."""
    clusters: list[dict[str, Any]] = []
    for k_cluster in hit_clusters:
        c = population.clusters[k_cluster]
        clusters.append({"cluster_id": c.id, "type": c.type, "summary": c.summary,
                         "cliche_score": c.cliche_score, "coherence": c.convergence,
                         "coverage": c.coverage, "n_models": len(c.models)})
    clusters.sort(key=lambda c: (-c["cliche_score"], c["cluster_id"]))
    return clusters


def _embed_unit(embedder: Any, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Unit vectors of the distinct ``texts``, embedded once in one batched call."""
    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return {}
    raw = np.asarray(embedder.encode(distinct), dtype=np.float32)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    vectors = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return dict(zip(distinct, vectors, strict=True))


def score_tables(
    tables: dict[str, AtomTable],
    embedder: Any = None,
    config: TigConfig | None = None,
    score_config: ScoreConfig | None = None,
    *,
    show_progress: bool = True,
    reference_models: Iterable[str] | None = None,
) -> ScoreRun:
    """Score every response of every task against its other-models population.

    Parameters
    ----------
    tables : dict task_id → AtomTable
        From :func:`~creagraph.tig.population.build_atom_tables`.
    embedder : Embedder, optional
        Default :func:`creagraph.core.embeddings.default_embedder`.
    config : TigConfig, optional
        Graph and cluster parameters of the reference populations.
    score_config : ScoreConfig, optional
        Novelty parameters.
    reference_models : iterable of str, optional
        The models of a separate reference population (``tig score --reference``): only
        the other models are scored, each against these models' responses (never its
        own); default: every model is scored against all the other models.

    Returns
    -------
    ScoreRun
        Scores in task order, then response id; a task whose responses come from one
        model only (or, with a reference, without a scored or a reference model) is
        skipped with its reason recorded (the rest is scored).
    """
    from creagraph.tig.brief import is_short_answer, task_kind

    config = config or TigConfig()
    score_config = score_config or ScoreConfig()
    if embedder is None:
        from creagraph.core.embeddings import default_embedder

        embedder = default_embedder()
    reference = None if reference_models is None else set(reference_models)
    run = ScoreRun()
    comparable: dict[str, tuple[AtomTable, list[str], list[str] | None]] = {}
    for task_id, table in tables.items():
        if reference is None:
            if len(table.models) < 2:
                run.skipped[task_id] = (
                    f"only one model ({table.models[0] if table.models else 'none'}) "
                    "answered: no other models to judge it against")
                continue
            comparable[task_id] = (table, list(table.models), None)
            continue
        scored = [m for m in table.models if m not in reference]
        ref_models = [m for m in table.models if m in reference]
        if not scored:
            run.skipped[task_id] = "no scored model answered it (reference responses only)"
        elif not ref_models:
            run.skipped[task_id] = "the reference population has no response to it"
        elif len(ref_models) == 1 and ref_models[0] in scored:
            run.skipped[task_id] = "its only reference model is the scored model itself"
        else:
            comparable[task_id] = (table, scored, ref_models)
    kinds = {task_id: task_kind(t.responses[0].brief, t.responses[0].family,
                                t.responses[0].kind)
             for task_id, (t, _, _) in comparable.items()}
    texts = [idea_text(r) for t, _, _ in comparable.values() for r in t.responses]
    unit = _embed_unit(embedder, texts)
    items = list(comparable.items())
    iterator = progress(items, total=len(items), desc="score", unit="task") \
        if show_progress else items
    for task_id, (table, scored, task_reference) in iterator:
        dim = next(iter(unit.values())).shape[0]
        task_vectors = np.stack([unit[idea_text(r)] for r in table.responses]) \
            if table.responses else np.zeros((0, dim), dtype=np.float32)
        # paraphrases are matched in the brief's context too (measured on the human-rated
        # dev prompts: the answer embedded alone matched unrelated answers; RESULTS.md)
        match_vectors = task_vectors
        kind = kinds[task_id]
        by_id: dict[str, ResponseScore] = {}
        for model in scored:
            if is_short_answer(kind):
                found, repetition = _score_short(table, model, task_vectors, match_vectors,
                                                 score_config, kind=kind,
                                                 reference=task_reference)
            else:
                found, repetition = _score_model(table, model, task_vectors, config,
                                                 score_config, match_vectors=match_vectors,
                                                 kind=kind, reference=task_reference)
            run.repetition[(task_id, model)] = repetition
            for s in found:
                by_id[s.response_id] = s
        run.scores.extend(by_id[r.response_id] for r in table.responses
                          if r.response_id in by_id)
    no_atoms = sum(1 for s in run.scores if s.rarity is None)
    if run.scores and no_atoms / len(run.scores) >= 0.02:
        run.warnings.append(
            f"{no_atoms} of {len(run.scores)} responses ({no_atoms / len(run.scores):.1%}) have "
            "no atom beyond the brief: their novelty rests on distance alone"
        )
    return run


def score_responses(
    responses: Sequence[Response],
    extractor: Any = None,
    embedder: Any = None,
    config: TigConfig | None = None,
    score_config: ScoreConfig | None = None,
    *,
    concepts: dict[str, str] | None = None,
    show_progress: bool = True,
) -> ScoreRun:
    """Extract atoms, build tables and :func:`score_tables` (the Python API of
    ``creagraph tig score``).

    Examples
    --------
    >>> run = score_responses(responses)                       # doctest: +SKIP
    >>> run.scores[0].novelty, run.scores[0].clusters_hit[:1]  # doctest: +SKIP
    """
    from creagraph.tig.population import build_atom_tables

    if embedder is None:
        from creagraph.core.embeddings import default_embedder

        embedder = default_embedder()
    tables = build_atom_tables(responses, extractor, embedder, show_progress=show_progress,
                               concepts=concepts)
    return score_tables(tables, embedder, config, score_config, show_progress=show_progress)


def write_scores(path: str | os.PathLike[str], scores: Iterable[ResponseScore]) -> int:
    """Write scores as JSON Lines (atomically), one line per response; returns the count."""
    from creagraph.core.io import write_jsonl

    return write_jsonl(path, (s.to_dict() for s in scores))
