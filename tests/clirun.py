"""Run the ``creagraph`` command in-process and capture what it printed."""

from __future__ import annotations

from creagraph.cli import main


def run(capsys, *args) -> tuple[int, str, str]:
    """``creagraph ARGS`` (each argument through ``str``): exit code, stdout, stderr."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err
