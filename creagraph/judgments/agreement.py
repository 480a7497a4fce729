"""Rater agreement: Kendall's W, Friedman, Krippendorff's α, Fleiss' κ, ICC, order swaps.

Layouts (validated at the boundary, missing values as ``None``/``NaN``/``pd.NA``; a
pandas DataFrame is read by its *values*, row by row, never by its column labels):

- *reliability data* (Krippendorff): shape ``(n_raters, n_units)``, one row per rater;
- *blocks × treatments* (Friedman, Kendall's W): shape ``(n_blocks, n_treatments)``; each
  row (a rater, or a prompt) scores or ranks every treatment (model);
- *targets × raters* (ICC): shape ``(n_targets, n_raters)``, complete;
- *category counts* (Fleiss): shape ``(n_subjects, n_categories)``, the same number of
  raters per subject.

:func:`ratings_matrix` turns long records (unit, rater, value) into the first layout.

One module per statistic, all re-exported here: :mod:`~creagraph.judgments.ratings`
(layouts, missing values, long ratings), :mod:`~creagraph.judgments.concordance`
(Kendall's W, Friedman), :mod:`~creagraph.judgments.alpha` (Krippendorff's α),
:mod:`~creagraph.judgments.fleiss`, :mod:`~creagraph.judgments.cohen` (Cohen's κ,
correlations), :mod:`~creagraph.judgments.intraclass` (ICC),
:mod:`~creagraph.judgments.swap` (order swaps); :func:`agreement_statistics` (all at once)
lives here.

Each module's docstring lists the references for the statistics it holds.
"""


from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from creagraph.judgments.alpha import (  # noqa: F401 (re-exported)
    krippendorff_alpha,
)
from creagraph.judgments.choices import MeasurementLevel
from creagraph.judgments.cohen import (  # noqa: F401 (re-exported)
    CohenKappaResult,
    CorrelationResult,
    cohens_kappa,
    correlation,
)
from creagraph.judgments.concordance import (  # noqa: F401 (re-exported)
    FriedmanResult,
    KendallWResult,
    friedman,
    kendalls_w,
)
from creagraph.judgments.fleiss import (  # noqa: F401 (re-exported)
    category_counts,
    fleiss_kappa,
)
from creagraph.judgments.intraclass import (  # noqa: F401 (re-exported)
    ICCResult,
    icc,
)
from creagraph.judgments.ratings import (  # noqa: F401 (re-exported)
    MIN_ALPHA_UNITS,
    NA_TOKENS,
    DegenerateDesignWarning,
    Level,
    RatingLabels,
    is_missing,
    rating_labels,
    ratings_matrix,
)
from creagraph.judgments.swap import (  # noqa: F401 (re-exported)
    SwapConsistency,
    order_swap_consistency,
    swapped_pairs,
)

__all__ = [
    "DegenerateDesignWarning",
    "MIN_ALPHA_UNITS",
    "is_missing",
    "CohenKappaResult",
    "CorrelationResult",
    "cohens_kappa",
    "correlation",
    "KendallWResult",
    "FriedmanResult",
    "ICCResult",
    "SwapConsistency",
    "ratings_matrix",
    "NA_TOKENS",
    "RatingLabels",
    "rating_labels",
    "agreement_statistics",
    "MeasurementLevel",
    "kendalls_w",
    "friedman",
    "krippendorff_alpha",
    "category_counts",
    "fleiss_kappa",
    "icc",
    "order_swap_consistency",
    "swapped_pairs",
]


# --------------------------------------------------------------------------- all at once


def _stat(stat: str, val: float | None, n: int | str, note: str = "") -> dict[str, Any]:
    return {"statistic": stat, "value": val, "n": n, "note": note}


def _alpha_rows(labels: RatingLabels, level: str) -> list[dict[str, Any]]:
    """Krippendorff's α at every level the labels allow (nominal only for text)."""
    table, units = labels.table, labels.units
    levels = ["nominal"] + (["ordinal", "interval", "ratio"] if labels.numeric else [])
    pairable = sum(1 for i in range(len(units))
                   if sum(table[j][i] is not None for j in range(len(labels.raters))) >= 2)
    few = (f"degenerate: only {pairable} unit(s) rated twice or more"
           if pairable < MIN_ALPHA_UNITS else "")
    rows = []
    for lv in levels:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the note column says it
                a = krippendorff_alpha(table, lv)  # type: ignore[arg-type]
        except ValueError as exc:
            rows.append(_stat(f"krippendorff_alpha_{lv}", None, len(units), str(exc)))
            continue
        note = "; ".join(x for x in ("selected" if lv == level else "", few) if x)
        rows.append(_stat(f"krippendorff_alpha_{lv}", a, len(units), note))
    return rows


def _cohen_rows(labels: RatingLabels) -> list[dict[str, Any]]:
    """Cohen's κ (and, for numbers, its weighted forms) when there are two raters."""
    if len(labels.raters) != 2:
        return []
    first, second = labels.table
    rows = []
    try:
        kappa = cohens_kappa(first, second)
        rows.append(_stat("cohens_kappa", kappa.kappa, kappa.n, "two raters, unweighted"))
        if labels.numeric:
            for wt in ("linear", "quadratic"):
                kw = cohens_kappa(first, second, weights=wt)
                rows.append(_stat(f"cohens_kappa_{wt}", kw.kappa, kw.n, "two raters, weighted"))
    except ValueError as exc:
        rows.append(_stat("cohens_kappa", None, 0, str(exc)))
    return rows


def _fleiss_rows(labels: RatingLabels) -> list[dict[str, Any]]:
    """Fleiss' κ over the units that have the largest number of ratings."""
    table = labels.table
    by_unit = [[table[j][i] for j in range(len(labels.raters))] for i in range(len(labels.units))]
    counts, cats = category_counts(by_unit)
    per_unit = counts.sum(axis=1)
    keep = per_unit == per_unit.max()
    if per_unit.max() >= 2 and keep.sum() >= 1:
        return [_stat("fleiss_kappa", fleiss_kappa(counts[keep]), int(keep.sum()),
                      f"{len(cats)} categories; units with all {int(per_unit.max())} ratings")]
    return []


def _complete_rater_rows(labels: RatingLabels, ties_correction: bool) -> list[dict[str, Any]]:
    """ICC, Kendall's W and Friedman over the raters that rated every unit (numbers)."""
    n_units = len(labels.units)
    mat = np.array([[np.nan if v is None else float(v) for v in row] for row in labels.table])
    full_raters = ~np.isnan(mat).any(axis=1)
    if not (full_raters.sum() >= 2 and n_units >= 2):
        return []
    rows = []
    # ICC: targets x raters over the raters that rated every unit
    r = icc(mat[full_raters].T)
    for name, val in r.as_dict().items():
        lo, hi = r.ci.get(name, (float("nan"), float("nan")))
        rows.append(_stat(name, val, n_units,
                          f"{int(full_raters.sum())} complete raters; 95% CI [{lo:.3g}, {hi:.3g}]"))
    # Kendall's W / Friedman: raters (blocks) ranking the units
    kw = kendalls_w(mat[full_raters], correction=ties_correction)
    rows.append(_stat("kendalls_w", kw.w, int(full_raters.sum()),
                      f"p = {kw.pvalue:.4g}; " + ("ties corrected" if ties_correction
                                                   else "no ties correction")))
    if n_units >= 3:
        fr = friedman(mat[full_raters])
        rows.append(_stat("friedman_chi2", fr.statistic, fr.n_blocks, f"p = {fr.pvalue:.4g}"))
        rows.append(_stat("friedman_p", fr.pvalue, fr.n_blocks, ""))
    return rows


def agreement_statistics(
    labels: RatingLabels,
    *,
    level: Level | MeasurementLevel = "interval",
    ties_correction: bool = True,
) -> list[dict[str, Any]]:
    """Every agreement statistic the ratings allow, as ``statistic, value, n, note`` rows.

    Krippendorff's α at each level (text labels: nominal only; ``level`` is marked
    ``selected``), Cohen's κ for two raters (weighted too for numbers), Fleiss' κ, and —
    for numbers, over the raters that rated every unit — the ICCs with 95% intervals,
    Kendall's W (``ties_correction``) and Friedman's test.

    Parameters
    ----------
    labels : RatingLabels
        From :func:`rating_labels`.
    level : {"nominal", "ordinal", "interval", "ratio"}
        The level marked ``selected``; text labels need ``"nominal"``.
    ties_correction : bool
        Passed to :func:`kendalls_w`.

    Examples
    --------
    >>> labels = rating_labels(["u1", "u2", "u1", "u2"], ["a", "a", "b", "b"],
    ...                        ["x", "y", "x", "y"])
    >>> [(r["statistic"], r["value"]) for r in agreement_statistics(labels, level="nominal")]
    [('krippendorff_alpha_nominal', 1.0), ('cohens_kappa', 1.0), ('fleiss_kappa', 1.0)]
    """
    if not labels.numeric and level != "nominal":
        raise ValueError(f"non-numeric labels need level='nominal', not {level!r}")
    rows = _alpha_rows(labels, level) + _cohen_rows(labels) + _fleiss_rows(labels)
    if labels.numeric:
        rows += _complete_rater_rows(labels, ties_correction)
    return rows
