"""``creagraph queries …``: generate CREATE query sets and compute graph ceilings.

Each command parses its options and calls one library function
(:func:`creagraph.querygen.generate.generate_query_file`,
:func:`creagraph.querygen.oracle.write_oracle_records`); the option declarations are the
module-level ``…Opt`` aliases below.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from creagraph.cliopts import (
    EndpointOpt,
    LlmApiKeyEnvOpt,
    Mode,
    ModeOpt,
    StoreOpt,
    api_key_from_env,
    deprecated_alias,
    open_graph_option,
)
from creagraph.core.io import InputError

if TYPE_CHECKING:
    from creagraph.querygen.generate import GenerationResult

app = typer.Typer(no_args_is_help=True, add_completion=False)


# `queries generate`
OutOpt = Annotated[
    Path, typer.Option("--out", help="Output JSON Lines file (written atomically).")
]
CountOpt = Annotated[int, typer.Option("--n", min=1, help="Queries to generate.")]
SeedOpt = Annotated[
    int, typer.Option("--seed", min=0, help="Random seed (same seed, same output).")
]
PropertyOpt = Annotated[
    list[str] | None,
    typer.Option("--property", help="Use only this source relation (PID; repeatable)."),
]
RelationOldOpt = Annotated[
    list[str] | None, typer.Option("--relation", hidden=True, help="Deprecated: --property.")
]
MinSizeOpt = Annotated[int, typer.Option(help="Smallest category class.")]
MaxSizeOpt = Annotated[int, typer.Option(help="Largest category class.")]
MaxTargetHoldersOpt = Annotated[
    int, typer.Option(help="Most entities that may hold a target condition.")
]
MaxPerCategoryOpt = Annotated[
    int, typer.Option(help="Most queries from one category (0: no limit).")
]
MaxStartUsesOpt = Annotated[
    int, typer.Option(min=0, help="Most queries about one start entity (0: no limit).")
]
MaxTargetUsesOpt = Annotated[
    int, typer.Option(min=0, help="Most queries with one target condition (0: no limit).")
]
MinSourceQualityOpt = Annotated[
    float, typer.Option(help="Smallest source-path quality kept (4: strong; 0: any).")
]
BalanceOpt = Annotated[
    bool,
    typer.Option(
        "--balance",
        help="Same number of queries per relation, as the published set; "
        "reports the relations the graph cannot fill.",
    ),
]
ReportOpt = Annotated[
    Path | None, typer.Option("--report", help="Also write the filter report as JSON here.")
]
RewriteUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-base-url",
        help="OpenAI-compatible API root (e.g. http://localhost:8000/v1) to rewrite queries.",
    ),
]
RewriteUrlOldOpt = Annotated[
    str | None, typer.Option("--llm-endpoint", hidden=True, help="Deprecated: --llm-base-url.")
]
RewriteModelOpt = Annotated[str | None, typer.Option(help="Model name for --llm-base-url.")]

# `queries paths`
QueriesArg = Annotated[
    Path, typer.Argument(help="Query file (JSON Lines from `queries generate`).")
]
OracleOutOpt = Annotated[
    Path, typer.Option("--out", help="Output JSON Lines: one oracle record per query.")
]
KOpt = Annotated[
    int, typer.Option("--k", min=2, help="Most triples per path, the target triple included.")
]
MaxPathsOpt = Annotated[int, typer.Option(help="Most paths enumerated per query.")]
MaxExpansionsOpt = Annotated[int, typer.Option(help="Most neighbour lists fetched per query.")]
MaxScoredOpt = Annotated[int, typer.Option(help="Best paths the ceiling utility is computed over.")]
OraclePrecisionOpt = Annotated[
    str | None,
    typer.Option(
        "--precision",
        help="Embedding arithmetic of the path strings: fp32 (default, or "
        "$CREAGRAPH_PRECISION) or bf16 (2-3x faster where the CPU has native bf16; cached "
        "separately).",
        show_default=False,
    ),
]
OracleThreadsOpt = Annotated[
    int,
    typer.Option(
        "--threads",
        help="Threads of the embedding model (1, as `score` uses: the fastest where cores are "
        "shared; more can help on an idle many-core machine).",
    ),
]
ListPathsOpt = Annotated[
    int,
    typer.Option("--list-paths", help="Best paths listed per query in the output (0: none)."),
]


@app.command()
def generate(  # long only for its option declarations; the body parses and calls the library
    out: OutOpt,
    n: CountOpt = 1000,
    seed: SeedOpt = 0,
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    relation: PropertyOpt = None,
    relation_old: RelationOldOpt = None,
    min_size: MinSizeOpt = 2,
    max_size: MaxSizeOpt = 99,
    max_target_holders: MaxTargetHoldersOpt = 499,
    max_per_category: MaxPerCategoryOpt = 3,
    max_start_uses: MaxStartUsesOpt = 2,
    max_target_uses: MaxTargetUsesOpt = 2,
    min_source_quality: MinSourceQualityOpt = 4.0,
    balance: BalanceOpt = False,
    report: ReportOpt = None,
    llm_endpoint: RewriteUrlOpt = None,
    llm_endpoint_old: RewriteUrlOldOpt = None,
    llm_model: RewriteModelOpt = None,
    llm_api_key_env: LlmApiKeyEnvOpt = None,
) -> None:
    """Generate CREATE queries with verified source paths (SPEC §3.1)."""
    from creagraph.querygen.generate import (
        EmptySelectionError,
        GenerationConfig,
        generate_query_file,
    )

    relation = deprecated_alias(relation, relation_old, "--property", "--relation")
    llm_endpoint = deprecated_alias(
        llm_endpoint, llm_endpoint_old, "--llm-base-url", "--llm-endpoint"
    )
    if (llm_endpoint is None) != (llm_model is None):
        raise InputError("--llm-base-url and --llm-model go together")
    client = None
    if llm_endpoint is not None:
        from creagraph.core.llm import ChatClient

        client = ChatClient.from_env(
            llm_endpoint, llm_model, api_key_from_env(llm_api_key_env)
        )
    config = GenerationConfig(
        min_size=min_size,
        max_size=max_size,
        max_target_holders=max_target_holders,
        max_per_category=max_per_category or None,
        max_start_uses=max_start_uses or None,
        max_target_uses=max_target_uses or None,
        relations=tuple(relation) if relation else None,
        min_source_quality=min_source_quality,
        balance=balance,
    )
    from dataclasses import asdict

    from creagraph.core.outdir import check_output_file, claim_output_file

    check_output_file(out, "queries generate")
    if report is not None:
        check_output_file(report, "queries generate --report", inputs=[out])
    settings = {"n": n, "seed": seed, "store": str(store) if store else None,
                "endpoint": endpoint, "config": asdict(config), "llm_model": llm_model}
    kg = open_graph_option(store, endpoint)
    with contextlib.ExitStack() as claims:
        claims.enter_context(claim_output_file(out, "queries generate", fingerprint=settings))
        if report is not None:
            claims.enter_context(claim_output_file(report, "queries generate --report",
                                                   inputs=[out], fingerprint=settings))
        try:
            result = generate_query_file(
                kg, out, n, seed, config, client=client, report=report, show_progress=True
            )
        except EmptySelectionError as exc:
            raise InputError(str(exc)) from exc
    _echo_generated(result, out, n, rewritten=client is not None)


def _echo_generated(result: GenerationResult, out: Path, n: int, *, rewritten: bool) -> None:
    from creagraph.querygen.llm import rewrite_summary

    records = result.records
    if rewritten:
        typer.echo(rewrite_summary(records))
    for line in result.report.lines():
        typer.echo(line)
    used = sum(1 for row in result.report.per_relation.values() if row["kept"])
    typer.echo(f"wrote {len(records)} queries over {used} source relations to {out}")
    if len(records) < n:
        typer.secho(
            f"warning: the graph supplied only {len(records)} of {n} queries", fg="yellow", err=True
        )


@app.command()
def paths(
    queries: QueriesArg,
    out: OracleOutOpt,
    k: KOpt = 3,
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    max_paths: MaxPathsOpt = 5000,
    max_expansions: MaxExpansionsOpt = 5000,
    max_scored: MaxScoredOpt = 256,
    list_paths: ListPathsOpt = 20,
    mode: ModeOpt = Mode("paper"),
    precision: OraclePrecisionOpt = None,
    threads: OracleThreadsOpt = 1,
) -> None:
    """Enumerate each query's graph paths and report strong paths and the ceiling utility."""
    from creagraph.core.embeddings import check_precision, set_torch_threads
    from creagraph.core.outdir import check_output_file, claim_output_file, file_identity
    from creagraph.core.settings import value as settings_value
    from creagraph.querygen.oracle import (
        OracleBudget,
        oracle_summary,
        read_query_records,
        write_oracle_records,
    )

    check_output_file(out, "queries paths", inputs=[queries])
    records = read_query_records(queries)
    kg = open_graph_option(store, endpoint)
    budget = OracleBudget(max_paths=max_paths, max_expansions=max_expansions, max_scored=max_scored)
    settings = {"queries": file_identity(queries), "k": k, "store": str(store) if store else None,
                "endpoint": endpoint, "max_paths": max_paths, "max_expansions": max_expansions,
                "max_scored": max_scored, "list_paths": list_paths, "mode": Mode(mode).value}
    chosen = check_precision(precision or settings_value("CREAGRAPH_PRECISION") or "fp32")
    settings["precision"] = chosen  # recorded beside the output
    if threads < 1:
        raise InputError(f"--threads must be at least 1, not {threads}")
    set_torch_threads(threads)  # issue 31: torch's default pool oversubscribes shared cores
    with claim_output_file(out, "queries paths", inputs=[queries], fingerprint=settings):
        rows = write_oracle_records(
            kg, records, out, k=k, budget=budget, mode=Mode(mode).value, list_paths=list_paths,
            show_progress=True, precision=chosen,
        )  # fmt: skip
    for line in oracle_summary(rows):
        typer.echo(line)
    typer.echo(f"wrote {len(rows)} oracle records to {out}")
