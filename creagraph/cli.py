"""The ``creagraph`` command line: a thin layer over the Python API.

Each job contributes its own Typer app from ``creagraph/<job>/cli.py``; heavy
libraries (torch, faiss, igraph) are imported inside commands, never at start-up, and the
optional ones through :func:`creagraph.core.extras.require`, so a missing extra is one
``error: …`` line naming it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from creagraph.core import settings
from creagraph.core.io import InputError

#: Help is as wide as the terminal (COLUMNS), up to this.
HELP_MAX_WIDTH = 1000

app = typer.Typer(
    name="creagraph",
    help="Measure language-model creativity with knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help as plain text (click's formatter), for every command: it wraps whole paragraphs
    # to the terminal's width and puts a long option's help under it, where rich's tables
    # cut option names and help at 80 columns ("--factuality-thr…").
    rich_markup_mode=None,
    context_settings={"max_content_width": HELP_MAX_WIDTH},
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
    from creagraph.runner.cli import app as run_app
    from creagraph.runner.cli import eval_app

    app.add_typer(run_app, name="run", help="Send the benchmarks' prompts to a model endpoint.")
    app.add_typer(eval_app, name="eval", help="Run a model, score it and report, in one go.")


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
    shared_dir: Path | None = typer.Option(
        None,
        "--shared-dir",
        help="Shared data folder: slice, sample outputs, AUT population "
        "(default $CREAGRAPH_SHARED_DIR, else ../shared beside a checkout).",
    ),
) -> None:
    """Run the whole pipeline on the embedded default graph (the shared Wikidata slice):
    generate queries, score the published sample outputs, TIG anchors on a shared
    population, and an HTML report; prints where the report is."""
    from creagraph.demo import run_demo

    run_demo(
        slice_path, store, out, kg_queries=kg_queries, tig_runs=tig_runs, shared_dir=shared_dir
    )


#: Set by ``--debug`` (or ``CREAGRAPH_DEBUG=1``): errors also print their traceback.
_DEBUG_ENV = "CREAGRAPH_DEBUG"
_state = {"debug": False}
@app.callback()
def _global_options(
    ctx: typer.Context,
    debug: bool = typer.Option(
        False, "--debug", help="On an error, also print the traceback (or CREAGRAPH_DEBUG=1)."
    ),
    sparql_timeout: float | None = typer.Option(
        None,
        "--sparql-timeout",
        help="Seconds one SPARQL request may take in all, answer included "
        "(default 60; $CREAGRAPH_SPARQL_TIMEOUT).",
    ),
    sparql_max_mb: float | None = typer.Option(
        None,
        "--sparql-max-mb",
        help="Largest SPARQL response accepted, in MB (default 256; $CREAGRAPH_SPARQL_MAX_MB).",
    ),
) -> None:
    """Measure language-model creativity with knowledge graphs."""
    if debug:
        _state["debug"] = True
    # settings for this run only, passed on as settings (never written to os.environ)
    ctx.with_resource(
        settings.overridden(
            CREAGRAPH_SPARQL_TIMEOUT=None if sparql_timeout is None else repr(sparql_timeout),
            CREAGRAPH_SPARQL_MAX_MB=None if sparql_max_mb is None else repr(sparql_max_mb),
        )
    )


def _debugging() -> bool:
    return _state["debug"] or settings.enabled(_DEBUG_ENV, default=False)


def _one_line(text: object) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return "; ".join(lines)


def _raised(exc: BaseException, module: str, name: str) -> bool:
    """Whether ``exc`` is a ``module.name`` (only if that module was ever imported)."""
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(exc, cls)


def _os_error(exc: OSError) -> str:
    """``FILE: what went wrong`` for an operating-system error (read-only, disk full...)."""
    import errno

    what = exc.strerror or str(exc) or type(exc).__name__
    hint = {
        errno.ENOSPC: " (the disk is full: free some space or choose another folder)",
        errno.EDQUOT: " (disk quota exceeded)",
        errno.EROFS: " (a read-only file system: choose a writable folder)",
        errno.EACCES: " (no permission)",
        errno.EPERM: " (no permission)",
        errno.EEXIST: " (a file is where a folder is needed)",
    }.get(exc.errno or -1, "")
    if exc.filename is None:
        return f"{what}{hint}"
    where = os.fsdecode(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {os.fsdecode(exc.filename2)}"
    return f"{where}: {what}{hint}"


def describe_error(exc: BaseException) -> str:
    """The one-line message ``creagraph`` prints for an exception (after ``error: ``).

    Errors about the user's input, files, endpoints and machine name what failed (file,
    line, field, endpoint); anything else is reported as an internal error with its type.
    """
    import sqlite3

    from creagraph.core.graph import UnknownIdError

    if isinstance(exc, InputError | UnknownIdError):
        return _one_line(exc)
    if _raised(exc, "creagraph.kg.sparql", "SparqlError") or _raised(
        exc, "creagraph.core.llm", "LLMError"
    ):
        return _one_line(exc)
    if isinstance(exc, OSError):
        return _one_line(_os_error(exc))
    if isinstance(exc, sqlite3.DatabaseError):
        return _one_line(
            f"a SQLite database is damaged or not a database ({exc}); if it is one of "
            "creagraph's caches (under $CREAGRAPH_CACHE_DIR or ~/.cache/creagraph), delete it"
        )
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process"
    if isinstance(exc, OverflowError):
        return _one_line(f"a number is too large ({exc})")
    if isinstance(exc, ValueError) and str(exc):
        return _one_line(exc)
    detail = _one_line(exc)
    return (
        f"internal error: {type(exc).__name__}" + (f": {detail}" if detail else "")
        + " (please report it; run with --debug to see the traceback)"
    )


def _click_base() -> type:
    """Click's ``ClickException`` (vendored by Typer; not exported under a public name)."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == "ClickException":
            return cls
    return typer.BadParameter  # pragma: no cover - other Typer layouts


def _usage_error(exc: Exception) -> str:
    """``creagraph tig: No such command 'x'. (see `creagraph tig --help`)``."""
    ctx = getattr(exc, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    message = _one_line(exc.format_message())  # type: ignore[attr-defined]
    helper = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return f"{where}{message}{helper}"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script.

    Every failure prints one line ``error: …`` naming the file, line, field or endpoint
    and exits 2 (an interrupt exits 130); ``--debug`` or ``CREAGRAPH_DEBUG=1`` also
    prints the traceback. A mistyped command or option is one line too.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    # --debug is honoured anywhere before a `--` (not only before the command name)
    end = args.index("--") if "--" in args else len(args)
    _state["debug"] = "--debug" in args[:end]
    args = [a for i, a in enumerate(args) if not (i < end and a == "--debug")]
    try:
        code = app(args=args, prog_name="creagraph", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        typer.echo("aborted", err=True)
        return 130
    except Exception as exc:
        if isinstance(exc, _click_base()):
            if type(exc).__name__ == "NoArgsIsHelpError":
                exc.show()  # type: ignore[attr-defined]
                return 2
            message = _usage_error(exc) if hasattr(exc, "ctx") else (
                _one_line(exc.format_message())  # type: ignore[attr-defined]
            )
            typer.secho(f"error: {message}", fg="red", err=True)
            return 2
        if isinstance(exc, typer.Abort):
            typer.echo("aborted", err=True)
            return 130
        if isinstance(exc, BrokenPipeError):  # `creagraph … | head`: not an error
            _silence_stdout()
            return 0
        if _debugging():
            import traceback

            traceback.print_exc()
        typer.secho(f"error: {describe_error(exc)}", fg="red", err=True)
        return 2
    return code if type(code) is int else 0  # typer.Exit(n) comes back as n


def _silence_stdout() -> None:
    """After a closed pipe, send stdout to /dev/null so the exit flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
