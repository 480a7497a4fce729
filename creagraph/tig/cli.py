"""``creagraph tig``: Ekphrasis novelty anchors from Typed Idea Graphs.

Commands (each reads a population from a JSONL file or a shared-folder adapter):

* ``build``        — extract atoms, canonicalise, write atoms, canonical atoms and graphs;
* ``clusters``     — per-type clusters with ClichéScores (whole population, or the L2MO
  reference population of ``--pair``);
* ``anchors``      — checklist anchors, leave-two-models-out for every model pair (or
  ``--pair``), or from the whole population with ``--whole-population``;
* ``score``        — one novelty number per response against the other models'
  responses, with the clusters hit as evidence (SPEC §4.10);
* ``audit-export`` — blank audit records (CSV or JSONL) for an anchors file;
* ``audit-import`` — validate a filled-in audit file and summarise it.

Heavy libraries (sentence-transformers, igraph, leidenalg) load inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

app = typer.Typer(
    help="Ekphrasis novelty anchors from Typed Idea Graphs.",
    no_args_is_help=True,
    add_completion=False,
)

_SOURCES = ("jsonl", "noveltybench", "aut")
_EXTRACTORS = ("offline", "json", "llm")


def _load(responses: Path | None, source: str, shared_dir: Path | None, tasks: str | None,
          limit_tasks: int | None, core_idea: str) -> list[Any]:
    from creagraph.core.io import InputError
    from creagraph.tig.adapters import load_aut_population, load_noveltybench_curated
    from creagraph.tig.io import read_responses

    if source not in _SOURCES:
        raise InputError(f"--source must be one of {', '.join(_SOURCES)}")
    if source == "jsonl":
        if responses is None:
            raise InputError("give a responses JSONL file (or --source noveltybench|aut)")
        population = read_responses(responses)
    elif source == "noveltybench":
        population = load_noveltybench_curated(shared_dir, core_idea=core_idea)  # type: ignore[arg-type]
    else:
        population = load_aut_population(shared_dir)
    wanted = {t.strip() for t in tasks.split(",") if t.strip()} if tasks else None
    if wanted is not None:
        population = [r for r in population if r.task_id in wanted]
        missing = wanted - {r.task_id for r in population}
        if missing:
            raise InputError(f"no responses for task(s) {', '.join(sorted(missing))}")
    if limit_tasks is not None:
        keep = sorted({r.task_id for r in population})[:limit_tasks]
        population = [r for r in population if r.task_id in set(keep)]
    if not population:
        raise InputError("the population is empty")
    return population


def _key(key: str | None, env: str | None) -> str | None:
    """The API key: from the variable named by --llm-api-key-env, or the deprecated
    --llm-api-key."""
    from creagraph.cliopts import api_key_from_env

    if key is not None:
        typer.echo("note: --llm-api-key is deprecated; use --llm-api-key-env", err=True)
        return key
    return api_key_from_env(env) if env else None


def _extractor(name: str, atoms: Path | None, base_url: str | None, model: str | None,
               api_key: str | None) -> Any:
    from creagraph.core.io import InputError
    from creagraph.tig.atoms import OfflineExtractor, OpenAIChatExtractor, PreExtractedAtoms

    if name not in _EXTRACTORS:
        raise InputError(f"--extractor must be one of {', '.join(_EXTRACTORS)}")
    if name == "json":
        if atoms is None:
            raise InputError("--extractor json needs --atoms FILE")
        return PreExtractedAtoms(atoms)
    if name == "llm":
        return OpenAIChatExtractor(base_url, model, api_key)
    return OfflineExtractor()


def _config(method: str, resolution: float, hierarchical: bool, seed: int,
            canonical_threshold: float, similarity_threshold: float, centrality: str) -> Any:
    from creagraph.tig.population import TigConfig

    return TigConfig(
        canonical_threshold=canonical_threshold,
        similarity_threshold=similarity_threshold,
        cluster_method=method,
        resolution=resolution,
        hierarchical=hierarchical,
        seed=seed,
        centrality=centrality,
    )


def _warn(message: str) -> None:
    typer.echo(f"warning: {message}", err=True)


def _check_pairs(pairs: list[tuple[str, str]] | None, tables: dict[str, Any]) -> None:
    """A --pair naming a model that answered no task is a typo: fail, naming it."""
    from creagraph.core.io import InputError

    if not pairs:
        return
    known = sorted({m for table in tables.values() for m in table.models})
    unknown = sorted({m for pair in pairs for m in pair} - set(known))
    if unknown:
        shown = ", ".join(known[:12]) + (" …" if len(known) > 12 else "")
        raise InputError(f"--pair names model(s) with no responses: {', '.join(unknown)} "
                         f"(models: {shown})")


def _concepts(concept: str | None, tables: dict[str, Any]) -> dict[str, str] | None:
    return {t: concept for t in tables} if concept else None


def _pairs(values: list[str] | None) -> list[tuple[str, str]] | None:
    from creagraph.core.io import InputError

    if not values:
        return None
    pairs = []
    for value in values:
        parts = [p.strip() for p in value.split(",")]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise InputError(f"--pair expects two different models as A,B; got {value!r}")
        pairs.append((parts[0], parts[1]))
    return pairs


# shared options -----------------------------------------------------------------------
ResponsesArg = typer.Argument(None, help="Responses JSONL (task_id, brief, model, sample, "
                              "core_idea, visual_description).")
SourceOpt = typer.Option("jsonl", "--source", help="jsonl | noveltybench | aut")
SharedOpt = typer.Option(None, "--shared-dir", help="Shared data folder (default ../shared).")
TasksOpt = typer.Option(None, "--tasks", help="Comma-separated task ids to keep.")
LimitOpt = typer.Option(None, "--limit-tasks", help="Keep only the first N tasks (sorted).")
CoreOpt = typer.Option("first_sentence", "--core-idea",
                       help="NoveltyBench Core Idea: first_sentence | full.")
ExtractorOpt = typer.Option("offline", "--extractor", help="offline | json | llm")
AtomsOpt = typer.Option(None, "--atoms", help="Pre-extracted atoms file (--extractor json).")
BaseUrlOpt = typer.Option(None, "--llm-base-url", help="OpenAI-compatible endpoint "
                          "(env CREAGRAPH_LLM_BASE_URL).")
ModelOpt = typer.Option(None, "--llm-model", help="LLM model name (env CREAGRAPH_LLM_MODEL).")
KeyOpt = typer.Option(None, "--llm-api-key", hidden=True,
                      help="Deprecated (keys leak into shell history): --llm-api-key-env.")
KeyEnvOpt = typer.Option(None, "--llm-api-key-env",
                         help="Name of the environment variable holding the API key "
                         "(default: CREAGRAPH_LLM_API_KEY).")
MethodOpt = typer.Option("auto", "--method", help="auto | leidenalg | igraph | components")
ResolutionOpt = typer.Option(1.0, "--resolution", help="Leiden modularity resolution.")
HierOpt = typer.Option(False, "--hierarchical", help="Re-cluster large clusters.")
SeedOpt = typer.Option(0, "--seed", help="Leiden seed.")
CanonOpt = typer.Option(0.8, "--canonical-threshold", help="Similarity for synonyms.")
SimOpt = typer.Option(0.5, "--similarity-threshold", help="Similarity for graph edges.")
CentralityOpt = typer.Option("pagerank", "--centrality", help="pagerank | degree")


@app.command("build")
def build(
    responses: Path = ResponsesArg,
    out: Path = typer.Option(..., "--out", help="Output folder."),
    graph_format: str = typer.Option("graphml", "--graph-format", help="graphml | json | both"),
    source: str = SourceOpt,
    shared_dir: Path = SharedOpt,
    tasks: str = TasksOpt,
    limit_tasks: int = LimitOpt,
    core_idea: str = CoreOpt,
    extractor: str = ExtractorOpt,
    atoms: Path = AtomsOpt,
    llm_base_url: str = BaseUrlOpt,
    llm_model: str = ModelOpt,
    llm_api_key: str = KeyOpt,
    llm_api_key_env: str = KeyEnvOpt,
    method: str = MethodOpt,
    resolution: float = ResolutionOpt,
    hierarchical: bool = HierOpt,
    seed: int = SeedOpt,
    canonical_threshold: float = CanonOpt,
    similarity_threshold: float = SimOpt,
    centrality: str = CentralityOpt,
) -> None:
    """Extract atoms, canonicalise them and write each task's Typed Idea Graph."""
    from creagraph.core.io import InputError, write_jsonl
    from creagraph.core.progress import progress
    from creagraph.tig.graph import write_graph_json, write_graphml
    from creagraph.tig.io import write_atoms
    from creagraph.tig.population import build_atom_tables, build_population

    if graph_format not in ("graphml", "json", "both"):
        raise InputError("--graph-format must be graphml, json or both")
    population = _load(responses, source, shared_dir, tasks, limit_tasks, core_idea)
    config = _config(method, resolution, hierarchical, seed, canonical_threshold,
                     similarity_threshold, centrality)
    tables = build_atom_tables(
        population, _extractor(extractor, atoms, llm_base_url, llm_model,
                   _key(llm_api_key, llm_api_key_env))
    )
    out.mkdir(parents=True, exist_ok=True)
    from creagraph.tig.schema import ATOM_TYPES, Atom

    all_responses, all_atoms, all_flags = [], [], []
    for table in tables.values():
        per_response: list[list[Any]] = [[] for _ in table.responses]
        flags: list[list[bool]] = [[] for _ in table.responses]
        for a in range(table.n_atoms):
            kind = ATOM_TYPES[int(table.form_type[table.atom_form[a]])]
            per_response[int(table.atom_response[a])].append(Atom(kind, table.atom_text[a]))
            flags[int(table.atom_response[a])].append(bool(table.atom_from_brief[a]))
        all_responses.extend(table.responses)
        all_atoms.extend(per_response)
        all_flags.extend(flags)
    write_atoms(out / "atoms.jsonl", all_responses, all_atoms, all_flags)
    canonical_rows: list[dict[str, Any]] = []
    (out / "graphs").mkdir(exist_ok=True)
    for task_id, table in progress(tables.items(), total=len(tables), desc="graphs",
                                   unit="task"):
        pop = build_population(table, None, config)
        canonical_rows.extend(c.to_dict() for c in pop.canonical)
        stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in task_id)
        if graph_format in ("graphml", "both"):
            write_graphml(pop, out / "graphs" / f"{stem}.graphml")
        if graph_format in ("json", "both"):
            write_graph_json(pop, out / "graphs" / f"{stem}.json")
    write_jsonl(out / "canonical.jsonl", canonical_rows)
    typer.echo(
        f"{len(all_responses)} responses, {sum(len(a) for a in all_atoms)} atoms, "
        f"{len(canonical_rows)} canonical atoms, {len(tables)} graphs → {out}"
    )


@app.command("clusters")
def clusters(
    responses: Path = ResponsesArg,
    out: Path = typer.Option(..., "--out", help="Clusters JSONL."),
    pair: list[str] = typer.Option(None, "--pair", help="A,B: the L2MO reference population "
                                   "of this pair instead of the whole population."),
    source: str = SourceOpt,
    shared_dir: Path = SharedOpt,
    tasks: str = TasksOpt,
    limit_tasks: int = LimitOpt,
    core_idea: str = CoreOpt,
    extractor: str = ExtractorOpt,
    atoms: Path = AtomsOpt,
    llm_base_url: str = BaseUrlOpt,
    llm_model: str = ModelOpt,
    llm_api_key: str = KeyOpt,
    llm_api_key_env: str = KeyEnvOpt,
    method: str = MethodOpt,
    resolution: float = ResolutionOpt,
    hierarchical: bool = HierOpt,
    seed: int = SeedOpt,
    canonical_threshold: float = CanonOpt,
    similarity_threshold: float = SimOpt,
    centrality: str = CentralityOpt,
) -> None:
    """Per-type clusters with ClichéScore, coverage, centrality and convergence."""
    from creagraph.core.io import write_jsonl
    from creagraph.core.progress import progress
    from creagraph.tig.l2mo import l2mo_population
    from creagraph.tig.population import build_atom_tables, build_population

    population = _load(responses, source, shared_dir, tasks, limit_tasks, core_idea)
    config = _config(method, resolution, hierarchical, seed, canonical_threshold,
                     similarity_threshold, centrality)
    tables = build_atom_tables(
        population, _extractor(extractor, atoms, llm_base_url, llm_model,
                   _key(llm_api_key, llm_api_key_env))
    )
    pairs = _pairs(pair)
    _check_pairs(pairs, tables)
    rows: list[dict[str, Any]] = []
    for table in progress(tables.values(), total=len(tables), desc="clusters", unit="task"):
        if pairs is None:
            populations = [build_population(table, None, config)]
        else:
            usable = [p for p in pairs if p[0] in table.models and p[1] in table.models]
            if not usable:
                _warn(f"task {table.task_id!r} skipped: no --pair has both models in it")
            elif len(table.models) < 3:
                _warn(f"task {table.task_id!r} skipped: {len(table.models)} model(s) answered; "
                      "leaving two models out needs at least 3")
                usable = []
            populations = [l2mo_population(table, p, config) for p in usable]
        for pop in populations:
            for cluster in sorted(pop.clusters, key=lambda c: (-c.cliche_score, c.id)):
                row = cluster.to_dict()
                row["comparison_key"] = pop.comparison_key
                row["n_reference_responses"] = pop.n_responses
                rows.append(row)
    write_jsonl(out, rows)
    if not rows:
        _warn("no clusters written: every task was skipped or had no atoms")
    typer.echo(f"{len(rows)} clusters over {len(tables)} task(s) → {out}")


@app.command("anchors")
def anchors(
    responses: Path = ResponsesArg,
    out: Path = typer.Option(..., "--out", help="Anchors JSONL."),
    pair: list[str] = typer.Option(None, "--pair", help="A,B (repeatable); default: all pairs."),
    whole_population: bool = typer.Option(False, "--whole-population",
                                          help="Anchors from all models (no L2MO)."),
    top_k: int = typer.Option(5, "--top-k", help="Anchors per comparison."),
    min_models: int = typer.Option(2, "--min-models", help="Models a cliché must span."),
    concept: str = typer.Option(None, "--concept", help="Concept named in the "
                                 "questions (default: read from each brief); atoms "
                                 "restating it are left out."),
    jobs: int = typer.Option(1, "--jobs", help="Worker processes for L2MO."),
    source: str = SourceOpt,
    shared_dir: Path = SharedOpt,
    tasks: str = TasksOpt,
    limit_tasks: int = LimitOpt,
    core_idea: str = CoreOpt,
    extractor: str = ExtractorOpt,
    atoms: Path = AtomsOpt,
    llm_base_url: str = BaseUrlOpt,
    llm_model: str = ModelOpt,
    llm_api_key: str = KeyOpt,
    llm_api_key_env: str = KeyEnvOpt,
    method: str = MethodOpt,
    resolution: float = ResolutionOpt,
    hierarchical: bool = HierOpt,
    seed: int = SeedOpt,
    canonical_threshold: float = CanonOpt,
    similarity_threshold: float = SimOpt,
    centrality: str = CentralityOpt,
) -> None:
    """Checklist anchors, leave-two-models-out per model pair (or whole population)."""
    from creagraph.core.io import InputError
    from creagraph.tig.anchors import anchors_for_population, write_anchors
    from creagraph.tig.brief import brief_concept, task_kind
    from creagraph.tig.l2mo import l2mo_results
    from creagraph.tig.population import build_atom_tables, build_population

    if min_models < 1:
        raise InputError("--min-models must be at least 1")
    population = _load(responses, source, shared_dir, tasks, limit_tasks, core_idea)
    config = _config(method, resolution, hierarchical, seed, canonical_threshold,
                     similarity_threshold, centrality)
    pairs = _pairs(pair)
    tables = build_atom_tables(
        population, _extractor(extractor, atoms, llm_base_url, llm_model,
                               _key(llm_api_key, llm_api_key_env)),
        concepts=_concepts(concept, {r.task_id: None for r in population}),
    )
    _check_pairs(pairs, tables)
    most = max((len(t.models) for t in tables.values()), default=0)
    available = most if whole_population else most - 2
    if min_models > available:
        raise InputError(
            f"--min-models {min_models} exceeds the models a "
            f"{'population' if whole_population else 'leave-two-models-out reference'} "
            f"can hold here ({max(available, 0)}: the largest task has {most} models)"
        )
    found: list[Any] = []
    comparisons = 0
    skipped: dict[str, str] = {}
    notes: dict[str, int] = {}
    if whole_population:
        for table in tables.values():
            first = table.responses[0]
            found.extend(anchors_for_population(
                build_population(table, None, config), top_k=top_k, min_models=min_models,
                concept=brief_concept(first.brief, concept),
                kind=task_kind(first.brief, first.family)))
            comparisons += 1
    else:
        for result in l2mo_results(tables, config, pairs=pairs, top_k=top_k,
                                   min_models=min_models, concepts=_concepts(concept, tables),
                                   n_jobs=jobs, skipped=skipped):
            found.extend(result.anchors)
            comparisons += 1
            if result.note:
                notes[result.note] = notes.get(result.note, 0) + 1
    for task_id, reason in sorted(skipped.items()):
        _warn(f"task {task_id!r} skipped: {reason}")
    for note, count in sorted(notes.items()):
        _warn(f"{count} comparison(s) without anchors: {note}")
    write_anchors(out, found)
    if not found:
        _warn("no anchors written"
              + (f": all {len(skipped)} task(s) skipped" if skipped and not comparisons else ""))
    typer.echo(f"{len(found)} anchors for {comparisons} comparison(s)"
               + (f", {len(skipped)} task(s) skipped" if skipped else "") + f" → {out}")


@app.command("score")
def score(
    responses: Path = ResponsesArg,
    out: Path = typer.Option(..., "--out", help="Scores JSONL (one line per response)."),
    concept: str = typer.Option(None, "--concept", help="Concept added to each brief's own."),
    neighbour_share: float = typer.Option(0.15, "--neighbour-share",
                                          help="Share of the reference population used as "
                                          "nearest neighbours."),
    cliche_weight: float = typer.Option(0.1, "--cliche-weight",
                                        help="w in novelty = D·(1 − w·H)."),
    source: str = SourceOpt,
    shared_dir: Path = SharedOpt,
    tasks: str = TasksOpt,
    limit_tasks: int = LimitOpt,
    core_idea: str = CoreOpt,
    extractor: str = ExtractorOpt,
    atoms: Path = AtomsOpt,
    llm_base_url: str = BaseUrlOpt,
    llm_model: str = ModelOpt,
    llm_api_key: str = KeyOpt,
    llm_api_key_env: str = KeyEnvOpt,
    method: str = MethodOpt,
    resolution: float = ResolutionOpt,
    hierarchical: bool = HierOpt,
    seed: int = SeedOpt,
    canonical_threshold: float = CanonOpt,
    similarity_threshold: float = SimOpt,
    centrality: str = CentralityOpt,
) -> None:
    """Novelty of every response against the other models' responses (SPEC §4.10)."""
    from creagraph.core.io import InputError
    from creagraph.tig.population import build_atom_tables
    from creagraph.tig.score import ScoreConfig, score_tables, write_scores

    try:
        score_config = ScoreConfig(neighbour_share=neighbour_share, cliche_weight=cliche_weight)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    population = _load(responses, source, shared_dir, tasks, limit_tasks, core_idea)
    config = _config(method, resolution, hierarchical, seed, canonical_threshold,
                     similarity_threshold, centrality)
    tables = build_atom_tables(
        population, _extractor(extractor, atoms, llm_base_url, llm_model,
                               _key(llm_api_key, llm_api_key_env)),
        concepts=_concepts(concept, {r.task_id: None for r in population}),
    )
    run = score_tables(tables, None, config, score_config)
    for task_id, reason in sorted(run.skipped.items()):
        _warn(f"task {task_id!r} skipped: {reason}")
    for message in run.warnings:
        _warn(message)
    if not run.scores:
        raise InputError(f"no response could be scored: all {len(run.skipped)} task(s) have "
                         "a single model")
    write_scores(out, run.scores)
    typer.echo(f"{len(run.scores)} responses scored over {len(tables) - len(run.skipped)} "
               f"task(s)" + (f", {len(run.skipped)} skipped" if run.skipped else "")
               + f" → {out}")


@app.command("audit-export")
def audit_export(
    anchors_file: Path = typer.Argument(..., help="Anchors JSONL from `creagraph tig anchors`."),
    out: Path = typer.Option(..., "--out", help="Audit file (.csv or .jsonl)."),
    annotator: str = typer.Option("", "--annotator", help="Annotator id to pre-fill."),
) -> None:
    """Blank audit records (five criterion codes, action, note) for every anchor."""
    from creagraph.tig.anchors import read_anchors
    from creagraph.tig.audit import audit_records_for_anchors, write_audit

    records = audit_records_for_anchors(read_anchors(anchors_file), annotator_id=annotator)
    write_audit(out, records)
    typer.echo(f"{len(records)} audit records → {out}")


@app.command("audit-import")
def audit_import(
    audit_file: Path = typer.Argument(..., help="Filled-in audit file (.csv or .jsonl)."),
    out: Path = typer.Option(None, "--out", help="Also write the validated records here."),
) -> None:
    """Validate an audit file and print how many items each action received."""
    from collections import Counter

    from creagraph.tig.audit import read_audit, write_audit

    records = read_audit(audit_file)
    counts = Counter(r.overall_action or "(not audited)" for r in records)
    for action, count in sorted(counts.items()):
        typer.echo(f"{action}\t{count}")
    if out is not None:
        write_audit(out, records)
