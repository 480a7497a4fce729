"""Human Creativity Benchmark (HCB) files: reading, validation and writing (SPEC §5).

An HCB directory holds five CSV files (UTF-8, header row, comma-separated) sharing
``prompt_id``. Column names are matched exactly; extra columns are ignored.

``prompts_workflow.csv`` (required)
    ``prompt_id`` (unique), ``domain`` (free text, e.g. ``poster``), ``stage`` ∈
    {``ideation``, ``mockup``, ``refinement``} (the phase), ``prompt`` (text); optional
    ``input_image`` (path or URL, may be blank).
``model_outputs.csv`` (optional)
    ``prompt_id``, ``model``, ``output`` (text or path; a blank cell is an *empty
    response*: it loses every comparison against a non-empty response and ties another
    empty one, SPEC §5).
``pairwise_comparisons.csv`` (required)
    ``prompt_id``, ``evaluator_id``, ``model_a``, ``model_b`` (shown left / right),
    ``chosen`` (the preferred model's name, ``tie``, or blank = no preference, counted as
    a tie); optional ``evaluator_core_skill`` (e.g. ``designer``) and ``dimension``
    (the judged dimension, e.g. ``overall``, ``novelty``; default ``overall``: one
    Bradley–Terry model per dimension).
``scalar_feedback.csv`` (required)
    ``prompt_id``, ``evaluator_id``, ``model``, ``prompt_adherence``, ``usability``,
    ``visual_appeal`` (integers 1–5; blank = not rated; ``nan``/``inf`` are errors).
``qualitative_feedback.csv`` (optional)
    ``prompt_id``, ``evaluator_id``, ``model``, ``theme``, ``sentiment`` ∈ {``positive``,
    ``neutral``, ``negative``, ``mixed``}, ``quote`` (may be blank).

A missing required file, or a bad cell, raises :class:`creagraph.core.io.InputError`
naming the file (and line and column).

The analysis is :mod:`creagraph.judgments.hcb` (which re-exports these names).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, atomic_write, iter_csv_lines, write_records

__all__ = [
    "STAGES",
    "AXES",
    "SENTIMENTS",
    "HCB_FILES",
    "HCB_COLUMNS",
    "HCBData",
    "read_hcb",
    "write_hcb",
    "write_table",
]

STAGES = ("ideation", "mockup", "refinement")
AXES = ("prompt_adherence", "usability", "visual_appeal")
SENTIMENTS = ("positive", "neutral", "negative", "mixed")

HCB_FILES = {
    "prompts": "prompts_workflow.csv",
    "outputs": "model_outputs.csv",
    "pairwise": "pairwise_comparisons.csv",
    "scalar": "scalar_feedback.csv",
    "qualitative": "qualitative_feedback.csv",
}
# required columns, then optional ones
HCB_COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "prompts": (("prompt_id", "domain", "stage", "prompt"), ("input_image",)),
    "outputs": (("prompt_id", "model", "output"), ()),
    "pairwise": (
        ("prompt_id", "evaluator_id", "model_a", "model_b", "chosen"),
        ("evaluator_core_skill", "dimension"),
    ),
    "scalar": (("prompt_id", "evaluator_id", "model", *AXES), ()),
    "qualitative": (("prompt_id", "evaluator_id", "model", "theme", "sentiment", "quote"), ()),
}


@dataclass
class HCBData:
    """The five HCB tables as lists of plain records (see the module docstring).

    ``outputs`` records carry an ``empty`` flag; ``scalar`` axis values are floats (NaN =
    not rated); ``pairwise`` records always have ``dimension`` and
    ``evaluator_core_skill`` (blank when absent).
    """

    prompts: list[dict[str, Any]]
    outputs: list[dict[str, Any]] = field(default_factory=list)
    pairwise: list[dict[str, Any]] = field(default_factory=list)
    scalar: list[dict[str, Any]] = field(default_factory=list)
    qualitative: list[dict[str, Any]] = field(default_factory=list)

    def prompt_index(self) -> dict[str, dict[str, Any]]:
        return {p["prompt_id"]: p for p in self.prompts}

    def empty_outputs(self) -> set[tuple[str, str]]:
        """(prompt_id, model) pairs whose response was empty."""
        return {(o["prompt_id"], o["model"]) for o in self.outputs if o["empty"]}


# --------------------------------------------------------------------------- reading


def _read_table(path: Path, kind: str) -> Iterable[tuple[int, dict[str, str]]]:
    """Rows of one HCB file with their line numbers (the package's one CSV reader,
    :func:`creagraph.core.io.iter_csv_lines`), cells stripped, ``None`` as blank."""
    required, _ = HCB_COLUMNS[kind]
    for line, row in iter_csv_lines(path, required=required):
        yield line, {k: (v or "").strip() for k, v in row.items() if k}


def _need(path: Path, line: int, row: dict[str, str], col: str) -> str:
    value = row.get(col, "")
    if value == "":
        raise InputError(f"{path}:{line}: column {col!r}: empty value")
    return value


def read_hcb(directory: str | os.PathLike[str]) -> HCBData:
    """Read and validate an HCB directory (layout in the module docstring).

    Parameters
    ----------
    directory : path-like

    Returns
    -------
    HCBData

    Raises
    ------
    InputError
        Missing required file (``prompts_workflow.csv``, ``pairwise_comparisons.csv``,
        ``scalar_feedback.csv``) or column, unknown ``prompt_id``, bad stage, rating
        (including ``nan``/``inf``), chosen or sentiment cell — naming the file, line and
        column.

    Examples
    --------
    >>> data = read_hcb("hcb/")  # doctest: +SKIP
    """
    d = Path(directory)
    _check_directory(d)
    prompts = _read_prompts(d / HCB_FILES["prompts"])
    known = {p["prompt_id"] for p in prompts}
    data = HCBData(prompts=prompts)
    path = d / HCB_FILES["outputs"]
    if path.exists():
        data.outputs = _read_outputs(path, known)
    data.pairwise = _read_pairwise(d / HCB_FILES["pairwise"], known)
    data.scalar = _read_scalar(d / HCB_FILES["scalar"], known)
    path = d / HCB_FILES["qualitative"]
    if path.exists():
        data.qualitative = _read_qualitative(path, known)
    for kind in ("pairwise", "scalar"):
        if not getattr(data, kind):
            raise InputError(f"{d / HCB_FILES[kind]}: no rows")
    return data


def _check_directory(d: Path) -> None:
    """An HCB directory with its three required files."""
    if not d.is_dir():
        raise InputError(f"{d}: not a directory (expected the five HCB CSV files)")
    for kind in ("prompts", "pairwise", "scalar"):
        if not (d / HCB_FILES[kind]).exists():
            raise InputError(
                f"{d / HCB_FILES[kind]}: file not found (required; an HCB directory holds "
                f"{', '.join(HCB_FILES.values())})"
            )


def _known_pid(path: Path, line: int, row: dict[str, str], known: set[str]) -> str:
    """The row's ``prompt_id``, which must be one of ``prompts_workflow.csv``."""
    pid = _need(path, line, row, "prompt_id")
    if pid not in known:
        raise InputError(
            f"{path}:{line}: column 'prompt_id': {pid!r} is not in {HCB_FILES['prompts']}"
        )
    return pid


def _read_prompts(p_path: Path) -> list[dict[str, Any]]:
    """``prompts_workflow.csv``: unique ids, a known stage."""
    prompts: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line, row in _read_table(p_path, "prompts"):
        pid = _need(p_path, line, row, "prompt_id")
        if pid in seen:
            raise InputError(f"{p_path}:{line}: column 'prompt_id': duplicate id {pid!r}")
        seen.add(pid)
        stage = _need(p_path, line, row, "stage").lower()
        if stage not in STAGES:
            raise InputError(
                f"{p_path}:{line}: column 'stage': {row['stage']!r} is not one of {list(STAGES)}"
            )
        prompts.append(
            {
                "prompt_id": pid,
                "domain": _need(p_path, line, row, "domain"),
                "stage": stage,
                "prompt": row.get("prompt", ""),
                "input_image": row.get("input_image", ""),
            }
        )
    return prompts


def _read_outputs(path: Path, known: set[str]) -> list[dict[str, Any]]:
    """``model_outputs.csv``: a blank output is an empty response."""
    return [
        {
            "prompt_id": _known_pid(path, line, row, known),
            "model": _need(path, line, row, "model"),
            "output": row["output"],
            "empty": row["output"] == "",
        }
        for line, row in _read_table(path, "outputs")
    ]


def _read_pairwise(path: Path, known: set[str]) -> list[dict[str, Any]]:
    """``pairwise_comparisons.csv``: two different models, ``chosen`` one of them, ``tie``
    or blank."""
    rows = []
    for line, row in _read_table(path, "pairwise"):
        pid = _known_pid(path, line, row, known)
        a = _need(path, line, row, "model_a")
        b = _need(path, line, row, "model_b")
        if a == b:
            raise InputError(f"{path}:{line}: column 'model_b': same model as model_a ({a!r})")
        chosen = row["chosen"]
        if chosen not in (a, b, "") and chosen.lower() != "tie":
            raise InputError(
                f"{path}:{line}: column 'chosen': {chosen!r} is neither model_a ({a!r}), "
                f"model_b ({b!r}), 'tie' nor blank"
            )
        rows.append(
            {
                "prompt_id": pid,
                "evaluator_id": _need(path, line, row, "evaluator_id"),
                "model_a": a,
                "model_b": b,
                "chosen": "tie" if chosen.lower() == "tie" else chosen,
                "evaluator_core_skill": row.get("evaluator_core_skill", ""),
                "dimension": row.get("dimension", "") or "overall",
            }
        )
    return rows


def _rating(path: Path, line: int, axis: str, cell: str) -> float:
    """An axis cell: an integer 1–5, or NaN when blank."""
    if cell == "":
        return float("nan")
    try:
        value = float(cell)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value == round(value) and 1 <= value <= 5):
        raise InputError(f"{path}:{line}: column {axis!r}: {cell!r} is not an integer rating 1–5")
    return value


def _read_scalar(path: Path, known: set[str]) -> list[dict[str, Any]]:
    """``scalar_feedback.csv``: one rating 1–5 (or blank) per axis."""
    rows = []
    for line, row in _read_table(path, "scalar"):
        rec: dict[str, Any] = {
            "prompt_id": _known_pid(path, line, row, known),
            "evaluator_id": _need(path, line, row, "evaluator_id"),
            "model": _need(path, line, row, "model"),
        }
        for axis in AXES:
            rec[axis] = _rating(path, line, axis, row[axis])
        rows.append(rec)
    return rows


def _read_qualitative(path: Path, known: set[str]) -> list[dict[str, Any]]:
    """``qualitative_feedback.csv``: a known sentiment."""
    rows = []
    for line, row in _read_table(path, "qualitative"):
        sentiment = row["sentiment"].lower()
        if sentiment not in SENTIMENTS:
            raise InputError(
                f"{path}:{line}: column 'sentiment': {row['sentiment']!r} is not one of "
                f"{list(SENTIMENTS)}"
            )
        rows.append(
            {
                "prompt_id": _known_pid(path, line, row, known),
                "evaluator_id": _need(path, line, row, "evaluator_id"),
                "model": _need(path, line, row, "model"),
                "theme": _need(path, line, row, "theme"),
                "sentiment": sentiment,
                "quote": row["quote"],
            }
        )
    return rows


def write_hcb(data: HCBData, directory: str | os.PathLike[str]) -> list[Path]:
    """Write :class:`HCBData` as the five HCB CSV files (through the package's one CSV
    writer, :func:`creagraph.core.io.write_records`); returns the paths written."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    tables = {
        "prompts": data.prompts,
        "outputs": [{k: v for k, v in o.items() if k != "empty"} for o in data.outputs],
        "pairwise": data.pairwise,
        "scalar": data.scalar,
        "qualitative": data.qualitative,
    }
    written = []
    for kind, rows in tables.items():
        required, optional = HCB_COLUMNS[kind]
        cols = list(required) + [c for c in optional if any(c in r for r in rows)]
        path = d / HCB_FILES[kind]
        records: list[Mapping[str, Any]] = [{c: _cell(r.get(c, "")) for c in cols} for r in rows]
        if records:
            write_records(path, records)
        else:  # the header alone (fixed column names: nothing to quote)
            with atomic_write(path) as handle:
                handle.write(",".join(cols) + "\n")
        written.append(path)
    return written


def write_table(path: str | os.PathLike[str], records: Sequence[dict[str, Any]]) -> None:
    """Atomically write records with :func:`creagraph.core.io.write_records` (``.csv``,
    ``.jsonl``, ``.parquet``); in CSV, ``None``/NaN are blank cells and floats keep full
    precision (columns = union of keys in first-seen order)."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        write_records(p, list(records))
        return
    write_records(p, [{k: _out_cell(v) for k, v in r.items()} for r in records])


def _out_cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return str(int(value)) if value == int(value) else repr(value)
    return str(value)
