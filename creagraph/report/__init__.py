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

from typing import TYPE_CHECKING

from creagraph.core.lazy import lazy_exports

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from creagraph.report.inputs import (
        read_distinct,
        read_ekphrasis,
        read_query_relations,
        read_scored,
        read_tig,
    )
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

#: public name → defining module; imported on first use so that `creagraph --help`
#: (which loads this package's CLI) does not pay for numpy, scipy and the like.
_EXPORTS: dict[str, str] = {
    "read_distinct": "creagraph.report.inputs",
    "read_ekphrasis": "creagraph.report.inputs",
    "read_query_relations": "creagraph.report.inputs",
    "read_scored": "creagraph.report.inputs",
    "read_tig": "creagraph.report.inputs",
    "SECTIONS": "creagraph.report.page",
    "write_report": "creagraph.report.page",
    "GROUNDING_STATUSES": "creagraph.report.tables",
    "bootstrap_ci": "creagraph.report.tables",
    "cliche_tables": "creagraph.report.tables",
    "grounding_coverage": "creagraph.report.tables",
    "leaderboard": "creagraph.report.tables",
    "mean_curves": "creagraph.report.tables",
    "relation_breakdown": "creagraph.report.tables",
    "source_relations": "creagraph.report.tables",
}

__all__ = [
    "GROUNDING_STATUSES",
    "SECTIONS",
    "bootstrap_ci",
    "cliche_tables",
    "grounding_coverage",
    "leaderboard",
    "mean_curves",
    "read_distinct",
    "read_ekphrasis",
    "read_query_relations",
    "read_scored",
    "read_tig",
    "relation_breakdown",
    "source_relations",
    "write_report",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
