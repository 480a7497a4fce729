"""Reports people look at (SPEC §6): one self-contained HTML page plus PNG figures.

Built from the plain files the jobs write — ``creagraph score`` (``queries.jsonl``),
``creagraph distinct`` (``distinct_paths.jsonl``, ``distinct_summary.csv``) and
``creagraph tig clusters|anchors`` (JSONL) — without importing those jobs:

* a leaderboard with 95 % bootstrap confidence intervals over queries,
* creative utility vs patience curves per model,
* distinctiveness distributions,
* a per-relation breakdown (by the query relation ``rel_b`` every scored query carries,
  and by the source-path relation when generated queries or answer files are given),
* grounding coverage (triples verified / refuted / unknown per model, kg judge),
* the top cliché clusters per task of a TIG run.

Examples
--------
>>> from creagraph.report import leaderboard
>>> q = [{"model": "m", "utility": {"0.7": 1.0, "0.9": 2.0}}]
>>> leaderboard(q, n_resamples=10)[0]["s_0.9"]
2.0
"""

from creagraph.report.inputs import read_distinct, read_query_relations, read_scored, read_tig
from creagraph.report.page import SECTIONS, write_report
from creagraph.report.tables import (
    GROUNDING_STATUSES,
    bootstrap_ci,
    cliche_tables,
    grounding_coverage,
    leaderboard,
    mean_curves,
    relation_breakdown,
    source_relations,
)

__all__ = [
    "GROUNDING_STATUSES",
    "SECTIONS",
    "bootstrap_ci",
    "cliche_tables",
    "grounding_coverage",
    "leaderboard",
    "mean_curves",
    "read_distinct",
    "read_query_relations",
    "read_scored",
    "read_tig",
    "relation_breakdown",
    "source_relations",
    "write_report",
]
