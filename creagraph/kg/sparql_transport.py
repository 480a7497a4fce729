"""SPARQL transport: HTTP requests to an endpoint, retried, size- and time-capped, cached.

The half of :mod:`creagraph.kg.sparql` that knows nothing of Wikidata: :class:`SparqlClient`
sends a query and returns the SPARQL JSON results; :class:`~creagraph.kg.sparql.SparqlKG`
(the backend) builds the queries and reads the answers.

Politeness (SPEC §2): a descriptive User-Agent, a per-query timeout, bounded retries with
exponential backoff on HTTP 429/5xx and network timeouts (``Retry-After`` honoured), and an
on-disk response cache keyed by endpoint and query text, whose answers are reused only while
the endpoint declares the same dataset identity, or (no identity) for ``cache_ttl`` seconds.

Robustness: each request has a total deadline (connection, headers and body together: an
endpoint that trickles bytes cannot hold a run) and a response size cap (one that streams
without end cannot fill memory); the requests are made with :mod:`http.client` so both are
enforced while reading, not after.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import math
import os
import socket
import sqlite3
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import ParseResult, urlencode, urlparse

from creagraph import __version__
from creagraph.core import settings
from creagraph.core.embeddings import default_cache_dir
from creagraph.core.io import InputError
from creagraph.core.retry import RETRY_STATUS, Retry, retry_after_seconds, with_retries
from creagraph.core.sqlitecache import cache_error, open_cache_tables

__all__ = [
    "SparqlClient",
    "SparqlError",
    "DEFAULT_USER_AGENT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_CACHE_TTL",
    "DEFAULT_MAX_MB",
    "DATASET_HEADER",
    "check_endpoint",
    "TransportOptions",
]

DEFAULT_USER_AGENT = (
    f"creagraph/{__version__} (research tool measuring language-model creativity; "
    "https://github.com/creagraph/creagraph)"
)


class SparqlError(RuntimeError):
    """The endpoint failed after all retries, or answered with something unusable."""


#: Default total seconds per request (``$CREAGRAPH_SPARQL_TIMEOUT`` overrides).
DEFAULT_TIMEOUT = 60.0
#: Default age (seconds) after which a cached response of an endpoint that declares no
#: dataset identity is fetched again (``$CREAGRAPH_SPARQL_CACHE_TTL`` overrides).
DEFAULT_CACHE_TTL = 86400.0
#: Response header by which an endpoint (``creagraph kg serve``) names the data it serves;
#: a cached response is reused only while the endpoint names the same data.
DATASET_HEADER = "X-Creagraph-Dataset"
#: Default largest response, in MiB (``$CREAGRAPH_SPARQL_MAX_MB`` overrides).
DEFAULT_MAX_MB = 256.0
_ACCEPT = "application/sparql-results+json, application/json;q=0.9"


def _setting(value: float | None, env: str, default: float, name: str) -> float:
    """``value``, else the environment variable ``env``, else ``default``; positive, finite."""
    where = name
    if value is None:
        raw = settings.value(env)
        if not raw:
            return default
        where = f"${env}"
        try:
            value = float(raw)
        except ValueError:
            raise InputError(f"{where} must be a number of seconds or MB, not {raw!r}") from None
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise InputError(f"{where} must be a positive number, not {value!r}")
    return float(value)


class _Failed(Exception):
    """One attempt failed: ``last`` says how; ``retry`` whether another attempt may help."""

    def __init__(self, last: str, *, retry: bool = True, retry_after: float | None = None,
                 timed_out: bool = False):
        super().__init__(last)
        self.last, self.retry, self.retry_after = last, retry, retry_after
        self.timed_out = timed_out  # retried at most once (core.retry.Retry.once)



class _ResponseCache:
    """Successful responses by key, each with when it was stored and the dataset identity
    the endpoint declared (``X-Creagraph-Dataset``); a damaged or foreign file is an
    :class:`InputError` naming it (it only holds answers that can be fetched again)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=120)
        except (OSError, sqlite3.Error) as exc:
            raise self._damaged(exc) from exc
        try:
            # v2: the v1 table (key, body) had no age nor dataset; its rows are never read.
            open_cache_tables(
                self._conn,
                "CREATE TABLE IF NOT EXISTS responses_v2 (key BLOB PRIMARY KEY, "
                "body TEXT NOT NULL, stored REAL NOT NULL, dataset TEXT)",
            )
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise self._damaged(exc) from exc

    def _damaged(self, exc: Exception) -> InputError:
        return cache_error(self.path, exc, "SPARQL response cache",
                           "answers that can be fetched again")

    def get(self, key: bytes) -> tuple[Any, float, str | None] | None:
        """``(response, stored at (epoch seconds), dataset identity or None)``."""
        try:
            row = self._conn.execute(
                "SELECT body, stored, dataset FROM responses_v2 WHERE key = ?", (key,)
            ).fetchone()
            if not row:
                return None
            value = json.loads(row[0])
        except (sqlite3.DatabaseError, ValueError) as exc:
            raise self._damaged(exc) from exc
        if not isinstance(value, dict) or not isinstance(row[1], int | float):
            raise self._damaged(ValueError("a cached response is not SPARQL JSON results"))
        return value, float(row[1]), row[2]

    def put(self, key: bytes, value: Any, dataset: str | None) -> None:
        try:
            with self._conn:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses_v2 VALUES (?, ?, ?, ?)",
                    (key, json.dumps(value), time.time(), dataset),
                )
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from exc



class TransportOptions(TypedDict, total=False):
    """The keyword arguments of :class:`SparqlClient` (``SparqlKG`` passes them on)."""

    user_agent: str
    timeout: float | None
    max_response_bytes: int | None
    retries: int
    backoff: float
    max_retry_after: float
    cache: bool | str | os.PathLike[str]
    cache_ttl: float | None
    sleep: Callable[[float], None]


def check_endpoint(endpoint: str) -> ParseResult:
    """``endpoint`` parsed, or :class:`ValueError` when it is not an http(s) URL."""
    parsed = urlparse(endpoint)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"--endpoint must be an http(s) URL, not {endpoint!r}")
    return parsed


class SparqlClient:
    """Sends SPARQL queries to one endpoint: SPARQL JSON results, cached and retried.

    Parameters
    ----------
    endpoint : str
        SPARQL 1.1 query URL, e.g. ``https://query.wikidata.org/sparql`` or
        ``http://localhost:7878/query``.
    user_agent : str
        Sent with every request (the Wikidata usage policy requires a descriptive one).
    timeout : float, optional
        Total seconds one request may take — connecting, sending, waiting and reading the
        whole answer (default ``$CREAGRAPH_SPARQL_TIMEOUT`` or 60). An endpoint that
        trickles bytes is cut off at this deadline and the attempt counts as a timeout.
    max_response_bytes : int, optional
        Largest response accepted (default ``$CREAGRAPH_SPARQL_MAX_MB`` MiB or 256 MiB);
        a larger one fails at once (no retry) without being read further.
    retries : int
        Further attempts after a 429/5xx, a timeout, a dropped connection or a response cut
        short; waits ``backoff * 2**attempt`` seconds, or the server's ``Retry-After``
        (seconds or an HTTP date) when that is longer. Only successful responses are
        cached. When attempts run out, :class:`SparqlError` names the endpoint, the number
        of attempts and the last failure.
    backoff : float
        Seconds of the first wait between attempts (doubled after each).
    max_retry_after : float
        A ``Retry-After`` longer than this (seconds) fails at once instead of waiting.
    cache : bool or path
        ``True`` (default): cache responses in ``default_cache_dir()/sparql.sqlite``;
        a path: use that file; ``False``: no cache. A cached response is reused only
        while the endpoint declares the same dataset identity (``X-Creagraph-Dataset``,
        sent by ``creagraph kg serve``), or, from an endpoint that declares none, while
        it is younger than ``cache_ttl``.
    cache_ttl : float, optional
        Seconds a cached response of an endpoint without a dataset identity stays valid
        (default ``$CREAGRAPH_SPARQL_CACHE_TTL``, else one day; 0: never reused).
    sleep : callable
        How to wait between attempts (tests pass a recorder).

    Examples
    --------
    >>> client = SparqlClient("http://localhost:7878/query")     # doctest: +SKIP
    >>> client.query("ASK { ?s ?p ?o }")["boolean"]              # doctest: +SKIP
    True
    """

    def __init__(
        self,
        endpoint: str,
        *,
        user_agent: str = DEFAULT_USER_AGENT,
        timeout: float | None = None,
        max_response_bytes: int | None = None,
        retries: int = 4,
        backoff: float = 1.0,
        max_retry_after: float = 300.0,
        cache: bool | str | os.PathLike[str] = True,
        cache_ttl: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        check_endpoint(endpoint)
        self.endpoint = endpoint
        self.user_agent = user_agent
        self.timeout = _setting(timeout, "CREAGRAPH_SPARQL_TIMEOUT", DEFAULT_TIMEOUT, "timeout")
        if max_response_bytes is None:
            mb = _setting(None, "CREAGRAPH_SPARQL_MAX_MB", DEFAULT_MAX_MB, "max_response_mb")
            max_response_bytes = int(mb * 2**20)
        self.max_response_bytes = int(
            _setting(max_response_bytes, "", 0, "max_response_bytes")
        )
        if retries < 0:
            raise InputError(f"retries must be 0 or more, not {retries}")
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        if cache is True:
            self._cache: _ResponseCache | None = _ResponseCache(
                default_cache_dir() / "sparql.sqlite"
            )
        elif cache:
            self._cache = _ResponseCache(Path(cache))
        else:
            self._cache = None
        env_ttl = settings.value("CREAGRAPH_SPARQL_CACHE_TTL")
        if cache_ttl is None and env_ttl is not None:
            try:
                cache_ttl = float(env_ttl)
            except ValueError:
                cache_ttl = -1.0
        self.cache_ttl = DEFAULT_CACHE_TTL if cache_ttl is None else cache_ttl
        if not (self.cache_ttl >= 0 and math.isfinite(self.cache_ttl)):
            raise InputError(
                f"CREAGRAPH_SPARQL_CACHE_TTL / cache_ttl must be a number of seconds >= 0, not "
                f"{env_ttl if cache_ttl is None else cache_ttl!r}"
            )
        self.requests_sent = 0
        self._attempts_made = 0
        self._local = threading.local()  # the dataset header of this thread's last answer
        self._dataset: tuple[str | None] | None = None  # the endpoint's, once asked

    def query(self, query: str) -> dict[str, Any]:
        """Run a query and return the SPARQL JSON results (cached, retried)."""
        key = hashlib.sha256(f"{self.endpoint}\x00{query}".encode()).digest()
        if self._cache is not None:
            hit = self._cache.get(key)
            if hit is not None and self._still_valid(hit[1], hit[2]):
                return hit[0]
        self._local.dataset = None
        result = self._send(query)
        if self._cache is not None:
            self._cache.put(key, result, self._local.dataset)
        return result

    def _still_valid(self, stored: float, dataset: str | None) -> bool:
        """Whether a cached answer still holds: stored while the endpoint named the dataset
        it names now, or (an endpoint that names none) younger than ``cache_ttl``."""
        if dataset is not None:
            return self.dataset_identity() == dataset
        return time.time() - stored <= self.cache_ttl

    def dataset_identity(self) -> str | None:
        """The identity the endpoint declares for the data it serves (the
        ``X-Creagraph-Dataset`` header of ``creagraph kg serve``), asked once per client
        with ``ASK {}``; ``None`` when it declares none."""
        if self._dataset is None:
            self._local.dataset = None
            self._send("ASK {}")
            self._dataset = (self._local.dataset,)
        return self._dataset[0]

    def _send(self, query: str) -> dict[str, Any]:
        """The results of ``query``, retried with backoff (:func:`.with_retries`)."""
        return with_retries(
            lambda attempt: self._attempt(query, attempt),
            retries=self.retries,
            backoff=self.backoff,
            sleep=self._sleep,
            give_up=lambda last: SparqlError(
                f"{self.endpoint}: giving up after {self._attempts_made} attempts "
                f"(retries={self.retries}"
                + ("; a query that timed out is retried once" if getattr(last, "timed_out",
                                                                         False) else "")
                + f"); last: {getattr(last, 'last', 'nothing sent')}"
            ),
        )

    def _attempt(self, query: str, attempt: int) -> dict[str, Any]:
        """One try (number ``attempt``, from 0): the SPARQL JSON results, :class:`Retry` when
        another try may help, or :class:`SparqlError` when none can (a 4xx, an answer over
        the size cap, a ``Retry-After`` longer than ``max_retry_after``)."""
        try:
            self.requests_sent += 1
            body = self._post(query)
            try:
                result = json.loads(body)
            except (ValueError, RecursionError) as exc:  # a body cut short or not JSON
                raise _Failed(f"unreadable response ({str(exc)[:100]})") from exc
            if not (isinstance(result, dict) and ("results" in result or "boolean" in result)):
                raise _Failed(f"not SPARQL JSON results ({type(result).__name__})")
            return result
        except _Failed as exc:
            if not exc.retry:
                raise SparqlError(f"{self.endpoint}: {exc.last}") from exc
            if exc.retry_after is not None and exc.retry_after > self.max_retry_after:
                raise SparqlError(
                    f"{self.endpoint}: {exc.last} after {attempt + 1} attempt(s); the server "
                    f"asks to wait {exc.retry_after:.0f} s (Retry-After), more than "
                    f"max_retry_after={self.max_retry_after:g} s"
                ) from exc
            self._attempts_made = attempt + 1
            raise Retry(exc, after=exc.retry_after, once=exc.timed_out) from exc

    def _connection(self) -> tuple[http.client.HTTPConnection, str]:
        """A connection to the endpoint (through a proxy from the environment, if one is
        set for it) and the request target to send."""
        url = urlparse(self.endpoint)
        target = (url.path or "/") + (f"?{url.query}" if url.query else "")
        proxy = urllib.request.getproxies().get(url.scheme)
        if proxy and urllib.request.proxy_bypass(url.hostname or ""):
            proxy = None
        https = url.scheme == "https"
        if proxy:
            p = urlparse(proxy if "://" in proxy else f"http://{proxy}")
            conn: http.client.HTTPConnection = http.client.HTTPConnection(
                p.hostname or "", p.port or 80, timeout=self.timeout
            )
            if not https:
                return conn, self.endpoint
            conn = http.client.HTTPSConnection(
                p.hostname or "", p.port or 443, timeout=self.timeout,
                context=ssl.create_default_context(),
            )  # fmt: skip
            conn.set_tunnel(url.hostname or "", url.port or 443)
            return conn, target
        if https:
            return http.client.HTTPSConnection(
                url.hostname or "", url.port, timeout=self.timeout,
                context=ssl.create_default_context(),
            ), target  # fmt: skip
        plain = http.client.HTTPConnection(url.hostname or "", url.port, timeout=self.timeout)
        return plain, target

    def _post(self, query: str) -> bytes:
        """One POST of ``query``; the raw body of a 2xx answer, or :class:`_Failed`.

        The whole exchange must end within ``timeout`` seconds: a timer shuts the socket
        down at the deadline (:meth:`_connect`), so no read can outlast it. The body is read
        in pieces and abandoned as soon as it exceeds ``max_response_bytes``
        (:meth:`_read_body`).
        """
        conn, target = self._connection()
        expired = threading.Event()
        timer: threading.Timer | None = None
        answered = False  # whether the status line and headers arrived
        try:
            timer = self._connect(conn, expired)
            data = urlencode({"query": query}).encode("utf-8")
            conn.request(
                "POST",
                target,
                body=data,
                headers={
                    "User-Agent": self.user_agent,
                    "Accept": _ACCEPT,
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Connection": "close",
                },
            )
            response = conn.getresponse()
            answered = True
            self._local.dataset = response.getheader(DATASET_HEADER)
            self._check_status(response)
            body = self._read_body(response)
            if expired.is_set():
                raise _Failed(self._late(answered), timed_out=True)
            if response.length:  # the connection ended before the declared Content-Length
                raise http.client.IncompleteRead(b"", response.length)
            return body
        except _Failed:
            raise
        except TimeoutError as exc:
            raise _Failed(self._late(answered), timed_out=True) from exc
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if expired.is_set():
                raise _Failed(self._late(answered), timed_out=True) from exc
            raise _Failed(f"connection dropped ({type(exc).__name__}: {exc})") from exc
        finally:
            if timer is not None:
                timer.cancel()
            conn.close()

    def _connect(
        self, conn: http.client.HTTPConnection, expired: threading.Event
    ) -> threading.Timer:
        """Connect, then start the timer that sets ``expired`` and shuts the socket down
        when ``timeout`` seconds (counted from before connecting) have passed."""
        started = time.monotonic()
        try:
            conn.connect()
        except TimeoutError as exc:
            raise _Failed(f"no response within {self.timeout:g} s", timed_out=True) from exc
        except OSError as exc:
            raise _Failed(f"network error ({exc})") from exc
        sock = conn.sock

        def cut_off() -> None:
            expired.set()
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

        left = max(0.0, self.timeout - (time.monotonic() - started))
        timer = threading.Timer(left, cut_off)
        timer.daemon = True
        timer.start()
        return timer

    def _check_status(self, response: http.client.HTTPResponse) -> None:
        """:class:`_Failed` for an answer that is not 2xx (retried for 429/5xx, with the
        ``Retry-After``) or that declares a body over the size cap (not retried)."""
        if not 200 <= response.status < 300:
            reason = f"HTTP {response.status} {response.reason}".rstrip()
            detail = response.read1(2048).decode("utf-8", "replace")
            detail = " ".join(detail.split())[:200]
            retry_after = retry_after_seconds(response.getheader("Retry-After"))
            if response.status not in RETRY_STATUS:
                raise _Failed(reason + (f" ({detail})" if detail else ""), retry=False)
            raise _Failed(reason, retry_after=retry_after)
        declared = response.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > self.max_response_bytes:
            raise _Failed(self._too_large(int(declared)), retry=False)

    def _read_body(self, response: http.client.HTTPResponse) -> bytes:
        """The body, read in pieces; :class:`_Failed` (not retried) once it exceeds
        ``max_response_bytes``."""
        chunks, size = [], 0
        while True:
            piece = response.read1(1 << 16)
            if not piece:
                break
            size += len(piece)
            if size > self.max_response_bytes:
                raise _Failed(self._too_large(size, more=True), retry=False)
            chunks.append(piece)
        return b"".join(chunks)

    def _late(self, answered: bool) -> str:
        if answered:
            return f"response not complete within {self.timeout:g} s (the timeout, in all)"
        return f"no response within {self.timeout:g} s"

    def _too_large(self, size: int, *, more: bool = False) -> str:
        return (
            f"response of {'more than ' if more else ''}{size:,} bytes exceeds the limit of "
            f"{self.max_response_bytes:,} (max_response_bytes, --sparql-max-mb)"
        )
