"""Pairwise preferences and rater agreement (SPEC §5).

- :mod:`~creagraph.judgments.bradley_terry` — Bradley–Terry (ML/MAP, ties excluded, as
  half-wins or Davidson), bootstrap intervals, rank probabilities, tiers, active sampling.
- :mod:`~creagraph.judgments.agreement` — Kendall's W, Friedman, Krippendorff's α,
  Fleiss' κ, ICC, order-swap consistency.
- :mod:`~creagraph.judgments.llmfao` — the LLMFAO crowd comparisons adapter.
- :mod:`~creagraph.judgments.hcb_io` — Human Creativity Benchmark files: reading,
  validation, writing.
- :mod:`~creagraph.judgments.hcb` — the HCB per domain × phase report.
- :mod:`~creagraph.judgments.choices` — the choices of the API and CLI as ``StrEnum``.
- :mod:`~creagraph.judgments.synthetic` — HCB-format data with known ground truth.
- :mod:`~creagraph.judgments.cli` — ``creagraph judge bt | agreement | swap | hcb-report |
  hcb-synth``.
"""

import sys
import types
from typing import TYPE_CHECKING, Any

from creagraph.core.lazy import lazy_exports

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from creagraph.judgments.agreement import (
        MIN_ALPHA_UNITS,
        NA_TOKENS,
        CohenKappaResult,
        CorrelationResult,
        DegenerateDesignWarning,
        FriedmanResult,
        ICCResult,
        KendallWResult,
        RatingLabels,
        SwapConsistency,
        agreement_statistics,
        category_counts,
        cohens_kappa,
        correlation,
        fleiss_kappa,
        friedman,
        icc,
        is_missing,
        kendalls_w,
        krippendorff_alpha,
        order_swap_consistency,
        rating_labels,
        ratings_matrix,
        swapped_pairs,
    )
    from creagraph.judgments.bradley_terry import (
        LEFT,
        RIGHT,
        TIE,
        BTResult,
        Comparisons,
        ConvergenceWarning,
        DisconnectedComparisonsError,
        NotIdentifiableError,
        RecordError,
        TiePolicy,
        apply_empty_rule,
        bradley_terry,
        bradley_terry_by_component,
        bt_covariance,
        bt_mle,
        comparison_components,
        comparisons_from_records,
        count_matrices,
        davidson_mle,
        elo_scale,
        is_identifiable,
        make_comparisons,
        next_pairs,
        parse_outcome,
        sequential_elo,
        win_probabilities,
    )
    from creagraph.judgments.choices import BootstrapUnit, MeasurementLevel, Ties
    from creagraph.judgments.hcb import HCBReport, hcb_comparisons, hcb_report, write_hcb_report
    from creagraph.judgments.hcb_io import (
        AXES,
        HCB_COLUMNS,
        HCB_FILES,
        SENTIMENTS,
        STAGES,
        HCBData,
        read_hcb,
        write_hcb,
        write_table,
    )
    from creagraph.judgments.llmfao import LLMFAO_COLUMNS, default_llmfao_path, read_llmfao
    from creagraph.judgments.synthetic import HCBTruth, generate_hcb

#: public name → defining module; imported on first use so that `creagraph --help`
#: (which loads this package's CLI) does not pay for numpy, scipy and the like.
_EXPORTS: dict[str, str] = {
    "MIN_ALPHA_UNITS": "creagraph.judgments.agreement",
    "CohenKappaResult": "creagraph.judgments.agreement",
    "CorrelationResult": "creagraph.judgments.agreement",
    "DegenerateDesignWarning": "creagraph.judgments.agreement",
    "FriedmanResult": "creagraph.judgments.agreement",
    "ICCResult": "creagraph.judgments.agreement",
    "KendallWResult": "creagraph.judgments.agreement",
    "SwapConsistency": "creagraph.judgments.agreement",
    "category_counts": "creagraph.judgments.agreement",
    "cohens_kappa": "creagraph.judgments.agreement",
    "correlation": "creagraph.judgments.agreement",
    "fleiss_kappa": "creagraph.judgments.agreement",
    "friedman": "creagraph.judgments.agreement",
    "icc": "creagraph.judgments.agreement",
    "is_missing": "creagraph.judgments.agreement",
    "kendalls_w": "creagraph.judgments.agreement",
    "krippendorff_alpha": "creagraph.judgments.agreement",
    "order_swap_consistency": "creagraph.judgments.agreement",
    "ratings_matrix": "creagraph.judgments.agreement",
    "swapped_pairs": "creagraph.judgments.agreement",
    "NA_TOKENS": "creagraph.judgments.agreement",
    "RatingLabels": "creagraph.judgments.agreement",
    "rating_labels": "creagraph.judgments.agreement",
    "agreement_statistics": "creagraph.judgments.agreement",
    "RecordError": "creagraph.judgments.bradley_terry",
    "comparisons_from_records": "creagraph.judgments.bradley_terry",
    "Ties": "creagraph.judgments.choices",
    "BootstrapUnit": "creagraph.judgments.choices",
    "MeasurementLevel": "creagraph.judgments.choices",
    "LEFT": "creagraph.judgments.bradley_terry",
    "RIGHT": "creagraph.judgments.bradley_terry",
    "TIE": "creagraph.judgments.bradley_terry",
    "BTResult": "creagraph.judgments.bradley_terry",
    "Comparisons": "creagraph.judgments.bradley_terry",
    "ConvergenceWarning": "creagraph.judgments.bradley_terry",
    "DisconnectedComparisonsError": "creagraph.judgments.bradley_terry",
    "NotIdentifiableError": "creagraph.judgments.bradley_terry",
    "TiePolicy": "creagraph.judgments.bradley_terry",
    "apply_empty_rule": "creagraph.judgments.bradley_terry",
    "bradley_terry": "creagraph.judgments.bradley_terry",
    "bradley_terry_by_component": "creagraph.judgments.bradley_terry",
    "bt_covariance": "creagraph.judgments.bradley_terry",
    "bt_mle": "creagraph.judgments.bradley_terry",
    "comparison_components": "creagraph.judgments.bradley_terry",
    "count_matrices": "creagraph.judgments.bradley_terry",
    "davidson_mle": "creagraph.judgments.bradley_terry",
    "elo_scale": "creagraph.judgments.bradley_terry",
    "is_identifiable": "creagraph.judgments.bradley_terry",
    "make_comparisons": "creagraph.judgments.bradley_terry",
    "next_pairs": "creagraph.judgments.bradley_terry",
    "parse_outcome": "creagraph.judgments.bradley_terry",
    "sequential_elo": "creagraph.judgments.bradley_terry",
    "win_probabilities": "creagraph.judgments.bradley_terry",
    "AXES": "creagraph.judgments.hcb_io",
    "HCB_COLUMNS": "creagraph.judgments.hcb_io",
    "HCB_FILES": "creagraph.judgments.hcb_io",
    "SENTIMENTS": "creagraph.judgments.hcb_io",
    "STAGES": "creagraph.judgments.hcb_io",
    "HCBData": "creagraph.judgments.hcb_io",
    "HCBReport": "creagraph.judgments.hcb",
    "hcb_comparisons": "creagraph.judgments.hcb",
    "hcb_report": "creagraph.judgments.hcb",
    "read_hcb": "creagraph.judgments.hcb_io",
    "write_hcb": "creagraph.judgments.hcb_io",
    "write_hcb_report": "creagraph.judgments.hcb",
    "write_table": "creagraph.judgments.hcb_io",
    "LLMFAO_COLUMNS": "creagraph.judgments.llmfao",
    "default_llmfao_path": "creagraph.judgments.llmfao",
    "read_llmfao": "creagraph.judgments.llmfao",
    "HCBTruth": "creagraph.judgments.synthetic",
    "generate_hcb": "creagraph.judgments.synthetic",
}

__all__ = [
    "LEFT",
    "RIGHT",
    "TIE",
    "BTResult",
    "ConvergenceWarning",
    "DisconnectedComparisonsError",
    "bradley_terry_by_component",
    "comparison_components",
    "sequential_elo",
    "MIN_ALPHA_UNITS",
    "CohenKappaResult",
    "CorrelationResult",
    "DegenerateDesignWarning",
    "cohens_kappa",
    "correlation",
    "is_missing",
    "Comparisons",
    "NotIdentifiableError",
    "TiePolicy",
    "apply_empty_rule",
    "bradley_terry",
    "bt_covariance",
    "bt_mle",
    "count_matrices",
    "davidson_mle",
    "elo_scale",
    "is_identifiable",
    "make_comparisons",
    "next_pairs",
    "parse_outcome",
    "win_probabilities",
    "FriedmanResult",
    "ICCResult",
    "KendallWResult",
    "SwapConsistency",
    "category_counts",
    "fleiss_kappa",
    "friedman",
    "icc",
    "kendalls_w",
    "krippendorff_alpha",
    "order_swap_consistency",
    "ratings_matrix",
    "swapped_pairs",
    "NA_TOKENS",
    "RatingLabels",
    "rating_labels",
    "agreement_statistics",
    "RecordError",
    "comparisons_from_records",
    "Ties",
    "BootstrapUnit",
    "MeasurementLevel",
    "LLMFAO_COLUMNS",
    "default_llmfao_path",
    "read_llmfao",
    "AXES",
    "HCB_COLUMNS",
    "HCB_FILES",
    "SENTIMENTS",
    "STAGES",
    "HCBData",
    "HCBReport",
    "hcb_comparisons",
    "hcb_report",
    "read_hcb",
    "write_hcb",
    "write_hcb_report",
    "write_table",
    "HCBTruth",
    "generate_hcb",
]


class _Package(types.ModuleType):
    """Keeps the function :func:`bradley_terry` as the package attribute of that name when
    its submodule (also ``bradley_terry``) is imported later — the import system would
    otherwise rebind the name to the submodule."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
