"""Adapter for the LLMFAO crowd comparisons (real multi-rater pairwise data).

LLMFAO [1]_ holds 8,931 crowd judgments of 59 language models on 13 prompts, several
workers per pair, with ties. The file used here is the copy shipped with evalica's test
data at ``../shared/external/stats-testvectors/evalica/llmfao.csv`` (beside the repository
root). Its columns are::

    id, prompt, model_x, model_y, worker, winner, left, right

where ``left``/``right`` are model names and ``winner`` ∈ {left, right, tie}. It is the
closest public stand-in for the Human Creativity Benchmark's
``pairwise_comparisons.csv`` (see :mod:`creagraph.judgments.hcb`).

References
----------
.. [1] Ustalov, D. (2023). LLMFAO: Large Language Model Feedback Analysis and Optimization.
   https://github.com/dustalov/llmfao
"""

from __future__ import annotations

import os
from pathlib import Path

from creagraph.core import settings
from creagraph.core.io import InputError, iter_csv_lines
from creagraph.judgments.comparisons import Comparisons, make_comparisons

__all__ = ["LLMFAO_COLUMNS", "default_llmfao_path", "read_llmfao"]

LLMFAO_COLUMNS = ("id", "prompt", "model_x", "model_y", "worker", "winner", "left", "right")


def default_llmfao_path() -> Path:
    """``$CREAGRAPH_LLMFAO`` or ``../shared/external/stats-testvectors/evalica/llmfao.csv``
    relative to the repository root (resolved like
    :func:`creagraph.core.paths.default_slice_path`).

    Examples
    --------
    >>> default_llmfao_path().parts[-3:]
    ('stats-testvectors', 'evalica', 'llmfao.csv')
    """
    env = settings.value("CREAGRAPH_LLMFAO")
    if env:
        return Path(env)
    return settings.shared_dir() / "external" / "stats-testvectors" / "evalica" / "llmfao.csv"


def read_llmfao(path: str | os.PathLike[str] | None = None) -> Comparisons:
    """Read LLMFAO crowd comparisons into :class:`Comparisons`.

    Parameters
    ----------
    path : path-like, optional
        The CSV file; default :func:`default_llmfao_path`.

    Returns
    -------
    Comparisons
        Items = model names (sorted), ``raters`` = worker ids, ``prompts`` = prompt ids;
        the file order is kept.

    Raises
    ------
    InputError
        Missing file or column, or a bad winner cell (file, line and column named).

    Examples
    --------
    >>> c = read_llmfao()  # doctest: +SKIP
    >>> len(c), c.n_items  # doctest: +SKIP
    (8931, 59)
    """
    p = Path(path) if path is not None else default_llmfao_path()
    if not p.exists():
        raise InputError(f"{p}: file not found (LLMFAO crowd comparisons)")
    left: list[str] = []
    right: list[str] = []
    winner: list[str] = []
    workers: list[str] = []
    prompts: list[str] = []
    for line, row in iter_csv_lines(p, required=("prompt", "worker", "winner", "left", "right")):
        w = (row["winner"] or "").strip().lower()
        if w not in ("left", "right", "tie"):
            raise InputError(
                f"{p}:{line}: column 'winner': expected left/right/tie, got {row['winner']!r}"
            )
        for col in ("left", "right"):
            if not (row[col] or "").strip():
                raise InputError(f"{p}:{line}: column {col!r}: empty model name")
        if row["left"] == row["right"]:
            raise InputError(f"{p}:{line}: column 'right': model compared with itself")
        left.append(row["left"])
        right.append(row["right"])
        winner.append(w)
        workers.append(row["worker"])
        prompts.append(row["prompt"])
    if not left:
        raise InputError(f"{p}: no comparisons")
    return make_comparisons(left, right, winner, raters=workers, prompts=prompts)
