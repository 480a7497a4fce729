"""``creagraph queries …``: generate CREATE query sets and compute graph ceilings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from creagraph.cliopts import EndpointOpt, StoreOpt, deprecated_alias, open_graph_option
from creagraph.core.io import InputError, dumps

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command()
def generate(
    out: Annotated[
        Path, typer.Option("--out", help="Output JSON Lines file (written atomically).")
    ],
    n: Annotated[int, typer.Option("--n", min=1, help="Queries to generate.")] = 1000,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Random seed (same seed, same output).")
    ] = 0,
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    relation: Annotated[
        list[str] | None,
        typer.Option("--property", help="Use only this source relation (PID; repeatable)."),
    ] = None,
    relation_old: Annotated[
        list[str] | None, typer.Option("--relation", hidden=True, help="Deprecated: --property.")
    ] = None,
    min_size: Annotated[int, typer.Option(help="Smallest category class.")] = 2,
    max_size: Annotated[int, typer.Option(help="Largest category class.")] = 99,
    max_target_holders: Annotated[
        int, typer.Option(help="Most entities that may hold a target condition.")
    ] = 499,
    max_per_category: Annotated[
        int, typer.Option(help="Most queries from one category (0: no limit).")
    ] = 3,
    min_source_quality: Annotated[
        float, typer.Option(help="Smallest source-path quality kept (4: strong; 0: any).")
    ] = 4.0,
    balance: Annotated[
        bool,
        typer.Option(
            "--balance",
            help="Same number of queries per relation, as the published set; "
            "reports the relations the graph cannot fill.",
        ),
    ] = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write the filter report as JSON here.")
    ] = None,
    llm_endpoint: Annotated[
        str | None,
        typer.Option(
            "--llm-base-url",
            help="OpenAI-compatible API root (e.g. http://localhost:8000/v1) to rewrite queries.",
        ),
    ] = None,
    llm_endpoint_old: Annotated[
        str | None, typer.Option("--llm-endpoint", hidden=True, help="Deprecated: --llm-base-url.")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name for --llm-base-url.")] = None,
    llm_api_key_env: Annotated[
        str, typer.Option(help="Environment variable holding the API key, if any.")
    ] = "OPENAI_API_KEY",
) -> None:
    """Generate CREATE queries with verified source paths (SPEC §3.1)."""
    from creagraph.core.io import atomic_write
    from creagraph.querygen.generate import (
        EmptySelectionError,
        GenerationConfig,
        generate_queries,
        write_queries,
    )

    relation = deprecated_alias(relation, relation_old, "--property", "--relation")
    llm_endpoint = deprecated_alias(
        llm_endpoint, llm_endpoint_old, "--llm-base-url", "--llm-endpoint"
    )
    if (llm_endpoint is None) != (llm_model is None):
        raise InputError("--llm-base-url and --llm-model go together")
    config = GenerationConfig(
        min_size=min_size,
        max_size=max_size,
        max_target_holders=max_target_holders,
        max_per_category=max_per_category or None,
        relations=tuple(relation) if relation else None,
        min_source_quality=min_source_quality,
        balance=balance,
    )
    kg = open_graph_option(store, endpoint)
    try:
        result = generate_queries(kg, n, seed, config, show_progress=True)
    except EmptySelectionError as exc:
        raise InputError(str(exc)) from exc
    if result.report.empty_reason is not None:
        raise InputError(result.report.empty_reason)
    records = result.records
    if llm_endpoint is not None:
        from collections import Counter

        from creagraph.core.embeddings import default_embedder
        from creagraph.core.progress import progress
        from creagraph.core.relations import RelationLinker
        from creagraph.querygen.llm import ChatClient, rewrite_query

        client = ChatClient(
            llm_endpoint, model=str(llm_model), api_key=os.environ.get(llm_api_key_env)
        )
        made: list[RelationLinker] = []

        def linker() -> RelationLinker:  # built on the first answer, once
            if not made:
                made.append(RelationLinker(kg, default_embedder()))
            return made[0]

        records = [
            rewrite_query(r, client, linker=linker)
            for r in progress(records, desc="rewrite", unit=" queries")
        ]
        kept = sum(1 for r in records if r["query_rewritten"])
        reasons = Counter(r["rewrite_rejected"] for r in records if r["rewrite_rejected"])
        detail = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        typer.echo(
            f"LLM rewrites kept: {kept}/{len(records)}"
            + (f" (template kept: {detail})" if detail else "")
        )
    write_queries(out, records)
    for line in result.report.lines():
        typer.echo(line)
    used = sum(1 for row in result.report.per_relation.values() if row["kept"])
    typer.echo(f"wrote {len(records)} queries over {used} source relations to {out}")
    if len(records) < n:
        typer.secho(
            f"warning: the graph supplied only {len(records)} of {n} queries", fg="yellow", err=True
        )
    if report is not None:
        with atomic_write(report) as handle:
            handle.write(dumps(result.report.as_dict()) + "\n")


@app.command()
def paths(
    queries: Annotated[
        Path, typer.Argument(help="Query file (JSON Lines from `queries generate`).")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Output JSON Lines: one oracle record per query.")
    ],
    k: Annotated[
        int, typer.Option("--k", min=2, help="Most triples per path, the target triple included.")
    ] = 3,
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    max_paths: Annotated[int, typer.Option(help="Most paths enumerated per query.")] = 5000,
    max_expansions: Annotated[
        int, typer.Option(help="Most neighbour lists fetched per query.")
    ] = 5000,
    max_scored: Annotated[
        int, typer.Option(help="Best paths the ceiling utility is computed over.")
    ] = 256,
    list_paths: Annotated[
        int,
        typer.Option("--list-paths", help="Best paths listed per query in the output (0: none)."),
    ] = 20,
    mode: Annotated[str, typer.Option(help="Utility formula: paper or published.")] = "paper",
) -> None:
    """Enumerate each query's graph paths and report strong paths and the ceiling utility."""
    from creagraph.core.io import iter_jsonl, write_jsonl
    from creagraph.core.progress import progress
    from creagraph.querygen.oracle import OracleBudget, oracle_paths_many

    if mode not in ("paper", "published"):
        raise InputError(f"--mode must be paper or published, not {mode!r}")
    records = list(iter_jsonl(queries))
    for lineno, record in enumerate(records, start=1):
        for name in ("entity_a_id", "rel_b_id", "entity_b_id"):
            if not record.get(name):
                raise InputError(f"{queries}:{lineno}: field {name!r} is missing")
    kg = open_graph_option(store, endpoint)
    budget = OracleBudget(max_paths=max_paths, max_expansions=max_expansions, max_scored=max_scored)
    results = oracle_paths_many(kg, records, k=k, budget=budget, mode=mode)
    rows = [
        result.as_dict(include_paths=list_paths > 0, max_listed=list_paths)
        for result in progress(results, total=len(records), desc="oracle", unit=" queries")
    ]
    write_jsonl(out, rows)
    if rows:
        strong = sorted(r["n_strong"] for r in rows)
        found = [r["source_path_found"] for r in rows if r["source_path_found"] is not None]
        ceil7 = sum(r["ceiling"]["0.7"] for r in rows) / len(rows)
        ceil9 = sum(r["ceiling"]["0.9"] for r in rows) / len(rows)
        typer.echo(
            f"queries: {len(rows)}\nmedian strong paths: {strong[len(strong) // 2]}\n"
            f"queries without a strong path: {sum(1 for s in strong if s == 0)}\n"
            f"mean ceiling utility: γ=0.7 {ceil7:.3f}, γ=0.9 {ceil9:.3f}\n"
            f"truncated by the budget: {sum(1 for r in rows if r['truncated'])}"
        )
        if found:
            typer.echo(f"source path found: {sum(found)}/{len(found)}")
    typer.echo(f"wrote {len(rows)} oracle records to {out}")
