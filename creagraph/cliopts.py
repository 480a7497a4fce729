"""Command-line options shared by the job CLIs (the CLI layer, not the API).

``--store DIR`` selects the embedded knowledge graph and ``--endpoint URL`` the SPARQL
backend, the same way on every command that reads a graph. Every command that calls an
LLM takes ``--llm-base-url``, ``--llm-model`` and ``--llm-api-key-env`` (the *name* of the
environment variable holding the key, so keys never appear in shell history); a property
id is ``--property``; every output is ``--out``. Choices are enums, so typos fail with
the list of valid values. ``--config FILE`` (:data:`ConfigOpt`) reads option values from a
TOML file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from creagraph.core.graph import KnowledgeGraph

# The choices are the library's, re-exported for the commands that import them from here.
from creagraph.core.registry import EMBEDDERS, Registry, is_target
from creagraph.scoring.config import JUDGES, Engine, JudgeKind, Mode

__all__ = [
    "StoreOpt",
    "EndpointOpt",
    "OutOpt",
    "open_graph_option",
    "PrecisionOpt",
    "Mode",
    "ModeOpt",
    "JudgeKind",
    "JudgeOpt",
    "JudgeArgOpt",
    "EmbedderOpt",
    "EmbedderArgOpt",
    "key_values",
    "registry_option",
    "arguments_option",
    "Engine",
    "LlmBaseUrlOpt",
    "LlmModelOpt",
    "LlmApiKeyEnvOpt",
    "api_key_from_env",
    "deprecated_alias",
    "ConfigOpt",
    "read_option_file",
]


ModeOpt = Annotated[
    Mode,
    typer.Option(
        "--mode",
        help="paper: the paper's formulas (default); published: reproduce the published "
        "code (validity rule, discount 1, 1, γ, …, empty set = 1, g of raw distance > 1).",
    ),
]
def registry_option(flag: str, registry: Registry, help: str) -> Any:
    """The ``str`` option ``flag`` naming one entry of ``registry`` (or ``MODULE:ATTR``);
    its metavar lists the built-in names (the registry checks the value when used)."""
    metavar = "[" + "|".join(registry.names()) + "|MODULE:ATTR]"

    def check(value: str | None) -> str | None:
        if value is None or value in registry or is_target(value):
            return value
        names = ", ".join(repr(name) for name in registry.names())
        raise typer.BadParameter(f"{value!r} is not one of {names} (or a MODULE:ATTR path)")

    return typer.Option(flag, metavar=metavar, help=help, callback=check)


def arguments_option(flag: str, of: str) -> Any:
    """The repeatable ``KEY=VALUE`` option ``flag`` (``list[str] | None``) of the keyword
    arguments of the option ``of`` (read by :func:`key_values`; a TOML table in
    ``--config``)."""
    return typer.Option(flag, metavar="KEY=VALUE", help=f"Keyword argument of the {of} "
                        "(repeatable; VALUE read as JSON, else as text).")


JudgeOpt = Annotated[str, registry_option(
    "--judge", JUDGES,
    "kg: computed from the knowledge graph (needs --store or --endpoint); "
    "stored: the published judge's columns in the input (raw_salience_scores_0, "
    "parsed_scores_factuality_0); llm: an OpenAI-compatible chat model (needs "
    "--llm-base-url and --llm-model, key via --llm-api-key-env); hybrid: kg, and the "
    "llm for triples the graph cannot verify (needs both); MODULE:ATTR: your own judge "
    "class (arguments: --judge-arg).",
)]
JudgeArgOpt = Annotated[list[str] | None, arguments_option("--judge-arg", "--judge")]
EmbedderOpt = Annotated[str, registry_option(
    "--embedder", EMBEDDERS,
    "Text embedder: minilm (all-MiniLM-L6-v2, the default), hashing (no model; dry runs "
    "only), or MODULE:ATTR, your own (arguments: --embedder-arg).",
)]
EmbedderArgOpt = Annotated[list[str] | None, arguments_option("--embedder-arg", "--embedder")]


def key_values(values: list[str] | None, flag: str) -> dict[str, Any] | None:
    """``KEY=VALUE`` options as keyword arguments (each VALUE read as JSON, else kept as
    text); ``None`` when none was given.

    Examples
    --------
    >>> key_values(["k=3", "name=big", "on=true"], "--judge-arg")
    {'k': 3, 'name': 'big', 'on': True}
    >>> key_values(None, "--judge-arg") is None
    True
    """
    import json

    from creagraph.core.io import InputError

    if not values:
        return None
    found: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"{flag} expects KEY=VALUE with KEY a Python name; got {item!r}")
        try:
            found[key.strip()] = json.loads(raw)
        except ValueError:
            found[key.strip()] = raw
    return found
LlmBaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-base-url",
        help="OpenAI-compatible API root, e.g. http://localhost:8000/v1 "
        "(env CREAGRAPH_LLM_BASE_URL).",
    ),
]
LlmModelOpt = Annotated[
    str | None,
    typer.Option("--llm-model", help="Model name at that endpoint (env CREAGRAPH_LLM_MODEL)."),
]
LlmApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-api-key-env",
        help="Name of the environment variable holding the API key "
        "(default: CREAGRAPH_LLM_API_KEY, then OPENAI_API_KEY).",
    ),
]


def api_key_from_env(name: str | None) -> str | None:
    """The API key in environment variable ``name`` (an error if it is unset), or the
    default variables' value when ``name`` is ``None``."""
    from creagraph.core.llm import llm_api_key

    return llm_api_key(api_key_env=name, option="--llm-api-key-env")


StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Embedded store directory (default: $CREAGRAPH_STORE or ~/.cache/creagraph/store).",
    ),
]
PrecisionOpt = Annotated[
    str,
    typer.Option(
        "--precision",
        help="Embedding arithmetic: fp32 (default; results independent of the processor) or "
        "bf16 (2-3x faster where the CPU has native bf16; cached separately).",
    ),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option("--endpoint", help="SPARQL endpoint URL; selects the SPARQL backend."),
]
OutOpt = Annotated[Path, typer.Option("--out", help="Output directory.")]


def open_graph_option(store: Path | None, endpoint: str | None) -> KnowledgeGraph:
    """The knowledge graph the user chose with ``--store`` / ``--endpoint``."""
    from creagraph.kg import open_graph

    return open_graph(store, endpoint)


def deprecated_alias(new: Any, old: Any, new_flag: str, old_flag: str) -> Any:
    """The value of ``new_flag``, or of its hidden deprecated spelling ``old_flag`` (with a
    note on stderr); both given with different values is an error."""
    from creagraph.core.io import InputError

    if old is None or old == []:
        return new
    typer.echo(f"note: {old_flag} is deprecated; use {new_flag}", err=True)
    if new is not None and new != [] and new != old:
        raise InputError(f"give {new_flag} or the deprecated {old_flag}, not both")
    return old


def read_option_file(path: str | os.PathLike[str], command: Any) -> dict[str, Any]:
    """The option values of a TOML file, by the parameter names of ``command`` (a click
    command): each key is an option's name as typed (``factuality-threshold``, with or
    without the leading ``--``) or its parameter name (``factuality_threshold``).

    Raises
    ------
    InputError
        The file cannot be read, is not TOML, holds a table, or names a key that is not an
        option of the command (naming the key and the file).

    Examples
    --------
    >>> import click, tempfile
    >>> cmd = click.Command("x", params=[click.Option(["--top-k"], type=int)])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "x.toml"
    ...     _ = path.write_text("top-k = 3")
    ...     read_option_file(path, cmd)
    {'top_k': 3}
    """
    import tomllib

    from creagraph.core.io import InputError

    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the --config file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not a TOML file: {exc}") from None
    names: dict[str, str] = {}
    for param in command.params:
        if param.name is None or "--config" in param.opts:
            continue
        names[param.name] = names[param.name.replace("_", "-")] = param.name
        for flag in (*param.opts, *getattr(param, "secondary_opts", ())):
            names[flag.lstrip("-")] = param.name
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = names.get(key.lstrip("-"))
        if name is None:
            raise InputError(
                f"{path}: {key!r} is not an option of `{command.name}` (keys are option names "
                "such as " + ", ".join(sorted({k for k in names if "-" in k})[:4]) + ")"
            )
        if isinstance(value, dict):
            value = _table_as_key_values(path, key, value, command, name)
        values[name] = value
    return values


def _table_as_key_values(path: str | os.PathLike[str], key: str, table: dict[str, Any],
                         command: Any, name: str) -> list[str]:
    """A TOML table given for a ``KEY=VALUE`` option (``judge-arg = {k = 3}``) as the
    option's values; a table for any other option is an error naming it."""
    import json

    from creagraph.core.io import InputError

    param = next(p for p in command.params if p.name == name)
    if getattr(param, "metavar", None) != "KEY=VALUE":
        raise InputError(f"{path}: {key!r} must be a value, not a table")
    return [f"{k}={json.dumps(v)}" for k, v in table.items()]


def _apply_option_file(ctx: typer.Context, param: Any, value: Path | None) -> Path | None:
    """``--config``: the file's values become the command's defaults, so an option given
    on the command line still wins."""
    if value is not None and not ctx.resilient_parsing:
        ctx.default_map = {**(ctx.default_map or {}), **read_option_file(value, ctx.command)}
    return value


#: ``--config FILE``: option values from a TOML file (keys are option names; the command
#: line wins; an unknown key is an error naming it and the file).
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        is_eager=True,
        callback=_apply_option_file,
        help="TOML file of option values, keys named as the options (factuality-threshold "
        "= 0.5); options given on the command line win.",
    ),
]
