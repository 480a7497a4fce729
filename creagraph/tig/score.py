"""Novelty of one response against the population of the other models (SPEC §4.10).

Definition
----------
Let r be a response of model m to task t, and P₋ₘ the *reference population*: every
response of every other model to t (its own model left out, as in L2MO, so a model's
samples never make each other look common and scores compare across models).

* **Idea vector** ``e(r)``: the unit MiniLM embedding of ``"<brief> <core idea>"`` — the idea
  read in the brief's context, so what every answer shares (the brief) cancels out and
  the idea's relation to the brief is what differs. (Measured on the human-rated
  Alternative Uses dev prompts: context embedding is what lets distance track human
  originality; see ``benchmarks/novelty_human.py``.)
* **Distance** ``D(r) = 1 − (1/k) Σ_{j ∈ kNN(r)} cos(e(r), e(j))`` over the k nearest
  reference responses, ``k = max(1, ⌈ρ·|P₋ₘ|⌉)`` with ``ρ = 0.15``: how far the idea lies
  from the dense part of the population (a share, not a fixed k, so it reads the same for
  36 reference ideas and for 1,500); clipped to [0, 1].
* **Cliché hit** ``H(r)``: each atom of r that does not restate the brief (SPEC §4.9) is
  mapped to its nearest canonical atom of P₋ₘ's Typed Idea Graph; when their similarity is
  at least the graph's similarity threshold (default 0.5) the atom *hits* that node's
  cluster. ``H(r)`` is the mean over r's atoms of the ClichéScore (SPEC §4.5) of the hit
  cluster (0 for an atom that hits nothing); 0 for a response without atoms.
* **Novelty** ``N(r) = D(r) · (1 − w·H(r))`` with ``w = 0.1``. On the human-rated dev
  prompts the cliché hit alone agrees weakly with people (Spearman −0.08 to −0.22 on two
  prompts) and larger weights lowered agreement, so distance carries the number and the
  clusters hit are mainly its evidence (a larger ``w`` suits atoms from an LLM extractor).

``N`` lies in [0, 1], higher = more original; it is non-decreasing in ``D`` and
non-increasing in ``H`` (strictly, while the other factor leaves room: ``H < 1/w`` and
``D > 0``), tested in ``tests/tig/test_score.py``. The evidence of each score — the
clusters hit with their ClichéScores and coherence (mean within-cluster similarity), and
each atom's nearest reference atom — is returned with it.

Speed: idea texts are embedded in one batched call through the cached embedder; nearest
neighbours are blockwise NumPy matrix products with ``argpartition`` (memory bounded by
``block × |P₋ₘ|``); one reference population is built per (task, model).

Examples
--------
>>> round(novelty_value(0.4, 0.0), 6), round(novelty_value(0.4, 1.0), 6)
(0.4, 0.36)
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
    "idea_text",
    "knn_distance",
    "score_tables",
    "score_responses",
    "write_scores",
]


def novelty_value(distance: float | np.ndarray, cliche: float | np.ndarray,
                  cliche_weight: float = 0.1) -> float | np.ndarray:
    """``N = D · (1 − w·H)`` for distance ``D`` and cliché hit ``H``, both in [0, 1].

    Examples
    --------
    >>> novelty_value(0.5, 0.2) > novelty_value(0.5, 0.4)
    True
    """
    d = np.clip(np.asarray(distance, dtype=np.float64), 0.0, 1.0)
    h = np.clip(np.asarray(cliche, dtype=np.float64), 0.0, 1.0)
    value = d * (1.0 - cliche_weight * h)
    return float(value) if value.ndim == 0 else value


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
    """The novelty of one response with its evidence (see the module docstring)."""

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "response_id": self.response_id,
            "task_id": self.task_id,
            "model": self.model,
            "novelty": self.novelty,
            "distance": self.distance,
            "cliche": self.cliche,
            "n_reference_responses": self.n_reference_responses,
            "n_reference_models": self.n_reference_models,
            "nearest_response_id": self.nearest_response_id,
            "atoms": [dict(a) for a in self.atoms],
            "clusters_hit": [dict(c) for c in self.clusters_hit],
        }


@dataclass
class ScoreRun:
    """Scores of a run, with the tasks skipped and why (a task with one model cannot be
    compared), and warnings."""

    scores: list[ResponseScore] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def n_without_atoms(self) -> int:
        """Scored responses with no atom beyond the brief: their novelty rests on distance
        alone."""
        return sum(1 for s in self.scores if not any(not a["from_brief"] for a in s.atoms))


def _node_vectors(table: AtomTable, population: Population) -> np.ndarray:
    text_of_form, rep = table.form_texts()
    index = {table.form_text[f]: f for f in rep.tolist()}
    if not population.canonical:
        return np.zeros((0, table.form_vectors.shape[1]), dtype=np.float32)
    return table.form_vectors[[index[c.label] for c in population.canonical]]


def _score_model(table: AtomTable, model: str, idea_vectors: np.ndarray,
                 config: TigConfig, score_config: ScoreConfig) -> list[ResponseScore]:
    others = [m for m in table.models if m != model]
    population = build_population(table, others, config, comparison_key=f"-{model}")
    model_id = table.models.index(model)
    own = np.flatnonzero(table.response_model == model_id)
    ref = np.flatnonzero(table.response_model != model_id)
    k = max(1, math.ceil(score_config.neighbour_share * len(ref)))
    distance, nearest = knn_distance(idea_vectors[own], idea_vectors[ref], k,
                                     score_config.block)
    own_atoms = np.flatnonzero(table.response_model[table.atom_response] == model_id)
    atoms_of: dict[int, list[int]] = {}
    for a in own_atoms.tolist():
        atoms_of.setdefault(int(table.atom_response[a]), []).append(a)
    evidence = _AtomEvidence(table, population, own_atoms, config.similarity_threshold,
                             score_config.block)
    scores = []
    for row, r in enumerate(own.tolist()):
        atom_records, hits, hit_clusters = evidence.of_atoms(atoms_of.get(r, []))
        cliche = float(np.mean(hits)) if hits else 0.0
        d = float(distance[row])
        scores.append(
            ResponseScore(
                response_id=table.responses[r].response_id,
                task_id=table.task_id,
                model=model,
                novelty=round(float(novelty_value(d, cliche, score_config.cliche_weight)), 6),
                distance=round(d, 6),
                cliche=round(cliche, 6),
                n_reference_responses=len(ref),
                n_reference_models=len(others),
                nearest_response_id=table.responses[int(ref[nearest[row]])].response_id,
                atoms=tuple(atom_records),
                clusters_hit=tuple(_clusters_hit(population, hit_clusters)),
            )
        )
    return scores


class _AtomEvidence:
    """Each own atom's nearest canonical atom of the reference population and the cluster
    it hits (when similar enough): the evidence behind a response's cliché share."""

    def __init__(self, table: AtomTable, population: Population, own_atoms: np.ndarray,
                 threshold: float, block: int):
        self.table = table
        self.population = population
        self.threshold = threshold
        self.cluster_score = np.array([c.cliche_score for c in population.clusters])
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
                 ) -> tuple[list[dict[str, Any]], list[float], dict[int, None]]:
        """``(atom records, cliché hit of each atom not from the brief, clusters hit in
        order)`` of one response's atoms."""
        table, population = self.table, self.population
        atom_records: list[dict[str, Any]] = []
        hits: list[float] = []
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
                if similarity >= self.threshold:
                    k_cluster = int(population.node_cluster[node])
                    record["cluster_id"] = population.clusters[k_cluster].id
                    hits.append(float(self.cluster_score[k_cluster]))
                    hit_clusters[k_cluster] = None
                else:
                    record["cluster_id"] = None
                    hits.append(0.0)
            elif not self.from_brief[a]:
                hits.append(0.0)
            atom_records.append(record)
        return atom_records, hits, hit_clusters


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


def score_tables(
    tables: dict[str, AtomTable],
    embedder: Any = None,
    config: TigConfig | None = None,
    score_config: ScoreConfig | None = None,
    *,
    show_progress: bool = True,
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

    Returns
    -------
    ScoreRun
        Scores in task order, then response id; a task whose responses come from one
        model only is skipped with its reason recorded (the rest is scored).
    """
    config = config or TigConfig()
    score_config = score_config or ScoreConfig()
    if embedder is None:
        from creagraph.core.embeddings import default_embedder

        embedder = default_embedder()
    run = ScoreRun()
    comparable = {}
    for task_id, table in tables.items():
        if len(table.models) < 2:
            run.skipped[task_id] = (
                f"only one model ({table.models[0] if table.models else 'none'}) answered: "
                "no other models to judge it against"
            )
        else:
            comparable[task_id] = table
    texts = [idea_text(r) for table in comparable.values() for r in table.responses]
    vectors = embedder.encode(texts) if texts else np.zeros((0, 1), dtype=np.float32)
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms > 0, norms, 1.0)
    offset = 0
    items = list(comparable.items())
    iterator = progress(items, total=len(items), desc="score", unit="task") \
        if show_progress else items
    for _task_id, table in iterator:
        task_vectors = vectors[offset : offset + len(table.responses)]
        offset += len(table.responses)
        by_id: dict[str, ResponseScore] = {}
        for model in table.models:
            for s in _score_model(table, model, task_vectors, config, score_config):
                by_id[s.response_id] = s
        run.scores.extend(by_id[r.response_id] for r in table.responses)
    no_atoms = run.n_without_atoms
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
