"""Issue 30: ``kg/sparql.py`` split into the transport (:mod:`creagraph.kg.sparql_transport`)
and the backend; the old import path keeps every public name, and the transport works alone."""

from __future__ import annotations

import pytest

import creagraph.kg.sparql as sparql
import creagraph.kg.sparql_transport as transport
from creagraph.core.io import InputError


def test_the_backend_module_re_exports_the_transport_names():
    for name in transport.__all__:
        assert getattr(sparql, name) is getattr(transport, name), name
    assert set(transport.__all__) <= set(sparql.__all__)
    assert {"SparqlKG", "sparql_string", "template", "SEARCH_MODES"} <= set(sparql.__all__)


def test_the_client_alone_answers_and_caches(sparql_endpoint, tmp_path):
    client = transport.SparqlClient(sparql_endpoint, cache=tmp_path / "c.sqlite", retries=0)
    text = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    first = client.query(text)
    assert int(first["results"]["bindings"][0]["n"]["value"]) > 0
    sent = client.requests_sent
    assert client.query(text) == first  # from the cache, or asked again where no identity
    assert client.requests_sent - sent <= 1
    assert client.query("ASK { ?s ?p ?o }")["boolean"] is True


def test_the_backend_sends_through_its_client(sparql_endpoint):
    kg = sparql.SparqlKG(sparql_endpoint, cache=False, timeout=70, retries=2)
    assert (kg.timeout, kg.client.retries, kg.endpoint) == (70.0, 2, sparql_endpoint)
    assert kg.label("Q5")
    assert kg.requests_sent == kg.client.requests_sent > 0


@pytest.mark.parametrize("bad", ["ftp://x/q", "localhost:7878", ""])
def test_the_client_refuses_what_is_not_an_http_url(bad):
    with pytest.raises(ValueError, match="http"):
        transport.SparqlClient(bad, cache=False)


def test_the_client_refuses_negative_retries():
    with pytest.raises(InputError, match="retries"):
        transport.SparqlClient("http://127.0.0.1:9/q", cache=False, retries=-1)
