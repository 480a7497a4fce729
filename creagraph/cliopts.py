"""Command-line options shared by the job CLIs (the CLI layer, not the API).

``--store DIR`` selects the embedded knowledge graph and ``--endpoint URL`` the SPARQL
backend, the same way on every command that reads a graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["StoreOpt", "EndpointOpt", "open_graph_option"]

StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Embedded store directory (default: $CREAGRAPH_STORE or ~/.cache/creagraph/store).",
    ),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option("--endpoint", help="SPARQL endpoint URL; selects the SPARQL backend."),
]


def open_graph_option(store: Path | None, endpoint: str | None):
    """The knowledge graph the user chose with ``--store`` / ``--endpoint``."""
    from creagraph.kg import open_graph

    return open_graph(store, endpoint)
