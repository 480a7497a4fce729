"""Audit records for checklist anchors (SPEC §4.8): create, export, import, validate.

An audit record holds one annotator's verdict on one checklist item: five criterion codes
(:data:`~creagraph.tig.schema.CRITERIA`: cluster validity, visual specificity, faithfulness
to the cluster, non-leakage of the candidates, actionability), each ``"yes"``,
``"partly"``, ``"no"`` or ``""`` (not yet audited); an ``overall_action`` (``"accept"``,
``"revise"``, ``"exclude"`` or ``""``); a revision note; annotator id and ISO timestamp.

Files are CSV or JSON Lines (by suffix), written atomically through
:mod:`creagraph.core.io`; :func:`read_audit` validates every row and names the file, line
and field of a bad value. :func:`leakage_violations` checks automatically what the
*non-leakage* criterion asks of a human: that no candidate model shaped the item.

Examples
--------
>>> from creagraph.tig.schema import AuditRecord
>>> r = AuditRecord("a1", "t", "m1||m2", "anchor-1", "Does…?", "carrier-1", "plants")
>>> validate_audit_record(r.to_dict(), "<example>").overall_action
''
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, csv_cell_text, iter_jsonl, write_csv, write_jsonl
from creagraph.tig.schema import (
    ACTIONS,
    CRITERIA,
    CRITERION_CODES,
    AuditRecord,
    ChecklistAnchor,
)

__all__ = [
    "AUDIT_FIELDS",
    "audit_records_for_anchors",
    "validate_audit_record",
    "write_audit",
    "read_audit",
    "leakage_violations",
]

AUDIT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AuditRecord))
_REQUIRED = ("audit_id", "task_id", "checklist_item_id", "checklist_text", "cluster_id")


def audit_records_for_anchors(
    anchors: Iterable[ChecklistAnchor],
    *,
    annotator_id: str = "",
    timestamp: str = "",
) -> list[AuditRecord]:
    """Blank audit records (codes and action empty), one per anchor, for annotators.

    ``audit_id`` is a stable hash of the item id and annotator id.
    """
    records = []
    for anchor in anchors:
        digest = hashlib.sha1(f"{anchor.item_id}\x00{annotator_id}".encode()).hexdigest()
        records.append(
            AuditRecord(
                audit_id=f"audit-{digest[:12]}",
                task_id=anchor.task_id,
                comparison_key=anchor.comparison_key,
                checklist_item_id=anchor.item_id,
                checklist_text=anchor.text,
                cluster_id=anchor.cluster_id,
                cluster_summary=anchor.cluster_summary,
                annotator_id=annotator_id,
                timestamp=timestamp,
            )
        )
    return records


def validate_audit_record(row: Mapping[str, Any], where: str) -> AuditRecord:
    """Check one raw row and return an :class:`AuditRecord`.

    Raises
    ------
    InputError
        Naming ``where`` and the field: a missing required field, an unknown criterion
        code or action, a timestamp that is not ISO 8601, or an unknown column.
    """
    unknown = sorted(set(row) - set(AUDIT_FIELDS))
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name in AUDIT_FIELDS:
        value = row.get(name)
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise InputError(f"{where}: field {name!r} must be a string")
        values[name] = value.strip() if name != "revision_note" else value
    for name in _REQUIRED:
        if not values[name]:
            raise InputError(f"{where}: missing field {name!r}")
    for name in CRITERIA:
        values[name] = values[name].lower()
        if values[name] not in CRITERION_CODES:
            raise InputError(
                f"{where}: field {name!r} is {values[name]!r}; expected one of "
                "yes, partly, no or empty"
            )
    values["overall_action"] = values["overall_action"].lower()
    if values["overall_action"] not in ACTIONS:
        raise InputError(
            f"{where}: field 'overall_action' is {values['overall_action']!r}; expected "
            "accept, revise, exclude or empty"
        )
    if values["timestamp"]:
        try:
            datetime.fromisoformat(values["timestamp"].replace("Z", "+00:00"))
        except ValueError as exc:
            raise InputError(
                f"{where}: field 'timestamp' is not ISO 8601: {values['timestamp']!r}"
            ) from exc
    return AuditRecord(**values)


def write_audit(path: str | os.PathLike[str], records: Sequence[AuditRecord]) -> int:
    """Write audit records as ``.csv`` or ``.jsonl`` (atomically); returns the count."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return write_jsonl(p, (r.to_dict() for r in records))
    if suffix == ".csv":
        return write_csv(p, (r.to_dict() for r in records), list(AUDIT_FIELDS))
    raise InputError(f"{p}: unsupported audit file type {suffix!r} (use .csv or .jsonl)")


def read_audit(path: str | os.PathLike[str]) -> list[AuditRecord]:
    """Read and validate audit records from ``.csv`` or ``.jsonl``.

    Raises
    ------
    InputError
        Naming the file, line and field of the first bad row, or a duplicate audit id.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    suffix = p.suffix.lower()
    records: list[AuditRecord] = []
    if suffix == ".csv":
        with p.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [f for f in _REQUIRED if f not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{p}:1: missing column(s) {', '.join(missing)}")
            start = reader.line_num + 1
            for row in reader:
                if None in row:
                    raise InputError(f"{p}:{start}: more values than columns")
                row = {k: csv_cell_text(v) if isinstance(v, str) else v for k, v in row.items()}
                records.append(validate_audit_record(row, f"{p}:{start}"))
                start = reader.line_num + 1
    elif suffix in (".jsonl", ".ndjson"):
        with p.open(encoding="utf-8") as handle:
            numbers = [i for i, text in enumerate(handle, start=1) if text.strip()]
        for line, row in zip(numbers, iter_jsonl(p), strict=True):
            records.append(validate_audit_record(row, f"{p}:{line}"))
    else:
        raise InputError(f"{p}: unsupported audit file type {suffix!r} (use .csv or .jsonl)")
    seen: set[str] = set()
    for record in records:
        if record.audit_id in seen:
            raise InputError(f"{p}: duplicate audit_id {record.audit_id!r}")
        seen.add(record.audit_id)
    return records


def leakage_violations(anchor: ChecklistAnchor,
                       response_models: Mapping[str, str]) -> list[str]:
    """Reasons why a candidate of the anchor's comparison shaped it (empty when clean).

    Parameters
    ----------
    anchor : ChecklistAnchor
        An L2MO anchor (``comparison_key == "a||b"``); whole-population anchors have no
        candidates and always pass.
    response_models : mapping response_id → model
        Model of every response in the population.
    """
    if not anchor.comparison_key:
        return []
    candidates = set(anchor.comparison_key.split("||"))
    problems = []
    for name, models in (("reference", anchor.reference_models),
                         ("cluster", anchor.cluster_models)):
        leaked = sorted(candidates & set(models))
        if leaked:
            problems.append(f"candidate model(s) {leaked} in the {name} models")
    for response_id in anchor.response_ids:
        model = response_models.get(response_id)
        if model is None:
            problems.append(f"response {response_id!r} is not in the population")
        elif model in candidates:
            problems.append(f"response {response_id!r} of candidate {model!r} in provenance")
    return problems
