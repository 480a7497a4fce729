"""Pairwise preferences and rater agreement (SPEC §5).

- :mod:`~creagraph.judgments.bradley_terry` — Bradley–Terry (ML/MAP, ties excluded, as
  half-wins or Davidson), bootstrap intervals, rank probabilities, tiers, active sampling.
- :mod:`~creagraph.judgments.agreement` — Kendall's W, Friedman, Krippendorff's α,
  Fleiss' κ, ICC, order-swap consistency.
- :mod:`~creagraph.judgments.llmfao` — the LLMFAO crowd comparisons adapter.
- :mod:`~creagraph.judgments.hcb` — Human Creativity Benchmark files and report.
- :mod:`~creagraph.judgments.synthetic` — HCB-format data with known ground truth.
- :mod:`~creagraph.judgments.cli` — ``creagraph judge bt | agreement | swap | hcb-report |
  hcb-synth``.
"""

from creagraph.judgments.agreement import (
    FriedmanResult,
    ICCResult,
    KendallWResult,
    SwapConsistency,
    category_counts,
    fleiss_kappa,
    friedman,
    icc,
    kendalls_w,
    krippendorff_alpha,
    order_swap_consistency,
    ratings_matrix,
    swapped_pairs,
)
from creagraph.judgments.bradley_terry import (
    LEFT,
    RIGHT,
    TIE,
    BTResult,
    Comparisons,
    NotIdentifiableError,
    TiePolicy,
    apply_empty_rule,
    bradley_terry,
    bt_covariance,
    bt_mle,
    count_matrices,
    davidson_mle,
    elo_scale,
    is_identifiable,
    make_comparisons,
    next_pairs,
    parse_outcome,
    win_probabilities,
)
from creagraph.judgments.hcb import (
    AXES,
    HCB_COLUMNS,
    HCB_FILES,
    SENTIMENTS,
    STAGES,
    HCBData,
    HCBReport,
    hcb_comparisons,
    hcb_report,
    read_hcb,
    write_hcb,
    write_hcb_report,
    write_table,
)
from creagraph.judgments.llmfao import LLMFAO_COLUMNS, default_llmfao_path, read_llmfao
from creagraph.judgments.synthetic import HCBTruth, generate_hcb

__all__ = [
    "LEFT",
    "RIGHT",
    "TIE",
    "BTResult",
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
