"""``creagraph tig``: Ekphrasis novelty anchors from Typed Idea Graphs.

Commands (each reads a population from a JSONL file or a shared-folder adapter):

* ``build``        — extract atoms, canonicalise, write atoms, canonical atoms and graphs;
* ``clusters``     — per-type clusters with ClichéScores (whole population, or the L2MO
  reference population of ``--pair``);
* ``anchors``      — checklist anchors, leave-two-models-out for every model pair (or
  ``--pair``), or from the whole population with ``--whole-population``;
* ``score``        — one novelty number per response against the other models'
  responses (or a reference population), with the matched ideas and clusters hit as
  evidence and a per-model summary (SPEC §4.10);
* ``audit-export`` — blank audit records (CSV or JSONL) for an anchors file;
* ``audit-import`` — validate a filled-in audit file and summarise it;
* ``judge``        — checklist-assisted pairwise judging with active sampling and one
  Bradley–Terry leaderboard per dimension (SPEC §4.12; :mod:`creagraph.tig.judge`);
* ``judge-export`` / ``judge-import`` — pairs for human annotators and their labels back,
  with a judge's agreement with the human majority.

Heavy libraries (sentence-transformers, igraph, leidenalg) load inside the commands.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from creagraph.cliopts import (
    ConfigOpt,
    EmbedderArgOpt,
    EmbedderOpt,
    arguments_option,
    registry_option,
)
from creagraph.tig.anchor_writer import ANCHOR_WRITERS, DEFAULT_MAX_FAILED_SHARE
from creagraph.tig.config import (
    DEFAULT_MIN_MODELS,
    DEFAULT_TOP_K,
    EXTRACTORS,
    SOURCES,
    Centrality,
    ClusterMethod,
    CoreIdea,
    GraphFormat,
    ScoreConfig,
    Source,
    TigConfig,
)

app = typer.Typer(
    help="Ekphrasis novelty anchors from Typed Idea Graphs.",
    no_args_is_help=True,
    add_completion=False,
)

#: The library defaults every option below shows (no default is written twice).
_TIG = TigConfig()
_SCORE = ScoreConfig()


# shared options -----------------------------------------------------------------------
ResponsesArg = Annotated[
    Path | None,
    typer.Argument(help="Responses JSONL (task_id, brief, model, sample, core_idea, "
                   "visual_description)."),
]
SourceOpt = Annotated[str, registry_option(
    "--source", SOURCES, "Population: a responses file, a shared-folder adapter, or your "
    "own source (arguments: --source-arg).")]
SourceArgOpt = Annotated[list[str] | None, arguments_option("--source-arg", "--source")]
SharedOpt = Annotated[
    Path | None, typer.Option("--shared-dir", help="Shared data folder (default ../shared).")
]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Comma-separated task ids to keep.")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit-tasks", help="Keep only the first N tasks (sorted).")
]
CoreOpt = Annotated[
    CoreIdea, typer.Option("--core-idea", help="NoveltyBench Core Idea: first_sentence | full.")
]
ExtractorOpt = Annotated[str, registry_option(
    "--extractor", EXTRACTORS, "Atom extractor (MODULE:ATTR: your own; arguments: "
    "--extractor-arg).")]
ExtractorArgOpt = Annotated[list[str] | None,
                            arguments_option("--extractor-arg", "--extractor")]
AtomsOpt = Annotated[
    Path | None, typer.Option("--atoms", help="Pre-extracted atoms file (--extractor json).")
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--llm-base-url",
                 help="OpenAI-compatible endpoint (env CREAGRAPH_LLM_BASE_URL)."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--llm-model", help="LLM model name (env CREAGRAPH_LLM_MODEL)."),
]
KeyOpt = Annotated[
    str | None,
    typer.Option("--llm-api-key", hidden=True,
                 help="Deprecated (keys leak into shell history): --llm-api-key-env."),
]
KeyEnvOpt = Annotated[
    str | None,
    typer.Option("--llm-api-key-env",
                 help="Name of the environment variable holding the API key "
                 "(default: CREAGRAPH_LLM_API_KEY)."),
]
MethodOpt = Annotated[
    ClusterMethod, typer.Option("--method", help="auto | leidenalg | igraph | components")
]
ResolutionOpt = Annotated[
    float, typer.Option("--resolution", help="Leiden modularity resolution.")
]
HierOpt = Annotated[bool, typer.Option("--hierarchical", help="Re-cluster large clusters.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Leiden seed.")]
CanonOpt = Annotated[
    float, typer.Option("--canonical-threshold", help="Similarity for synonyms.")
]
SimOpt = Annotated[
    float, typer.Option("--similarity-threshold", help="Similarity for graph edges.")
]
CentralityOpt = Annotated[Centrality, typer.Option("--centrality", help="pagerank | degree")]
PairOpt = Annotated[
    list[str] | None,
    typer.Option("--pair", help="A,B (repeatable); default: all pairs."),
]
ConceptOpt = Annotated[
    str | None,
    typer.Option("--concept", help="Concept named in the questions (default: read from each "
                 "brief); atoms restating it are left out."),
]


def _shared_options(
    source: SourceOpt = "jsonl",
    shared_dir: SharedOpt = None,
    tasks: TasksOpt = None,
    limit_tasks: LimitOpt = None,
    core_idea: CoreOpt = CoreIdea.first_sentence,
    extractor: ExtractorOpt = "offline",
    atoms: AtomsOpt = None,
    llm_base_url: BaseUrlOpt = None,
    llm_model: ModelOpt = None,
    llm_api_key: KeyOpt = None,
    llm_api_key_env: KeyEnvOpt = None,
    method: MethodOpt = ClusterMethod(_TIG.cluster_method),
    resolution: ResolutionOpt = _TIG.resolution,
    hierarchical: HierOpt = _TIG.hierarchical,
    seed: SeedOpt = _TIG.seed,
    canonical_threshold: CanonOpt = _TIG.canonical_threshold,
    similarity_threshold: SimOpt = _TIG.similarity_threshold,
    centrality: CentralityOpt = Centrality(_TIG.centrality),
    source_arg: SourceArgOpt = None,
    extractor_arg: ExtractorArgOpt = None,
) -> None:
    """The options every population command takes, declared once (see :func:`_shared`)."""


@dataclass(frozen=True)
class _Shared:
    """The values of :func:`_shared_options` for one command run."""

    source: str
    shared_dir: Path | None
    tasks: str | None
    limit_tasks: int | None
    core_idea: CoreIdea
    extractor: str
    atoms: Path | None
    llm_base_url: str | None
    llm_model: str | None
    llm_api_key: str | None
    llm_api_key_env: str | None
    method: ClusterMethod
    resolution: float
    hierarchical: bool
    seed: int
    canonical_threshold: float
    similarity_threshold: float
    centrality: Centrality
    source_arg: list[str] | None = None
    extractor_arg: list[str] | None = None

    def load(self, responses: Path | None, source: str | None = None) -> list[Any]:
        """The population: ``responses`` or the ``--source`` adapter (or ``source``), then
        ``--tasks`` and ``--limit-tasks``."""
        from creagraph.cliopts import key_values
        from creagraph.tig.api import load_population

        return load_population(responses, source=source or self.source,
                               shared_dir=self.shared_dir, tasks=self.tasks,
                               limit_tasks=self.limit_tasks, core_idea=self.core_idea.value,
                               source_args=key_values(self.source_arg, "--source-arg"))

    def make_extractor(self) -> Any:
        """The ``--extractor`` backend."""
        from creagraph.cliopts import key_values
        from creagraph.tig.api import make_extractor

        return make_extractor(self.extractor, atoms=self.atoms, llm_base_url=self.llm_base_url,
                              llm_model=self.llm_model,
                              llm_api_key=_key(self.llm_api_key, self.llm_api_key_env),
                              extractor_args=key_values(self.extractor_arg, "--extractor-arg"))

    def tables(self, population: list[Any], concept: str | None = None,
               embedder: Any = None) -> dict[str, Any]:
        """The population's atom tables (``concept``, the ``--concept`` option of the
        commands that have one, added to every task's brief; ``embedder``, else the
        default one)."""
        from creagraph.tig.api import atom_tables

        return atom_tables(population, self.make_extractor(), concept=concept,
                           embedder=embedder)

    def inputs(self, responses: Path | None) -> list[Path]:
        """The files this run reads (``responses``, ``--atoms``), never to be written."""
        return [p for p in (responses, self.atoms) if p is not None]

    def fingerprint(self, responses: Path | None, **own: Any) -> dict[str, Any]:
        """Every setting behind the outputs (no API key), with the input files' identity,
        for the output record (:mod:`creagraph.core.outdir`)."""
        from dataclasses import asdict
        from enum import Enum

        from creagraph.core.outdir import file_identity

        def plain(value: Any) -> Any:
            if isinstance(value, Enum):
                return value.value
            return str(value) if isinstance(value, Path) else value

        values = {k: plain(v) for k, v in {**asdict(self), **own}.items()
                  if k not in ("llm_api_key", "llm_api_key_env", "atoms")
                  # set only when given: folders made before these options resume
                  and not (k in ("source_arg", "extractor_arg") and v is None)}
        values["responses"] = file_identity(responses) if responses is not None else None
        values["atoms"] = file_identity(self.atoms) if self.atoms is not None else None
        return values

    def config(self) -> TigConfig:
        """The pipeline parameters these options set (the others keep their defaults)."""
        return TigConfig(
            canonical_threshold=self.canonical_threshold,
            similarity_threshold=self.similarity_threshold,
            cluster_method=self.method.value,
            resolution=self.resolution,
            hierarchical=self.hierarchical,
            seed=self.seed,
            centrality=self.centrality.value,
        )


_SHARED_PARAMS = list(inspect.signature(_shared_options, eval_str=True).parameters.values())


def _shared(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` the options of :func:`_shared_options` after its own.

    ``command`` declares a last parameter ``shared: _Shared``; typer sees instead each
    shared option (one declaration for the four population commands), and the command
    receives their values gathered in one :class:`_Shared`.
    """
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "shared"]
    names = [p.name for p in _SHARED_PARAMS]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        shared = _Shared(**{name: kwargs.pop(name) for name in names})
        command(**kwargs, shared=shared)

    params = own + _SHARED_PARAMS
    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return wrapper


def _key(key: str | None, env: str | None) -> str | None:
    """The API key: from the variable named by --llm-api-key-env, or the deprecated
    --llm-api-key."""
    from creagraph.cliopts import api_key_from_env

    if key is not None:
        typer.echo("note: --llm-api-key is deprecated; use --llm-api-key-env", err=True)
        return key
    return api_key_from_env(env) if env else None


def _warn(message: str) -> None:
    typer.echo(f"warning: {message}", err=True)


# build --------------------------------------------------------------------------------
@app.command("build")
@_shared
def build(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    responses: ResponsesArg = None,
    graph_format: Annotated[
        GraphFormat, typer.Option("--graph-format", help="graphml | json | both")
    ] = GraphFormat.graphml,
    *,
    shared: _Shared,
) -> None:
    """Extract atoms, canonicalise them and write each task's Typed Idea Graph."""
    from creagraph.core.outdir import claim_output_dir
    from creagraph.tig.api import write_build

    with claim_output_dir(out, "tig build", ["atoms.jsonl", "canonical.jsonl", "graphs"],
                          inputs=shared.inputs(responses), rewrite=True,
                          fingerprint=shared.fingerprint(responses, graph_format=graph_format)):
        tables = shared.tables(shared.load(responses))
        done = write_build(out, tables, shared.config(), graph_format.value)
    typer.echo(
        f"{done.n_responses} responses, {done.n_atoms} atoms, "
        f"{done.n_canonical} canonical atoms, {done.n_graphs} graphs → {out}"
    )


# clusters -----------------------------------------------------------------------------
@app.command("clusters")
@_shared
def clusters(
    out: Annotated[Path, typer.Option("--out", help="Clusters JSONL.")],
    responses: ResponsesArg = None,
    pair: Annotated[
        list[str] | None,
        typer.Option("--pair", help="A,B: the L2MO reference population of this pair "
                     "instead of the whole population."),
    ] = None,
    *,
    shared: _Shared,
) -> None:
    """Per-type clusters with ClichéScore, coverage, centrality and convergence."""
    from creagraph.core.io import write_jsonl
    from creagraph.core.outdir import check_output_file, claim_output_file
    from creagraph.tig.api import check_pairs, cluster_rows, parse_pairs

    check_output_file(out, "tig clusters", inputs=shared.inputs(responses))
    tables = shared.tables(shared.load(responses))
    pairs = parse_pairs(pair)
    check_pairs(pairs, tables)
    found = cluster_rows(tables, shared.config(), pairs=pairs)
    for message in found.warnings:
        _warn(message)
    rows = found.rows
    with claim_output_file(out, "tig clusters", inputs=shared.inputs(responses),
                           fingerprint=shared.fingerprint(responses, pair=pair)):
        write_jsonl(out, rows)
    if not rows:
        _warn("no clusters written: every task was skipped or had no atoms")
    typer.echo(f"{len(rows)} clusters over {len(tables)} task(s) → {out}")


# anchors ------------------------------------------------------------------------------
@app.command("anchors")
@_shared
def anchors(
    out: Annotated[Path, typer.Option("--out", help="Anchors JSONL.")],
    responses: ResponsesArg = None,
    pair: PairOpt = None,
    whole_population: Annotated[
        bool, typer.Option("--whole-population", help="Anchors from all models (no L2MO).")
    ] = False,
    top_k: Annotated[int, typer.Option("--top-k", help="Anchors per comparison.")]
    = DEFAULT_TOP_K,
    min_models: Annotated[
        int, typer.Option("--min-models", help="Models a cliché must span.")
    ] = DEFAULT_MIN_MODELS,
    concept: ConceptOpt = None,
    jobs: Annotated[int, typer.Option("--jobs", help="Worker processes for L2MO.")] = 1,
    writer: Annotated[str, registry_option(
        "--writer", ANCHOR_WRITERS, "Who keeps and names each anchor: offline rules, or a "
        "chat model (--llm-base-url/--llm-model) that vets and names each cluster "
        "(MODULE:ATTR: your own; arguments: --writer-arg).")] = "offline",
    writer_arg: Annotated[list[str] | None,
                          arguments_option("--writer-arg", "--writer")] = None,
    writer_max_failed: Annotated[float, typer.Option(
        "--writer-max-failed", help="Write no anchors when more than this share of the "
        "clusters asked got no usable reply from the writer.")] = DEFAULT_MAX_FAILED_SHARE,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="--writer llm: do not read or write the reply cache "
        "($CREAGRAPH_CACHE_DIR/llm-replies.sqlite).")] = False,
    *,
    shared: _Shared,
) -> None:
    """Checklist anchors, leave-two-models-out per model pair (or whole population)."""
    from creagraph.cliopts import key_values
    from creagraph.core.io import InputError
    from creagraph.core.outdir import check_output_file, claim_output_file
    from creagraph.tig.anchor_writer import WriterContext, check_failed_share, make_anchor_writer
    from creagraph.tig.anchors import write_anchors
    from creagraph.tig.api import check_min_models, check_pairs, find_anchors, parse_pairs

    if min_models < 1:  # before any work
        raise InputError("--min-models must be at least 1")
    if not 0.0 <= writer_max_failed <= 1.0:
        raise InputError("--writer-max-failed must be a share between 0 and 1")
    check_output_file(out, "tig anchors", inputs=shared.inputs(responses))
    named_by = None if writer == "offline" else make_anchor_writer(
        writer, context=WriterContext(shared.llm_base_url, shared.llm_model,
                                      _key(shared.llm_api_key, shared.llm_api_key_env),
                                      cache=not no_cache),
        writer_args=key_values(writer_arg, "--writer-arg"))
    if named_by is not None and jobs > 1:
        _warn(f"--jobs {jobs} ignored: --writer {writer} runs the comparisons in this process")
    population = shared.load(responses)
    pairs = parse_pairs(pair)
    tables = shared.tables(population, concept)
    check_pairs(pairs, tables)
    check_min_models(min_models, tables, whole_population)
    run = find_anchors(tables, shared.config(), pairs=pairs, whole_population=whole_population,
                       top_k=top_k, min_models=min_models, concept=concept, jobs=jobs,
                       writer=named_by)
    found, comparisons, skipped, notes = run.anchors, run.comparisons, run.skipped, run.notes
    for task_id, reason in sorted(skipped.items()):
        _warn(f"task {task_id!r} skipped: {reason}")
    for note, count in sorted(notes.items()):
        _warn(f"{count} comparison(s) without anchors: {note}")
    own: dict[str, Any] = {}
    if named_by is not None:  # the offline default records what it always did
        typer.echo(f"anchor writer {named_by.name} ({named_by.model or 'no model'}): "
                   f"{named_by.counts.line()}")
        check_failed_share(named_by.counts, writer_max_failed, writer=named_by.name)
        own = {"writer": writer, "writer_arg": writer_arg, "writer_model": named_by.model,
               "writer_max_failed": writer_max_failed,
               "writer_counts": named_by.counts.as_dict()}
    with claim_output_file(out, "tig anchors", inputs=shared.inputs(responses),
                           fingerprint=shared.fingerprint(
                               responses, pair=pair, whole_population=whole_population,
                               top_k=top_k, min_models=min_models, concept=concept, **own)):
        write_anchors(out, found)
    if not found:
        _warn("no anchors written"
              + (f": all {len(skipped)} task(s) skipped" if skipped and not comparisons else ""))
    typer.echo(f"{len(found)} anchors for {comparisons} comparison(s)"
               + (f", {len(skipped)} task(s) skipped" if skipped else "") + f" → {out}")


# score --------------------------------------------------------------------------------
@app.command("score")
@_shared
def score(
    out: Annotated[Path, typer.Option("--out", help="Scores JSONL (one line per response).")],
    responses: ResponsesArg = None,
    concept: Annotated[
        str | None, typer.Option("--concept", help="Concept added to each brief's own.")
    ] = None,
    neighbour_share: Annotated[
        float, typer.Option("--neighbour-share", help="Share of the reference population "
                            "used as nearest neighbours.")
    ] = _SCORE.neighbour_share,
    cliche_weight: Annotated[
        float, typer.Option("--cliche-weight", help="w in the baseline D·(1 − w·H).")
    ] = _SCORE.cliche_weight,
    match_threshold: Annotated[
        float, typer.Option("--match-threshold", help="Similarity at which a reference "
                            "idea is a paraphrase of the response's idea.")
    ] = _SCORE.match_threshold,
    rarity_weight: Annotated[
        float, typer.Option("--rarity-weight", help="α in novelty = α·rarity + (1 − α)·D.")
    ] = _SCORE.rarity_weight,
    reference: Annotated[
        Path | None, typer.Option("--reference", help="Reference population (responses "
                                  "JSONL): RESPONSES are scored against it.")
    ] = None,
    reference_source: Annotated[
        Source | None, typer.Option("--reference-source", help="noveltybench | aut: the "
                                    "shared population is the reference for RESPONSES.")
    ] = None,
    summary: Annotated[
        Path | None, typer.Option("--summary", help="Also write the per-model summary "
                                  "(novelty mean, bootstrap interval, distinct share) as JSON.")
    ] = None,
    calibrated: Annotated[
        bool, typer.Option("--calibrated", help="Novelty from the calibration fitted on "
                           "human originality ratings (uses and instances tasks only; it beats "
                           "the plain distance leave-one-prompt-out, not when fitted on other "
                           "rating studies: see benchmarks/RESULTS.md).")
    ] = False,
    calibration: Annotated[
        Path | None, typer.Option("--calibration", help="Calibration file for --calibrated "
                                  "(default: the one shipped with creagraph).")
    ] = None,
    embedder: EmbedderOpt = "minilm",
    embedder_arg: EmbedderArgOpt = None,
    config_file: ConfigOpt = None,
    *,
    shared: _Shared,
) -> None:
    """Novelty of every response against the other models' responses (SPEC §4.10), or,
    with --reference / --reference-source, of RESPONSES against a reference population."""
    from creagraph.cliopts import key_values
    from creagraph.core.io import InputError, atomic_write, dumps
    from creagraph.core.outdir import check_output_file, claim_output_file
    from creagraph.core.registry import EMBEDDERS
    from creagraph.tig.api import score_population
    from creagraph.tig.score import write_scores

    try:
        score_config = ScoreConfig(neighbour_share=neighbour_share, cliche_weight=cliche_weight,
                                   match_threshold=match_threshold,
                                   rarity_weight=rarity_weight)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    if calibration is not None and not calibrated:
        raise InputError("--calibration needs --calibrated")
    embedder_args = key_values(embedder_arg, "--embedder-arg")
    # the default embedder stays the tables' own default (same vectors, same cache); another
    # one is named in the fingerprint and the manifest, and the calibration refuses it
    own_embedder = embedder != "minilm" or bool(embedder_args)
    if own_embedder and calibrated:
        raise InputError("--calibrated was fitted on all-MiniLM-L6-v2 features: it cannot "
                         f"score with --embedder {embedder}")
    made_embedder = (EMBEDDERS.create(embedder, **(embedder_args or {}))
                     if own_embedder else None)
    loaded_calibration = None
    if calibrated:
        from creagraph.tig.calibration import load_calibration

        loaded_calibration = load_calibration(calibration)
        loaded_calibration.check_run(match_threshold, neighbour_share, None)
    started = time.time()
    inputs = [*shared.inputs(responses), *([reference] if reference is not None else [])]
    check_output_file(out, "tig score", inputs=inputs)
    if summary is not None:
        check_output_file(summary, "tig score", inputs=[*inputs, out])
    reference_models = None
    if reference is not None or reference_source is not None:
        population, reference_models = _with_reference(shared, responses, reference,
                                                       reference_source)
    else:
        population = shared.load(responses)
    config = shared.config()
    tables = shared.tables(population, concept, embedder=made_embedder)
    run = score_population(tables, config, score_config, reference_models=reference_models,
                           calibration=loaded_calibration, embedder=made_embedder)
    for task_id, reason in sorted(run.skipped.items()):
        _warn(f"task {task_id!r} skipped: {reason}")
    for message in run.warnings:
        _warn(message)
    if not run.scores:
        raise InputError(f"no response could be scored: all {len(run.skipped)} task(s) "
                         "were skipped")
    fingerprint = shared.fingerprint(
        responses, concept=concept, neighbour_share=neighbour_share,
        cliche_weight=cliche_weight, match_threshold=match_threshold,
        rarity_weight=rarity_weight,
        reference=str(reference) if reference is not None else None,
        reference_source=str(reference_source) if reference_source is not None else None,
        calibration=None if loaded_calibration is None else loaded_calibration.sha256,
        **({"embedder": embedder, "embedder_args": embedder_args} if own_embedder else {}))
    with claim_output_file(out, "tig score", inputs=inputs, fingerprint=fingerprint):
        write_scores(out, run.scores)
    _write_tig_manifest(out, started, config, score_config, responses,
                        embedder=({"name": embedder, "args": embedder_args or {}}
                                  if own_embedder else None),
                        calibration=None if loaded_calibration is None else {
                            "file": loaded_calibration.source,
                            "sha256": loaded_calibration.sha256,
                            "fitted_on": loaded_calibration.fitted_on})
    rows = run.model_summary(score_config.bootstrap)
    if summary is not None:
        with claim_output_file(summary, "tig score", inputs=[*inputs, out],
                               fingerprint=fingerprint), atomic_write(summary) as handle:
            handle.write(dumps({"models": rows}) + "\n")
    typer.echo(f"{'model':<24} {'n':>6} {'novelty':>8} {'95% interval':>17} "
               f"{'distance':>8} {'distinct':>8}")
    for row in rows:
        interval = f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        distinct = "" if row["distinct_share"] is None else f"{row['distinct_share']:.3f}"
        typer.echo(f"{row['model'][:24]:<24} {row['n_responses']:>6} "
                   f"{row['novelty_mean']:>8.3f} {interval:>17} {row['distance_mean']:>8.3f} "
                   f"{distinct:>8}")
    typer.echo(f"{len(run.scores)} responses scored over {len(tables) - len(run.skipped)} "
               f"task(s)" + (f", {len(run.skipped)} skipped" if run.skipped else "")
               + f" → {out}")


def _with_reference(shared: _Shared, responses: Path | None, reference: Path | None,
                    reference_source: Source | None) -> tuple[list[Any], set[str]]:
    """The scored responses plus the reference population, and the reference's models."""
    from creagraph.core.io import InputError
    from creagraph.tig.api import with_reference
    from creagraph.tig.io import read_responses

    if reference is not None and reference_source is not None:
        raise InputError("give --reference or --reference-source, not both")
    if responses is None:
        raise InputError("--reference needs the responses to score (RESPONSES)")
    scored = read_responses(responses)
    if reference is not None:
        ref = read_responses(reference)
    else:
        assert reference_source is not None
        ref = shared.load(None, source=reference_source.value)
    return with_reference(scored, ref, where=str(responses), tasks=shared.tasks)


def _write_tig_manifest(out: Path, started: float, config: Any, score_config: Any,
                        responses: Path | None, calibration: dict[str, Any] | None = None,
                        embedder: dict[str, Any] | None = None) -> None:
    """``<out>.run.json`` beside the scores file (:mod:`creagraph.core.manifest`)."""
    import dataclasses

    from creagraph.core.embeddings import DEFAULT_MODEL_NAME
    from creagraph.core.manifest import run_manifest, write_manifest

    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.asdict(value)
        return repr(value)

    manifest = run_manifest(
        "tig score", started=started,
        settings={"tig": plain(config), "score": plain(score_config),
                  "responses": str(responses) if responses else None,
                  **({"calibration": calibration} if calibration is not None else {})},
        embedder=embedder or {"model": DEFAULT_MODEL_NAME},
    )
    write_manifest(out.parent, manifest, name=out.name + ".run.json")


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


# judge (the Ekphrasis measurement) ----------------------------------------------------
def _judge_fingerprint(settings: Any, shared: _Shared, responses: Path | None,
                       max_runs: int | None, extra: dict[str, Any]) -> dict[str, Any]:
    from dataclasses import asdict

    from creagraph.core.outdir import file_identity

    return {
        **settings.fingerprint(),
        "source": shared.source,
        "responses": file_identity(responses) if responses is not None else None,
        "tasks": shared.tasks, "limit_tasks": shared.limit_tasks, "max_runs": max_runs,
        "core_idea": shared.core_idea.value, "extractor": shared.extractor,
        "tig": asdict(shared.config()),
        **extra,
    }


def _echo_judge(rows: list[dict[str, Any]], diag: dict[str, Any], out: Path) -> None:
    for row in rows:
        typer.echo(f"{row['rank']:>2}  {row['model']:<40} {row['score']:+.3f} "
                   f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  ranks "
                   f"{row['rank_low']}–{row['rank_high']}  W/L/T {row['wins']}/"
                   f"{row['losses']}/{row['ties']}")
    if diag.get("fit_note"):
        _warn(diag["fit_note"])
    failing = [name for name, gate in diag["gates"].items() if gate["pass"] is False]
    if failing:
        _warn(f"pilot gate(s) failed: {', '.join(failing)} (see {out / 'diagnostics.json'})")
    typer.echo(f"{diag['n_comparisons']} comparisons → {out}")


@app.command("judge")
@_shared
def judge(
    out: Annotated[Path, typer.Option("--out", help="Output folder (comparisons.jsonl, "
                                      "leaderboard.csv, diagnostics.json).")],
    responses: ResponsesArg = None,
    dimension: Annotated[str, typer.Option(
        "--dimension", help="usefulness | expressiveness | novelty")] = "novelty",
    judge_kind: Annotated[str, typer.Option(
        "--judge", help="llm | novelty-score | human")] = "novelty-score",
    human_labels: Annotated[Path | None, typer.Option(
        "--human-labels", help="--judge human: labels JSONL from `tig judge-import`.")] = None,
    budget: Annotated[int, typer.Option("--budget", help="Comparisons to make, order-swap "
                                        "re-asks included.")] = 300,
    swap_share: Annotated[float, typer.Option(
        "--swap-share", help="Share of comparisons re-asked with the order swapped.")] = 0.1,
    margin: Annotated[float, typer.Option(
        "--margin", help="novelty-score: a novelty difference within this is a tie.")] = 0.01,
    batch: Annotated[int, typer.Option(
        "--batch", help="Comparisons planned per active-sampling step.")] = 8,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", help="LLM requests in flight at once.")] = 4,
    max_runs: Annotated[int | None, typer.Option(
        "--max-runs", help="Keep each model's first N runs (AUT) or samples.")] = None,
    n_bootstrap: Annotated[int, typer.Option(
        "--n-bootstrap", help="Bootstrap resamples of the intervals.")] = 200,
    schedule: Annotated[str, typer.Option(
        "--schedule", help="active (warm start, then most informative pairs) | uniform "
        "(random pairs, the baseline).")] = "active",
    fresh: Annotated[bool, typer.Option(
        "--fresh", help="Delete this folder's previous results first.")] = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="--judge llm: do not read or write the reply cache "
        "($CREAGRAPH_CACHE_DIR/llm-replies.sqlite).")] = False,
    config_file: ConfigOpt = None,
    *,
    shared: _Shared,
) -> None:
    """Checklist-assisted pairwise judging with active sampling and a Bradley–Terry
    leaderboard (SPEC §4.12); resumable (``--seed`` also seeds the schedule)."""
    from creagraph.core.io import InputError
    from creagraph.core.outdir import claim_output_dir
    from creagraph.tig.api import judge_population
    from creagraph.tig.api import max_runs as first_runs
    from creagraph.tig.judge import OUTPUTS, JudgeSettings

    try:
        settings = JudgeSettings(dimension=dimension, judge=judge_kind, budget=budget,
                                 seed=shared.seed, swap_share=swap_share, margin=margin,
                                 batch=batch, concurrency=concurrency,
                                 n_bootstrap=n_bootstrap, schedule=schedule)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    if settings.judge == "human":
        _judge_human(out, human_labels, settings, fresh)
        return
    population = first_runs(shared.load(responses), max_runs)
    client = None
    extra: dict[str, Any] = {}
    if settings.judge == "llm":
        from creagraph.core.llm import ChatClient, ReplyCache, default_reply_cache_path

        # the shared reply cache (as the llm judge of `score`): a re-run, a resume or a
        # run into a new folder sends no request already answered
        client = ChatClient.from_env(shared.llm_base_url, shared.llm_model,
                                     _key(shared.llm_api_key, shared.llm_api_key_env),
                                     cache=None if no_cache
                                     else ReplyCache(default_reply_cache_path()))
        extra = {"llm_base_url": client.base_url, "llm_model": client.model}
    fingerprint = _judge_fingerprint(settings, shared, responses, max_runs, extra)
    inputs = [responses] if responses is not None else []
    with claim_output_dir(out, "tig judge", OUTPUTS, inputs=inputs, fingerprint=fingerprint,
                          fresh=fresh):
        novelty = settings.dimension == "novelty"
        run = judge_population(population, settings, out,
                               extractor=shared.make_extractor() if novelty else None,
                               config=shared.config(), client=client)
    if run.resumed:
        typer.echo(f"resumed: {run.resumed} comparisons already made, {run.asked_now} new")
    if client is not None:
        asked = run.requests
        typer.echo(f"judge requests: {asked['sent']} sent, {asked['cached']} from the reply "
                   f"cache, {asked['failed']} failed")
        if asked["failed"]:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(asked["failures"].items()))
            _warn(f"{asked['failed']} judge request(s) got no reply ({kinds}); they are "
                  f"counted as parse failures in {out / 'diagnostics.json'}")
    _echo_judge(run.leaderboard, run.diagnostics, out)


def _judge_human(out: Path, labels: Path | None, settings: Any, fresh: bool) -> None:
    from creagraph.core.io import InputError, write_jsonl
    from creagraph.core.outdir import claim_output_dir, file_identity
    from creagraph.tig.judge import OUTPUTS, read_comparisons, write_outputs

    if labels is None:
        raise InputError("--judge human needs --human-labels FILE (from `tig judge-import`)")
    records = read_comparisons(labels)
    if not records:
        raise InputError(f"{labels}: no labels")
    dims = {r.get("dimension") for r in records}
    if dims != {settings.dimension}:
        raise InputError(f"{labels}: labels are for {sorted(map(str, dims))}, not "
                         f"--dimension {settings.dimension}")
    models = sorted({r["model_a"] for r in records} | {r["model_b"] for r in records})
    fingerprint = {**settings.fingerprint(), "labels": file_identity(labels)}
    with claim_output_dir(out, "tig judge", OUTPUTS, inputs=[labels], fingerprint=fingerprint,
                          fresh=fresh):
        write_jsonl(out / "comparisons.jsonl", records)
        try:
            rows, diag = write_outputs(out, records, settings, models)
        except ValueError as exc:
            raise InputError(f"{labels}: {exc}") from exc
    _echo_judge(rows, diag, out)


@app.command("judge-export")
@_shared
def judge_export(
    comparisons: Annotated[Path, typer.Argument(help="comparisons.jsonl of `tig judge`.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for pairs.csv, annotate.html "
                                      "and key.jsonl.")],
    responses: Annotated[Path | None, typer.Option(
        "--responses", help="Responses JSONL (or --source) the comparisons were made on.")]
    = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N pairs.")] = None,
    *,
    shared: _Shared,
) -> None:
    """Pairs for human annotators: CSV, a self-contained HTML page, and the key."""
    from creagraph.core.outdir import claim_output_dir
    from creagraph.tig.judge import read_comparisons, response_text
    from creagraph.tig.judge_export import EXPORT_OUTPUTS, export_pairs

    records = read_comparisons(comparisons)
    texts = {r.response_id: response_text(r) for r in shared.load(responses)}
    with claim_output_dir(out, "tig judge-export", EXPORT_OUTPUTS, inputs=[comparisons]):
        n = export_pairs(records, texts, out, limit=limit, seed=shared.seed)
    typer.echo(f"{n} pairs → {out}")


@app.command("judge-import")
def judge_import(
    labels: Annotated[Path, typer.Argument(help="Filled-in labels CSV (pair_id, label, "
                                           "annotator).")],
    key: Annotated[Path, typer.Option("--key", help="key.jsonl of `tig judge-export`.")],
    out: Annotated[Path, typer.Option("--out", help="Human comparisons JSONL (for "
                                      "`tig judge --judge human`).")],
    comparisons: Annotated[Path | None, typer.Option(
        "--comparisons", help="A judge's comparisons.jsonl to measure against the human "
        "majority.")] = None,
) -> None:
    """Read annotators' labels; report a judge's agreement with the human majority."""
    import json as _json

    from creagraph.core.io import InputError, write_jsonl
    from creagraph.core.outdir import check_output_file, claim_output_file, file_identity
    from creagraph.tig.judge import read_comparisons
    from creagraph.tig.judge_export import agreement_with_humans, import_labels, read_key

    inputs = [p for p in (labels, key, comparisons) if p is not None]
    check_output_file(out, "tig judge-import", inputs=inputs)
    records = import_labels(labels, read_key(key))
    if not records:
        raise InputError(f"{labels}: no labelled pair")
    with claim_output_file(out, "tig judge-import", inputs=inputs,
                           fingerprint={"labels": file_identity(labels),
                                        "key": file_identity(key)}):
        write_jsonl(out, records)
    typer.echo(f"{len(records)} labels → {out}")
    if comparisons is not None:
        result = agreement_with_humans(read_comparisons(comparisons), records)
        typer.echo(_json.dumps(result))
