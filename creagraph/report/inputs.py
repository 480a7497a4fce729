"""Reading the plain files the report is built from, checked at the boundary.

Every reader takes the files (or output directories) the jobs write and returns plain
records; errors are :class:`~creagraph.core.io.InputError` naming the file, record and
field. Nothing here imports the scoring or TIG jobs: their files are the interface.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, read_jsonl, read_records
from creagraph.core.records import QueryRecord

__all__ = ["read_distinct", "read_ekphrasis", "read_query_relations", "read_scored",
           "read_tig"]

PathLike = str | os.PathLike[str]


def _require(record: dict[str, Any], where: str, name: str, kind: type | tuple) -> Any:
    value = record.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"{where}: field {name!r} is missing or not a {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: Any, where: str, field: str) -> None:
    """A number that is NaN or infinite would silently poison means and intervals."""
    if _number(value) and not math.isfinite(value):
        raise InputError(f"{where}: field {field}: {value!r} is not a finite number")


def read_scored(results: Sequence[PathLike]) -> list[dict[str, Any]]:
    """Scored queries from ``creagraph score`` output directories or ``queries.jsonl`` files.

    Each record needs ``model`` (text) and ``utility`` with numeric ``"0.7"`` and ``"0.9"``.
    A model found in two of the given results is an error (its queries would be merged
    silently otherwise). Each record gets its ``query_set`` by the rule of
    :mod:`creagraph.core.manifest`, each file taken as one ``score`` run (the union of its
    queries where the records name no set).
    """
    from creagraph.core.manifest import fill_query_sets

    queries: list[dict[str, Any]] = []
    owner: dict[str, Path] = {}
    for item in results:
        path = Path(item)
        path = path / "queries.jsonl" if path.is_dir() else path
        if not path.exists():
            raise InputError(f"{path}: file not found (expected `creagraph score` output)")
        records = read_jsonl(path)
        for number, record in enumerate(records, start=1):
            model = _checked_query(record, f"{path}: record {number}").model
            if owner.setdefault(model, path) != path:
                raise InputError(
                    f"model {model!r} is in both {owner[model]} and {path}: "
                    "give each model's scores once"
                )
        queries.extend(fill_query_sets(records))
    return queries


def _checked_query(record: dict[str, Any], where: str) -> QueryRecord:
    """A ``queries.jsonl`` record read as a :class:`QueryRecord`, with what the report
    needs checked: ``model`` text, numeric ``utility`` at γ = 0.7 and 0.9, finite numbers,
    an object of counts for ``triple_status``."""
    _require(record, where, "model", str)
    _require(record, where, "utility", dict)
    q = QueryRecord.from_dict(record, where)
    for gamma in ("0.7", "0.9"):
        if not _number(q.utility.get(gamma)):
            raise InputError(f"{where}: field 'utility' has no number for γ = {gamma}")
    for gamma, value in q.utility.items():
        _finite(value, where, f"'utility' (γ = {gamma})")
    if q.utility_curve is not None and not isinstance(q.utility_curve, dict):
        raise InputError(f"{where}: field 'utility_curve' is not an object")
    for gamma, value in (q.utility_curve or {}).items():
        _finite(value, where, f"'utility_curve' (γ = {gamma})")
    for name in ("max_quality", "mean_pairwise_distance", "mean_pairwise_raw_distance"):
        _finite(getattr(q, name), where, repr(name))
    status = q.triple_status
    if status is not None and not (
        isinstance(status, dict) and all(_number(v) for v in status.values())
    ):
        raise InputError(f"{where}: field 'triple_status' is not an object of counts")
    return q


def read_distinct(directory: PathLike) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``distinct_paths.jsonl`` and ``distinct_summary.csv`` of ``creagraph distinct``.

    Returns the per-path records (``model``, ``nu``) and the per-model summary with
    ``avg_nu`` / ``max_nu`` as floats (``None`` where empty).
    """
    d = Path(directory)
    if not (d / "distinct_paths.jsonl").exists():
        raise InputError(f"{d / 'distinct_paths.jsonl'}: file not found")
    paths = read_jsonl(d / "distinct_paths.jsonl")
    for number, record in enumerate(paths, start=1):
        where = f"{d / 'distinct_paths.jsonl'}: record {number}"
        _require(record, where, "model", str)
        if record.get("nu") is not None and not _number(record["nu"]):
            raise InputError(f"{where}: field 'nu' is not a number")
        _finite(record.get("nu"), where, "'nu'")
    summary = read_records(d / "distinct_summary.csv")
    for number, row in enumerate(summary, start=2):
        where = f"{d / 'distinct_summary.csv'}: line {number}"
        if not row.get("model"):
            raise InputError(f"{where}: field 'model' is empty")
        for key in ("avg_nu", "max_nu"):
            value = row.get(key)
            if value in (None, ""):
                row[key] = None
                continue
            try:
                row[key] = float(value)
            except (TypeError, ValueError):
                raise InputError(f"{where}: field {key!r} is not a number: {value!r}") from None
            _finite(row[key], where, repr(key))
    return paths, summary


def read_tig(items: Sequence[PathLike]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Cliché clusters and checklist anchors from ``creagraph tig clusters|anchors`` output.

    ``items`` are JSONL files, or directories whose ``clusters.jsonl`` / ``anchors.jsonl``
    are read. A record with ``item_id`` is an anchor, one with ``id`` a cluster; both need
    ``task_id`` and a numeric ``cliche_score``.
    """
    files: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = [p / n for n in ("clusters.jsonl", "anchors.jsonl") if (p / n).exists()]
            if not found:
                raise InputError(f"{p}: no clusters.jsonl or anchors.jsonl in this directory")
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            raise InputError(f"{p}: file not found")
    clusters: list[dict[str, Any]] = []
    anchors: list[dict[str, Any]] = []
    for path in files:
        for number, record in enumerate(read_jsonl(path), start=1):
            where = f"{path}: record {number}"
            _require(record, where, "task_id", str)
            if not _number(record.get("cliche_score")):
                raise InputError(f"{where}: field 'cliche_score' is missing or not a number")
            _finite(record["cliche_score"], where, "'cliche_score'")
            if "item_id" in record:
                anchors.append(record)
            elif "id" in record:
                clusters.append(record)
            else:
                raise InputError(
                    f"{where}: neither a cluster (field 'id') nor an anchor (field 'item_id')"
                )
    return clusters, anchors


def read_query_relations(items: Sequence[PathLike]) -> list[dict[str, Any]]:
    """Records that say which relation each query's source path is built on: generated
    queries (``creagraph queries generate`` JSONL) or CREATE answer files (any format
    :func:`~creagraph.core.io.read_records` reads). See
    :func:`creagraph.report.tables.source_relations` for the fields used."""
    records: list[dict[str, Any]] = []
    for item in items:
        records.extend(read_records(item))
    return records


def read_ekphrasis(directories: Sequence[PathLike]) -> list[dict[str, Any]]:
    """The output folders of ``creagraph tig judge`` (one per dimension): each folder's
    leaderboard rows, diagnostics and the anchors its comparisons used (with provenance).

    Raises
    ------
    InputError
        When a folder lacks ``leaderboard.csv``, ``diagnostics.json`` or
        ``comparisons.jsonl``, or a file is malformed (file and line named).
    """
    import json

    runs = []
    for item in directories:
        folder = Path(item)
        for name in ("leaderboard.csv", "diagnostics.json", "comparisons.jsonl"):
            if not (folder / name).is_file():
                raise InputError(f"{folder}: no {name} (not a `creagraph tig judge` output)")
        try:
            diagnostics = json.loads((folder / "diagnostics.json").read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(f"{folder / 'diagnostics.json'}: malformed JSON ({exc})") from None
        if not isinstance(diagnostics, dict) or "dimension" not in diagnostics:
            raise InputError(f"{folder / 'diagnostics.json'}: field 'dimension' is missing")
        anchors: dict[str, dict[str, Any]] = {}
        uses: dict[str, int] = {}
        for record in read_jsonl(folder / "comparisons.jsonl"):
            for anchor in record.get("anchor_provenance") or []:
                key = str(anchor.get("anchor_id"))
                uses[key] = uses.get(key, 0) + 1
                if key not in anchors:
                    text = next((a.get("text") for a in record.get("anchors") or []
                                 if a.get("anchor_id") == key), "")
                    anchors[key] = {**anchor, "text": text, "task_id": record.get("task_id"),
                                    "reference_models": record.get("reference_models", [])}
        for key, anchor in anchors.items():
            anchor["n_comparisons"] = uses[key]
        runs.append({"dir": str(folder), "dimension": diagnostics["dimension"],
                     "leaderboard": read_records(folder / "leaderboard.csv"),
                     "diagnostics": diagnostics,
                     "anchors": sorted(anchors.values(),
                                       key=lambda a: (-a["n_comparisons"], a["anchor_id"]))})
    return runs
