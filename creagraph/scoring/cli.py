"""``creagraph score``, ``creagraph distinct`` and ``creagraph distance``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from creagraph.cliopts import (
    EndpointOpt,
    Engine,
    JudgeKind,
    JudgeOpt,
    LlmApiKeyEnvOpt,
    LlmBaseUrlOpt,
    LlmModelOpt,
    Mode,
    ModeOpt,
    PrecisionOpt,
    StoreOpt,
)
from creagraph.core.io import InputError, dumps, iter_records, read_jsonl, write_records
from creagraph.scoring.api import build_scorer
from creagraph.scoring.distributed import ENGINES, ScorerConfig

__all__ = ["register", "build_scorer"]


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
    "unknown": "--unknown",
    "negatives": "--negatives",
}


def _as_flags(message: str) -> str:
    """A library error message with parameter names spelled as this command's flags."""
    import re

    return re.sub(r"\b(" + "|".join(_FLAGS) + r")\b", lambda m: _FLAGS[m.group(1)], message)


#: The files `creagraph score` writes in --out (the only ones --fresh deletes).
SCORE_OUTPUTS = (
    "paths.jsonl",
    "queries.jsonl",
    "summary.csv",
    "README.txt",
    "paths.parquet",
    "queries.parquet",
    "summary.parquet",
)
#: Settings that do not change any number (results are identical by design).
_NOT_FINGERPRINTED = {"threads"}


def score_fingerprint(config: ScorerConfig, inputs: list[Path], model: str | None) -> dict:
    """Everything that determines `creagraph score`'s numbers, as plain JSON values: every
    :class:`ScorerConfig` setting but the thread count, ``--model``, the graph store's
    identity (its path and the SHA-256 of its ``meta.json``, which holds every store
    file's checksum) and each input file's identity (path, size, SHA-256)."""
    import dataclasses
    import hashlib

    from creagraph.core.outdir import file_identity

    fp: dict = {}
    for f in dataclasses.fields(config):
        if f.name in _NOT_FINGERPRINTED:
            continue
        value = getattr(config, f.name)
        if f.name == "store" and value is not None:
            meta = Path(value) / "meta.json"
            try:
                digest = hashlib.sha256(meta.read_bytes()).hexdigest()
            except OSError:
                digest = None
            value = {"path": str(Path(value).resolve()), "sha256": digest}
        fp["--" + f.name.replace("_", "-")] = value
    fp["--model"] = model
    fp["inputs"] = [file_identity(p) for p in inputs]
    return fp


def _run_scoring(rows, config, out, engine, workers, address, total, *, parquet, again=None):
    """Score ``rows`` into ``out`` with the chosen engine (the directory is claimed).

    ``again`` (local engine): the same rows once more, read first to embed every relation
    phrase of the run in batches (:func:`creagraph.scoring.prepare.prepare_run`).
    """
    from creagraph.scoring.pipeline import score_files

    if engine == "local":
        scorer = build_scorer(config)
        if again is not None:
            from creagraph.scoring.prepare import prepare_run

            prepare_run(scorer, again)
        counts = score_files(rows, scorer, out, total=total)
    elif engine == "dask":
        from creagraph.scoring.distributed import dask_client, dask_runner

        with dask_client(address, workers) as client:
            runner = dask_runner(client, config, build_scorer)
            counts = score_files(rows, None, out, run=runner, total=total)
    else:
        from creagraph.scoring.distributed import ray_cluster, ray_runner

        with ray_cluster(address, workers):
            runner = ray_runner(config, build_scorer, workers)
            counts = score_files(rows, None, out, run=runner, total=total)
    if parquet:
        from creagraph.scoring.pipeline import summarize

        queries = read_jsonl(out / "queries.jsonl")
        write_records(out / "queries.parquet", queries)
        write_records(out / "paths.parquet", read_jsonl(out / "paths.jsonl"))
        write_records(out / "summary.parquet", summarize(queries))
    return counts


def register(app: typer.Typer) -> None:
    """Add the scoring commands to the top-level app."""

    @app.command()
    def score(
        inputs: Annotated[
            list[Path], typer.Argument(help="Answer files (.jsonl/.json/.csv/.parquet).")
        ],
        out: Annotated[Path, typer.Option("--out", help="Output directory.")],
        model: Annotated[
            str | None, typer.Option(help="Model name (else from a column or file name).")
        ] = None,
        judge: JudgeOpt = JudgeKind.kg,
        mode: ModeOpt = Mode.paper,
        store: StoreOpt = None,
        endpoint: EndpointOpt = None,
        factuality_threshold: Annotated[
            float, typer.Option(help="Min fraction of factual triples.")
        ] = 1.0,
        llm_base_url: LlmBaseUrlOpt = None,
        llm_model: LlmModelOpt = None,
        llm_api_key_env: LlmApiKeyEnvOpt = None,
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
    ) -> None:
        """Score model answers: parse, validate, ground, embed, creative utility.

        Writes OUT/paths.jsonl, OUT/queries.jsonl and OUT/summary.csv; re-running with the
        same settings and inputs skips queries already scored. OUT must be new, empty or
        made by creagraph score; one run at a time writes it.
        """
        from creagraph.core.outdir import claim_output_dir
        from creagraph.scoring.inputs import count_answers, iter_answers

        rows = iter_answers(inputs, model)  # streamed: memory does not grow with the input
        total = count_answers(inputs)
        config = ScorerConfig(
            judge=JudgeKind(judge).value,
            mode=Mode(mode).value,
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
        )
        try:
            config.validate()
        except InputError as exc:  # name the command-line flags, not the API's parameters
            raise InputError(_as_flags(str(exc))) from None
        engine = Engine(engine).value if engine is not None else None
        if scheduler is not None:
            typer.echo("note: --scheduler is deprecated; use --engine dask --address", err=True)
            if address is not None and address != scheduler:
                raise InputError("give --address or the deprecated --scheduler, not both")
            if engine not in (None, "dask"):
                raise InputError("--scheduler is a Dask scheduler address; use --address")
            address, engine = scheduler, "dask"
        if engine is None:
            engine = "dask" if workers or address else "local"
        if engine not in ENGINES:
            raise InputError(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        if workers < 0:
            raise InputError(f"--workers must be at least 0, not {workers}")
        if engine == "local" and (workers or address):
            raise InputError("--workers/--address need --engine dask or --engine ray")
        claim = claim_output_dir(
            out,
            "score",
            SCORE_OUTPUTS,
            inputs=inputs,
            fingerprint=score_fingerprint(config, inputs, model),
            fresh=fresh,
        )
        with claim:
            counts = _run_scoring(
                rows,
                config,
                out,
                engine,
                workers,
                address,
                total,
                parquet=parquet,
                again=iter_answers(inputs, model),
            )
        typer.echo(
            f"scored {counts['scored']} queries (skipped {counts['skipped']} already scored); "
            f"wrote {out}/paths.jsonl, queries.jsonl, summary.csv"
        )
        for row in iter_records(out / "summary.csv"):

            def fmt(key: str, row: dict = row) -> str:
                value = row.get(key)
                return f"{float(value):.2f}" if value not in (None, "") else "-"

            extra = ""
            if "ceiling_fraction_0.9_mean" in row:
                extra += (
                    f"  ceiling s0.7 {fmt('ceiling_fraction_0.7_mean')} "
                    f"s0.9 {fmt('ceiling_fraction_0.9_mean')}  "
                    f"graph recall {fmt('graph_path_recall_mean')}"
                )
            bad = int(row.get("judge_unparsed") or 0), int(row.get("judge_failed") or 0)
            if any(bad):
                extra += f"  judge: {bad[0]} unparsed, {bad[1]} failed triples"
            typer.echo(
                f"  {row['model']}: s0.7 {fmt('s_0.7_mean')}  s0.9 {fmt('s_0.9_mean')}  "
                f"max σ {fmt('max_quality_mean')}  d {fmt('mean_pairwise_distance_mean')}  "
                f"|U| {fmt('n_kept_mean')}  ({row['n_queries']} queries){extra}"
            )
            typer.echo(
                f"    unknown triples as not factual / factual: s0.9 "
                f"{fmt('s_0.9_strict_mean')} / {fmt('s_0.9_lenient_mean')}  "
                f"decided {fmt('decided_share_mean')}"
            )

    @app.command()
    def distinct(
        results: Annotated[
            list[Path], typer.Argument(help="Score output dirs or paths.jsonl files.")
        ],
        out: Annotated[Path, typer.Option("--out", help="Output directory.")],
        min_quality: Annotated[
            float, typer.Option(help="Only paths with quality above this.")
        ] = 3.0,
        mode: ModeOpt = Mode.paper,
        precision: PrecisionOpt = "fp32",
    ) -> None:
        """Distinctiveness ν of each model's paths against all other models' paths.

        Queries are paired by query_id, else index, else normalised query text; a model
        found in two of the given results is an error (score it once, in one folder).
        """
        from creagraph.core.embeddings import check_precision, default_embedder
        from creagraph.core.outdir import claim_output_dir
        from creagraph.scoring.distinct import distinctiveness

        files = [item / "paths.jsonl" if item.is_dir() else item for item in results]
        outputs = ("distinct_paths.jsonl", "distinct_summary.csv")
        with claim_output_dir(out, "distinct", outputs, inputs=files):
            records = []
            owner: dict[str, Path] = {}
            for path in files:
                found = read_jsonl(path)
                for model in sorted({str(r.get("model")) for r in found}):
                    if model in owner:
                        raise InputError(
                            f"model {model!r} is in both {owner[model]} and {path}: "
                            "give each model's scores once"
                        )
                    owner[model] = path
                records.extend(found)
            per_path, summary = distinctiveness(
                records,
                default_embedder(precision=check_precision(precision)),
                min_quality=min_quality,
                mode=Mode(mode).value,
            )
            write_records(out / "distinct_paths.jsonl", per_path)
            write_records(out / "distinct_summary.csv", summary)
        for row in summary:
            typer.echo(
                f"  {row['model']}: avg ν {row['avg_nu'] or 0:.3f}  "
                f"max ν {row['max_nu'] or 0:.3f}  "
                f"avg σ {row['avg_sigma'] or 0:.2f}  ({row['n_paths']} paths)"
            )

    @app.command()
    def distance(
        pairs: Annotated[
            Path,
            typer.Argument(
                help='JSONL lines {"a": PATH, "b": PATH}; a PATH is a list of [h, r, t] '
                "triples or an already built path string."
            ),
        ],
        mode: ModeOpt = Mode.paper,
        precision: PrecisionOpt = "fp32",
    ) -> None:
        """Print raw (1 − cos) and transformed (g) distance between path pairs (SPEC §3.5).

        With --mode published, raw distances above 1 go through the cosine expression as
        in the published code; in paper mode g is 1 there.
        """
        from creagraph.core.embeddings import check_precision, default_embedder
        from creagraph.core.metrics import path_string, transform_distance

        records = read_jsonl(pairs)
        strings = []
        for n, record in enumerate(records, start=1):
            for side in ("a", "b"):
                path = record.get(side)
                if isinstance(path, str) and path.strip():
                    strings.append(path)
                    continue
                if (
                    not isinstance(path, list)
                    or not path
                    or not all(isinstance(t, list) and len(t) == 3 for t in path)
                ):
                    raise InputError(
                        f"{pairs}: line {n}: field {side!r} must be a list of [h, r, t] "
                        "or a path string"
                    )
                strings.append(path_string(path))
        vectors = default_embedder(precision=check_precision(precision)).encode(strings)
        for n, _ in enumerate(records):
            a, b = vectors[2 * n], vectors[2 * n + 1]
            raw = max(0.0, 1.0 - float(a @ b))
            typer.echo(
                dumps(
                    {
                        "a": strings[2 * n],
                        "b": strings[2 * n + 1],
                        "raw": raw,
                        "transformed": float(transform_distance(raw, mode=Mode(mode).value)),
                        "mode": Mode(mode).value,
                    }
                )
            )
