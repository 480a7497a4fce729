"""``creagraph run create|briefs|template`` and ``creagraph eval create``: options parsed
here, the work done by :mod:`creagraph.runner` (``run_create``, ``run_briefs``,
``derive_template``, ``eval_create``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from creagraph.cliopts import (
    ConfigOpt,
    JudgeArgOpt,
    JudgeOpt,
    LlmApiKeyEnvOpt,
    LlmBaseUrlOpt,
    LlmModelOpt,
    OutOpt,
    key_values,
)
from creagraph.core.io import InputError

if TYPE_CHECKING:  # imported where used: `creagraph --help` stays fast
    from creagraph.core.llm import Prices, Sampling
    from creagraph.runner.common import Endpoint

app = typer.Typer(no_args_is_help=True, add_completion=False)
eval_app = typer.Typer(no_args_is_help=True, add_completion=False)

SamplesOpt = Annotated[int, typer.Option("--samples", help="Samples per prompt.")]
TemperatureOpt = Annotated[float, typer.Option("--temperature", help="Sampling temperature.")]
TopPOpt = Annotated[float | None, typer.Option("--top-p", help="Nucleus sampling (top_p).")]
MaxTokensOpt = Annotated[
    int | None, typer.Option("--max-tokens", help="Most tokens per reply (server default).")
]
SeedOpt = Annotated[
    int | None,
    typer.Option("--seed", help="Sent as seed + sample index (where the server honours it)."),
]
SystemOpt = Annotated[
    str | None, typer.Option("--system-prompt", help="A system message sent before each prompt.")
]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", help="Requests in flight.")]
RpmOpt = Annotated[
    float | None, typer.Option("--requests-per-minute", help="Cap on request starts per minute.")
]
DeadlineOpt = Annotated[
    float, typer.Option("--deadline", help="Seconds one request may take in all.")
]
NoCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Do not read or write the reply cache ($CREAGRAPH_CACHE_DIR/llm-replies.sqlite).",
    ),
]
ModelNameOpt = Annotated[
    str | None,
    typer.Option("--model-name", help="Model name written in the output (default --llm-model)."),
]
FreshOpt = Annotated[bool, typer.Option("--fresh", help="Replace a previous run's outputs.")]
PriceInputOpt = Annotated[
    float | None,
    typer.Option("--price-input", help="Your price per 1M input (prompt) tokens: the cost "
                 "estimate (creagraph ships no prices)."),
]
PriceOutputOpt = Annotated[
    float | None,
    typer.Option("--price-output", help="Your price per 1M output (completion) tokens."),
]


def _prices(price_input: float | None, price_output: float | None) -> Prices | None:
    from creagraph.core.llm import Prices

    return Prices.from_options(price_input, price_output)


def _endpoint(base_url: str | None, model: str | None, key_env: str | None, concurrency: int,
              rpm: float | None, deadline: float, no_cache: bool) -> Endpoint:
    from creagraph.runner.common import Endpoint

    if deadline <= 0:
        raise InputError("--deadline: must be positive")
    return Endpoint(
        base_url=base_url,
        model=model,
        api_key_env=key_env,
        concurrency=concurrency,
        requests_per_minute=rpm,
        deadline=deadline,
        cache=False if no_cache else None,
    )


def _sampling(temperature: float | None, top_p: float | None, max_tokens: int | None,
              seed: int | None) -> Sampling:
    from creagraph.core.llm import Sampling

    if max_tokens is not None and max_tokens < 1:
        raise InputError("--max-tokens: must be at least 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise InputError("--top-p: must be in (0, 1]")
    return Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed)


def _report(summary: dict, where: Path, rows_name: str) -> None:
    line = (
        f"{summary['rows']} rows in {where / rows_name}; requests: {summary['sent']} sent, "
        f"{summary['cached']} cached; {summary['empty']} empty, {summary['cut_off']} cut off; "
        f"{summary['tokens'].get('total_tokens', 0)} tokens"
    )
    typer.echo(line)
    from creagraph.core.llm import cost_line

    typer.echo(cost_line(summary["cost"]))
    if summary["failed"]:
        kinds = ", ".join(f"{k} {n}" for k, n in summary["failures"].items())
        typer.echo(
            f"warning: {summary['failed']} requests got no reply ({kinds}); listed in "
            f"{where / 'failures.jsonl'}; run the same command again to ask only those",
            err=True,
        )


@app.command("create")
def create(
    queries: Annotated[
        list[Path],
        typer.Argument(help="Queries: files with query, entity_a, entity_b, rel_b (several "
                       "are one query set; a query in several is asked once)."),
    ],
    out: OutOpt,
    llm_base_url: LlmBaseUrlOpt = None,
    llm_model: LlmModelOpt = None,
    llm_api_key_env: LlmApiKeyEnvOpt = None,
    samples: SamplesOpt = 1,
    temperature: TemperatureOpt = 0.0,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    system_prompt: SystemOpt = None,
    prompt_template: Annotated[
        Path | None,
        typer.Option(
            "--prompt-template",
            help="Template file with {query} {entity_a} {entity_b} {rel_b} "
            "(see `creagraph run template`).",
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 4,
    requests_per_minute: RpmOpt = None,
    deadline: DeadlineOpt = 600.0,
    no_cache: NoCacheOpt = False,
    model_name: ModelNameOpt = None,
    fresh: FreshOpt = False,
    price_input: PriceInputOpt = None,
    price_output: PriceOutputOpt = None,
    config_file: ConfigOpt = None,
) -> None:
    """Send each CREATE query (× --samples) to a model and write OUT/answers.jsonl in the
    form `creagraph score` reads; a re-run resumes, asking only what has no reply yet."""
    from creagraph.runner.create import run_create

    summary = run_create(
        queries,
        out,
        _endpoint(llm_base_url, llm_model, llm_api_key_env, concurrency, requests_per_minute,
                  deadline, no_cache),
        sampling=_sampling(temperature, top_p, max_tokens, seed),
        samples=samples,
        template_path=prompt_template,
        system_prompt=system_prompt,
        model_name=model_name,
        fresh=fresh,
        prices=_prices(price_input, price_output),
    )
    _report(summary, out, "answers.jsonl")


@app.command("briefs")
def briefs(
    out: OutOpt,
    briefs_file: Annotated[
        Path | None, typer.Argument(help="Briefs JSONL (task_id, brief, family, kind).")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="The prompts of a shared population: aut or noveltybench."),
    ] = None,
    llm_base_url: LlmBaseUrlOpt = None,
    llm_model: LlmModelOpt = None,
    llm_api_key_env: LlmApiKeyEnvOpt = None,
    samples: SamplesOpt = 1,
    temperature: TemperatureOpt = 0.0,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    system_prompt: SystemOpt = None,
    concurrency: ConcurrencyOpt = 4,
    requests_per_minute: RpmOpt = None,
    deadline: DeadlineOpt = 600.0,
    no_cache: NoCacheOpt = False,
    model_name: ModelNameOpt = None,
    fresh: FreshOpt = False,
    price_input: PriceInputOpt = None,
    price_output: PriceOutputOpt = None,
) -> None:
    """Send creative briefs to a model and write OUT/responses.jsonl in the form
    `tig build` / `tig score` read (Alternative Uses replies: one response per use)."""
    from creagraph.runner.briefs import read_briefs, run_briefs, shared_briefs

    if (briefs_file is None) == (source is None):
        raise InputError("give a briefs file or --source aut|noveltybench (one of them)")
    todo = read_briefs(briefs_file) if briefs_file is not None else shared_briefs(str(source))
    summary = run_briefs(
        todo,
        out,
        _endpoint(llm_base_url, llm_model, llm_api_key_env, concurrency, requests_per_minute,
                  deadline, no_cache),
        sampling=_sampling(temperature, top_p, max_tokens, seed),
        samples=samples,
        system_prompt=system_prompt,
        model_name=model_name,
        source=source,
        briefs_path=briefs_file,
        fresh=fresh,
        prices=_prices(price_input, price_output),
    )
    _report(summary, out, "responses.jsonl")


@app.command("template")
def template(
    answers: Annotated[Path, typer.Argument(help="A published answer file with a 'prompt' field.")],
    out: Annotated[Path, typer.Option("--out", help="Template file to write.")],
    row: Annotated[
        int | None,
        typer.Option("--row", help="Row to derive it from (1 = first; default: the first "
                     "row whose template rebuilds every stored prompt)."),
    ] = None,
) -> None:
    """Derive a --prompt-template from a published answer file: one row's stored prompt
    with its query fields replaced by placeholders, checked to reproduce every row's
    stored prompt byte for byte (refused otherwise)."""
    from creagraph.core.io import atomic_write, read_records
    from creagraph.core.outdir import check_output_file, claim_output_file, file_identity
    from creagraph.runner.prompts import derive_checked_template

    check_output_file(out, "run template", inputs=[answers])
    records = read_records(answers)
    if row is not None and not 1 <= row <= len(records):
        raise InputError(f"--row: {answers} has {len(records)} rows, not {row}")
    try:
        text, used, check = derive_checked_template(records, row)
    except InputError as exc:
        where = f"row {row}: " if row is not None else ""
        raise InputError(f"{answers}: {where}{exc}") from None
    if not check.ok:
        first = check.first_mismatch
        detail = f"row {first[0]} differs at character {first[1]}" if first else "no prompts"
        raise InputError(
            f"{answers}: the template from row {used} reproduces {check.matched} of "
            f"{check.rows} stored prompts ({detail}); try another --row"
        )
    with claim_output_file(out, "run template", inputs=[answers],
                           fingerprint={"answers": file_identity(answers), "row": used}), \
            atomic_write(out) as handle:
        handle.write(text)
    typer.echo(f"{out}: template from row {used} reproduces all {check.rows} stored prompts "
               f"of {answers}")


@eval_app.command("create")
def eval_create(
    queries: Annotated[
        Path, typer.Argument(help="Queries: any file with query, entity_a, entity_b, rel_b.")
    ],
    out: OutOpt,
    llm_base_url: LlmBaseUrlOpt = None,
    llm_model: LlmModelOpt = None,
    llm_api_key_env: LlmApiKeyEnvOpt = None,
    judge: JudgeOpt = "kg",
    judge_arg: JudgeArgOpt = None,
    mode: Annotated[str, typer.Option("--mode", help="paper or published.")] = "paper",
    store: Annotated[Path | None, typer.Option("--store", help="Embedded store.")] = None,
    endpoint: Annotated[
        str | None, typer.Option("--endpoint", help="SPARQL endpoint (instead of --store).")
    ] = None,
    compare: Annotated[
        list[Path] | None,
        typer.Option("--compare", help="Published answer files scored the same way (repeat)."),
    ] = None,
    samples: SamplesOpt = 1,
    temperature: TemperatureOpt = 0.0,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    system_prompt: SystemOpt = None,
    prompt_template: Annotated[
        Path | None, typer.Option("--prompt-template", help="Prompt template file.")
    ] = None,
    concurrency: ConcurrencyOpt = 4,
    requests_per_minute: RpmOpt = None,
    deadline: DeadlineOpt = 600.0,
    no_cache: NoCacheOpt = False,
    model_name: ModelNameOpt = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Delete OUT's run, score and report first.")
    ] = False,
    price_input: PriceInputOpt = None,
    price_output: PriceOutputOpt = None,
) -> None:
    """Run → score → report in one command: OUT/run (answers), OUT/score (with the
    run's settings in its fingerprint; every model compared on QUERIES), OUT/report
    (leaderboard and page). A re-run with the same settings resumes."""
    from creagraph.runner.evaluate import eval_create as run_eval

    paths = run_eval(
        queries,
        out,
        _endpoint(llm_base_url, llm_model, llm_api_key_env, concurrency, requests_per_minute,
                  deadline, no_cache),
        sampling=_sampling(temperature, top_p, max_tokens, seed),
        samples=samples,
        template_path=prompt_template,
        system_prompt=system_prompt,
        model_name=model_name,
        judge=judge,
        judge_args=key_values(judge_arg, "--judge-arg"),
        mode=mode,
        store=str(store) if store else None,
        endpoint_url=endpoint,
        compare=list(compare or []),
        fresh=fresh,
        prices=_prices(price_input, price_output),
    )
    from creagraph.core.llm import cost_line

    for step in ("run", "judge"):
        if paths.get(f"{step}_cost") is not None:
            typer.echo(f"{step} {cost_line(paths[f'{step}_cost'])}")
    typer.echo(f"report: {paths['report']}")
