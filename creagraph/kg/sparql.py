"""SPARQL backend: the knowledge-graph interface over any Wikidata-style endpoint.

Works against the public Wikidata Query Service, QLever, Virtuoso or Oxigraph. Queries
come from the templates in ``wikidata/sparql/``; every value placed in a query is either a
validated id (``Q…``/``P…``) or a string escaped by :func:`sparql_string`.

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
import email.utils
import functools
import hashlib
import http.client
import json
import math
import os
import socket
import sqlite3
import ssl
import string
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

from creagraph import __version__
from creagraph.core import settings
from creagraph.core.embeddings import default_cache_dir
from creagraph.core.graph import (
    Category,
    Edge,
    EntityRecord,
    FuzzyStep,
    NameQuery,
    NameSearch,
    PropertyRecord,
    SearchHit,
    Side,
    check_pid,
    check_qid,
    is_pid,
    is_qid,
)
from creagraph.core.io import InputError
from creagraph.core.paths import wikidata_dir
from creagraph.core.retry import RETRY_STATUS, Retry, with_retries
from creagraph.core.text import normalize, normalize_loose
from creagraph.kg.common import id_number, inverse_labels
from creagraph.kg.ntriples import WD_ENTITY

__all__ = ["SparqlKG", "SparqlError", "sparql_string", "DEFAULT_USER_AGENT", "template"]

DEFAULT_USER_AGENT = (
    f"creagraph/{__version__} (research tool measuring language-model creativity; "
    "https://github.com/creagraph/creagraph)"
)
_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
_DESC = "http://schema.org/description"
_PRED_KIND = {_LABEL: "label", _ALT: "alias"}


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


#: How :func:`sparql_string` writes characters a SPARQL string cannot hold as they are: the
#: short escapes, and ``\uXXXX`` for every other control character.
_SPARQL_ESCAPES = {
    ord("\\"): "\\\\",
    ord('"'): '\\"',
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    ord("\b"): "\\b",
    ord("\f"): "\\f",
}
_SPARQL_ESCAPES.update(
    {c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F) if c not in _SPARQL_ESCAPES}
)


def sparql_string(text: str, lang: str | None = None) -> str:
    r"""A SPARQL string literal for arbitrary user text (quotes, backslashes, newlines...).

    Examples
    --------
    >>> sparql_string('say "hi"\n')
    '"say \\"hi\\"\\n"'
    >>> sparql_string("Paris", "en")
    '"Paris"@en'
    """
    literal = '"' + text.translate(_SPARQL_ESCAPES) + '"'
    if lang is not None:
        if not lang.replace("-", "").isalnum():
            raise ValueError(f"invalid language tag {lang!r}")
        literal += f"@{lang}"
    return literal


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay-seconds or an HTTP date).

    Examples
    --------
    >>> _retry_after("7"), _retry_after("Thu, 01 Jan 1970 00:00:00 GMT"), _retry_after("soon")
    (7.0, 0.0, None)
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


@functools.cache
def template(name: str) -> string.Template:
    """A query template from ``wikidata/sparql/<name>.rq`` with the standard prefixes."""
    folder = wikidata_dir() / "sparql"
    prefixes = (folder / "prefixes.rq").read_text(encoding="utf-8")
    return string.Template(prefixes + (folder / f"{name}.rq").read_text(encoding="utf-8"))


def _node(qid: str) -> str:
    return f"wd:{check_qid(qid)}"


def _prop(pid: str) -> str:
    return f"wdt:{check_pid(pid)}"


def _local_id(iri: str) -> str | None:
    if iri.startswith(WD_ENTITY):
        ident = iri[len(WD_ENTITY) :]
        if is_qid(ident) or is_pid(ident):
            return ident
    return None


def _wdt_pid(iri: str) -> str | None:
    prefix = "http://www.wikidata.org/prop/direct/"
    if iri.startswith(prefix) and is_pid(iri[len(prefix) :]):
        return iri[len(prefix) :]
    return None


#: Longest token (characters) matched by the ``scan`` search's regular expression.
_SCAN_TOKEN_CHARS = 24
#: Search modes of :class:`SparqlKG` (``search_mode``); "auto" picks one per endpoint.
SEARCH_MODES = ("scan", "exact", "entitysearch", "prefix", "index")
_SEARCH_CHARS = 250  # of a mention sent to EntitySearch
_SEARCH_LIMIT = 20  # items EntitySearch returns per mention
_REGEX_SPECIAL = set("\\.*+?()[]{}|^$-")


@functools.cache
def _accent_variants() -> dict[str, str]:
    """Lower-case letter -> itself plus every Latin letter that folds to it (é, è, ê -> e)."""
    import unicodedata

    out: dict[str, set[str]] = {}
    for code in list(range(0xC0, 0x250)) + list(range(0x1E00, 0x1F00)):
        ch = chr(code).lower()
        base = normalize(ch)
        if len(ch) == 1 and len(base) == 1 and base != ch and unicodedata.category(ch)[0] == "L":
            out.setdefault(base, set()).add(ch)
    return {k: k + "".join(sorted(v)) for k, v in out.items()}


def _accent_insensitive(token: str) -> str:
    """An XPath regex matching ``token`` in lower-cased text whatever its accents."""
    variants = _accent_variants()
    parts = []
    for ch in token:
        if ch in variants:
            parts.append(f"[{variants[ch]}]")
        elif ch in _REGEX_SPECIAL:
            parts.append("\\" + ch)
        else:
            parts.append(ch)
    return "".join(parts)


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
            self._conn.execute("PRAGMA journal_mode=WAL")
            # v2: the v1 table (key, body) had no age nor dataset; its rows are never read.
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS responses_v2 (key BLOB PRIMARY KEY, "
                "body TEXT NOT NULL, stored REAL NOT NULL, dataset TEXT)"
            )
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise self._damaged(exc) from exc

    def _damaged(self, exc: Exception) -> InputError:
        if isinstance(exc, OSError | sqlite3.OperationalError):  # locked, read-only, full
            return InputError(f"{self.path}: the SPARQL response cache cannot be used ({exc})")
        return InputError(
            f"{self.path}: not a usable SPARQL response cache ({exc}); it only holds answers "
            "that can be fetched again: delete it and re-run"
        )

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


def _fuzzy_rows(
    rows: list[tuple[str, str, str]], loose: str, limit: int, min_score: float
) -> list[SearchHit]:
    """The ``limit`` best (id, kind, text) ``rows`` whose names have a token-sort similarity
    ≥ ``min_score`` to the normalised search text ``loose`` (best first, then smaller id)."""
    from rapidfuzz import fuzz

    scored = []
    for i, k, t in rows:
        score = fuzz.token_sort_ratio(loose, normalize_loose(t))
        if score >= min_score:
            scored.append((score, i, k, t))
    scored.sort(key=lambda s: (-s[0], id_number(s[1])))
    return [
        SearchHit(i, None, t, k, float(score), False)  # type: ignore[arg-type]
        for score, i, k, t in scored[:limit]
    ]


class SparqlKG(NameSearch):
    """The knowledge-graph interface answered by a SPARQL endpoint.

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
    search_mode : {"auto", "scan", "exact", "entitysearch", "prefix"}
        ``scan`` finds labels case-insensitively with a ``CONTAINS`` filter (fine on a
        local server, too slow for all of Wikidata); ``exact`` only looks up exact label
        strings in a few capitalisations; ``entitysearch`` asks the Wikidata Query
        Service's own search (the ``mwapi`` EntitySearch service) for candidates and reads
        their labels and aliases; ``prefix`` keeps labels starting with a few
        capitalisations of the mention (``STRSTARTS``, which QLever answers from its
        sorted vocabulary: a server holding all of Wikidata); ``auto`` takes
        ``$CREAGRAPH_SPARQL_SEARCH`` when set, else ``entitysearch`` for
        query.wikidata.org, ``prefix`` for a URL naming qlever and ``scan`` elsewhere;
        ``index`` finds candidate names in a local label index
        (:mod:`creagraph.kg.labelindex`, ``kg import --labels-only``) and asks the
        endpoint only for statements.
    label_index : path, optional
        The label index of ``search_mode="index"`` (default
        :func:`~creagraph.kg.labelindex.default_label_index_path`).
    language : str
        Language of labels, aliases and descriptions.

    Examples
    --------
    >>> kg = SparqlKG("http://localhost:7878/query")          # doctest: +SKIP
    >>> kg.count_subjects("P69", "Q174710")                     # doctest: +SKIP
    97
    """

    backend = "sparql"

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
        search_mode: str = "auto",
        language: str = "en",
        sleep: Callable[[float], None] = time.sleep,
        cache_ttl: float | None = None,
        label_index: str | os.PathLike[str] | None = None,
    ):
        parsed = urlparse(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"--endpoint must be an http(s) URL, not {endpoint!r}")
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
        sparql_string("", language)  # a language tag, not arbitrary text
        self.language = language
        self._lang = sparql_string(language)
        self._sleep = sleep
        if search_mode == "auto":
            search_mode = settings.value("CREAGRAPH_SPARQL_SEARCH") or "auto"
        if search_mode == "auto":
            if parsed.netloc.endswith("query.wikidata.org"):
                search_mode = "entitysearch"
            elif "qlever" in parsed.netloc.lower() or "qlever" in parsed.path.lower():
                search_mode = "prefix"
            else:
                search_mode = "scan"
        if search_mode not in SEARCH_MODES:
            raise ValueError(
                f"search_mode must be auto or {', '.join(SEARCH_MODES)}, not {search_mode!r}"
            )
        self.search_mode = search_mode
        self._labels: Any = None
        if search_mode == "index":
            from creagraph.kg.labelindex import LabelIndex, default_label_index_path

            self._labels = LabelIndex(label_index or default_label_index_path())
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
        self._inverse = inverse_labels()

    # -- transport -------------------------------------------------------------------
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
            retry_after = _retry_after(response.getheader("Retry-After"))
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

    def _select(self, name: str, **values: str) -> list[dict[str, str]]:
        result = self.query(template(name).substitute(values))
        rows = []
        for binding in result.get("results", {}).get("bindings", []):
            rows.append({k: v.get("value", "") for k, v in binding.items()})
        return rows

    def _ask(self, name: str, **values: str) -> bool:
        result = self.query(template(name).substitute(values))
        return bool(result.get("boolean"))

    # -- records ---------------------------------------------------------------------
    def _record(self, ident: str) -> tuple[str | None, tuple[str, ...], str | None, bool]:
        rec = self.records([ident]).get(ident)
        if rec is None:
            return None, (), None, False
        return (*rec, True)

    def entity(self, qid: str) -> EntityRecord | None:
        label, aliases, description, found = self._record(check_qid(qid))
        if not found and not self._ask("is_known", node=_node(qid)):
            return None
        return EntityRecord(qid, label, aliases, description)

    def property(self, pid: str) -> PropertyRecord | None:
        label, aliases, description, found = self._record(check_pid(pid))
        if not found and not self._property_used(pid):
            return None
        return PropertyRecord(pid, label, aliases, description, self._inverse.get(pid))

    def _property_used(self, pid: str) -> bool:
        return bool(self._select("property_statements", prop=_prop(pid), limit="1"))

    def records(
        self, idents: Iterable[str]
    ) -> dict[str, tuple[str | None, tuple[str, ...], str | None]]:
        """``id -> (label, aliases, description)`` for many items/properties, batched."""
        found: dict[str, list] = {}
        for ident, row in self._text_rows("records", idents):
            entry = found.setdefault(ident, [None, set(), None])
            if row["pred"] == _LABEL and entry[0] is None:
                entry[0] = row["text"]
            elif row["pred"] == _DESC and entry[2] is None:
                entry[2] = row["text"]
            elif row["pred"] == _ALT:
                entry[1].add(row["text"])
        return {i: (e[0], tuple(sorted(e[1])), e[2]) for i, e in found.items()}

    def _text_rows(self, name: str, idents: Iterable[str]) -> Iterator[tuple[str, dict]]:
        """``(id, row)`` from template ``name`` run over the well-formed ids among ``idents``,
        200 at a time; each batch's rows in the order of their ``text``."""
        wanted = [i for i in dict.fromkeys(idents) if is_qid(i) or is_pid(i)]
        for start in range(0, len(wanted), 200):
            chunk = wanted[start : start + 200]
            rows = self._select(name, values=" ".join(f"wd:{i}" for i in chunk), lang=self._lang)
            for row in sorted(rows, key=lambda r: r["text"]):
                ident = _local_id(row["e"])
                if ident is not None:
                    yield ident, row

    def property_statements(self, pid: str, limit: int) -> list[Edge]:
        """Up to ``limit`` item-to-item statements of property ``pid``."""
        rows = self._select("property_statements", prop=_prop(pid), limit=str(int(limit)))
        return [
            Edge(s, pid, o)
            for row in rows
            if (s := _local_id(row["s"])) and (o := _local_id(row["o"]))
        ]

    def label(self, ident: str) -> str | None:
        return self.labels([ident]).get(ident)

    def labels(self, idents: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for ident, row in self._text_rows("labels", idents):
            out.setdefault(ident, row["text"])
        return out

    # -- search ----------------------------------------------------------------------
    def degree(self, qid: str) -> int:
        return self._popularity([qid]).get(qid, 0)

    def _popularity(self, ids: list[str]) -> dict[str, int]:
        """Statements per id (0 for properties and unknown ids), a query per 100 ids."""
        qids = [i for i in ids if is_qid(i)]
        out = {i: 0 for i in ids}
        for start in range(0, len(qids), 100):
            chunk = qids[start : start + 100]
            for row in self._select("degree", values=" ".join(f"wd:{q}" for q in chunk)):
                ident = _local_id(row["e"])
                if ident is not None:
                    out[ident] = int(row["n"])
        return out

    def _name_rows(self, text: str) -> list[tuple[str, str, str]]:
        """Candidate (id, kind, text) rows whose label/alias could match ``text``."""
        variants = {text, text.lower(), text.title(), text[:1].upper() + text[1:], text.upper()}
        if self._labels is not None:
            return self._labels.rows(text)
        if self.search_mode == "exact":
            values = " ".join(sparql_string(v, self.language) for v in sorted(variants))
            rows = self._select("search_exact", values=values)
        elif self.search_mode == "entitysearch":
            rows = self._select(
                "search_entitysearch",
                search=sparql_string(text.strip()[:_SEARCH_CHARS]),
                lang=self._lang,
                limit=str(_SEARCH_LIMIT),
            )
        elif self.search_mode == "prefix":
            # the first word is enough to bound the candidates; the matches are filtered below
            heads = sorted({v.split()[0][:_SCAN_TOKEN_CHARS] for v in variants if v.split()})
            if not heads:
                return []
            condition = " || ".join(
                f"STRSTARTS(STR(?text), {sparql_string(h)})" for h in heads
            )
            rows = self._select("search_prefix", condition=condition, lang=self._lang)
        else:
            tokens = sorted(
                {w for w in normalize_loose(text).split() if len(w) >= 2},
                key=lambda w: (-len(w), w),
            )[:2]
            if not tokens:
                tokens = [normalize(text)] if normalize(text) else []
            if not tokens:
                return []
            # A prefix finds a superset of the names holding the whole token (the matches
            # are filtered below), and keeps a long search text from becoming a regex the
            # server takes minutes over.
            tokens = [t[:_SCAN_TOKEN_CHARS] for t in tokens]
            condition = " || ".join(
                f"REGEX(LCASE(STR(?text)), {sparql_string(_accent_insensitive(t))})" for t in tokens
            )
            rows = self._select("search_scan", condition=condition, lang=self._lang)
        out = []
        for row in rows:
            ident = _local_id(row["e"])
            kind = _PRED_KIND.get(row["pred"])
            if ident is not None and kind is not None:
                out.append((ident, kind, row["text"]))
        return out

    def _name_matches(self, query: NameQuery) -> tuple[list[SearchHit], FuzzyStep]:
        rows = [r for r in self._name_rows(query.text) if r[0][0] == query.prefix]
        key, loose = query.key, query.loose
        hits = [
            SearchHit(i, None, t, k, 100.0, True)  # type: ignore[arg-type]
            for i, k, t in rows
            if normalize(t) == key or (loose and normalize_loose(t) == loose)
        ]
        return hits, lambda limit, min_score: _fuzzy_rows(rows, loose, limit, min_score)

    # -- edges -----------------------------------------------------------------------
    def out_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        ends = self._edge_ends("out", qid, prop, "o")
        edges = {Edge(qid, p, o) for p, o in ends}
        return sorted(edges, key=lambda e: (id_number(e.property), id_number(e.object)))

    def in_edges(self, qid: str, prop: str | None = None) -> list[Edge]:
        ends = self._edge_ends("in", qid, prop, "s")
        edges = {Edge(s, p, qid) for p, s in ends}
        return sorted(edges, key=lambda e: (id_number(e.property), id_number(e.subject)))

    def _edge_ends(
        self, direction: str, qid: str, prop: str | None, other: str
    ) -> list[tuple[str, str]]:
        """``(PID, other end)`` of ``qid``'s statements in one direction (template
        ``{direction}_edges``, or ``{direction}_edges_prop`` for one property), the other
        end read from variable ``other``; rows that are not item-to-item are left out."""
        if prop is None:
            rows = self._select(f"{direction}_edges", node=_node(qid))
            pairs = [(_wdt_pid(row["p"]), _local_id(row[other])) for row in rows]
        else:
            rows = self._select(f"{direction}_edges_prop", node=_node(qid), prop=_prop(prop))
            pairs = [(prop, _local_id(row[other])) for row in rows]
        return [(p, x) for p, x in pairs if p and x]

    def has_triple(self, subject: str, prop: str, obj: str) -> bool:
        return self._ask("ask_triple", subject=_node(subject), prop=_prop(prop), object=_node(obj))

    def property_counts(self) -> dict[str, int]:
        """Item-to-item statements per property (one ``GROUP BY`` query, cached; meant for
        self-hosted slices — on the public endpoint it may time out)."""
        rows = self._select("property_counts")
        return {p: int(row["n"]) for row in rows if (p := _wdt_pid(row["p"]))}

    def edges_between(self, a: str, b: str) -> list[Edge]:
        rows = self._select("edges_between", a=_node(a), b=_node(b))
        edges = {
            Edge(s, p, o)
            for row in rows
            if (p := _wdt_pid(row["p"]))
            and (s := _local_id(row["s"]))
            and (o := _local_id(row["o"]))
        }
        return sorted(edges, key=lambda e: (id_number(e.property), e.subject, e.object))

    def property_types(self, prop: str, side: Side, *, limit: int = 20) -> dict[str, int]:
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        rows = self._select(f"property_types_{side}", prop=_prop(prop))
        counts = [(int(row["n"]), t) for row in rows if (t := _local_id(row["t"])) and is_qid(t)]
        counts.sort(key=lambda x: (-x[0], id_number(x[1])))
        return {t: n for n, t in counts[:limit]}

    def count_subjects(self, prop: str, obj: str) -> int:
        rows = self._select("count_subjects", prop=_prop(prop), object=_node(obj))
        return int(rows[0]["n"]) if rows and "n" in rows[0] else 0

    def count_objects(self, subject: str, prop: str) -> int:
        rows = self._select("count_objects", subject=_node(subject), prop=_prop(prop))
        return int(rows[0]["n"]) if rows and "n" in rows[0] else 0

    def categories(
        self,
        properties: Iterable[str],
        *,
        side: Side,
        min_size: int = 2,
        max_size: int | None = None,
    ) -> Iterator[Category]:
        if side not in ("subject", "object"):
            raise ValueError(f"side must be 'subject' or 'object', not {side!r}")
        upper = max_size if max_size is not None else 2**62
        for pid in sorted({check_pid(p) for p in properties}, key=id_number):
            rows = self._select(
                f"category_sizes_{side}",
                prop=_prop(pid),
                min_size=str(int(min_size)),
                max_size=str(int(upper)),
            )
            sizes = {c: int(r["n"]) for r in rows if (c := _local_id(r["c"])) and is_qid(c)}
            anchors = sorted(sizes, key=id_number)
            for start in range(0, len(anchors), 100):
                chunk = anchors[start : start + 100]
                members: dict[str, set[str]] = {c: set() for c in chunk}
                for row in self._select(
                    f"category_members_{side}",
                    values=" ".join(f"wd:{c}" for c in chunk),
                    prop=_prop(pid),
                ):
                    c, m = _local_id(row["c"]), _local_id(row["m"])
                    if c in members and m is not None:
                        members[c].add(m)
                for c in chunk:
                    ordered = tuple(sorted(members[c], key=id_number))
                    yield Category(pid, c, side, len(ordered), ordered)

    def stats(self) -> dict[str, int]:
        rows = self._select("stats")
        ents = self._select("stats_entities", lang=self._lang)
        return {
            "statements": int(rows[0].get("statements", 0)) if rows else 0,
            "entities": int(ents[0].get("entities", 0)) if ents else 0,
            "properties": int(rows[0].get("properties", 0)) if rows else 0,
        }

    def close(self) -> None:
        """Nothing to release (connections are per request)."""
