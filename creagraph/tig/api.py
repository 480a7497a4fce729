"""The Typed Idea Graph pipeline as library functions (SPEC §4), as ``creagraph tig`` runs it.

load → atoms → build → clusters → anchors → score → judge, each a function with plain
inputs and outputs; ``creagraph tig`` (:mod:`creagraph.tig.cli`) parses options, claims
its output files and prints, and the demo (:mod:`creagraph.demo`) calls the same
functions, so a Python run and a CLI run give the same files.

* :func:`load_population` — a responses file or a population source by name
  (:data:`creagraph.tig.config.SOURCES`: ``jsonl``, ``noveltybench``, ``aut`` or a user's
  ``module:attr``), then the task filters;
* :func:`make_extractor` — an atom extractor by name
  (:data:`creagraph.tig.config.EXTRACTORS`: ``offline``, ``json``, ``llm`` or
  ``module:attr``);
* :func:`atom_tables` — atoms extracted and embedded once per task;
* :func:`write_build` — atoms, canonical atoms and each task's graph in a folder;
* :func:`cluster_rows` — cliché clusters of whole or leave-two-models-out populations;
* :func:`find_anchors` — checklist anchors (L2MO per model pair, or whole population);
* :func:`score_population` — novelty per response, optionally calibrated;
* :func:`judge_population` — checklist-assisted pairwise judging.

Library functions return their warnings (``warnings`` fields) instead of printing them;
errors are :class:`~creagraph.core.io.InputError` naming what to fix.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from creagraph.core.io import InputError
from creagraph.tig.config import (
    DEFAULT_MIN_MODELS,
    DEFAULT_TOP_K,
    EXTRACTORS,
    SOURCES,
    TigConfig,
)

if TYPE_CHECKING:
    from creagraph.tig.atoms_base import AtomExtractor
    from creagraph.tig.calibration import NoveltyCalibration
    from creagraph.tig.population import AtomTable, Population
    from creagraph.tig.schema import Response
    from creagraph.tig.score import ScoreConfig, ScoreRun

__all__ = [
    "SourceContext",
    "ExtractorContext",
    "load_population",
    "with_reference",
    "make_extractor",
    "atom_tables",
    "parse_pairs",
    "check_pairs",
    "check_min_models",
    "BuildSummary",
    "write_build",
    "ClusterRows",
    "cluster_rows",
    "AnchorRun",
    "find_anchors",
    "score_population",
    "judge_population",
    "max_runs",
]


# load ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourceContext:
    """What a population source (:data:`creagraph.tig.config.SOURCES`) is given: the
    responses file (the ``jsonl`` source), the shared folder and the NoveltyBench Core
    Idea mode."""

    responses: Path | None = None
    shared_dir: Path | None = None
    core_idea: str = "first_sentence"


def jsonl_source(*, context: SourceContext) -> list[Response]:
    """The ``jsonl`` source: the responses file (:func:`creagraph.tig.io.read_responses`)."""
    from creagraph.tig.io import read_responses

    if context.responses is None:
        raise InputError("give a responses JSONL file (or --source noveltybench|aut)")
    return read_responses(context.responses)


def noveltybench_source(*, context: SourceContext) -> list[Response]:
    """The ``noveltybench`` source: the curated NoveltyBench population of the shared
    folder (:func:`creagraph.tig.adapters.load_noveltybench_curated`)."""
    from creagraph.tig.adapters import load_noveltybench_curated
    from creagraph.tig.config import CoreIdea

    return load_noveltybench_curated(context.shared_dir, core_idea=CoreIdea(context.core_idea))


def aut_source(*, context: SourceContext, **options: Any) -> list[Response]:
    """The ``aut`` source: the MCTB Alternative Uses population of the shared folder
    (:func:`creagraph.tig.adapters.load_aut_population`; ``options``: its ``objects``,
    ``models``, ``max_runs``)."""
    from creagraph.tig.adapters import load_aut_population

    return load_aut_population(context.shared_dir, **options)


def _population_of(source: str, made: Any) -> list[Response]:
    """The responses a source returned, checked to be :class:`Response` objects."""
    from creagraph.tig.schema import Response

    population = list(made)
    bad = next((r for r in population if not isinstance(r, Response)), None)
    if bad is not None:
        raise InputError(f"population source {source!r} returned a {type(bad).__name__}, "
                         "not creagraph.tig.schema.Response")
    return population


def _task_filter(tasks: str | Sequence[str] | None) -> set[str] | None:
    if tasks is None:
        return None
    items = tasks.split(",") if isinstance(tasks, str) else list(tasks)
    return {t.strip() for t in items if t.strip()} or None


def load_population(
    responses: str | Path | None = None,
    *,
    source: str = "jsonl",
    shared_dir: str | Path | None = None,
    tasks: str | Sequence[str] | None = None,
    limit_tasks: int | None = None,
    core_idea: str = "first_sentence",
    source_args: Mapping[str, Any] | None = None,
) -> list[Response]:
    """A population: the ``responses`` file, or the responses of ``source`` (a name of
    :data:`~creagraph.tig.config.SOURCES` or a ``module:attr`` callable returning
    Responses, called with ``source_args``), keeping ``tasks`` (ids, or a comma-separated
    string; each must have responses) and then the first ``limit_tasks`` tasks (sorted).

    Raises
    ------
    InputError
        No responses file for ``jsonl``, an unknown source, a task without responses, or
        an empty population.
    """
    context = SourceContext(Path(responses) if responses is not None else None,
                            Path(shared_dir) if shared_dir is not None else None,
                            str(getattr(core_idea, "value", core_idea)))
    name = str(getattr(source, "value", source))
    population = _population_of(name, SOURCES.create(name, context=context,
                                                     **dict(source_args or {})))
    wanted = _task_filter(tasks)
    if wanted is not None:
        population = [r for r in population if r.task_id in wanted]
        missing = wanted - {r.task_id for r in population}
        if missing:
            raise InputError(f"no responses for task(s) {', '.join(sorted(missing))}")
    if limit_tasks is not None:
        keep = set(sorted({r.task_id for r in population})[:limit_tasks])
        population = [r for r in population if r.task_id in keep]
    if not population:
        raise InputError("the population is empty")
    return population


def with_reference(scored: list[Response], reference: list[Response], *, where: str,
                   tasks: str | Sequence[str] | None = None) -> tuple[list[Response], set[str]]:
    """The responses to score followed by a reference population, and the reference's
    models (:func:`score_population` scores only the others against it).

    Only the reference's responses to the tasks answered are kept. ``where`` (the scored
    responses' file) prefixes the errors: a model or a response id in both, nothing left to
    score after keeping ``tasks``, or an answered task the reference does not have.
    """
    ref_models = {r.model for r in reference}
    clash = sorted({r.model for r in scored} & ref_models)
    if clash:
        raise InputError(f"{where}: model(s) {', '.join(clash)} also in the reference "
                         "population: rename them")
    ids = {r.response_id for r in reference}
    dup = next((r.response_id for r in scored if r.response_id in ids), None)
    if dup is not None:
        raise InputError(f"{where}: response_id {dup!r} is also in the reference")
    wanted = _task_filter(tasks)
    if wanted is not None:
        scored = [r for r in scored if r.task_id in wanted]
    if not scored:
        raise InputError(f"{where}: no response to score")
    # Only the tasks answered matter: the reference's other tasks would be built, then
    # skipped one warning each (a shared population has ~100 tasks).
    answered = {r.task_id for r in scored}
    reference = [r for r in reference if r.task_id in answered]
    missing = sorted(answered - {r.task_id for r in reference})
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                           else "")
        raise InputError(f"{where}: task(s) {shown} not in the reference population: "
                         "nothing to compare those responses with (leave them out with --tasks)")
    return scored + reference, {r.model for r in reference}


def max_runs(population: list[Response], runs: int | None) -> list[Response]:
    """The first ``runs`` runs (AUT) or samples (other sources) of each model."""
    if runs is None:
        return population
    return [r for r in population if int(r.meta.get("run", r.sample)) < runs]


# atoms --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExtractorContext:
    """What an atom extractor (:data:`creagraph.tig.config.EXTRACTORS`) is given: the
    pre-extracted atoms file and the LLM endpoint settings."""

    atoms: Path | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None


def json_extractor(*, context: ExtractorContext) -> AtomExtractor:
    """The ``json`` extractor: atoms read from a pre-extracted atoms file."""
    from creagraph.tig.atoms import PreExtractedAtoms

    if context.atoms is None:
        raise InputError("--extractor json needs --atoms FILE")
    return PreExtractedAtoms(context.atoms)


def llm_extractor(*, context: ExtractorContext) -> AtomExtractor:
    """The ``llm`` extractor: an OpenAI-compatible chat model."""
    from creagraph.tig.atoms import OpenAIChatExtractor

    return OpenAIChatExtractor(context.llm_base_url, context.llm_model, context.llm_api_key)


def make_extractor(
    extractor: str = "offline",
    *,
    atoms: str | Path | None = None,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_api_key: str | None = None,
    extractor_args: Mapping[str, Any] | None = None,
) -> AtomExtractor:
    """The atom extractor named ``extractor`` (a name of
    :data:`~creagraph.tig.config.EXTRACTORS` or ``module:attr``, made with
    ``extractor_args``); it must have ``name`` and ``extract(responses)``."""
    context = ExtractorContext(Path(atoms) if atoms is not None else None, llm_base_url,
                               llm_model, llm_api_key)
    name = str(getattr(extractor, "value", extractor))
    made: AtomExtractor = EXTRACTORS.create(name, context=context, **dict(extractor_args or {}))
    return made


def atom_tables(population: Sequence[Response], extractor: AtomExtractor | None = None,
                *, concept: str | None = None, embedder: Any = None,
                show_progress: bool = True) -> dict[str, AtomTable]:
    """The population's atom tables, one per task
    (:func:`creagraph.tig.population.build_atom_tables`); ``concept`` is added to every
    task's brief (atoms restating it are flagged)."""
    from creagraph.tig.population import build_atom_tables

    concepts = {r.task_id: concept for r in population} if concept else None
    return build_atom_tables(population, extractor, embedder, concepts=concepts,
                             show_progress=show_progress)


def parse_pairs(values: Sequence[str] | None) -> list[tuple[str, str]] | None:
    """``["A,B", ...]`` as model pairs (``None`` for none)."""
    if not values:
        return None
    pairs = []
    for value in values:
        parts = [p.strip() for p in value.split(",")]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise InputError(f"--pair expects two different models as A,B; got {value!r}")
        pairs.append((parts[0], parts[1]))
    return pairs


def check_pairs(pairs: Sequence[tuple[str, str]] | None, tables: Mapping[str, AtomTable]) -> None:
    """A pair naming a model that answered no task is a typo: an error naming it."""
    if not pairs:
        return
    known = sorted({m for table in tables.values() for m in table.models})
    unknown = sorted({m for pair in pairs for m in pair} - set(known))
    if unknown:
        shown = ", ".join(known[:12]) + (" …" if len(known) > 12 else "")
        raise InputError(f"--pair names model(s) with no responses: {', '.join(unknown)} "
                         f"(models: {shown})")


def check_min_models(min_models: int, tables: Mapping[str, AtomTable],
                     whole_population: bool) -> None:
    """``min_models`` must fit in the populations the anchors come from."""
    if min_models < 1:
        raise InputError("--min-models must be at least 1")
    most = max((len(t.models) for t in tables.values()), default=0)
    available = most if whole_population else most - 2
    if min_models > available:
        raise InputError(
            f"--min-models {min_models} exceeds the models a "
            f"{'population' if whole_population else 'leave-two-models-out reference'} "
            f"can hold here ({max(available, 0)}: the largest task has {most} models)"
        )


# build --------------------------------------------------------------------------------
@dataclass(frozen=True)
class BuildSummary:
    """What :func:`write_build` wrote."""

    n_responses: int
    n_atoms: int
    n_canonical: int
    n_graphs: int


def _write_table_atoms(path: Path, tables: Mapping[str, AtomTable]) -> tuple[int, int]:
    """Every table's atoms (typed by their form, flagged when restating the brief) as one
    atoms file; returns ``(responses, atoms)`` written."""
    from creagraph.tig.io import write_atoms
    from creagraph.tig.schema import ATOM_TYPES, Atom

    all_responses: list[Response] = []
    all_atoms: list[list[Atom]] = []
    all_flags: list[list[bool]] = []
    for table in tables.values():
        per_response: list[list[Atom]] = [[] for _ in table.responses]
        flags: list[list[bool]] = [[] for _ in table.responses]
        for a in range(table.n_atoms):
            kind = ATOM_TYPES[int(table.form_type[table.atom_form[a]])]
            per_response[int(table.atom_response[a])].append(Atom(kind, table.atom_text[a]))
            flags[int(table.atom_response[a])].append(bool(table.atom_from_brief[a]))
        all_responses.extend(table.responses)
        all_atoms.extend(per_response)
        all_flags.extend(flags)
    write_atoms(path, all_responses, all_atoms, all_flags)
    return len(all_responses), sum(len(a) for a in all_atoms)


def _write_graphs(out: Path, tables: Mapping[str, AtomTable], config: TigConfig,
                  graph_format: str) -> list[dict[str, Any]]:
    """Each task's Typed Idea Graph in ``out/graphs``; returns the canonical atom rows."""
    from creagraph.core.outdir import unique_file_stems
    from creagraph.core.progress import progress
    from creagraph.tig.graph import write_graph_json, write_graphml
    from creagraph.tig.population import build_population

    stems = unique_file_stems(list(tables), "task id")  # escaped: "a/b" and "a_b" differ
    canonical_rows: list[dict[str, Any]] = []
    # A new folder replaces the last run's whole, so no graph of other settings stays.
    new, old = out / ".graphs.new", out / ".graphs.old"
    for leftover in (new, old):
        shutil.rmtree(leftover, ignore_errors=True)
    new.mkdir()
    for task_id, table in progress(tables.items(), total=len(tables), desc="graphs",
                                   unit="task"):
        pop = build_population(table, None, config)
        canonical_rows.extend(c.to_dict() for c in pop.canonical)
        if graph_format in ("graphml", "both"):
            write_graphml(pop, new / f"{stems[task_id]}.graphml")
        if graph_format in ("json", "both"):
            write_graph_json(pop, new / f"{stems[task_id]}.json")
    if (out / "graphs").exists():
        (out / "graphs").rename(old)
    new.rename(out / "graphs")
    shutil.rmtree(old, ignore_errors=True)
    return canonical_rows


def write_build(out: str | Path, tables: Mapping[str, AtomTable], config: TigConfig | None = None,
                graph_format: str = "graphml") -> BuildSummary:
    """Write ``atoms.jsonl``, ``canonical.jsonl`` and ``graphs/`` (one GraphML and/or JSON
    file per task) into the folder ``out`` (the caller claims it,
    :func:`creagraph.core.outdir.claim_output_dir`); the graphs folder is replaced whole."""
    from creagraph.core.io import write_jsonl

    folder = Path(out)
    fmt = str(getattr(graph_format, "value", graph_format))
    if fmt not in ("graphml", "json", "both"):
        raise InputError(f"graph_format must be graphml, json or both, not {fmt!r}")
    n_responses, n_atoms = _write_table_atoms(folder / "atoms.jsonl", tables)
    canonical_rows = _write_graphs(folder, tables, config or TigConfig(), fmt)
    write_jsonl(folder / "canonical.jsonl", canonical_rows)
    return BuildSummary(n_responses, n_atoms, len(canonical_rows), len(tables))


# clusters -----------------------------------------------------------------------------
@dataclass
class ClusterRows:
    """What :func:`cluster_rows` found: one record per cluster, and the skipped tasks."""

    rows: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


def _comparison_populations(table: AtomTable, pairs: Sequence[tuple[str, str]] | None,
                            config: TigConfig, warnings: list[str]) -> list[Population]:
    """The whole population of ``table``, or its L2MO reference population of each pair
    whose two models answered (noting a task that has none or too few models)."""
    from creagraph.tig.l2mo import l2mo_population
    from creagraph.tig.population import build_population

    if pairs is None:
        return [build_population(table, None, config)]
    usable = [p for p in pairs if p[0] in table.models and p[1] in table.models]
    if not usable:
        warnings.append(f"task {table.task_id!r} skipped: no --pair has both models in it")
    elif len(table.models) < 3:
        warnings.append(f"task {table.task_id!r} skipped: {len(table.models)} model(s) "
                        "answered; leaving two models out needs at least 3")
        usable = []
    return [l2mo_population(table, p, config) for p in usable]


def cluster_rows(tables: Mapping[str, AtomTable], config: TigConfig | None = None, *,
                 pairs: Sequence[tuple[str, str]] | None = None,
                 show_progress: bool = True) -> ClusterRows:
    """Per-type clusters with ClichéScore, coverage, centrality and convergence (SPEC
    §4.5) of each task's whole population, or of the L2MO reference population of each
    of ``pairs``; clusters by descending ClichéScore, each with its ``comparison_key`` and
    ``n_reference_responses``."""
    from creagraph.core.progress import progress

    config = config or TigConfig()
    found = ClusterRows([])
    values = tables.values()
    for table in progress(values, total=len(tables), desc="clusters", unit="task") \
            if show_progress else values:
        for pop in _comparison_populations(table, pairs, config, found.warnings):
            for cluster in sorted(pop.clusters, key=lambda c: (-c.cliche_score, c.id)):
                row = cluster.to_dict()
                row["comparison_key"] = pop.comparison_key
                row["n_reference_responses"] = pop.n_responses
                found.rows.append(row)
    return found


# anchors ------------------------------------------------------------------------------
@dataclass
class AnchorRun:
    """What :func:`find_anchors` found: the anchors, the comparisons made, the tasks
    skipped (``task → reason``), the count of each note of a comparison without anchors,
    and the L2MO results (empty for the whole population)."""

    anchors: list[Any]
    comparisons: int
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    results: list[Any] = field(default_factory=list)


def find_anchors(tables: Mapping[str, AtomTable], config: TigConfig | None = None, *,
                 pairs: Sequence[tuple[str, str]] | None = None,
                 whole_population: bool = False, top_k: int = DEFAULT_TOP_K,
                 min_models: int = DEFAULT_MIN_MODELS, concept: str | None = None,
                 jobs: int = 1, show_progress: bool = True,
                 writer: Any = None) -> AnchorRun:
    """Checklist anchors (SPEC §4.6–4.7): leave-two-models-out for every model pair (or
    ``pairs``) with ``jobs`` worker processes, or one comparison per task of its whole
    population; questions name ``concept`` (else each brief's own); ``writer`` keeps and
    names them (:mod:`creagraph.tig.anchor_writer`; default the offline rules; given
    one, the comparisons run in this process)."""
    from creagraph.tig.anchors import anchor_steps, core_ideas, next_anchors
    from creagraph.tig.brief import brief_concept, brief_terms, task_kind
    from creagraph.tig.l2mo import l2mo_results
    from creagraph.tig.population import build_population

    config = config or TigConfig()
    if whole_population:
        found: list[Any] = []
        steps = []
        for table in tables.values():
            first = table.responses[0]
            kind = task_kind(first.brief, first.family, first.kind)
            step = anchor_steps(
                build_population(table, None, config), top_k=top_k, min_models=min_models,
                concept=brief_concept(first.brief, concept, kind), kind=kind,
                brief_terms=brief_terms(first.brief, concept, instructions=True),
                brief=first.brief, response_texts=core_ideas(table.responses),
                writer=writer)
            if writer is None:
                found.extend(next_anchors(step))
            else:
                steps.append(step)
        if writer is not None:  # every task's next cluster asked at once
            from creagraph.tig.anchor_writer import write_steps

            found.extend(a for anchors in write_steps(steps, writer) for a in anchors)
        return AnchorRun(found, len(tables))
    run = AnchorRun([], 0)
    concepts = {t: concept for t in tables} if concept else None
    for result in l2mo_results(dict(tables), config, pairs=pairs, top_k=top_k,
                               min_models=min_models, concepts=concepts, n_jobs=jobs,
                               skipped=run.skipped, show_progress=show_progress,
                               writer=writer):
        run.anchors.extend(result.anchors)
        run.results.append(result)
        run.comparisons += 1
        if result.note:
            run.notes[result.note] = run.notes.get(result.note, 0) + 1
    return run


# score --------------------------------------------------------------------------------
def score_population(tables: Mapping[str, AtomTable], config: TigConfig | None = None,
                     score_config: ScoreConfig | None = None, *,
                     reference_models: set[str] | None = None,
                     calibration: NoveltyCalibration | None = None,
                     embedder: Any = None) -> ScoreRun:
    """Novelty of every response against the other models' responses, or of the
    responses of models outside ``reference_models`` against those (SPEC §4.10); with
    ``calibration`` (:func:`creagraph.tig.calibration.load_calibration`), novelty from
    the calibration fitted on human originality ratings."""
    from creagraph.tig.score import ScoreConfig, score_tables

    score_config = score_config or ScoreConfig()
    if calibration is not None:
        calibration.check_run(score_config.match_threshold, score_config.neighbour_share, None)
    run = score_tables(dict(tables), embedder, config or TigConfig(), score_config,
                       reference_models=reference_models)
    if calibration is not None:
        from creagraph.core.embeddings import default_embedder
        from creagraph.tig.calibration import calibrate_run

        run = calibrate_run(run, dict(tables), calibration, embedder or default_embedder(),
                            match_threshold=score_config.match_threshold,
                            neighbour_share=score_config.neighbour_share)
    return run


# judge --------------------------------------------------------------------------------
def judge_population(population: list[Response], settings: Any, out: str | Path, *,
                     extractor: AtomExtractor | None = None,
                     config: TigConfig | None = None, client: Any = None) -> Any:
    """Checklist-assisted pairwise judging into the folder ``out`` (SPEC §4.12;
    :func:`creagraph.tig.judge.run_judging`, resumable): the atom tables are built for
    the novelty dimension only. An inconsistency found in the folder is an
    :class:`InputError` naming it."""
    from creagraph.tig.judge import run_judging

    tables = atom_tables(population, extractor) if settings.dimension == "novelty" else None
    try:
        return run_judging(population, settings, Path(out), tables=tables,
                           config=config or TigConfig(), client=client)
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{out}: {exc}") from exc
