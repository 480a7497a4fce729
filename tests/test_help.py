"""Every command's --help is readable at 80 columns: no line wider, nothing cut off, every
option named in full (plain help, whose paragraphs wrap to the terminal)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer

from creagraph.cli import app, main


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        if getattr(command, "hidden", False):
            continue
        found.append((*prefix, name))
        if hasattr(command, "commands"):  # a group (typer vendors its own click)
            found.extend(_commands(command, (*prefix, name)))
    return found


ROOT = typer.main.get_command(app)
COMMANDS = _commands(ROOT)


def _lookup(path: tuple[str, ...]) -> Any:
    command = ROOT
    for name in path:
        command = command.commands[name]
    return command


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_fits_80_columns_and_names_every_option(path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, too_wide
    flat = _flat(text)
    for param in _lookup(path).params:
        if param.param_type_name == "option" and not param.hidden:
            assert param.opts[0] in text, param.opts
            # the whole help text is there, wrapped but never cut
            assert _flat(param.help or "") in flat, (param.opts, param.help)


def _flat(text: str) -> str:
    """Whitespace collapsed, and a line broken after a hyphen joined again."""
    return re.sub(r"- ", "-", re.sub(r"\s+", " ", text)).strip()


def test_help_follows_a_wide_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["score", "--help"]) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) > 100
    assert len(COMMANDS) > 30
