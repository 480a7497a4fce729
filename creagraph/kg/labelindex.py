"""A local index of Wikidata names, for entity linking against an endpoint holding all of
Wikidata (issue 28).

A SPARQL endpoint with the full graph cannot scan every label with a regex, and not every
endpoint has a search service. ``creagraph kg import --labels-only`` reads the labels,
aliases and descriptions of a Wikidata dump (any N-Triples file in the truthy-dump
vocabulary: the labels dump, the truthy dump, or the slice) into one SQLite file; a
:class:`~creagraph.kg.sparql.SparqlKG` with ``search_mode="index"`` then finds candidate
names there while every statement still comes from the endpoint.

Candidates for a mention (:meth:`LabelIndex.rows`) are the names equal to it after
normalisation (:func:`~creagraph.core.text.normalize` / ``normalize_loose``) and the names
holding its rarest word (so a fuzzy match one edit away in another word is still found,
as the ``scan`` search finds it on a small graph), at most ``limit`` of them.

The file is written to a temporary sibling and renamed over the target when complete: an
interrupted build leaves the old index (or none), never half of one; a rerun starts over.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError
from creagraph.core.text import loosen, normalize

__all__ = [
    "LabelIndex",
    "LabelIndexResult",
    "build_label_index",
    "default_label_index_path",
    "name_tokens",
]

#: Names read per transaction while building.
_BATCH = 50_000
#: The file's layout version (a file of another version is refused: rebuild it).
SCHEMA_VERSION = "1"


def default_label_index_path() -> Path:
    """``$CREAGRAPH_LABEL_INDEX``, else ``labels.sqlite`` in the cache folder
    (``$CREAGRAPH_CACHE_DIR``, default ``~/.cache/creagraph``)."""
    from creagraph.core import settings

    env = settings.value("CREAGRAPH_LABEL_INDEX")
    if env:
        return Path(env).expanduser()
    return settings.cache_dir() / "labels.sqlite"


def name_tokens(loose: str) -> list[str]:
    """The distinct words of a loosely normalised name that index it (two letters or more,
    or any digit run).

    Examples
    --------
    >>> name_tokens("max von laue")
    ['max', 'von', 'laue']
    >>> name_tokens("a b 7")
    ['7']
    """
    out = []
    for word in loose.split():
        if (len(word) >= 2 or word.isdigit()) and word not in out:
            out.append(word)
    return out


@dataclass
class LabelIndexResult:
    """What :func:`build_label_index` read and wrote."""

    path: Path
    names: int = 0
    descriptions: int = 0
    entities: int = 0
    lines: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def build_label_index(
    paths: Iterable[str | os.PathLike[str]],
    target: str | os.PathLike[str],
    *,
    language: str = "en",
    strict: bool = True,
    show_progress: bool = True,
) -> LabelIndexResult:
    """Read the labels, aliases and descriptions of N-Triples dumps into a label index.

    Parameters
    ----------
    paths : paths
        ``.nt`` / ``.nt.gz`` / ``.nt.bz2`` files in the Wikidata truthy-dump vocabulary
        (:func:`creagraph.kg.ntriples.parse_dump`); statements in them are skipped.
    target : path
        The SQLite file to write (replaced whole when the build completes).
    language : str
        Language of the names kept.
    strict : bool
        A malformed line stops the build with an :class:`InputError` naming file and line
        (the target is left as it was); with ``False`` it is counted and skipped.
    show_progress : bool
        A progress bar of bytes read on stderr.

    Returns
    -------
    LabelIndexResult
    """
    from creagraph.core.progress import progress_bar
    from creagraph.kg.ntriples import Literal_, ParseReport, parse_dump

    files = [Path(p) for p in paths]
    if not files:
        raise InputError("give at least one dump file to read labels from")
    for path in files:
        if not path.is_file():
            raise InputError(f"{path}: no such dump file")
    out = Path(target)
    if out.is_dir():
        raise InputError(f"{out}: is a folder; the label index is one file")
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report = ParseReport()
    result = LabelIndexResult(out)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(fd, 0o666 & ~umask)  # the usual permissions, not a temporary file's
    os.close(fd)
    try:
        db = sqlite3.connect(tmp)
        try:
            _create(db)
            total = sum(p.stat().st_size for p in files)
            with progress_bar(
                total=total, desc="labels", unit="B", unit_scale=True, disable=not show_progress
            ) as bar:
                names: list[tuple[str, str, str, str, str]] = []
                descriptions: list[tuple[str, str]] = []
                for path in files:
                    items = parse_dump(
                        path, language=language, strict=strict, report=report, on_read=bar.update
                    )
                    for item in items:
                        if not isinstance(item, Literal_):
                            continue
                        if item.kind == "description":
                            descriptions.append((item.id, item.text))
                        else:
                            key = normalize(item.text)
                            names.append((item.id, item.kind, item.text, key, loosen(key)))
                        if len(names) + len(descriptions) >= _BATCH:
                            _flush(db, names, descriptions, result)
                _flush(db, names, descriptions, result)
            _finish(db, files, language, result)
            db.commit()
        finally:
            db.close()
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    result.lines = report.lines
    result.skipped = dict(sorted(report.skipped.items()))
    result.seconds = time.perf_counter() - started
    return result


def _create(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        PRAGMA journal_mode = OFF;
        PRAGMA synchronous = OFF;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE names (
            id TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
            key TEXT NOT NULL, loose TEXT NOT NULL
        );
        CREATE TABLE tokens (token TEXT NOT NULL, name INTEGER NOT NULL);
        CREATE TABLE descriptions (id TEXT NOT NULL, text TEXT NOT NULL);
        """
    )


def _flush(
    db: sqlite3.Connection,
    names: list[Any],
    descriptions: list[Any],
    result: LabelIndexResult,
) -> None:
    for row in names:
        cursor = db.execute("INSERT INTO names VALUES (?, ?, ?, ?, ?)", row)
        db.executemany(
            "INSERT INTO tokens VALUES (?, ?)",
            [(t, cursor.lastrowid) for t in name_tokens(row[4])],
        )
    db.executemany("INSERT INTO descriptions VALUES (?, ?)", descriptions)
    result.names += len(names)
    result.descriptions += len(descriptions)
    names.clear()
    descriptions.clear()


def _finish(
    db: sqlite3.Connection, files: list[Path], language: str, result: LabelIndexResult
) -> None:
    db.executescript(
        """
        CREATE INDEX names_key ON names (key);
        CREATE INDEX names_loose ON names (loose);
        CREATE INDEX tokens_token ON tokens (token);
        CREATE INDEX descriptions_id ON descriptions (id);
        CREATE TABLE token_counts AS SELECT token, COUNT(*) AS n FROM tokens GROUP BY token;
        CREATE UNIQUE INDEX token_counts_token ON token_counts (token);
        """
    )
    (result.entities,) = db.execute("SELECT COUNT(DISTINCT id) FROM names").fetchone()
    meta = {
        "schema": SCHEMA_VERSION,
        "language": language,
        "sources": "\n".join(str(p.resolve()) for p in files),
        "names": str(result.names),
        "entities": str(result.entities),
    }
    db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))


class LabelIndex:
    """Read a label index written by :func:`build_label_index`.

    Parameters
    ----------
    path : path
        The index file; a missing file or one that is not a label index raises
        :class:`InputError` saying how to build it.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(
                f"{self.path}: no label index; build one with "
                "`creagraph kg import --labels-only DUMP --label-index FILE`"
            )
        try:
            self._db = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, check_same_thread=False
            )
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.path}: not a creagraph label index ({exc})") from exc
        if meta.get("schema") != SCHEMA_VERSION:
            raise InputError(
                f"{self.path}: label index of layout {meta.get('schema')!r}, expected "
                f"{SCHEMA_VERSION!r}: rebuild it with `creagraph kg import --labels-only`"
            )
        self.language = meta.get("language", "")
        self.names = int(meta.get("names", 0))

    def close(self) -> None:
        self._db.close()

    def rows(self, text: str, limit: int = 1000) -> list[tuple[str, str, str]]:
        """Candidate ``(id, kind, text)`` names for the mention ``text``: every name equal
        to it after normalisation, then up to ``limit`` names holding its rarest indexed
        word (``kind`` is ``label`` or ``alias``)."""
        key = normalize(text)
        loose = loosen(key)
        if not key:
            return []
        seen: dict[tuple[str, str, str], None] = {}
        for row in self._db.execute(
            "SELECT id, kind, text FROM names WHERE key = ? OR loose = ? ORDER BY rowid",
            (key, loose),
        ):
            seen.setdefault(row, None)
        rare = self._rarest(name_tokens(loose))
        if rare is not None:
            for row in self._db.execute(
                "SELECT n.id, n.kind, n.text FROM tokens t JOIN names n ON n.rowid = t.name "
                "WHERE t.token = ? ORDER BY t.name LIMIT ?",
                (rare, int(limit)),
            ):
                seen.setdefault(row, None)
        return list(seen)

    def _rarest(self, tokens: list[str]) -> str | None:
        counts = []
        for token in tokens:
            found = self._db.execute(
                "SELECT n FROM token_counts WHERE token = ?", (token,)
            ).fetchone()
            if found is not None:
                counts.append((found[0], -len(token), token))
        return min(counts)[2] if counts else None
