"""Leave-two-models-out (L2MO) reference populations and their anchors (SPEC §4.6).

When models m_a and m_b are compared on task t, the clichés used to judge them come from
a reference population built only from the *other* models' responses (all their samples):
with 14 models × 3 samples that is 12 × 3 = 36 reference ideas. Neither candidate can shape
the anchors that judge it.

Incremental computation
    Atoms are extracted and their forms embedded once per task (:func:`~creagraph.tig.
    population.build_atom_tables`), and each table caches its same-type similarity blocks.
    Per pair only the cheap part is redone on the other models' atoms: canonical grouping
    (a greedy pass over cached similarities), the graph's edges, per-type clustering and
    scores (:func:`~creagraph.tig.population.build_population` with a model subset). This
    gives exactly what a from-scratch build over the reference responses gives
    (:func:`l2mo_population_from_scratch`; equality is tested) because every step depends
    only on the included atoms' forms, counts and vectors. (This needs an embedder that
    returns the same vector for a text whatever it is batched with; the default
    :class:`~creagraph.core.embeddings.CachedEmbedder` does, since a text is embedded once
    and then read from its cache, and similarities are rounded to 1e-6 before use.)

Examples
--------
>>> model_pairs(["c", "a", "b"])
[('a', 'b'), ('a', 'c'), ('b', 'c')]
>>> reference_models(["a", "b", "c", "d"], ("b", "d"))
['a', 'c']
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from creagraph.core.progress import progress
from creagraph.tig.anchors import anchor_steps, anchors_for_population, core_ideas
from creagraph.tig.atoms import AtomExtractor
from creagraph.tig.config import DEFAULT_MIN_MODELS, DEFAULT_TOP_K
from creagraph.tig.population import (
    AtomTable,
    Population,
    TigConfig,
    build_atom_tables,
    build_population,
)
from creagraph.tig.schema import ChecklistAnchor, Response, comparison_key

__all__ = [
    "model_pairs",
    "reference_models",
    "L2MOResult",
    "l2mo_population",
    "l2mo_population_from_scratch",
    "l2mo_results",
]


def model_pairs(models: Iterable[str]) -> list[tuple[str, str]]:
    """All unordered pairs of distinct models, each sorted, in sorted order."""
    return list(itertools.combinations(sorted(set(models)), 2))


def reference_models(models: Iterable[str], pair: tuple[str, str]) -> list[str]:
    """The models of the L2MO reference population for ``pair`` (sorted).

    Raises
    ------
    ValueError
        When the pair repeats a model or names one absent from ``models``.
    """
    model_set = set(models)
    a, b = pair
    comparison_key(a, b)  # validates a != b
    missing = {a, b} - model_set
    if missing:
        raise ValueError(f"pair names models without responses: {sorted(missing)}")
    return sorted(model_set - {a, b})


def l2mo_population(table: AtomTable, pair: tuple[str, str],
                    config: TigConfig | None = None) -> Population:
    """The reference population of ``pair`` on the table's task (incremental build).

    Raises
    ------
    ValueError
        When fewer than one model would remain.
    """
    others = reference_models(table.models, pair)
    if not others:
        raise ValueError(
            f"task {table.task_id!r}: no models left after leaving out {pair[0]!r} and "
            f"{pair[1]!r}"
        )
    return build_population(table, others, config, comparison_key=comparison_key(*pair))


def l2mo_population_from_scratch(
    responses: Sequence[Response],
    pair: tuple[str, str],
    extractor: AtomExtractor | None = None,
    embedder: Any = None,
    config: TigConfig | None = None,
) -> Population:
    """The same reference population, rebuilt from the other models' responses alone.

    This is the baseline the incremental :func:`l2mo_population` is checked and timed
    against: atoms are re-extracted and re-embedded for the reference responses only.
    ``responses`` must hold one task.
    """
    tasks = {r.task_id for r in responses}
    if len(tasks) != 1:
        raise ValueError(f"expected the responses of one task, got {len(tasks)} tasks")
    others = set(reference_models({r.model for r in responses}, pair))
    kept = [r for r in responses if r.model in others]
    tables = build_atom_tables(kept, extractor, embedder, show_progress=False)
    (table,) = tables.values()
    return build_population(table, None, config, comparison_key=comparison_key(*pair))


@dataclass(frozen=True)
class L2MOResult:
    """Anchors of one (task, model pair) with the reference population's size."""

    task_id: str
    comparison_key: str
    reference_models: tuple[str, ...]
    n_reference_responses: int
    n_clusters: int
    anchors: tuple[ChecklistAnchor, ...]
    note: str = ""


def _task_results(table: AtomTable, pairs: Sequence[tuple[str, str]] | None,
                  config: TigConfig, top_k: int, min_models: int,
                  concept: str | None, writer: Any = None) -> list[L2MOResult]:
    from creagraph.tig.brief import brief_concept, brief_terms, task_kind

    first = table.responses[0]
    kind = task_kind(first.brief, first.family, first.kind)
    terms = brief_terms(first.brief, concept, instructions=True)
    concept = brief_concept(first.brief, concept, kind)
    texts = core_ideas(table.responses)
    results = []
    populations = (l2mo_population(table, pair, config)
                   for pair in (pairs if pairs is not None else model_pairs(table.models)))
    options: dict[str, Any] = dict(top_k=top_k, min_models=min_models, concept=concept, kind=kind,
                   brief_terms=terms, brief=first.brief, response_texts=texts)
    found: Iterable[tuple[Population, list[ChecklistAnchor]]]
    if writer is None:
        found = ((p, anchors_for_population(p, **options)) for p in populations)
    else:  # the writer is asked about every comparison's next cluster at once
        from creagraph.tig.anchor_writer import write_steps

        held = list(populations)
        found = zip(held, write_steps(
            [anchor_steps(p, writer=writer, **options) for p in held], writer), strict=True)
    for population, anchors in found:
        note = ""
        if len(population.models) < min_models:
            note = (f"the reference population has {len(population.models)} model(s), "
                    f"fewer than min_models={min_models}: no cluster can qualify")
        elif not anchors:
            note = f"no cluster of the reference population is hit by {min_models} models"
        results.append(
            L2MOResult(
                task_id=table.task_id,
                comparison_key=population.comparison_key,
                reference_models=population.models,
                n_reference_responses=population.n_responses,
                n_clusters=len(population.clusters),
                anchors=tuple(anchors),
                note=note,
            )
        )
    return results


def _worker(args: tuple) -> list[L2MOResult]:
    table, pairs, config, top_k, min_models, concept = args
    return _task_results(table, pairs, config, top_k, min_models, concept)


def l2mo_results(
    tables: dict[str, AtomTable],
    config: TigConfig | None = None,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    top_k: int = DEFAULT_TOP_K,
    min_models: int = DEFAULT_MIN_MODELS,
    concepts: dict[str, str] | None = None,
    n_jobs: int = 1,
    show_progress: bool = True,
    skipped: dict[str, str] | None = None,
    writer: Any = None,
) -> Iterator[L2MOResult]:
    """L2MO anchors for every task and model pair (or the given ``pairs``).

    Parameters
    ----------
    tables : dict task_id → AtomTable
        From :func:`~creagraph.tig.population.build_atom_tables`.
    config : TigConfig, optional
        Pipeline parameters.
    pairs : sequence of (model, model), optional
        Only these pairs (each task uses those whose models both answered it).
    top_k, min_models : int
        See :func:`~creagraph.tig.anchors.anchors_for_population`.
    concepts : dict task_id → str, optional
        The concept named in anchor questions per task.
    n_jobs : int
        Worker processes (spawned; each task's table is sent whole to one worker).
        1 = in this process.
    show_progress : bool
        A progress bar over tasks.
    skipped : dict, optional
        Filled with ``task_id → reason`` for every task that cannot be compared (fewer
        than three models, or no given pair among its models); the other tasks are
        still yielded. Anchor questions name each task's concept read from its brief
        (``concepts`` overrides it) and are worded for its kind (visual or use task).
    writer : AnchorWriter, optional
        Who keeps and names the anchors (see :func:`~creagraph.tig.anchors.
        anchors_for_population`); given one, every task runs in this process.

    Yields
    ------
    L2MOResult
        Tasks in sorted order, pairs in sorted order within a task.
    """
    config = config or TigConfig()
    concepts = concepts or {}
    jobs = []
    for task_id in sorted(tables):
        table = tables[task_id]
        if len(table.models) < 3:
            if skipped is not None:
                skipped[task_id] = (
                    f"{len(table.models)} model(s) answered; leaving two models out needs "
                    "at least 3"
                )
            continue
        task_pairs: list[tuple[str, str]] | None = None
        if pairs is not None:
            task_pairs = [(min(p), max(p)) for p in pairs
                          if p[0] in table.models and p[1] in table.models]
            if not task_pairs:
                if skipped is not None:
                    skipped[task_id] = "no requested pair has both models in this task"
                continue
        jobs.append((task_id, task_pairs, config, top_k, min_models, concepts.get(task_id)))
    if n_jobs > 1 and len(jobs) > 1 and writer is None:
        # "spawn": fresh interpreters, so no lock or thread pool (torch, BLAS, sqlite) of
        # this process is inherited half-held, as can happen with "fork"
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(n_jobs, os.cpu_count() or 1),
                                 mp_context=context) as pool:
            outputs = pool.map(_worker, ((tables[job[0]], *job[1:]) for job in jobs))
            for batch in progress(outputs, total=len(jobs), desc="L2MO anchors",
                                  unit="task") if show_progress else outputs:
                yield from batch
        return
    for job in progress(jobs, total=len(jobs), desc="L2MO anchors", unit="task") \
            if show_progress else jobs:
        yield from _task_results(tables[job[0]], *job[1:], writer=writer)
