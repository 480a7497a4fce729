"""Population novelty beside within-model repetition in the report (SPEC §4.10, issue 27).

``creagraph tig score --summary FILE`` writes one JSON object ``{"models": [...]}``: per
model, the novelty mean with its bootstrap interval, the plain-distance mean and the
*distinct share* — the mean over tasks of (distinct ideas / responses) among the model's
own samples (NoveltyBench's distinct-k idea). A model that repeats the same ideas across
samples has a low distinct share however novel each idea is against the population, so
the report shows the two side by side: population novelty alone would make such a model
look as novel as one that does not repeat itself.

``creagraph report --tig FILE`` accepts such a summary beside cluster and anchor files
(:func:`split_tig_summaries`); the section is shown only when one is given.

Examples
--------
>>> rows = [{"model": "m", "n_responses": 10, "n_tasks": 2, "novelty_mean": 0.5,
...          "ci_low": 0.4, "ci_high": 0.6, "distance_mean": 0.3, "distinct_share": 0.7}]
>>> [r["cells"] for r in repetition_rows(rows, source="s.json")]
[['1', 'm', '0.500', '[0.400, 0.600]', '0.300', '0.70', '0.30', '10', 's.json']]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError

__all__ = ["is_tig_summary", "read_tig_summary", "split_tig_summaries", "repetition_rows"]

PathLike = str | os.PathLike[str]

#: Fields every model row of a ``tig score --summary`` file has.
_NUMBERS = ("novelty_mean", "distance_mean")


def _first_object(path: Path) -> Any:
    """The file parsed as one JSON value (``None`` when it is not one)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def is_tig_summary(path: PathLike) -> bool:
    """True for a file holding one JSON object with a ``models`` list (what ``tig score
    --summary`` writes); a JSONL file of clusters or anchors is not one."""
    p = Path(path)
    if not p.is_file():
        return False
    value = _first_object(p)
    return isinstance(value, dict) and isinstance(value.get("models"), list) \
        and "task_id" not in value


def _number_or_none(value: Any, where: str, name: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InputError(f"{where}: field {name!r} is not a number")
    return float(value)


def read_tig_summary(path: PathLike) -> list[dict[str, Any]]:
    """The model rows of a ``tig score --summary`` file, checked; each row gets
    ``source`` (the file name).

    Raises
    ------
    InputError
        Naming the file, the row and the field when a row lacks a model name, a count or a
        finite novelty mean, or has a distinct share outside [0, 1].
    """
    p = Path(path)
    value = _first_object(p)
    if not (isinstance(value, dict) and isinstance(value.get("models"), list)):
        raise InputError(f"{p}: not a `creagraph tig score --summary` file "
                         "(one JSON object with a 'models' list)")
    rows = []
    for number, row in enumerate(value["models"], start=1):
        where = f"{p}: model row {number}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: not an object")
        if not isinstance(row.get("model"), str) or not row["model"]:
            raise InputError(f"{where}: field 'model' is missing or not a string")
        n = row.get("n_responses")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InputError(f"{where}: field 'n_responses' is missing or not a count")
        clean = dict(row)
        for name in _NUMBERS:
            found = _number_or_none(row.get(name), where, name)
            if found is None or not math.isfinite(found):
                raise InputError(f"{where}: field {name!r} is missing or not a finite number")
            clean[name] = found
        for name in ("ci_low", "ci_high"):
            clean[name] = _number_or_none(row.get(name), where, name)
        share = _number_or_none(row.get("distinct_share"), where, "distinct_share")
        if share is not None and not 0.0 <= share <= 1.0:
            raise InputError(f"{where}: field 'distinct_share' {share!r} is not in [0, 1]")
        clean["distinct_share"] = share
        clean["source"] = p.name
        rows.append(clean)
    return rows


def split_tig_summaries(
    items: Sequence[PathLike],
) -> tuple[list[dict[str, Any]], list[Path]]:
    """``(summary rows, the other items)``: the ``--tig`` items that are ``tig score
    --summary`` files are read here; the rest (cluster and anchor files or folders) are
    returned for :func:`creagraph.report.inputs.read_tig`."""
    rows: list[dict[str, Any]] = []
    others: list[Path] = []
    for item in items:
        p = Path(item)
        if p.suffix.casefold() == ".json" and is_tig_summary(p):
            rows.extend(read_tig_summary(p))
        else:
            others.append(p)
    return rows, others


def _fmt(value: float | None, digits: int) -> str:
    if value is None or value != value:
        return "–"
    return f"{value:.{digits}f}"


def repetition_rows(rows: Sequence[Mapping[str, Any]], *,
                    source: str | None = None) -> list[dict[str, Any]]:
    """Table rows (``{"cells", "data"}``, the report's ``table`` macro) ranked by novelty
    mean: rank, model, novelty mean, 95 % interval, plain distance, distinct share, its
    complement (the repeated share), responses and the summary file."""
    ranked = sorted(rows, key=lambda r: (-float(r["novelty_mean"]), str(r["model"])))
    out = []
    for rank, row in enumerate(ranked, start=1):
        share = row.get("distinct_share")
        interval = f"[{_fmt(row.get('ci_low'), 3)}, {_fmt(row.get('ci_high'), 3)}]"
        out.append({
            "cells": [str(rank), str(row["model"]), _fmt(row["novelty_mean"], 3), interval,
                      _fmt(row.get("distance_mean"), 3), _fmt(share, 2),
                      _fmt(None if share is None else 1.0 - share, 2),
                      str(row["n_responses"]), source or str(row.get("source", ""))],
            "data": {"model": row["model"]},
        })
    return out
