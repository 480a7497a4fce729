"""Opening the SQLite caches creagraph shares between threads and processes.

The embedding cache (:mod:`creagraph.core.embeddings`), the grounding-verdict cache
(:mod:`creagraph.scoring.groundcache`), the LLM reply cache (:mod:`creagraph.core.llm`)
and the SPARQL response cache (:mod:`creagraph.kg.sparql_transport`) are SQLite files in
WAL mode that several processes may open at the same moment (distributed scoring
workers, parallel ``tig`` jobs). :func:`open_cache_tables` is the one way they switch to
WAL and create their tables; :func:`cache_error` the one wording of a file that cannot
be used.

Examples
--------
>>> import sqlite3
>>> conn = sqlite3.connect(":memory:")
>>> open_cache_tables(conn, "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)")
>>> conn.execute("SELECT count(*) FROM t").fetchone()
(0,)
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from creagraph.core.io import InputError

__all__ = ["open_cache_tables", "cache_error"]


def open_cache_tables(conn: sqlite3.Connection, *tables: str, attempts: int = 12) -> None:
    """Switch the cache to WAL and run each ``CREATE TABLE IF NOT EXISTS`` of ``tables``.

    Processes that open a new cache at the same moment can get "database is locked" at
    once from the journal-mode switch or the first ``CREATE``: SQLite does not wait on its
    busy handler there. Such a clash is retried with a growing pause (about 10 s in all)
    before it is raised.
    """
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a killed process never loses a committed batch nor leaves a
            # torn one; a power loss may drop the last batches, never corrupt the file.
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                for table in tables:
                    conn.execute(table)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(min(0.02 * 2**attempt, 2.0))


def cache_error(path: Path, exc: Exception, what: str, holds: str) -> InputError:
    """The one-line error for a cache file that cannot be used, naming it: a full disk, a
    lock or a read-only file is said as such (``… cannot be used (…)``), anything else as
    damage (``not a usable …; it only holds {holds}: delete it and re-run``)."""
    if isinstance(exc, OSError | sqlite3.OperationalError):  # locked, read-only, disk full
        return InputError(f"{path}: the {what} cannot be used ({exc})")
    return InputError(
        f"{path}: not a usable {what} ({exc}); it only holds {holds}: delete it and re-run"
    )
