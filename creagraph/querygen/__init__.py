"""CREATE query generation from a knowledge graph, with verified source paths and the
graph's ceiling (SPEC §3.1, §3.8).

- :func:`generate_queries` / :func:`write_queries` — Algorithm 1 over any backend;
- :func:`oracle_paths`, :func:`enumerate_paths` — a query's graph paths, scored like
  model paths; :func:`ceiling_fraction` and :func:`graph_path_recall` relate a model's
  scores to them;
- catalogues (:mod:`creagraph.querygen.catalogue`), sampling, filters and phrasing in their
  own modules; :mod:`creagraph.querygen.llm` for the optional LLM rewrite.
"""

from typing import TYPE_CHECKING

from creagraph.core.lazy import lazy_exports

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from creagraph.querygen.catalogue import (
        HolderType,
        Phrasing,
        SourceRelation,
        load_blocklist,
        load_holder_types,
        load_phrasing,
        load_source_relations,
    )
    from creagraph.querygen.filters import FilterReport, is_trivial, stratified_take
    from creagraph.querygen.generate import (
        EmptySelectionError,
        GenerationConfig,
        GenerationResult,
        build_record,
        generate_queries,
        query_id,
        write_queries,
    )
    from creagraph.querygen.llm import ChatClient, LLMError, rewrite_queries, rewrite_query
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
        path_key,
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
    )

#: public name → defining module; imported on first use so that `creagraph --help`
#: (which loads this package's CLI) does not pay for numpy, scipy and the like.
_EXPORTS: dict[str, str] = {
    "HolderType": "creagraph.querygen.catalogue",
    "Phrasing": "creagraph.querygen.catalogue",
    "SourceRelation": "creagraph.querygen.catalogue",
    "load_blocklist": "creagraph.querygen.catalogue",
    "load_holder_types": "creagraph.querygen.catalogue",
    "load_phrasing": "creagraph.querygen.catalogue",
    "load_source_relations": "creagraph.querygen.catalogue",
    "FilterReport": "creagraph.querygen.filters",
    "is_trivial": "creagraph.querygen.filters",
    "stratified_take": "creagraph.querygen.filters",
    "EmptySelectionError": "creagraph.querygen.generate",
    "GenerationConfig": "creagraph.querygen.generate",
    "GenerationResult": "creagraph.querygen.generate",
    "build_record": "creagraph.querygen.generate",
    "generate_queries": "creagraph.querygen.generate",
    "query_id": "creagraph.querygen.generate",
    "write_queries": "creagraph.querygen.generate",
    "ChatClient": "creagraph.querygen.llm",
    "LLMError": "creagraph.querygen.llm",
    "rewrite_queries": "creagraph.querygen.llm",
    "rewrite_query": "creagraph.querygen.llm",
    "Enumeration": "creagraph.querygen.oracle",
    "GraphCache": "creagraph.querygen.oracle",
    "GraphPath": "creagraph.querygen.oracle",
    "OracleBudget": "creagraph.querygen.oracle",
    "OraclePath": "creagraph.querygen.oracle",
    "OracleResult": "creagraph.querygen.oracle",
    "ceiling_fraction": "creagraph.querygen.oracle",
    "enumerate_paths": "creagraph.querygen.oracle",
    "graph_path_recall": "creagraph.querygen.oracle",
    "oracle_paths": "creagraph.querygen.oracle",
    "oracle_paths_many": "creagraph.querygen.oracle",
    "path_key": "creagraph.querygen.oracle",
    "compose_query": "creagraph.querygen.phrasing",
    "condition_phrase": "creagraph.querygen.phrasing",
    "describe_entity": "creagraph.querygen.phrasing",
    "fill_template": "creagraph.querygen.phrasing",
    "holder_phrase": "creagraph.querygen.phrasing",
    "indefinite_article": "creagraph.querygen.phrasing",
    "label_problem": "creagraph.querygen.phrasing",
    "needs_definite_article": "creagraph.querygen.phrasing",
    "relation_phrase": "creagraph.querygen.phrasing",
    "short_description": "creagraph.querygen.phrasing",
    "Candidate": "creagraph.querygen.sampling",
    "PairSampler": "creagraph.querygen.sampling",
    "edge_rejection": "creagraph.querygen.sampling",
    "pair_from_index": "creagraph.querygen.sampling",
    "sample_expansion": "creagraph.querygen.sampling",
    "select_categories": "creagraph.querygen.sampling",
}

__all__ = [
    "SourceRelation",
    "Phrasing",
    "HolderType",
    "load_source_relations",
    "load_blocklist",
    "load_phrasing",
    "load_holder_types",
    "Candidate",
    "PairSampler",
    "select_categories",
    "pair_from_index",
    "edge_rejection",
    "sample_expansion",
    "FilterReport",
    "is_trivial",
    "stratified_take",
    "GenerationConfig",
    "GenerationResult",
    "generate_queries",
    "build_record",
    "query_id",
    "write_queries",
    "OracleBudget",
    "GraphPath",
    "Enumeration",
    "OraclePath",
    "OracleResult",
    "enumerate_paths",
    "oracle_paths",
    "oracle_paths_many",
    "GraphCache",
    "ceiling_fraction",
    "graph_path_recall",
    "path_key",
    "indefinite_article",
    "needs_definite_article",
    "fill_template",
    "condition_phrase",
    "relation_phrase",
    "holder_phrase",
    "describe_entity",
    "compose_query",
    "ChatClient",
    "LLMError",
    "rewrite_query",
    "rewrite_queries",
    "EmptySelectionError",
    "short_description",
    "label_problem",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
