"""CREATE query generation from a knowledge graph, with verified source paths and the
graph's ceiling (SPEC §3.1, §3.8).

- :func:`generate_queries` / :func:`write_queries` — Algorithm 1 over any backend;
- :func:`oracle_paths`, :func:`enumerate_paths` — a query's graph paths, scored like
  model paths; :func:`ceiling_fraction` and :func:`graph_path_recall` relate a model's
  scores to them;
- catalogues (:mod:`creagraph.querygen.catalogue`), sampling, filters and phrasing in their
  own modules; :mod:`creagraph.querygen.llm` for the optional LLM rewrite.
"""

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
