"""Command-line options shared by the job CLIs (the CLI layer, not the API).

``--store DIR`` selects the embedded knowledge graph and ``--endpoint URL`` the SPARQL
backend, the same way on every command that reads a graph. Every command that calls an
LLM takes ``--llm-base-url``, ``--llm-model`` and ``--llm-api-key-env`` (the *name* of the
environment variable holding the key, so keys never appear in shell history); a property
id is ``--property``; every output is ``--out``. Choices are enums, so typos fail with
the list of valid values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

# The choices are the library's, re-exported for the commands that import them from here.
from creagraph.scoring.config import Engine, JudgeKind, Mode

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
    "Engine",
    "LlmBaseUrlOpt",
    "LlmModelOpt",
    "LlmApiKeyEnvOpt",
    "api_key_from_env",
    "deprecated_alias",
]


ModeOpt = Annotated[
    Mode,
    typer.Option(
        "--mode",
        help="paper: the paper's formulas (default); published: reproduce the published "
        "code (validity rule, discount 1, 1, γ, …, empty set = 1, g of raw distance > 1).",
    ),
]
JudgeOpt = Annotated[
    JudgeKind,
    typer.Option(
        "--judge",
        help="kg: computed from the knowledge graph (needs --store or --endpoint); "
        "stored: the published judge's columns in the input (raw_salience_scores_0, "
        "parsed_scores_factuality_0); llm: an OpenAI-compatible chat model (needs "
        "--llm-base-url and --llm-model, key via --llm-api-key-env); hybrid: kg, and the "
        "llm for triples the graph cannot verify (needs both).",
    ),
]
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


def open_graph_option(store: Path | None, endpoint: str | None):
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
