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


def open_graph(
    store: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    **sparql_options: Any,
) -> KnowledgeGraph:
    """Open the backend the user asked for: ``endpoint`` (SPARQL) or ``store`` (embedded).

    With neither, the default embedded store (:func:`creagraph.core.paths.default_store_dir`).
    """
    if store is not None and endpoint is not None:
        raise ValueError("give either --store or --endpoint, not both")
    if endpoint is not None:
        from creagraph.kg.sparql import SparqlKG

        return SparqlKG(endpoint, **sparql_options)
    from creagraph.core.paths import default_store_dir
    from creagraph.kg.embedded import EmbeddedKG

    return EmbeddedKG(store if store is not None else default_store_dir())


__all__ += ["open_graph"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
