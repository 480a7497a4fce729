"""CREATE query generation from a knowledge graph, with verified source paths and the
graph's ceiling (SPEC §3.1, §3.8).

- :func:`generate_queries` / :func:`write_queries` — Algorithm 1 over any backend;
- :func:`oracle_paths`, :func:`enumerate_paths` — a query's graph paths, scored like
  model paths; :func:`ceiling_fraction` and :func:`graph_path_recall` relate a model's
  scores to them;
- catalogues (:mod:`creagraph.querygen.catalogue`), sampling, filters and phrasing in their
  own modules; :mod:`creagraph.querygen.llm` for the optional LLM rewrite.
"""

# ruff: noqa: F401 -- the imports below are for type checkers only; the public names are
# listed once, in _MODULES, and __all__ is built from them

from typing import TYPE_CHECKING

from creagraph.core.lazy import lazy_exports

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from creagraph.querygen.catalogue import (
        HolderType,
        Phrasing,
        SourceRelation,
        TargetPolicy,
        load_blocklist,
        load_holder_types,
        load_phrasing,
        load_source_relations,
        load_target_policy,
    )
    from creagraph.querygen.filters import FilterReport, is_trivial, stratified_take, triviality
    from creagraph.querygen.generate import (
        EmptySelectionError,
        GenerationConfig,
        GenerationResult,
        build_record,
        generate_queries,
        generate_query_file,
        query_id,
        write_queries,
    )
    from creagraph.querygen.llm import (
        ChatClient,
        LLMError,
        rewrite_queries,
        rewrite_query,
        rewrite_summary,
        rewrite_with_graph,
    )
    from creagraph.querygen.oracle import (
        Enumeration,
        GraphCache,
        GraphPath,
        OracleBudget,
        OraclePath,
        OracleResult,
        ceiling_fraction,
        enumerate_paths,
        graph_path_recall,
        oracle_paths,
        oracle_paths_many,
        oracle_summary,
        path_key,
        read_query_records,
        write_oracle_records,
    )
    from creagraph.querygen.phrasing import (
        compose_query,
        condition_phrase,
        describe_entity,
        fill_template,
        holder_phrase,
        indefinite_article,
        label_problem,
        needs_definite_article,
        relation_phrase,
        short_description,
    )
    from creagraph.querygen.sampling import (
        Candidate,
        PairSampler,
        edge_rejection,
        pair_from_index,
        sample_expansion,
        select_categories,
        target_policy_rejection,
    )

#: defining module → its public names, imported on first use so that `creagraph --help`
#: (which loads this package's CLI) does not pay for numpy, scipy and the like.
_MODULES: dict[str, tuple[str, ...]] = {
    "creagraph.querygen.catalogue": (
        "HolderType", "Phrasing", "SourceRelation", "TargetPolicy", "load_blocklist",
        "load_holder_types", "load_phrasing", "load_source_relations", "load_target_policy",
    ),
    "creagraph.querygen.filters": ("FilterReport", "is_trivial", "stratified_take", "triviality"),
    "creagraph.querygen.generate": (
        "EmptySelectionError", "GenerationConfig", "GenerationResult", "build_record",
        "generate_queries", "generate_query_file", "query_id", "write_queries",
    ),
    "creagraph.querygen.llm": (
        "ChatClient", "LLMError", "rewrite_queries", "rewrite_query", "rewrite_summary",
        "rewrite_with_graph",
    ),
    "creagraph.querygen.oracle": (
        "Enumeration", "GraphCache", "GraphPath", "OracleBudget", "OraclePath", "OracleResult",
        "ceiling_fraction", "enumerate_paths", "graph_path_recall", "oracle_paths",
        "oracle_paths_many", "oracle_summary", "path_key", "read_query_records",
        "write_oracle_records",
    ),
    "creagraph.querygen.phrasing": (
        "compose_query", "condition_phrase", "describe_entity", "fill_template",
        "holder_phrase", "indefinite_article", "label_problem", "needs_definite_article",
        "relation_phrase", "short_description",
    ),
    "creagraph.querygen.sampling": (
        "Candidate", "PairSampler", "edge_rejection", "pair_from_index", "sample_expansion",
        "select_categories", "target_policy_rejection",
    ),
}  # fmt: skip
_EXPORTS: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
