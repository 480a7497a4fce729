"""The caches' one way of opening a shared SQLite file (:mod:`creagraph.core.sqlitecache`):
a file another process holds locked while it is being set up is waited for, not reported as
damage (CI: two Dask workers opening a new LLM reply cache at once got "database is locked"
as "damaged or not a database")."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time

import pytest

from creagraph.core.io import InputError
from creagraph.core.llm import ReplyCache
from creagraph.core.sqlitecache import cache_error, open_cache_tables

TABLE = "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT NOT NULL)"


def hold_exclusive(path, seconds: float) -> threading.Thread:
    """Lock ``path`` exclusively from another connection for ``seconds``."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN EXCLUSIVE")

    def release() -> None:
        time.sleep(seconds)
        conn.execute("COMMIT")
        conn.close()

    thread = threading.Thread(target=release)
    thread.start()
    return thread


def test_a_lock_while_opening_is_waited_for(tmp_path):
    path = tmp_path / "cache.sqlite"
    sqlite3.connect(str(path)).close()
    holder = hold_exclusive(path, 0.3)
    conn = sqlite3.connect(str(path), timeout=0)
    open_cache_tables(conn, TABLE)
    holder.join()
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_lock_that_stays_is_raised_after_the_attempts(tmp_path):
    path = tmp_path / "cache.sqlite"
    sqlite3.connect(str(path)).close()
    holder = hold_exclusive(path, 1.0)
    conn = sqlite3.connect(str(path), timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        open_cache_tables(conn, TABLE, attempts=2)
    holder.join()


def _open_reply_cache(path: str, start: float) -> str:
    while time.time() < start:  # every process opens the new file at the same moment
        pass
    try:
        ReplyCache(path)
    except Exception as exc:  # noqa: BLE001 - the test reports what went wrong
        return repr(exc)
    return "ok"


def test_processes_opening_a_new_reply_cache_at_once_all_succeed(tmp_path):
    """Six processes open one new reply cache at the same instant, 12 times over (before
    the fix about half such rounds had a worker fail with "database is locked")."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(6) as pool:
        pool.map(str, range(6))  # the workers are up before the clock starts
        for round_ in range(12):
            path = str(tmp_path / f"replies-{round_}.sqlite")
            start = time.time() + 0.1
            results = pool.starmap(_open_reply_cache, [(path, start)] * 6)
            assert results == ["ok"] * 6, results


def test_errors_say_lock_or_damage_naming_the_file(tmp_path):
    path = tmp_path / "x.sqlite"
    locked = cache_error(path, sqlite3.OperationalError("database is locked"), "LLM reply cache",
                         "replies that can be asked again")
    assert isinstance(locked, InputError)
    assert str(locked) == f"{path}: the LLM reply cache cannot be used (database is locked)"
    damaged = cache_error(path, sqlite3.DatabaseError("file is not a database"),
                          "LLM reply cache", "replies that can be asked again")
    assert str(damaged).startswith(f"{path}: not a usable LLM reply cache (file is not a database)")
    assert str(damaged).endswith("replies that can be asked again: delete it and re-run")
    path.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(InputError, match="not a usable LLM reply cache"):
        ReplyCache(path)
