"""A local SPARQL 1.1 protocol server over an Oxigraph store (pyoxigraph).

Serves N-Triples dumps (such as the shared Wikidata slice) at ``http://HOST:PORT/query``
so the SPARQL backend can be used, tested and benchmarked without a network. It speaks
the standard protocol (GET ``?query=`` or POST form/``application/sparql-query``) and
answers SPARQL JSON results, so any SPARQL client works against it.

Run it with ``creagraph kg serve slice.nt.gz --db DIR --port 7878`` or
``python -m creagraph.kg.server``.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from creagraph.core.io import InputError

__all__ = ["open_oxigraph", "make_server", "serve"]


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


def make_server(store, host: str = "127.0.0.1", port: int = 7878) -> ThreadingHTTPServer:
    """An HTTP server answering SPARQL queries against ``store`` (not yet serving)."""
    import pyoxigraph as ox

    class Handler(BaseHTTPRequestHandler):
        server_version = "creagraph-oxigraph/1"

        def log_message(self, format: str, *args) -> None:  # quiet by default
            return

        def _answer(self, query: str | None) -> None:
            if not query:
                self._send(400, "text/plain", b"missing 'query' parameter")
                return
            try:
                result = store.query(query)
            except (SyntaxError, ValueError, OSError) as exc:
                self._send(400, "text/plain", str(exc).encode())
                return
            if isinstance(result, ox.QueryTriples):
                body = result.serialize(format=ox.RdfFormat.N_TRIPLES)
                self._send(200, "application/n-triples", body)
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
    sources: list[Path], *, db: Path | None, host: str = "127.0.0.1", port: int = 7878
) -> None:
    """Load ``sources`` (or reuse ``db``) and serve until interrupted."""
    store = open_oxigraph(sources, db)
    server = make_server(store, host, port)
    print(f"SPARQL endpoint ready at http://{host}:{server.server_port}/query", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def serve_in_thread(store, host: str = "127.0.0.1", port: int = 0):
    """Start a server on a background thread; returns ``(server, url)``."""
    server = make_server(store, host, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://{host}:{server.server_port}/query"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", type=Path, help="N-Triples files (.nt/.gz/.bz2)")
    parser.add_argument("--db", type=Path, default=None, help="Oxigraph store directory")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7878)
    args = parser.parse_args(argv)
    serve(args.sources, db=args.db, host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
