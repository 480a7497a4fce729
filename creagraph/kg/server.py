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
import gzip
import ipaddress
import json
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from creagraph.core.io import InputError

__all__ = ["open_oxigraph", "make_server", "serve", "is_federated", "is_loopback"]

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


def _open_compressed(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    if path.name.endswith(".bz2"):
        return bz2.open(path, "rb")
    return path.open("rb")


def open_oxigraph(sources: list[Path], db: Path | None):
    """Open (or create and bulk-load) an Oxigraph store holding ``sources``.

    A store directory that already holds data is reused without reloading; a marker file
    records which sources it was loaded from.
    """
    import pyoxigraph as ox

    if db is None:
        store = ox.Store()
    else:
        db.mkdir(parents=True, exist_ok=True)
        store = ox.Store(str(db))
    marker = db / "creagraph-sources.json" if db is not None else None
    wanted = [str(p.resolve()) for p in sources]
    if marker is not None and marker.exists() and json.loads(marker.read_text()) == wanted:
        return store
    for path in sources:
        if not path.exists():
            raise InputError(f"{path}: file not found")
        with _open_compressed(path) as handle:
            store.bulk_load(input=handle, format=ox.RdfFormat.N_TRIPLES)
    store.flush()
    if marker is not None:
        marker.write_text(json.dumps(wanted))
    return store


def make_server(
    store, host: str = "127.0.0.1", port: int = 7878, *, allow_federated: bool = False
) -> ThreadingHTTPServer:
    """An HTTP server answering SPARQL queries against ``store`` (not yet serving).

    Federated queries (``SERVICE``) are answered with HTTP 403 unless ``allow_federated``.
    """
    import pyoxigraph as ox

    class Handler(BaseHTTPRequestHandler):
        server_version = "creagraph-oxigraph/1"

        def log_message(self, format: str, *args) -> None:  # quiet by default
            return

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
            try:
                result = store.query(query)
            except (SyntaxError, ValueError, OSError) as exc:
                self._send(400, "text/plain", str(exc).encode())
                return
            if isinstance(result, ox.QueryTriples):
                body = result.serialize(format=ox.RdfFormat.N_TRIPLES)
                self._send(200, "application/n-triples", body or b"")  # bytes: no output given
            else:
                body = result.serialize(format=ox.QueryResultsFormat.JSON)
                self._send(200, "application/sparql-results+json", body)

        def _send(self, status: int, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            url = urlparse(self.path)
            if url.path == "/health":
                self._send(200, "text/plain", b"ok")
                return
            if url.path not in ("/query", "/sparql"):
                self._send(404, "text/plain", b"not found")
                return
            self._answer(parse_qs(url.query).get("query", [None])[0])

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            url = urlparse(self.path)
            if url.path not in ("/query", "/sparql"):
                self._send(404, "text/plain", b"not found")
                return
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8")
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if ctype == "application/sparql-query":
                self._answer(raw)
            else:
                self._answer(parse_qs(raw).get("query", [None])[0])

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def serve(
    sources: list[Path],
    *,
    db: Path | None,
    host: str = "127.0.0.1",
    port: int = 7878,
    allow_federated: bool = False,
) -> None:
    """Load ``sources`` (or reuse ``db``) and serve until interrupted."""
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
    store = open_oxigraph(sources, db)
    server = make_server(store, host, port, allow_federated=allow_federated)
    print(f"SPARQL endpoint ready at http://{host}:{server.server_port}/query", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def serve_in_thread(
    store, host: str = "127.0.0.1", port: int = 0, *, allow_federated: bool = False
):
    """Start a server on a background thread; returns ``(server, url)``."""
    server = make_server(store, host, port, allow_federated=allow_federated)
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
    args = parser.parse_args(argv)
    serve(
        args.sources,
        db=args.db,
        host=args.host,
        port=args.port,
        allow_federated=args.allow_federated,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
