"""``creagraph report``: the HTML report over scoring, distinctiveness and TIG output files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from creagraph.core.io import InputError

#: The files `creagraph report` writes in --out.
REPORT_OUTPUTS = (
    "report.html",
    "leaderboard.csv",
    "leaderboard.png",
    "utility_curves.png",
    "distinctiveness.png",
    "grounding.png",
    "relations_source.png",
    "relations_query.png",
)


# The repeatable path options (each ``None`` when not given).
GroundingOpt = Annotated[list[Path] | None, typer.Option(
    "--grounding", help="Extra score output (kg judge, e.g. on a subset) used for grounding "
    "coverage only; repeatable.")]
QueriesOpt = Annotated[list[Path] | None, typer.Option(
    "--queries", help="Generated queries or CREATE answer files naming each query's source "
    "relation (for the per-relation breakdown); repeatable.")]
TigOpt = Annotated[list[Path] | None, typer.Option(
    "--tig", help="`creagraph tig clusters|anchors` output (JSONL file, or a dir with "
    "clusters.jsonl/anchors.jsonl), or a `tig score --summary` JSON file (novelty beside "
    "within-model repetition); repeatable.")]


EkphrasisOpt = Annotated[list[Path] | None, typer.Option(
    "--ekphrasis", help="`creagraph tig judge` output folder (one per dimension); "
    "repeatable.")]


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to the top-level app."""

    @app.command()
    def report(
        results: Annotated[list[Path], typer.Argument(help="Score output dirs (queries.jsonl).")],
        out: Annotated[Path, typer.Option("--out", help="Report directory.")],
        distinct_dir: Annotated[
            Path | None, typer.Option("--distinct", help="Output dir of `creagraph distinct`.")
        ] = None,
        grounding: GroundingOpt = None,
        queries: QueriesOpt = None,
        tig: TigOpt = None,
        ekphrasis: EkphrasisOpt = None,
        top_clusters: Annotated[int, typer.Option(help="Cliché clusters shown per task.")] = 5,
        resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the CIs.")] = 2000,
        title: Annotated[str, typer.Option(help="Page title.")] = "creagraph report",
    ) -> None:
        """One self-contained HTML page (figures embedded; also written as PNGs) and
        leaderboard.csv: leaderboard with 95% bootstrap CIs, utility-vs-patience curves,
        distinctiveness, per-relation breakdown, grounding coverage, top cliché clusters."""
        from creagraph.core.outdir import claim_output_dir
        from creagraph.report import (
            read_distinct,
            read_ekphrasis,
            read_query_relations,
            read_scored,
            read_tig,
            write_report,
        )

        scored = read_scored(results)
        if not scored:
            raise InputError("no scored queries found in the given results")
        paths, summary = read_distinct(distinct_dir) if distinct_dir is not None else ([], [])
        from creagraph.report.novelty import split_tig_summaries

        summaries, tig_files = split_tig_summaries(tig) if tig else ([], [])
        clusters, anchors = read_tig(tig_files) if tig_files else ([], [])
        judged = read_ekphrasis(ekphrasis) if ekphrasis else []
        inputs = [p / "queries.jsonl" if p.is_dir() else p for p in [*results, *(grounding or [])]]
        inputs += [*(queries or []), *(p for p in tig or [] if not p.is_dir())]
        with claim_output_dir(out, "report", REPORT_OUTPUTS, inputs=inputs):
            files = write_report(
                scored,
                out,
                distinct_paths=paths,
                distinct_summary=summary,
                grounding_queries=read_scored(grounding) if grounding else [],
                relation_records=read_query_relations(queries) if queries else [],
                tig_clusters=clusters,
                tig_anchors=anchors,
                ekphrasis=judged,
                tig_novelty=summaries,
                top_clusters=top_clusters,
                n_resamples=resamples,
                title=title,
            )
        for f in files[1:]:
            typer.echo(f"wrote {f}")
        typer.echo(f"report: {files[0]}")
