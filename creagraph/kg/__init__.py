"""Knowledge-graph backends and slice tools (SPEC §2).

- :class:`EmbeddedKG` — the default: a local store imported from Wikidata N-Triples dumps.
- :class:`SparqlKG` — any Wikidata-style SPARQL endpoint (WDQS, QLever, Virtuoso, Oxigraph).
- :func:`import_dumps` — build an embedded store; :func:`pull_slice` — extract a slice
  from an endpoint into the same N-Triples format.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from creagraph.core.lazy import lazy_exports
from creagraph.core.registry import Registry

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from creagraph.core.graph import KnowledgeGraph
    from creagraph.kg.embedded import EmbeddedKG, ImportResult, import_dumps
    from creagraph.kg.ntriples import ParseReport, parse_dump
    from creagraph.kg.pull import PullResult, pull_slice
    from creagraph.kg.sparql import SparqlError, SparqlKG

#: public name → defining module; imported on first use so that `creagraph --help`
#: (which loads this package's CLI) does not pay for numpy, scipy and the like.
_EXPORTS: dict[str, str] = {
    "EmbeddedKG": "creagraph.kg.embedded",
    "ImportResult": "creagraph.kg.embedded",
    "import_dumps": "creagraph.kg.embedded",
    "ParseReport": "creagraph.kg.ntriples",
    "parse_dump": "creagraph.kg.ntriples",
    "PullResult": "creagraph.kg.pull",
    "pull_slice": "creagraph.kg.pull",
    "SparqlError": "creagraph.kg.sparql",
    "SparqlKG": "creagraph.kg.sparql",
}

__all__ = [
    "EmbeddedKG",
    "ImportResult",
    "ParseReport",
    "PullResult",
    "SparqlError",
    "SparqlKG",
    "import_dumps",
    "parse_dump",
    "pull_slice",
]


#: Knowledge-graph backends by name (:mod:`creagraph.core.registry`): each a class or
#: factory of a :class:`~creagraph.core.graph.KnowledgeGraph`; ``module:attr`` names a
#: user's own (``open_graph(backend="mypkg.graphs:MyKG", backend_args={...})``).
GRAPH_BACKENDS = Registry(
    "graph backend",
    required=("entity", "search", "out_edges", "in_edges", "has_triple"),
    entries={
        "embedded": ("creagraph.kg.embedded:EmbeddedKG", "a local store (--store)"),
        "sparql": ("creagraph.kg.sparql:SparqlKG", "a SPARQL endpoint (--endpoint)"),
        "memory": ("creagraph.kg.memory:MemoryKG", "statements given in memory"),
    },
)


def open_graph(
    store: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    *,
    backend: str | None = None,
    backend_args: dict[str, Any] | None = None,
    **sparql_options: Any,
) -> KnowledgeGraph:
    """Open the backend the user asked for: ``endpoint`` (SPARQL) or ``store`` (embedded),
    or ``backend`` (a name of :data:`GRAPH_BACKENDS` or ``module:attr``) made with
    ``backend_args``.

    With none of them, the default embedded store
    (:func:`creagraph.core.paths.default_store_dir`).
    """
    if store is not None and endpoint is not None:
        raise ValueError("give either --store or --endpoint, not both")
    if backend is not None and (store is not None or endpoint is not None):
        raise ValueError(f"give either the graph backend {backend!r} or --store/--endpoint")
    if backend is not None:
        made: KnowledgeGraph = GRAPH_BACKENDS.create(backend, **(backend_args or {}))
        return made
    if endpoint is not None:
        sparql: KnowledgeGraph = GRAPH_BACKENDS.create("sparql", endpoint, **sparql_options)
        return sparql
    from creagraph.core.paths import default_store_dir

    embedded: KnowledgeGraph = GRAPH_BACKENDS.create(
        "embedded", store if store is not None else default_store_dir())
    return embedded


__all__ += ["open_graph", "GRAPH_BACKENDS"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
