"""Human Creativity Benchmark (HCB) files: reading, validation and per domain × phase analysis.

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
``pairwise_comparisons.csv``
    ``prompt_id``, ``evaluator_id``, ``model_a``, ``model_b`` (shown left / right),
    ``chosen`` (the preferred model's name, ``tie``, or blank = no preference, counted as
    a tie); optional ``evaluator_core_skill`` (e.g. ``designer``) and ``dimension``
    (the judged dimension, e.g. ``overall``, ``novelty``; default ``overall``: one
    Bradley–Terry model per dimension).
``scalar_feedback.csv``
    ``prompt_id``, ``evaluator_id``, ``model``, ``prompt_adherence``, ``usability``,
    ``visual_appeal`` (integers 1–5; blank = not rated).
``qualitative_feedback.csv`` (optional)
    ``prompt_id``, ``evaluator_id``, ``model``, ``theme``, ``sentiment`` ∈ {``positive``,
    ``neutral``, ``negative``, ``mixed``}, ``quote`` (may be blank).

At least one of ``pairwise_comparisons.csv`` and ``scalar_feedback.csv`` must exist. A
bad cell raises :class:`creagraph.core.io.InputError` naming the file, line and column.

:func:`hcb_report` produces, per domain × stage: pairwise win rates, head-to-head
matrices, Bradley–Terry ratings, Krippendorff's α per model and axis, Friedman's test and
Kendall's W across models, mean scalar ratings per axis, qualitative theme counts — and a
convergence/divergence view: for each axis and phase, whether raters converge (α ≥
``converge_at``), legitimately diverge (α < ``diverge_below``) or fall in between.

References
----------
.. [1] Krippendorff, K. (2004). *Content Analysis*, 2nd ed., §11.3.4 (α ≥ .800 reliable,
   .667 ≤ α < .800 tentative conclusions only).
"""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.io import InputError, atomic_write, write_records
from creagraph.judgments.agreement import (
    friedman,
    kendalls_w,
    krippendorff_alpha,
    ratings_matrix,
)
from creagraph.judgments.bradley_terry import (
    LEFT,
    TIE,
    NotIdentifiableError,
    TiePolicy,
    bradley_terry,
    make_comparisons,
)

__all__ = [
    "STAGES",
    "AXES",
    "SENTIMENTS",
    "HCB_FILES",
    "HCB_COLUMNS",
    "HCBData",
    "HCBReport",
    "read_hcb",
    "write_hcb",
    "hcb_comparisons",
    "hcb_report",
    "write_hcb_report",
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
    required, optional = HCB_COLUMNS[kind]
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames
        if not header:
            raise InputError(f"{path}:1: empty file (expected columns {list(required)})")
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(
                f"{path}:1: missing column(s) {missing} (expected {list(required)}"
                + (f", optionally {list(optional)}" if optional else "")
                + f"; found {header})"
            )
        for row in reader:
            if None in row:
                raise InputError(f"{path}:{reader.line_num}: more cells than header columns")
            yield reader.line_num, {k: (v or "").strip() for k, v in row.items() if k}


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
        Missing file or column, unknown ``prompt_id``, bad stage, rating, chosen or
        sentiment cell — naming the file, line and column.

    Examples
    --------
    >>> data = read_hcb("hcb/")  # doctest: +SKIP
    """
    d = Path(directory)
    if not d.is_dir():
        raise InputError(f"{d}: not a directory (expected the five HCB CSV files)")
    p_path = d / HCB_FILES["prompts"]
    if not p_path.exists():
        raise InputError(f"{p_path}: file not found (required)")
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

    def check_pid(path: Path, line: int, row: dict[str, str]) -> str:
        pid = _need(path, line, row, "prompt_id")
        if pid not in seen:
            raise InputError(
                f"{path}:{line}: column 'prompt_id': {pid!r} is not in {HCB_FILES['prompts']}"
            )
        return pid

    data = HCBData(prompts=prompts)
    path = d / HCB_FILES["outputs"]
    if path.exists():
        for line, row in _read_table(path, "outputs"):
            data.outputs.append(
                {
                    "prompt_id": check_pid(path, line, row),
                    "model": _need(path, line, row, "model"),
                    "output": row["output"],
                    "empty": row["output"] == "",
                }
            )
    path = d / HCB_FILES["pairwise"]
    if path.exists():
        for line, row in _read_table(path, "pairwise"):
            pid = check_pid(path, line, row)
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
            data.pairwise.append(
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
    path = d / HCB_FILES["scalar"]
    if path.exists():
        for line, row in _read_table(path, "scalar"):
            rec: dict[str, Any] = {
                "prompt_id": check_pid(path, line, row),
                "evaluator_id": _need(path, line, row, "evaluator_id"),
                "model": _need(path, line, row, "model"),
            }
            for axis in AXES:
                cell = row[axis]
                if cell == "":
                    rec[axis] = float("nan")
                    continue
                try:
                    value = float(cell)
                except ValueError:
                    value = float("nan")
                if not (value == round(value) and 1 <= value <= 5):
                    raise InputError(
                        f"{path}:{line}: column {axis!r}: {cell!r} is not an integer rating 1–5"
                    )
                rec[axis] = value
            data.scalar.append(rec)
    path = d / HCB_FILES["qualitative"]
    if path.exists():
        for line, row in _read_table(path, "qualitative"):
            sentiment = row["sentiment"].lower()
            if sentiment not in SENTIMENTS:
                raise InputError(
                    f"{path}:{line}: column 'sentiment': {row['sentiment']!r} is not one of "
                    f"{list(SENTIMENTS)}"
                )
            data.qualitative.append(
                {
                    "prompt_id": check_pid(path, line, row),
                    "evaluator_id": _need(path, line, row, "evaluator_id"),
                    "model": _need(path, line, row, "model"),
                    "theme": _need(path, line, row, "theme"),
                    "sentiment": sentiment,
                    "quote": row["quote"],
                }
            )
    if not data.pairwise and not data.scalar:
        raise InputError(
            f"{d}: neither {HCB_FILES['pairwise']} nor {HCB_FILES['scalar']} has any rows"
        )
    return data


def write_hcb(data: HCBData, directory: str | os.PathLike[str]) -> list[Path]:
    """Write :class:`HCBData` as the five HCB CSV files; returns the paths written."""
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
        with atomic_write(path) as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(cols)
            for r in rows:
                writer.writerow([_cell(r.get(c, "")) for c in cols])
        written.append(path)
    return written


def write_table(path: str | os.PathLike[str], records: Sequence[dict[str, Any]]) -> None:
    """Atomically write records as ``.csv`` (columns = union of keys in first-seen order,
    ``None``/NaN as blank) or, for other suffixes, with
    :func:`creagraph.core.io.write_records` (``.jsonl``, ``.parquet``)."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        write_records(p, list(records))
        return
    cols: list[str] = []
    for r in records:
        cols.extend(k for k in r if k not in cols)
    with atomic_write(p) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(cols)
        for r in records:
            writer.writerow([_out_cell(r.get(c)) for c in cols])


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


# --------------------------------------------------------------------------- analysis


@dataclass
class HCBReport:
    """Report tables (lists of flat records) keyed by name, plus a Markdown summary."""

    tables: dict[str, list[dict[str, Any]]]
    summary: str


def hcb_comparisons(
    data: HCBData,
    rows: Sequence[dict[str, Any]] | None = None,
    models: Sequence[str] | None = None,
):
    """Pairwise rows as :class:`~creagraph.judgments.Comparisons` (empty-response rule
    applied from ``model_outputs.csv``; raters = evaluator ids; prompts = prompt ids).

    Examples
    --------
    >>> from creagraph.judgments.synthetic import generate_hcb
    >>> data, _ = generate_hcb(seed=0, prompts_per_cell=1)
    >>> c = hcb_comparisons(data)
    >>> len(c), c.items
    (450, ['aurora', 'basalt', 'cobalt', 'dune', 'ember'])
    """
    rows = data.pairwise if rows is None else rows
    empty = data.empty_outputs()
    return make_comparisons(
        [r["model_a"] for r in rows],
        [r["model_b"] for r in rows],
        [r["chosen"] or "tie" for r in rows],
        left_empty=[(r["prompt_id"], r["model_a"]) in empty for r in rows],
        right_empty=[(r["prompt_id"], r["model_b"]) in empty for r in rows],
        items=sorted(models) if models is not None else None,
        raters=[r["evaluator_id"] for r in rows],
        prompts=[r["prompt_id"] for r in rows],
    )


def _nan_to_none(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _verdict(alpha: float | None, converge_at: float, diverge_below: float) -> str:
    if alpha is None or math.isnan(alpha):
        return "undetermined"
    if alpha >= converge_at:
        return "convergent"
    if alpha < diverge_below:
        return "divergent"
    return "mixed"


def _safe_alpha(matrix: np.ndarray, level: str) -> float | None:
    if matrix.size == 0 or matrix.shape[0] < 2:
        return None
    try:
        return _nan_to_none(krippendorff_alpha(matrix, level))  # type: ignore[arg-type]
    except ValueError:
        return None


def _model_blocks(
    records: Sequence[dict[str, Any]], axis: str, models: Sequence[str], block_keys: Sequence[str]
) -> np.ndarray:
    """Blocks (rows) × models matrix of ratings; blocks = distinct values of block_keys."""
    col = {m: k for k, m in enumerate(models)}
    blocks: dict[tuple[Any, ...], list[list[float]]] = {}
    for r in records:
        v = r[axis]
        if not math.isnan(v) and r["model"] in col:
            key = tuple(r[k] for k in block_keys)
            blocks.setdefault(key, [[] for _ in models])[col[r["model"]]].append(v)
    out = [
        [float(np.mean(cell)) if cell else float("nan") for cell in cells]
        for _, cells in sorted(blocks.items(), key=lambda kv: tuple(map(str, kv[0])))
    ]
    return np.array(out, dtype=float).reshape(-1, len(models))


def _friedman_record(matrix: np.ndarray) -> dict[str, Any]:
    complete = matrix[~np.isnan(matrix).any(axis=1)] if matrix.size else matrix
    rec: dict[str, Any] = {
        "n_blocks": int(complete.shape[0]) if complete.ndim == 2 else 0,
        "friedman_statistic": None,
        "friedman_p": None,
        "kendalls_w": None,
    }
    if complete.ndim != 2 or complete.shape[0] < 2 or complete.shape[1] < 3:
        return rec
    if np.all(complete == complete[:, :1]):  # every block ties every model: no ranking
        return rec
    res = friedman(complete)
    rec.update(
        friedman_statistic=_nan_to_none(res.statistic),
        friedman_p=_nan_to_none(res.pvalue),
        kendalls_w=_nan_to_none(res.kendalls_w),
    )
    return rec


def hcb_report(
    data: HCBData,
    *,
    ties: TiePolicy = "exclude",
    alpha: float = 0.0,
    n_bootstrap: int = 0,
    seed: int | None = 0,
    converge_at: float = 0.667,
    diverge_below: float = 0.4,
    significance: float = 0.05,
    show_progress: bool = False,
) -> HCBReport:
    """Per domain × phase tables and the convergence/divergence view.

    Parameters
    ----------
    data : HCBData
    ties, alpha, n_bootstrap, seed
        Passed to :func:`~creagraph.judgments.bradley_terry` for every domain × stage ×
        dimension. When the ML estimate does not exist in a cell, that cell is refitted
        with ``alpha = 0.01`` (column ``alpha`` of the table says so).
    converge_at, diverge_below : float
        Krippendorff's α (interval) thresholds of the convergence verdict [1]_.
    significance : float
        Level for ``models_differ`` (Friedman p below it).

    Returns
    -------
    HCBReport
        Tables ``win_rates``, ``head_to_head``, ``bradley_terry``, ``krippendorff``,
        ``friedman``, ``kendalls_w_phase``, ``scalar_means``, ``themes``,
        ``convergence`` (domain × stage × axis), ``convergence_phase`` (stage × axis,
        pooled over domains) and a Markdown ``summary``.

    Examples
    --------
    >>> from creagraph.judgments.synthetic import generate_hcb
    >>> data, truth = generate_hcb(seed=0, prompts_per_cell=2)
    >>> report = hcb_report(data)
    >>> [r["verdict"] for r in report.tables["convergence_phase"]][:3]  # ideation: PA, U, VA
    ['convergent', 'convergent', 'divergent']
    """
    prompts = data.prompt_index()
    cells: dict[tuple[str, str], dict[str, list]] = defaultdict(
        lambda: {"pairwise": [], "scalar": [], "qualitative": []}
    )
    for kind in ("pairwise", "scalar", "qualitative"):
        for r in getattr(data, kind):
            p = prompts[r["prompt_id"]]
            cells[(p["domain"], p["stage"])][kind].append(r)
    stage_order = {s: k for k, s in enumerate(STAGES)}
    keys = sorted(cells, key=lambda k: (k[0], stage_order[k[1]]))
    tables: dict[str, list[dict[str, Any]]] = {
        name: []
        for name in (
            "win_rates", "head_to_head", "bradley_terry", "krippendorff", "friedman",
            "kendalls_w_phase", "scalar_means", "themes", "convergence", "convergence_phase",
        )
    }
    if show_progress:
        from creagraph.core.progress import progress

        key_iter: Iterable[tuple[str, str]] = progress(keys, total=len(keys), desc="hcb cells")
    else:
        key_iter = keys
    for domain, stage in key_iter:
        cell = cells[(domain, stage)]
        base = {"domain": domain, "stage": stage}
        # ---- pairwise
        by_dim: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in cell["pairwise"]:
            by_dim[r.get("dimension") or "overall"].append(r)
        for dim, rows in sorted(by_dim.items()):
            comps = hcb_comparisons(data, rows)
            _pairwise_tables(tables, {**base, "dimension": dim}, comps)
            fit_alpha = alpha
            try:
                res = bradley_terry(comps, ties=ties, alpha=alpha, n_bootstrap=n_bootstrap,
                                    seed=seed)
            except NotIdentifiableError:
                fit_alpha = max(alpha, 0.01)
                res = bradley_terry(comps, ties=ties, alpha=fit_alpha, n_bootstrap=n_bootstrap,
                                    seed=seed)
            for row in res.leaderboard():
                tables["bradley_terry"].append(
                    {**base, "dimension": dim, "tie_policy": ties, "alpha": fit_alpha,
                     "model": row.pop("item"), **row}
                )
        # ---- scalar
        scalar = cell["scalar"]
        models = sorted({r["model"] for r in scalar})
        for axis in AXES:
            for m in models:
                vals = np.array([r[axis] for r in scalar if r["model"] == m], dtype=float)
                vals = vals[~np.isnan(vals)]
                tables["scalar_means"].append(
                    {**base, "model": m, "axis": axis, "n": int(vals.size),
                     "mean": float(vals.mean()) if vals.size else None,
                     "sd": float(vals.std(ddof=1)) if vals.size > 1 else None}
                )
                sub = [r for r in scalar if r["model"] == m]
                mat, units, raters = ratings_matrix(
                    [r["prompt_id"] for r in sub], [r["evaluator_id"] for r in sub],
                    [r[axis] for r in sub],
                )
                tables["krippendorff"].append(
                    {**base, "model": m, "axis": axis,
                     "alpha_ordinal": _safe_alpha(mat, "ordinal"),
                     "alpha_interval": _safe_alpha(mat, "interval"),
                     "n_units": len(units), "n_raters": len(raters),
                     "n_ratings": int(np.sum(~np.isnan(mat)))}
                )
            if not models:
                continue
            blocks = _model_blocks(scalar, axis, models, ("prompt_id", "evaluator_id"))
            fr = _friedman_record(blocks)
            block_kind = "prompt×evaluator"
            if fr["friedman_p"] is None:
                blocks = _model_blocks(scalar, axis, models, ("prompt_id",))
                fr = _friedman_record(blocks)
                block_kind = "prompt (mean rating)"
            tables["friedman"].append(
                {**base, "axis": axis, "n_models": len(models), "blocks": block_kind, **fr}
            )
            # pooled agreement: units = (prompt, model), raters = evaluators
            mat, units, raters = ratings_matrix(
                [(r["prompt_id"], r["model"]) for r in scalar],
                [r["evaluator_id"] for r in scalar],
                [r[axis] for r in scalar],
            )
            a_int = _safe_alpha(mat, "interval")
            a_ord = _safe_alpha(mat, "ordinal")
            with np.errstate(invalid="ignore"):
                counts = np.sum(~np.isnan(mat), axis=0)
                sds = np.nanstd(mat[:, counts >= 2], axis=0, ddof=1) if mat.size else np.array([])
            tables["convergence"].append(
                {**base, "axis": axis, "alpha_interval": a_int, "alpha_ordinal": a_ord,
                 "mean_rater_sd": float(np.mean(sds)) if sds.size else None,
                 "kendalls_w": fr["kendalls_w"], "friedman_p": fr["friedman_p"],
                 "models_differ": (fr["friedman_p"] is not None
                                   and fr["friedman_p"] < significance),
                 "verdict": _verdict(a_int, converge_at, diverge_below),
                 "n_units": len(units), "n_raters": len(raters)}
            )
        # ---- qualitative
        themes: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for r in cell["qualitative"]:
            themes[(r["model"], r["theme"])][r["sentiment"]] += 1
        for (m, theme), counts_s in sorted(themes.items()):
            total = sum(counts_s.values())
            tables["themes"].append(
                {**base, "model": m, "theme": theme, "count": total,
                 **{f"share_{s}": counts_s.get(s, 0) / total for s in SENTIMENTS}}
            )

    _phase_tables(tables, data, prompts, converge_at, diverge_below, significance)
    return HCBReport(tables=tables, summary=_summary(tables))


def _pairwise_tables(tables: dict[str, list], base: dict[str, Any], comps) -> None:
    n = comps.n_items
    wins = np.zeros((n, n))
    tie_m = np.zeros((n, n))
    for a, b, o in zip(comps.left, comps.right, comps.outcome, strict=True):
        if o == TIE:
            tie_m[a, b] += 1
            tie_m[b, a] += 1
        elif o == LEFT:
            wins[a, b] += 1
        else:
            wins[b, a] += 1
    for i, m in enumerate(comps.items):
        w, lo, t = wins[i].sum(), wins[:, i].sum(), tie_m[i].sum()
        total = w + lo + t
        if total == 0:
            continue
        decisive = w + lo
        tables["win_rates"].append(
            {**base, "model": m, "comparisons": int(total), "wins": int(w), "losses": int(lo),
             "ties": int(t), "win_rate": float((w + t / 2) / total),
             "raw_win_rate": float(w / total),
             "decisive_win_rate": float(w / decisive) if decisive else None}
        )
        for j, opp in enumerate(comps.items):
            tot = wins[i, j] + wins[j, i] + tie_m[i, j]
            if i == j or tot == 0:
                continue
            tables["head_to_head"].append(
                {**base, "model": m, "opponent": opp, "comparisons": int(tot),
                 "wins": int(wins[i, j]), "losses": int(wins[j, i]), "ties": int(tie_m[i, j]),
                 "win_rate": float((wins[i, j] + tie_m[i, j] / 2) / tot)}
            )


def _phase_tables(
    tables: dict[str, list],
    data: HCBData,
    prompts: dict[str, dict[str, Any]],
    converge_at: float,
    diverge_below: float,
    significance: float,
) -> None:
    for stage in STAGES:
        recs = [
            {**r, "domain": prompts[r["prompt_id"]]["domain"]}
            for r in data.scalar
            if prompts[r["prompt_id"]]["stage"] == stage
        ]
        if not recs:
            continue
        models = sorted({r["model"] for r in recs})
        for axis in AXES:
            # Kendall's W per phase: blocks = prompt × evaluator, pooled over domains
            blocks = _model_blocks(recs, axis, models, ("domain", "prompt_id", "evaluator_id"))
            complete = blocks[~np.isnan(blocks).any(axis=1)] if blocks.size else blocks
            w_rec: dict[str, Any] = {"stage": stage, "axis": axis, "n_models": len(models),
                                     "n_blocks": int(complete.shape[0]), "kendalls_w": None,
                                     "chi2": None, "pvalue": None}
            if (complete.shape[0] >= 2 and len(models) >= 2
                    and not np.all(complete == complete[:, :1])):
                kw = kendalls_w(complete)
                w_rec.update(kendalls_w=_nan_to_none(kw.w), chi2=_nan_to_none(kw.chi2),
                             pvalue=_nan_to_none(kw.pvalue))
            tables["kendalls_w_phase"].append(w_rec)
            mat, units, raters = ratings_matrix(
                [(r["domain"], r["prompt_id"], r["model"]) for r in recs],
                [r["evaluator_id"] for r in recs],
                [r[axis] for r in recs],
            )
            a_int = _safe_alpha(mat, "interval")
            tables["convergence_phase"].append(
                {"stage": stage, "axis": axis, "alpha_interval": a_int,
                 "alpha_ordinal": _safe_alpha(mat, "ordinal"),
                 "kendalls_w": w_rec["kendalls_w"], "kendalls_w_p": w_rec["pvalue"],
                 "models_differ": (w_rec["pvalue"] is not None
                                   and w_rec["pvalue"] < significance),
                 "verdict": _verdict(a_int, converge_at, diverge_below),
                 "n_units": len(units), "n_raters": len(raters)}
            )


def _fmt(x: Any) -> str:
    return "–" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))


def _summary(tables: dict[str, list[dict[str, Any]]]) -> str:
    lines = ["# HCB convergence / divergence", ""]
    lines.append(
        "Krippendorff's α (interval) over (prompt, model) units, raters = evaluators. "
        "Convergent: raters agree; divergent: they legitimately differ (taste), so a "
        "mean rating hides real disagreement. Kendall's W: agreement on the model ranking."
    )
    lines += ["", "## Per phase (pooled over domains)", "",
              "| stage | axis | α interval | Kendall's W | W p | verdict |",
              "|---|---|---|---|---|---|"]
    for r in tables["convergence_phase"]:
        lines.append(
            f"| {r['stage']} | {r['axis']} | {_fmt(r['alpha_interval'])} | "
            f"{_fmt(r['kendalls_w'])} | {_fmt(r['kendalls_w_p'])} | {r['verdict']} |"
        )
    lines += ["", "## Per domain × phase", "",
              "| domain | stage | axis | α interval | Friedman p | Kendall's W | verdict |",
              "|---|---|---|---|---|---|---|"]
    for r in tables["convergence"]:
        lines.append(
            f"| {r['domain']} | {r['stage']} | {r['axis']} | {_fmt(r['alpha_interval'])} | "
            f"{_fmt(r['friedman_p'])} | {_fmt(r['kendalls_w'])} | {r['verdict']} |"
        )
    by_axis: dict[str, list[str]] = defaultdict(list)
    for r in tables["convergence_phase"]:
        by_axis[r["verdict"]].append(f"{r['axis']} ({r['stage']})")
    lines += ["", "## Verdicts", ""]
    for verdict in ("convergent", "mixed", "divergent", "undetermined"):
        if by_axis.get(verdict):
            lines.append(f"- **{verdict}**: {', '.join(by_axis[verdict])}")
    return "\n".join(lines) + "\n"


def write_hcb_report(report: HCBReport, outdir: str | os.PathLike[str]) -> list[Path]:
    """Write every report table as ``<name>.csv`` and the summary as ``convergence.md``."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in report.tables.items():
        if not rows:
            continue
        path = out / f"{name}.csv"
        write_table(path, rows)
        written.append(path)
    path = out / "convergence.md"
    with atomic_write(path) as handle:
        handle.write(report.summary)
    written.append(path)
    return written
