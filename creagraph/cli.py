"""The ``creagraph`` command line: a thin layer over the Python API.

Each job contributes its own Typer app from ``creagraph/<job>/cli.py``; heavy
libraries (torch, faiss, igraph) are imported inside commands, never at start-up.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from creagraph.core.io import InputError

app = typer.Typer(
    name="creagraph",
    help="Measure language-model creativity with knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from creagraph.kg.cli import app as kg_app

    app.add_typer(kg_app, name="kg", help="Knowledge graph: import, inspect, pull, serve.")
    from creagraph.scoring.cli import register as register_scoring

    register_scoring(app)
    from creagraph.report.cli import register as register_report

    register_report(app)
    from creagraph.judgments.cli import app as judge_app

    app.add_typer(judge_app, name="judge", help="Pairwise preferences and rater agreement.")
    from creagraph.querygen.cli import app as queries_app
    app.add_typer(queries_app, name="queries", help="CREATE query generation and graph ceilings.")
    from creagraph.tig.cli import app as tig_app

    app.add_typer(tig_app, name="tig", help="Ekphrasis novelty anchors from Typed Idea Graphs.")


_register()


@app.command()
def demo(
    slice_path: Path | None = typer.Option(None, "--slice", help="N-Triples slice to use."),
    store: Path | None = typer.Option(None, "--store", help="Embedded store directory."),
    out: Path = typer.Option(
        Path("creagraph-demo"), "--out", help="Output directory (scores, TIG files, report)."
    ),
    kg_queries: int = typer.Option(
        5, "--kg-queries", help="Queries per model also scored with the kg judge (grounding)."
    ),
    tig_runs: int = typer.Option(
        3, "--tig-runs", help="Runs per model and AUT object in the TIG population."
    ),
) -> None:
    """Run the whole pipeline on the embedded default graph (the shared Wikidata slice):
    generate queries, score the published sample outputs, TIG anchors on a shared
    population, and an HTML report; prints where the report is."""
    from creagraph.demo import run_demo

    run_demo(slice_path, store, out, kg_queries=kg_queries, tig_runs=tig_runs)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; user errors print one line and exit 2."""
    try:
        app(args=argv, standalone_mode=False)
    except (InputError, FileNotFoundError, ValueError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        typer.secho(f"error: {message}", fg="red", err=True)
        return 2
    except SystemExit as exc:
        return int(exc.code or 0)
    except Exception as exc:  # click's usage errors and aborts
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return exc.exit_code
        if isinstance(exc, click.exceptions.Abort):
            typer.echo("aborted", err=True)
            return 130
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
