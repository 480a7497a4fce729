"""``creagraph score``, ``creagraph distinct`` and ``creagraph distance``: options parsed
here, the work done by one library function each (:func:`creagraph.scoring.api.score_to_dir`,
:func:`creagraph.scoring.distinct.distinct_to_dir`,
:func:`creagraph.scoring.distinct.pair_distances`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

from creagraph.cliopts import (
    ConfigOpt,
    EmbedderArgOpt,
    EmbedderOpt,
    EndpointOpt,
    Engine,
    JudgeArgOpt,
    JudgeOpt,
    LlmApiKeyEnvOpt,
    LlmBaseUrlOpt,
    LlmModelOpt,
    Mode,
    ModeOpt,
    OutOpt,
    PrecisionOpt,
    StoreOpt,
    key_values,
)
from creagraph.core.choices import utility_mode
from creagraph.core.io import InputError, dumps, iter_records
from creagraph.core.records import SummaryRow
from creagraph.scoring.api import SCORE_OUTPUTS, build_scorer, score_fingerprint, score_to_dir
from creagraph.scoring.config import ENGINES, ScorerConfig

# build_scorer, SCORE_OUTPUTS and score_fingerprint are the library's (scoring/api.py),
# re-exported for the code that imported them from here.
__all__ = ["register", "build_scorer", "SCORE_OUTPUTS", "score_fingerprint"]


_FLAGS = {
    "judge": "--judge",
    "mode": "--mode",
    "factuality_threshold": "--factuality-threshold",
    "threads": "--threads",
    "ceiling_k": "--ceiling-k",
    "llm_base_url": "--llm-base-url",
    "llm_model": "--llm-model",
    "llm_api_key_env": "--llm-api-key-env",
    "max_paths": "--max-paths",
    "llm_concurrency": "--llm-concurrency",
    "unknown": "--unknown",
    "negatives": "--negatives",
    "judge_args": "--judge-arg",
    "embedder_args": "--embedder-arg",
    "embedder": "--embedder",
}


def _as_flags(message: str) -> str:
    """A library error message with parameter names spelled as this command's flags."""
    return re.sub(r"\b(" + "|".join(_FLAGS) + r")\b", lambda m: _FLAGS[m.group(1)], message)


def _checked(config: ScorerConfig) -> ScorerConfig:
    """``config``, validated; errors name the command-line flags, not the API's parameters."""
    try:
        config.validate()
    except InputError as exc:
        raise InputError(_as_flags(str(exc))) from None
    return config


def _engine(
    engine: Engine | None, scheduler: str | None, workers: int, address: str | None
) -> tuple[str, str | None]:
    """The engine and cluster address from ``--engine``, ``--workers``, ``--address`` and
    the deprecated ``--scheduler``; errors name the flags."""
    name = Engine(engine).value if engine is not None else None
    if scheduler is not None:
        typer.echo("note: --scheduler is deprecated; use --engine dask --address", err=True)
        if address is not None and address != scheduler:
            raise InputError("give --address or the deprecated --scheduler, not both")
        if name not in (None, "dask"):
            raise InputError("--scheduler is a Dask scheduler address; use --address")
        address, name = scheduler, "dask"
    if name is None:
        name = "dask" if workers or address else "local"
    if name not in ENGINES:
        raise InputError(f"--engine must be one of {', '.join(ENGINES)}, not {name!r}")
    if workers < 0:
        raise InputError(f"--workers must be at least 0, not {workers}")
    if name == "local" and (workers or address):
        raise InputError("--workers/--address need --engine dask or --engine ray")
    return name, address


def _fmt(value: float | None) -> str:
    """A summary.csv mean with two decimals, ``-`` when empty."""
    return f"{value:.2f}" if value is not None else "-"


def _echo_summary(out: Path, counts: dict[str, Any]) -> None:
    """Print what a scoring run did and each model's summary row."""
    typer.echo(
        f"scored {counts['scored']} queries (skipped {counts['skipped']} already scored); "
        f"wrote {out}/paths.jsonl, queries.jsonl, summary.csv"
    )
    usage = counts.get("llm_judge")
    if usage:
        typer.echo(
            f"llm judge: {usage['requests']} requests ({usage['sent']} sent, "
            f"{usage['cached']} from the reply cache, {usage['failed']} failed); "
            f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens"
        )
        if usage.get("cost"):
            from creagraph.core.llm import cost_line

            typer.echo(f"llm judge {cost_line(usage['cost'])}")
    for number, raw in enumerate(iter_records(out / "summary.csv"), start=2):
        row = SummaryRow.from_dict(raw, f"{out / 'summary.csv'}: line {number}")
        extra = ""
        if "ceiling_fraction_0.9" in row.columns:
            extra += (
                f"  ceiling s0.7 {_fmt(row.mean('ceiling_fraction_0.7'))} "
                f"s0.9 {_fmt(row.mean('ceiling_fraction_0.9'))}  "
                f"graph recall {_fmt(row.mean('graph_path_recall'))}"
            )
        if row.judge_unparsed or row.judge_failed:
            extra += f"  judge: {row.judge_unparsed} unparsed, {row.judge_failed} failed triples"
        typer.echo(
            f"  {row.model}: s0.7 {_fmt(row.mean('s_0.7'))}  s0.9 {_fmt(row.mean('s_0.9'))}  "
            f"max σ {_fmt(row.mean('max_quality'))}  "
            f"d {_fmt(row.mean('mean_pairwise_distance'))}  "
            f"|U| {_fmt(row.mean('n_kept'))}  ({row.n_queries} queries"
            f"{_of_query_set(row)}){extra}"
        )
        typer.echo(
            f"    unknown triples as not factual / factual: s0.9 "
            f"{_fmt(row.mean('s_0.9_strict'))} / {_fmt(row.mean('s_0.9_lenient'))}  "
            f"decided {_fmt(row.mean('decided_share'))}"
        )


def _of_query_set(row: SummaryRow) -> str:
    """" of N in query set D": the coverage of the set the model is compared on."""
    named, size = row.query_set.get("query_set"), row.query_set.get("query_set_size")
    return (f" of {size}" if size else "") + f" in query set {named}" if named else ""


# Long only for its option declarations (typer's Annotated parameters); the body is short.
def score(
    inputs: Annotated[
        list[Path], typer.Argument(help="Answer files (.jsonl/.json/.csv/.parquet).")
    ],
    out: OutOpt,
    model: Annotated[
        str | None, typer.Option(help="Model name (else from a column or file name).")
    ] = None,
    judge: JudgeOpt = "kg",
    mode: ModeOpt = Mode("paper"),
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    factuality_threshold: Annotated[
        float, typer.Option(help="Min fraction of factual triples.")
    ] = 1.0,
    llm_base_url: LlmBaseUrlOpt = None,
    llm_model: LlmModelOpt = None,
    llm_api_key_env: LlmApiKeyEnvOpt = None,
    llm_concurrency: Annotated[
        int, typer.Option("--llm-concurrency", help="LLM judge requests in flight at once.")
    ] = 8,
    ceiling: Annotated[
        bool, typer.Option(help="Also report the graph's oracle ceiling and path recall.")
    ] = False,
    ceiling_k: Annotated[int, typer.Option(help="Oracle path length bound.")] = 3,
    engine: Annotated[
        Engine | None,
        typer.Option(
            help="local, dask or ray (default: local; dask when --workers or --address "
            "is given without --engine)."
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            help="Worker processes: size of the local cluster to start, or the number "
            "of Ray actors on an existing cluster (default: one per CPU)."
        ),
    ] = 0,
    address: Annotated[
        str | None,
        typer.Option(
            help="Existing cluster to use: Ray (host:6379, ray://host:10001, auto) "
            "or Dask scheduler (tcp://host:8786)."
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(hidden=True, help="Deprecated: use --engine dask --address ADDR."),
    ] = None,
    threads: Annotated[
        int,
        typer.Option(
            help="Torch/BLAS threads per scoring process (the same everywhere keeps "
            "local and distributed results identical; 1, the default, was fastest "
            "on a busy shared machine, see benchmarks/RESULTS.md)."
        ),
    ] = 1,
    precision: PrecisionOpt = "fp32",
    parquet: Annotated[
        bool, typer.Option(help="Also write paths/queries/summary as Parquet.")
    ] = False,
    max_paths: Annotated[
        int | None,
        typer.Option(
            help="Paths scored per answer (default 20,000); the rest are dropped with a "
            "recorded reason."
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option(
            help="Delete the previous results in OUT (made by creagraph score) and start "
            "over, instead of resuming."
        ),
    ] = False,
    unknown: Annotated[
        str,
        typer.Option(
            help="Which reading of triples the graph leaves unknown fills `utility`: "
            "strict (not factual) or lenient (factual); both are always reported."
        ),
    ] = "strict",
    negatives: Annotated[
        Path | None,
        typer.Option(
            help="Known false statements (TSV of subject, property, object ids, e.g. the "
            "slice's negatives.tsv.gz): the kg judge refutes them."
        ),
    ] = None,
    query_set: Annotated[
        Path | None,
        typer.Option(
            "--query-set",
            help="The benchmark's query file the answers were drawn from: every model is "
            "compared on it (answered queries must be in it). Default: the queries file of "
            "`run create`, else the union of the queries answered in this run.",
        ),
    ] = None,
    price_input: Annotated[
        float | None,
        typer.Option("--price-input", help="Your price per 1M input tokens of the LLM "
                     "judge: its cost estimate (creagraph ships no prices)."),
    ] = None,
    price_output: Annotated[
        float | None, typer.Option("--price-output", help="Your price per 1M output tokens.")
    ] = None,
    judge_arg: JudgeArgOpt = None,
    embedder: EmbedderOpt = "minilm",
    embedder_arg: EmbedderArgOpt = None,
    config_file: ConfigOpt = None,
) -> None:
    """Score model answers: parse, validate, ground, embed, creative utility.

    Writes OUT/paths.jsonl, OUT/queries.jsonl and OUT/summary.csv; re-running with the
    same settings and inputs skips queries already scored. OUT must be new, empty or
    made by creagraph score; one run at a time writes it.
    """
    config = _checked(
        ScorerConfig(
            judge=judge,
            mode=utility_mode(mode),
            # workers may not share the working directory
            store=str(store.resolve()) if store is not None else None,
            endpoint=endpoint,
            factuality_threshold=factuality_threshold,
            llm_base_url=llm_base_url,
            llm_model=llm_model,
            ceiling_k=ceiling_k if ceiling else None,
            threads=threads,
            llm_api_key_env=llm_api_key_env,
            max_paths=max_paths,
            unknown=unknown,
            negatives=str(negatives.resolve()) if negatives is not None else None,
            precision=precision,
            llm_concurrency=llm_concurrency,
            judge_args=key_values(judge_arg, "--judge-arg"),
            embedder=embedder,
            embedder_args=key_values(embedder_arg, "--embedder-arg"),
        )
    )
    from creagraph.core.llm import Prices

    name, address = _engine(engine, scheduler, workers, address)
    counts = score_to_dir(
        inputs,
        out,
        config,
        model=model,
        engine=name,
        workers=workers,
        address=address,
        parquet=parquet,
        fresh=fresh,
        query_set=query_set,
        prices=Prices.from_options(price_input, price_output),
    )
    _echo_summary(out, counts)


def distinct(
    results: Annotated[list[Path], typer.Argument(help="Score output dirs or paths.jsonl files.")],
    out: OutOpt,
    min_quality: Annotated[float, typer.Option(help="Only paths with quality above this.")] = 3.0,
    mode: ModeOpt = Mode("paper"),
    precision: PrecisionOpt = "fp32",
) -> None:
    """Distinctiveness ν of each model's paths against all other models' paths.

    Queries are paired by query_id, else index, else normalised query text; a model
    found in two of the given results is an error (score it once, in one folder).
    """
    from creagraph.scoring.distinct import distinct_to_dir

    summary = distinct_to_dir(
        results,
        out,
        min_quality=min_quality,
        mode=utility_mode(mode),
        precision=precision,
    )
    for row in summary:
        typer.echo(
            f"  {row['model']}: avg ν {row['avg_nu'] or 0:.3f}  "
            f"max ν {row['max_nu'] or 0:.3f}  "
            f"avg σ {row['avg_sigma'] or 0:.2f}  ({row['n_paths']} paths)"
        )


def distance(
    pairs: Annotated[
        Path,
        typer.Argument(
            help='JSONL lines {"a": PATH, "b": PATH}; a PATH is a list of [h, r, t] '
            "triples or an already built path string."
        ),
    ],
    mode: ModeOpt = Mode("paper"),
    precision: PrecisionOpt = "fp32",
) -> None:
    """Print raw (1 − cos) and transformed (g) distance between path pairs (SPEC §3.5).

    With --mode published, raw distances above 1 go through the cosine expression as
    in the published code; in paper mode g is 1 there.
    """
    from creagraph.scoring.distinct import pair_distances

    for record in pair_distances(pairs, mode=utility_mode(mode), precision=precision):
        typer.echo(dumps(record))


def register(app: typer.Typer) -> None:
    """Add the scoring commands to the top-level app."""
    app.command("score")(score)
    app.command("distinct")(distinct)
    app.command("distance")(distance)
