"""Run manifests: ``run.json`` beside every output of ``run``, ``score`` and ``tig score``
(what produced the numbers: software versions, models, prompts, settings, times).

Versions are read from the installed distributions' metadata, so writing a manifest imports
neither torch nor sentence-transformers.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from creagraph.core.io import atomic_write

__all__ = [
    "MANIFEST_NAME",
    "text_digest",
    "query_set_digest",
    "comparability",
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


#: The columns that must agree for two models' scores to be ranked together.
COMPARABILITY_COLUMNS = ("judge", "mode")


def comparability(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """Why these models' rows (leaderboard / summary rows with ``model``, ``judge``,
    ``mode``) cannot be ranked together, or ``None`` when they can.

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
        values = {str(r.get(column)) for r in rows}
        if len(values) > 1:
            listed = ", ".join(f"{r.get('model')} {r.get(column)}" for r in rows)
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
