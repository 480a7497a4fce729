"""Knowledge-graph backends and slice tools (SPEC §2).

- :class:`EmbeddedKG` — the default: a local store imported from Wikidata N-Triples dumps.
- :class:`SparqlKG` — any Wikidata-style SPARQL endpoint (WDQS, QLever, Virtuoso, Oxigraph).
- :func:`import_dumps` — build an embedded store; :func:`pull_slice` — extract a slice
  from an endpoint into the same N-Triples format.
"""

from creagraph.kg.embedded import EmbeddedKG, ImportResult, import_dumps
from creagraph.kg.ntriples import ParseReport, parse_dump
from creagraph.kg.pull import PullResult, pull_slice
from creagraph.kg.sparql import SparqlError, SparqlKG

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


def open_graph(store=None, endpoint: str | None = None, **sparql_options):
    """Open the backend the user asked for: ``endpoint`` (SPARQL) or ``store`` (embedded).

    With neither, the default embedded store (:func:`creagraph.core.paths.default_store_dir`).
    """
    if store is not None and endpoint is not None:
        raise ValueError("give either --store or --endpoint, not both")
    if endpoint is not None:
        return SparqlKG(endpoint, **sparql_options)
    from creagraph.core.paths import default_store_dir

    return EmbeddedKG(store if store is not None else default_store_dir())


__all__ += ["open_graph"]
