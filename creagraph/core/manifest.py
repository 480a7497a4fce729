"""Run manifests: ``run.json`` beside every output of ``run``, ``score`` and ``tig score``
(what produced the numbers: software versions, models, prompts, settings, times).

Versions are read from the installed distributions' metadata, so writing a manifest imports
neither torch nor sentence-transformers.

What makes two models' scores comparable (issue 24) is decided here, in one place:
:data:`COMPARABILITY_COLUMNS` (judge, mode, query set) must agree, or the models are never
ranked together (``report`` shows one table per group). **The query set** a model was scored
on is, in this order:

1. *named*: ``score --query-set FILE`` (``eval create`` names its QUERIES file) — the digest
   of that file's query texts; an answered query outside it is refused;
2. *declared*: the ``query_set`` field of the answer rows — ``run create`` writes the digest
   of the whole QUERIES file it was run on (with ``query_set_size``), so a run whose failed
   requests are still missing names the set it was asked, not the subset it answered;
3. otherwise *the union of the queries answered in the same* ``score`` *run* (every answer
   file scored together without 1 or 2 shares it): the published sample outputs answer
   different subsets of 22 published queries (20 each) and, scored together, are compared
   on those 22; scored in separate runs, they name different sets.

The digest is :func:`query_set_digest` (order, case, accents, punctuation and spacing of
the texts do not matter). :class:`QuerySetTally` applies the rule to streamed records
(``summary.csv``) and :func:`fill_query_sets` to records in memory (the report).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from creagraph.core.io import atomic_write

__all__ = [
    "MANIFEST_NAME",
    "text_digest",
    "query_set_digest",
    "query_set_identity",
    "declared_query_set",
    "QuerySetTally",
    "fill_query_sets",
    "read_query_set",
    "named_query_set",
    "comparability",
    "comparison_key",
    "COMPARABILITY_COLUMNS",
    "software_versions",
    "git_commit",
    "run_manifest",
    "write_manifest",
]

MANIFEST_NAME = "run.json"
_PACKAGES = ("creagraph", "torch", "sentence-transformers", "httpx", "numpy")


def text_digest(text: str) -> str:
    """``sha256:<hex>`` of a text (a prompt's or a template's identity).

    Examples
    --------
    >>> text_digest("abc")[:15]
    'sha256:ba7816bf'
    """
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def query_set_digest(queries: Iterable[Any]) -> str:
    """The identity of a set of CREATE queries: the first 16 hex digits of the SHA-256 of
    their distinct loosely normalised texts, sorted (order, case, accents, punctuation and
    spacing do not matter; a changed word does).

    Examples
    --------
    >>> query_set_digest(["How are A and B linked?", "Q2"]) == query_set_digest(
    ...     ["q2", "how are a and b  linked"])
    True
    """
    from creagraph.core.text import normalize_loose

    texts = sorted({normalize_loose(q) for q in queries if isinstance(q, str)})
    joined = "\n".join(texts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(joined).hexdigest()[:16]


def query_set_identity(queries: Iterable[Any]) -> tuple[str, int]:
    """``(digest, size)`` of a set of query texts: :func:`query_set_digest` and the number
    of distinct texts it covers (after the same normalisation).

    Examples
    --------
    >>> query_set_identity(["Q1?", "q1", "Q2"])[1]
    2
    """
    from creagraph.core.text import normalize_loose

    texts = {normalize_loose(q) for q in queries if isinstance(q, str)}
    return query_set_digest(texts), len(texts)


def declared_query_set(record: Mapping[str, Any]) -> tuple[str, int | None] | None:
    """The query set a record names itself (rule 1 or 2 of the module's rule): its
    ``query_set`` (a non-empty text) and ``query_set_size`` (when a whole number), or
    ``None`` when it names none (rule 3 applies).

    Examples
    --------
    >>> declared_query_set({"query_set": "ab12", "query_set_size": 24})
    ('ab12', 24)
    >>> declared_query_set({"query": "Q?"}) is None
    True
    """
    value = record.get("query_set")
    if not isinstance(value, str) or not value.strip():
        return None
    size = record.get("query_set_size")
    return value.strip(), size if isinstance(size, int) and not isinstance(size, bool) else None


class QuerySetTally:
    """The module's query-set rule over records read one at a time (the records of one
    ``score`` run): :meth:`add` each record, then :meth:`resolve` gives every model's
    ``query_set`` and ``query_set_size``. Memory: the distinct query texts, never the
    records.

    Examples
    --------
    >>> tally = QuerySetTally()
    >>> for model, query in (("a", "Q1"), ("a", "Q2"), ("b", "Q2"), ("b", "Q3")):
    ...     tally.add({"model": model, "query": query})
    >>> sets = tally.resolve()
    >>> sets["a"] == sets["b"], sets["a"]["query_set_size"]  # the run's union: Q1, Q2, Q3
    (True, 3)
    """

    def __init__(self) -> None:
        self.texts: set[str] = set()
        self.named: dict[str, set[tuple[str, int | None] | None]] = {}

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one scored (or answer) record with ``model`` and ``query``."""
        query = record.get("query")
        if isinstance(query, str):
            self.texts.add(query)
        self.named.setdefault(str(record.get("model")), set()).add(declared_query_set(record))

    def resolve(self) -> dict[str, dict[str, Any]]:
        """``model → {"query_set": …, "query_set_size": …}``; a model whose records name
        several sets gets them joined by ``+`` (and no size): it matches no other model."""
        union = query_set_identity(self.texts)
        out: dict[str, dict[str, Any]] = {}
        for model, named in self.named.items():
            sets = {union if n is None else n for n in named}
            digests = sorted({d for d, _ in sets})
            sizes = {s for _, s in sets}
            out[model] = {
                "query_set": "+".join(digests),
                "query_set_size": sizes.pop() if len(digests) == 1 and len(sizes) == 1 else None,
            }
        return out


def fill_query_sets(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records (scored queries of one ``score`` run), each with ``query_set`` and
    ``query_set_size`` set by the module's rule: a record that names its set keeps it;
    the others get the union of the run's query texts. Records are updated in place.

    Examples
    --------
    >>> rows = fill_query_sets([{"model": "a", "query": "Q1"}, {"model": "b", "query": "Q2"}])
    >>> rows[0]["query_set"] == rows[1]["query_set"], rows[0]["query_set_size"]
    (True, 2)
    """
    rows = list(records)
    tally = QuerySetTally()
    for row in rows:
        tally.add(row)
    union = query_set_identity(tally.texts)
    for row in rows:
        named = declared_query_set(row)
        row["query_set"], row["query_set_size"] = union if named is None else named
    return rows


def read_query_set(path: str | os.PathLike[str]) -> tuple[str, int, frozenset[str]]:
    """A query set named by a file (rule 1): ``(digest, size, normalised texts)`` of the
    ``query`` fields of any record file (``queries generate`` output, a published answer
    file, an export of the 931-query set); an error names the file and row."""
    from creagraph.core.io import InputError, iter_records
    from creagraph.core.text import normalize_loose

    texts = []
    for number, record in enumerate(iter_records(path), start=1):
        query = record.get("query") if isinstance(record, dict) else None
        if not isinstance(query, str) or not query.strip():
            raise InputError(f"{path}: row {number}: field 'query' is missing or empty")
        texts.append(query)
    if not texts:
        raise InputError(f"{path}: no queries")
    digest, size = query_set_identity(texts)
    return digest, size, frozenset(normalize_loose(t) for t in texts)


def named_query_set(rows: Iterable[Any], path: str | os.PathLike[str]) -> Iterator[Any]:
    """The answer rows (:class:`creagraph.scoring.inputs.AnswerRow`) of a ``score`` run
    whose query set is named by the file ``path`` (rule 1): each row's ``extra`` gets that
    set's ``query_set`` and ``query_set_size``; a row whose query is not in the set is an
    :class:`~creagraph.core.io.InputError` naming its file and line."""
    from creagraph.core.io import InputError
    from creagraph.core.text import normalize_loose

    digest, size, allowed = read_query_set(path)
    for row in rows:
        if normalize_loose(row.query) not in allowed:
            raise InputError(
                f"{row.source}: line {row.line}: query {row.query!r} is not in the query set "
                f"{path} (every answered query must be one of its queries)"
            )
        row.extra["query_set"], row.extra["query_set_size"] = digest, size
        yield row


#: The columns that must agree for two models' scores to be ranked together.
COMPARABILITY_COLUMNS = ("judge", "mode", "query_set")


def comparison_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The values of :data:`COMPARABILITY_COLUMNS` of a leaderboard / summary row: rows
    with equal keys may be ranked together.

    Examples
    --------
    >>> comparison_key({"judge": "kg", "mode": "paper", "query_set": "ab12"})
    ('kg', 'paper', 'ab12')
    """
    return tuple(str(row.get(column) or "unknown") for column in COMPARABILITY_COLUMNS)


def comparability(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """Why these models' rows (leaderboard / summary rows with ``model``, ``judge``,
    ``mode``, ``query_set``) cannot be ranked together, or ``None`` when they can.

    Examples
    --------
    >>> comparability([{"model": "a", "judge": "kg", "mode": "paper"},
    ...                {"model": "b", "judge": "stored", "mode": "paper"}])
    'judge differs: a kg, b stored'
    >>> comparability([{"model": "a", "judge": "kg", "mode": "paper"}]) is None
    True
    """
    rows = list(rows)
    for column in COMPARABILITY_COLUMNS:
        values = {str(r.get(column) or "unknown") for r in rows}
        if len(values) > 1:
            listed = ", ".join(f"{r.get('model')} {r.get(column) or 'unknown'}" for r in rows)
            return f"{column} differs: {listed}"
    return None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    """The commit of the creagraph checkout that is running, when it is a git checkout
    (with ``+dirty`` when it has uncommitted changes); ``None`` otherwise."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def software_versions() -> dict[str, Any]:
    """Python, platform and the versions of creagraph and its numeric dependencies."""
    out: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    for name in _PACKAGES:
        out[name] = _version(name)
    out["git_commit"] = git_commit()
    return out


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def run_manifest(
    command: str,
    *,
    started: float,
    ended: float | None = None,
    settings: Mapping[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A manifest record.

    Parameters
    ----------
    command : str
        ``"run create"``, ``"score"``, ``"tig score"``, …
    started, ended : float
        ``time.time()`` at the start and end (``ended`` defaults to now).
    settings : mapping, optional
        The run's settings (plain JSON values).
    **fields
        Anything else worth recording: ``embedder``, ``judge``, ``judge_prompt_digest``,
        ``endpoint_model``, ``sampling``, ``requests`` …
    """
    ended = time.time() if ended is None else ended
    return {
        "command": command,
        "software": software_versions(),
        "started": _iso(started),
        "ended": _iso(ended),
        "seconds": round(ended - started, 3),
        "settings": dict(settings or {}),
        **fields,
    }


def write_manifest(
    out_dir: str | os.PathLike[str], manifest: Mapping[str, Any], *, name: str = MANIFEST_NAME
) -> Path:
    """Write ``run.json`` (or ``name``) in ``out_dir`` atomically; returns its path."""
    path = Path(out_dir) / name
    with atomic_write(path) as handle:
        handle.write(json.dumps(dict(manifest), indent=2, ensure_ascii=False, default=str) + "\n")
    return path
