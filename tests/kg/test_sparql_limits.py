"""Issue 12, item 9: an endpoint that trickles bytes, or streams without end, cannot hang
the SPARQL client or fill memory. Each request has a total deadline and a response size cap,
retries are bounded, and the command line ends with one line naming the endpoint."""

from __future__ import annotations

import resource
import time

import pytest

from creagraph.cli import main
from creagraph.core.io import InputError
from creagraph.kg.sparql import SparqlError, SparqlKG
from tests.faultserver import fault_server


def test_trickling_endpoint_is_cut_off_at_the_deadline():
    with fault_server("trickle", trickle_for=30) as srv:
        kg = SparqlKG(srv.url, cache=False, timeout=1.0, retries=1, backoff=0.1)
        start = time.monotonic()
        with pytest.raises(SparqlError) as info:
            kg.has_triple("Q1", "P31", "Q5")
        elapsed = time.monotonic() - start
    # two attempts of 1 s each plus the backoff, not the 30 s the server would trickle for
    assert elapsed < 5, elapsed
    assert len(srv.requests) == 2
    message = str(info.value)
    assert message.startswith(f"{srv.url}: giving up after 2 attempts"), message
    assert "not complete within 1 s" in message, message


def test_fast_stream_stops_at_the_size_cap_without_retrying():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with fault_server("stream", stream_limit=2 * 2**30) as srv:
        kg = SparqlKG(srv.url, cache=False, max_response_bytes=4 * 2**20, retries=3)
        start = time.monotonic()
        with pytest.raises(SparqlError) as info:
            kg.has_triple("Q1", "P31", "Q5")
        elapsed = time.monotonic() - start
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(srv.requests) == 1  # too large is final: no retry
    assert elapsed < 10 and grown_mib < 64, (elapsed, grown_mib)
    message = str(info.value)
    assert message.startswith(f"{srv.url}: response of more than"), message
    assert "exceeds the limit of 4,194,304" in message, message


def test_declared_length_over_the_cap_is_refused_before_reading():
    with fault_server("trickle", trickle_for=30) as srv:  # declares 1,000,000 bytes
        kg = SparqlKG(srv.url, cache=False, max_response_bytes=1000, retries=2)
        start = time.monotonic()
        with pytest.raises(SparqlError, match=r"response of 1,000,000 bytes exceeds the limit"):
            kg.has_triple("Q1", "P31", "Q5")
        assert time.monotonic() - start < 2 and len(srv.requests) == 1


def test_settings_from_environment_and_validation(monkeypatch):
    monkeypatch.setenv("CREAGRAPH_SPARQL_TIMEOUT", "7.5")
    monkeypatch.setenv("CREAGRAPH_SPARQL_MAX_MB", "2")
    kg = SparqlKG("http://127.0.0.1:9/query", cache=False)
    assert kg.timeout == 7.5 and kg.max_response_bytes == 2 * 2**20
    assert SparqlKG("http://127.0.0.1:9/query", cache=False, timeout=3).timeout == 3
    monkeypatch.setenv("CREAGRAPH_SPARQL_TIMEOUT", "soon")
    with pytest.raises(InputError, match=r"\$CREAGRAPH_SPARQL_TIMEOUT must be a number"):
        SparqlKG("http://127.0.0.1:9/query", cache=False)
    monkeypatch.delenv("CREAGRAPH_SPARQL_TIMEOUT")
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(InputError, match="timeout must be a positive number"):
            SparqlKG("http://127.0.0.1:9/query", cache=False, timeout=bad)


def test_cli_deadline_and_cap_one_line_naming_the_endpoint(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    with fault_server("trickle", trickle_for=60) as srv:
        start = time.monotonic()
        code = main(["--sparql-timeout", "0.5", "kg", "info", "--endpoint", srv.url])
        elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    # a query that timed out is retried once (issue 23), not 4 times: 2 × 0.5 s + backoff 1 s
    assert code == 2 and elapsed < 8, elapsed
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: {srv.url}: giving up after 2 attempts"), err
    assert "a query that timed out is retried once" in err, err
    assert "not complete within 0.5 s" in err, err

    with fault_server("stream", stream_limit=2 * 2**30) as srv:
        code = main(["--sparql-max-mb", "1", "kg", "info", "--endpoint", srv.url])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {srv.url}: response of more than"), err
    assert "--sparql-max-mb" in err
    assert srv.sent < 64 * 2**20  # stopped reading soon after the cap
