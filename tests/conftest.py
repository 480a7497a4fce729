"""Shared fixtures: the real Wikidata slice from ../shared, an embedded store built from it,
and a real SPARQL endpoint serving it.

The endpoint is the one `.ci/run` starts (``CREAGRAPH_TEST_ENDPOINT``); when that variable
is unset (a developer running pytest directly) the fixture starts an Oxigraph SPARQL
server over the slice itself, so the SPARQL tests always run against a real server.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from creagraph.core.paths import default_slice_path

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")


@pytest.fixture(scope="session")
def slice_path() -> Path:
    path = default_slice_path()
    if not path.exists():
        pytest.fail(f"the shared Wikidata slice is missing: {path} (set CREAGRAPH_SLICE)")
    return path


@pytest.fixture(scope="session")
def negatives_path(slice_path: Path) -> Path:
    return slice_path.with_name("negatives.tsv.gz")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared data folder (``../shared`` beside the repository, or
    ``$CREAGRAPH_SHARED_DIR``), resolved as the library resolves it. The golden tests take
    their reference data from here: a missing folder fails them loudly, never skips them."""
    from creagraph.tig.adapters import default_shared_dir

    path = default_shared_dir()
    if not path.is_dir():
        pytest.fail(
            f"the shared data folder is missing: {path} (set CREAGRAPH_SHARED_DIR)", pytrace=False
        )
    return path


@pytest.fixture(scope="session")
def store_dir(slice_path: Path, tmp_path_factory) -> Path:
    from creagraph.kg import import_dumps

    target = tmp_path_factory.mktemp("kg") / "store"
    import_dumps([slice_path], target, show_progress=False)
    return target


@pytest.fixture(scope="session")
def kg(store_dir: Path):
    from creagraph.kg import EmbeddedKG

    graph = EmbeddedKG(store_dir)
    yield graph
    graph.close()


@pytest.fixture(scope="session")
def sparql_endpoint(slice_path: Path):
    url = os.environ.get("CREAGRAPH_TEST_ENDPOINT")
    if url:
        yield url
        return
    from creagraph.kg.server import open_oxigraph, serve_in_thread

    store = open_oxigraph([slice_path], None)
    server, url = serve_in_thread(store)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def sparql_kg(sparql_endpoint: str, tmp_path_factory):
    from creagraph.kg.sparql import SparqlKG

    return SparqlKG(sparql_endpoint, cache=tmp_path_factory.mktemp("sparql") / "cache.sqlite")
