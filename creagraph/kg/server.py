"""A local SPARQL 1.1 protocol server over an Oxigraph store (pyoxigraph).

Serves N-Triples dumps (such as the shared Wikidata slice) at ``http://HOST:PORT/query``
so the SPARQL backend can be used, tested and benchmarked without a network. It speaks
the standard protocol (GET ``?query=`` or POST form/``application/sparql-query``) and
answers SPARQL JSON results, so any SPARQL client works against it.

Run it with ``creagraph kg serve slice.nt.gz --db DIR --port 7878`` or
``python -m creagraph.kg.server``.

Safety: federated queries (``SERVICE <url> {…}``) would make the server fetch any URL a
client names — a web page open in a browser can send such a query to a local port — so
they are refused (HTTP 403) unless ``allow_federated`` (``--allow-federated``) is given.
Binding to anything but a loopback address prints a warning: every machine that can reach
the port can then query the graph.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import hashlib
import io
import ipaddress
import json
import os
import re
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs, urlparse

from creagraph.core.io import InputError

if TYPE_CHECKING:  # pyoxigraph is imported where a store is opened
    from pyoxigraph import Store

__all__ = [
    "Limits",
    "open_oxigraph",
    "open_oxigraph_db",
    "claim_store_dir",
    "make_server",
    "serve",
    "serve_in_thread",
    "is_federated",
    "is_loopback",
    "host_allowed",
    "source_identity",
    "dataset_id",
]

#: What a SPARQL lexer skips over: long and short strings, IRIs, comments (SPARQL 1.1 §19).
_SKIPPED = re.compile(
    r"'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'(?:[^'\\\n\r]|\\.)*'"
    r'|"(?:[^"\\\n\r]|\\.)*"'
    r'|<[^<>"{}|^`\\\x00-\x20]*>'
    r"|#[^\n\r]*",
    re.S,
)
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_SERVICE = re.compile(r"(?<![\w:?$])SERVICE(?![\w:])", re.I)


def is_federated(query: str) -> bool:
    r"""Whether a SPARQL query holds a ``SERVICE`` clause (a federated query).

    Codepoint escapes (``\u0053ERVICE``) are decoded first, as SPARQL parsers do, and the
    keyword is looked for outside strings, IRIs and comments, so a label search for
    "customer service" is not mistaken for one.

    Examples
    --------
    >>> is_federated("SELECT * { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    True
    >>> is_federated('SELECT * { ?s ?p "secret service" } # SERVICE')
    False
    """

    def decode(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF else match.group(0)

    text = _SKIPPED.sub(" ", _CODEPOINT.sub(decode, query))
    return _SERVICE.search(text) is not None


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only loopback addresses (``127.0.0.1``, ``::1``, ``localhost``)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    if not host:
        return False
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def _open_compressed(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):  # a GzipFile reads as IO[bytes]; typeshed does not say so
        return cast(IO[bytes], gzip.open(path, "rb"))
    if path.name.endswith(".bz2"):
        return bz2.open(path, "rb")
    return path.open("rb")


#: Request limits of :func:`make_server` (``creagraph kg serve`` options of the same name).
DEFAULT_QUERY_TIMEOUT = 30.0
DEFAULT_MAX_RESULT_MB = 64.0
DEFAULT_MAX_REQUEST_KB = 1024.0
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 64
DEFAULT_MAX_QUERIES = 4


@dataclass(frozen=True)
class Limits:
    """What one request may cost the server.

    Attributes
    ----------
    query_timeout : float
        Seconds a query may run; checked while its results are produced, so a query
        whose results stream (a cross product, a huge ``LIMIT``) stops at the deadline
        with HTTP 503. An aggregate computed whole before its first row (``COUNT`` over a
        cross product) is only stopped at its first row; at most ``max_queries`` such
        queries run at once, others get HTTP 503 at once.
    max_result_bytes : int
        Largest serialized result; beyond it the query stops with HTTP 413.
    max_request_bytes : int
        Largest request body (POST); a larger declared ``Content-Length`` gets HTTP 413
        without being read.
    header_timeout, body_timeout : float
        Seconds for the request line and headers, and for the whole body, to arrive.
    max_connections : int
        Connections served at once; more are answered HTTP 503 and closed.
    allow_hosts : tuple of str
        ``Host`` / ``Origin`` names answered besides the loopback names (``localhost``,
        ``127.0.0.1``, ``[::1]``); any other gets HTTP 403 (a web page open in a browser
        must not drive the local port, DNS rebinding included).
    """

    query_timeout: float = DEFAULT_QUERY_TIMEOUT
    max_result_bytes: int = int(DEFAULT_MAX_RESULT_MB * 2**20)
    max_request_bytes: int = int(DEFAULT_MAX_REQUEST_KB * 2**10)
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_queries: int = DEFAULT_MAX_QUERIES
    allow_hosts: tuple[str, ...] = ()


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def host_allowed(value: str, allow_hosts: tuple[str, ...] = ()) -> bool:
    """Whether a ``Host`` header (``name[:port]``) or an ``Origin`` (``scheme://name[:port]``)
    names a loopback address or one of ``allow_hosts``.

    Examples
    --------
    >>> host_allowed("127.0.0.1:7878"), host_allowed("localhost"), host_allowed("[::1]:80")
    (True, True, True)
    >>> host_allowed("evil.example:7878"), host_allowed("http://evil.example")
    (False, False)
    >>> host_allowed("lab.example:7878", ("lab.example",))
    True
    """
    text = value.strip()
    if "://" in text:
        parsed = urlparse(text)
        name = parsed.hostname or ""
    else:
        name = urlparse(f"//{text}").hostname or ""
    name = name.lower().rstrip(".")
    if name in _LOOPBACK_NAMES or name in {h.lower() for h in allow_hosts}:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def source_identity(sources: list[Path]) -> list[dict[str, Any]]:
    """Each source file's identity (resolved path, size, SHA-256), in order."""
    from creagraph.core.outdir import file_identity

    for path in sources:
        if not path.is_file():
            raise InputError(f"{path}: file not found")
    return [file_identity(p) for p in sources]


def dataset_id(identity: list[dict[str, Any]]) -> str:
    """The ``X-Creagraph-Dataset`` value for sources of this identity: a SHA-256 of their
    contents (the same files give the same id, wherever they lie)."""
    digest = hashlib.sha256()
    for item in identity:
        digest.update(f"{item.get('sha256')}:{item.get('size')}\n".encode())
    return digest.hexdigest()[:32]


_LOADED = ".creagraph-loaded.json"


def _load(store: Store, sources: list[Path]) -> None:
    import pyoxigraph as ox

    for path in sources:
        with _open_compressed(path) as handle:
            store.bulk_load(input=handle, format=ox.RdfFormat.N_TRIPLES)
    store.flush()


def open_oxigraph(sources: list[Path], db: Path | None) -> Store:
    """Open a new in-memory Oxigraph store (``db=None``) holding ``sources``.

    A store folder (``db``) is opened with :func:`open_oxigraph_db`, which checks that
    it holds exactly these sources.
    """
    import pyoxigraph as ox

    if db is not None:
        return open_oxigraph_db(sources, db)[0]
    source_identity(sources)
    store = ox.Store()
    _load(store, sources)
    return store


@contextlib.contextmanager
def claim_store_dir(sources: list[Path], db: Path) -> Iterator[tuple[Any, str]]:
    """Open (or create and bulk-load) the store folder ``db`` for ``sources``, claimed
    with :func:`creagraph.core.outdir.claim_output_dir` for the ``with`` block.

    The folder must be new, empty or made by ``kg serve`` for the same source files
    (same contents): a folder holding another source (a changed file, a second file) is
    refused, never reused nor merged into; a user's non-empty folder is refused untouched.
    A load that was interrupted is redone from scratch. Yields ``(store, dataset id)``.
    """
    import pyoxigraph as ox

    from creagraph.core.outdir import claim_output_dir

    identity = source_identity(sources)
    fingerprint = {"sources": [{"sha256": i["sha256"], "size": i["size"]} for i in identity]}
    with claim_output_dir(db, "kg serve", [_LOADED], inputs=sources,
                          fingerprint=fingerprint) as path:
        loaded = path / _LOADED
        if not loaded.exists():  # new, or a load that did not finish: start over
            for entry in os.scandir(path):
                if entry.name.startswith(".creagraph-out"):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
        store = ox.Store(str(path))
        if not loaded.exists():
            _load(store, sources)
            from creagraph.core.io import atomic_write

            with atomic_write(loaded) as handle:
                json.dump(fingerprint, handle)
        yield store, dataset_id(identity)


def open_oxigraph_db(sources: list[Path], db: Path) -> tuple[Any, str]:
    """:func:`claim_store_dir` without holding the claim (for one-off use)."""
    with claim_store_dir(sources, db) as (store, ident):
        return store, ident


class _TimedLines:
    """A request's input whose line reads (request line, headers) answer HTTP 408 and end
    the connection when they run past the header deadline (http.server would close it
    without a reply)."""

    def __init__(self, raw: Any, connection: socket.socket):
        self._raw, self._connection = raw, connection

    def readline(self, *args: Any) -> bytes:
        try:
            return cast(bytes, self._raw.readline(*args))
        except TimeoutError:
            with contextlib.suppress(OSError):
                self._connection.sendall(b"HTTP/1.0 408 Request Timeout\r\nContent-Length: 0"
                                         b"\r\nConnection: close\r\n\r\n")
            raise ConnectionAbortedError("request line or headers not complete in time") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _Stop(Exception):
    """A result stopped: ``status`` and ``reason`` for the client."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


class _CappedBuffer(io.RawIOBase):
    """Where a result is serialized: stops it past ``cap`` bytes or the ``deadline``."""

    def __init__(self, cap: int, deadline: float, timeout: float):
        self.parts: list[bytes] = []
        self.size, self.cap, self.deadline, self.timeout = 0, cap, deadline, timeout

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.size += len(chunk)
        if self.size > self.cap:
            raise _Stop(413, f"result larger than {self.cap:,} bytes (--max-result-mb); "
                        "add a LIMIT or narrow the query")
        if time.monotonic() > self.deadline:
            raise _Stop(503, f"query ran past {self.timeout:g} s (--query-timeout)")
        self.parts.append(chunk)
        return len(chunk)


def make_server(
    store: Store,
    host: str = "127.0.0.1",
    port: int = 7878,
    *,
    allow_federated: bool = False,
    limits: Limits | None = None,
    dataset: str | None = None,
) -> ThreadingHTTPServer:
    """An HTTP server answering SPARQL queries against ``store`` (not yet serving).

    Federated queries (``SERVICE``) are answered with HTTP 403 unless ``allow_federated``.
    ``limits`` bound every request (:class:`Limits`); every malformed request gets a
    4xx reply. ``dataset`` is sent as ``X-Creagraph-Dataset`` with every answer, so a
    client's response cache knows when the data behind the port changed.
    """
    import pyoxigraph as ox

    lim = limits or Limits()
    queries = threading.BoundedSemaphore(lim.max_queries)
    connections = threading.BoundedSemaphore(lim.max_connections)

    class Handler(BaseHTTPRequestHandler):
        server_version = "creagraph-oxigraph/1"
        timeout = lim.header_timeout  # socket timeout: request line and headers
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # quiet by default
            return

        def setup(self) -> None:
            super().setup()
            self.rfile = cast(Any, _TimedLines(self.rfile, self.connection))

        def handle(self) -> None:
            try:
                super().handle()
            except ConnectionError:
                self.close_connection = True

        def _checked(self) -> bool:
            """Host and Origin must be loopback names or ``--allow-host`` ones."""
            host_header = self.headers.get("Host")
            if host_header is None or not host_allowed(host_header, lim.allow_hosts):
                self._send(403, "text/plain", b"Host not allowed: this server answers "
                           b"loopback names only (start it with --allow-host NAME)")
                return False
            origin = self.headers.get("Origin")
            if origin is not None and not host_allowed(origin, lim.allow_hosts):
                self._send(403, "text/plain", b"Origin not allowed: requests from web pages "
                           b"of other sites are refused")
                return False
            if (self.headers.get("Sec-Fetch-Site") or "").lower() == "cross-site":
                self._send(403, "text/plain", b"cross-site requests are refused")
                return False
            return True

        def _answer(self, query: str | None) -> None:
            if not query:
                self._send(400, "text/plain", b"missing 'query' parameter")
                return
            if not allow_federated and is_federated(query):
                self._send(
                    403,
                    "text/plain",
                    b"federated queries (SERVICE) are refused by this server; start it with "
                    b"--allow-federated to allow them",
                )
                return
            if not queries.acquire(blocking=False):
                self._send(503, "text/plain", b"busy: too many queries running; retry later",
                           retry_after=1)
                return
            try:
                status, ctype, body = self._run(query)
            finally:
                queries.release()
            self._send(status, ctype, body)

        def _run(self, query: str) -> tuple[int, str, bytes]:
            out = _CappedBuffer(lim.max_result_bytes, time.monotonic() + lim.query_timeout,
                                lim.query_timeout)
            try:
                result = store.query(query)
                if isinstance(result, ox.QueryTriples):
                    result.serialize(output=cast(IO[bytes], out), format=ox.RdfFormat.N_TRIPLES)
                    return 200, "application/n-triples", b"".join(out.parts)
                result.serialize(output=cast(IO[bytes], out),
                                 format=ox.QueryResultsFormat.JSON)
                return 200, "application/sparql-results+json", b"".join(out.parts)
            except _Stop as stop:
                return stop.status, "text/plain", stop.reason.encode()
            except (SyntaxError, ValueError, OSError, RuntimeError) as exc:
                cause = exc.__cause__ or exc.__context__
                if isinstance(cause, _Stop):
                    return cause.status, "text/plain", cause.reason.encode()
                return 400, "text/plain", str(exc).encode("utf-8", "replace")

        def _send(self, status: int, ctype: str, body: bytes,
                  retry_after: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            if dataset is not None:
                self.send_header("X-Creagraph-Dataset", dataset)
            if retry_after is not None:
                self.send_header("Retry-After", str(retry_after))
            self.send_header("Connection", "close")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            if not self._checked():
                return
            url = urlparse(self.path)
            if url.path == "/health":
                self._send(200, "text/plain", b"ok")
                return
            if url.path not in ("/query", "/sparql"):
                self._send(404, "text/plain", b"not found")
                return
            self._answer(parse_qs(url.query).get("query", [None])[0])

        def _body(self) -> bytes | None:
            """The request body within the size cap and the body deadline, or ``None``
            after replying why not."""
            raw_length = self.headers.get("Content-Length")
            if raw_length is None:
                self._send(411, "text/plain", b"Content-Length required")
                return None
            if not raw_length.strip().isdigit():
                self._send(400, "text/plain", b"malformed Content-Length")
                return None
            length = int(raw_length)
            if length > lim.max_request_bytes:
                self._send(413, "text/plain",
                           f"request body of {length:,} bytes exceeds the limit of "
                           f"{lim.max_request_bytes:,} (--max-request-kb)".encode())
                return None
            deadline = time.monotonic() + lim.body_timeout
            chunks, left = [], length
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._send(408, "text/plain", b"request body not complete in time")
                    return None
                self.connection.settimeout(min(remaining, lim.header_timeout))
                try:
                    piece = self.rfile.read1(min(left, 65536))
                except TimeoutError:
                    self._send(408, "text/plain", b"request body not complete in time")
                    return None
                if not piece:
                    self._send(400, "text/plain", b"request body shorter than Content-Length")
                    return None
                chunks.append(piece)
                left -= len(piece)
            return b"".join(chunks)

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            if not self._checked():
                return
            url = urlparse(self.path)
            if url.path not in ("/query", "/sparql"):
                self._send(404, "text/plain", b"not found")
                return
            data = self._body()
            if data is None:
                return
            try:
                raw = data.decode("utf-8")
            except UnicodeDecodeError:
                self._send(400, "text/plain", b"request body is not UTF-8")
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if ctype == "application/sparql-query":
                self._answer(raw)
            else:
                self._answer(parse_qs(raw).get("query", [None])[0])

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

        # request: the connection's socket (typeshed's socketserver._RequestType)
        def process_request(self, request: Any, client_address: Any) -> None:
            if not connections.acquire(blocking=False):
                with contextlib.suppress(OSError):
                    request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0"
                                    b"\r\nRetry-After: 1\r\nConnection: close\r\n\r\n")
                self.shutdown_request(request)
                return
            super().process_request(request, client_address)

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                connections.release()

        def handle_error(self, request: Any, client_address: Any) -> None:
            return  # a client that went away: nothing to report

    return Server((host, port), Handler)


def serve(
    sources: list[Path],
    *,
    db: Path | None,
    host: str = "127.0.0.1",
    port: int = 7878,
    allow_federated: bool = False,
    limits: Limits | None = None,
) -> None:
    """Load ``sources`` (or reuse ``db`` loaded from the same files) and serve until
    interrupted."""
    if not is_loopback(host):
        print(
            f"warning: serving on {host!r}, not a loopback address: any machine that can "
            "reach this port can query the graph (use --host 127.0.0.1 for local use only)",
            file=sys.stderr,
            flush=True,
        )
    if allow_federated:
        print(
            "warning: --allow-federated: clients can make this server fetch any URL "
            "(SERVICE queries)",
            file=sys.stderr,
            flush=True,
        )
    lim = limits or Limits()
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        lim = Limits(**{**asdict(lim), "allow_hosts": (*lim.allow_hosts, host)})
    with contextlib.ExitStack() as stack:
        if db is None:
            store = open_oxigraph(sources, None)
            ident = dataset_id(source_identity(sources))
        else:
            store, ident = stack.enter_context(claim_store_dir(sources, db))
        server = make_server(store, host, port, allow_federated=allow_federated, limits=lim,
                             dataset=ident)
        print(f"SPARQL endpoint ready at http://{host}:{server.server_port}/query", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


def serve_in_thread(
    store: Store, host: str = "127.0.0.1", port: int = 0, *, allow_federated: bool = False,
    limits: Limits | None = None, dataset: str | None = None,
) -> tuple[ThreadingHTTPServer, str]:
    """Start a server on a background thread; returns ``(server, url)``."""
    server = make_server(store, host, port, allow_federated=allow_federated, limits=limits,
                         dataset=dataset)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://{host}:{server.server_port}/query"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", type=Path, help="N-Triples files (.nt/.gz/.bz2)")
    parser.add_argument("--db", type=Path, default=None, help="Oxigraph store directory")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7878)
    parser.add_argument(
        "--allow-federated", action="store_true", help="answer SERVICE (federated) queries"
    )
    parser.add_argument("--allow-host", action="append", default=[],
                        help="also answer this Host/Origin name (repeatable)")
    parser.add_argument("--query-timeout", type=float, default=DEFAULT_QUERY_TIMEOUT)
    parser.add_argument("--max-result-mb", type=float, default=DEFAULT_MAX_RESULT_MB)
    args = parser.parse_args(argv)
    try:
        serve(
            args.sources,
            db=args.db,
            host=args.host,
            port=args.port,
            allow_federated=args.allow_federated,
            limits=Limits(query_timeout=args.query_timeout,
                          max_result_bytes=int(args.max_result_mb * 2**20),
                          allow_hosts=tuple(args.allow_host)),
        )
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
