"""Ekphrasis novelty anchors from Typed Idea Graphs (SPEC §4).

From many models' responses to the same brief: extract typed atoms from each Core Idea
(:mod:`~creagraph.tig.atoms`), group synonyms (:mod:`~creagraph.tig.canonical`), build the
task's Typed Idea Graph (:mod:`~creagraph.tig.graph`), cluster each type with Leiden
(:mod:`~creagraph.tig.cluster`), score clusters as clichés (:mod:`~creagraph.tig.cliche`),
and turn the top ones into checklist anchors (:mod:`~creagraph.tig.anchors`) — for model
comparisons always from a leave-two-models-out reference population
(:mod:`~creagraph.tig.l2mo`) — with audit records for human review
(:mod:`~creagraph.tig.audit`).

Typical use::

    from creagraph.tig import build_atom_tables, l2mo_results, read_responses
    tables = build_atom_tables(read_responses("responses.jsonl"))
    for result in l2mo_results(tables):
        for anchor in result.anchors:
            print(result.comparison_key, anchor.text)
"""

from creagraph.tig.adapters import (
    default_shared_dir,
    first_content_sentence,
    load_aut_population,
    load_noveltybench_curated,
    noveltybench_partitions,
)
from creagraph.tig.anchors import anchor_text, anchors_for_population, select_cliche_clusters
from creagraph.tig.atoms import (
    AtomExtractor,
    OfflineExtractor,
    OpenAIChatExtractor,
    PreExtractedAtoms,
    assign_types,
    atom_form,
    chunk_phrases,
    is_grounded,
    parse_json_lenient,
)
from creagraph.tig.audit import (
    audit_records_for_anchors,
    leakage_violations,
    read_audit,
    validate_audit_record,
    write_audit,
)
from creagraph.tig.canonical import canonical_leaders, canonical_order, stem_key
from creagraph.tig.cliche import (
    centrality_share,
    cliche_score,
    internal_convergence,
    model_coverage,
)
from creagraph.tig.cluster import Clustering, cluster_nodes, leiden_available
from creagraph.tig.evaluation import adjusted_rand_index, response_labels
from creagraph.tig.graph import graph_to_json, to_igraph, write_graph_json, write_graphml
from creagraph.tig.io import read_atoms, read_responses, write_atoms, write_responses
from creagraph.tig.l2mo import (
    L2MOResult,
    l2mo_population,
    l2mo_population_from_scratch,
    l2mo_results,
    model_pairs,
    reference_models,
)
from creagraph.tig.population import (
    AtomTable,
    Population,
    TigConfig,
    build_atom_table,
    build_atom_tables,
    build_population,
)
from creagraph.tig.schema import (
    ATOM_TYPES,
    RELATION_RULES,
    TYPE_DESCRIPTIONS,
    Atom,
    AuditRecord,
    CanonicalAtom,
    ChecklistAnchor,
    Cluster,
    Response,
    comparison_key,
)

__all__ = [
    "ATOM_TYPES",
    "RELATION_RULES",
    "TYPE_DESCRIPTIONS",
    "Atom",
    "AtomExtractor",
    "AtomTable",
    "AuditRecord",
    "CanonicalAtom",
    "ChecklistAnchor",
    "Cluster",
    "Clustering",
    "L2MOResult",
    "OfflineExtractor",
    "OpenAIChatExtractor",
    "Population",
    "PreExtractedAtoms",
    "Response",
    "TigConfig",
    "adjusted_rand_index",
    "anchor_text",
    "anchors_for_population",
    "assign_types",
    "atom_form",
    "audit_records_for_anchors",
    "build_atom_table",
    "build_atom_tables",
    "build_population",
    "canonical_leaders",
    "canonical_order",
    "centrality_share",
    "chunk_phrases",
    "cliche_score",
    "cluster_nodes",
    "comparison_key",
    "default_shared_dir",
    "first_content_sentence",
    "graph_to_json",
    "internal_convergence",
    "is_grounded",
    "l2mo_population",
    "l2mo_population_from_scratch",
    "l2mo_results",
    "leakage_violations",
    "leiden_available",
    "load_aut_population",
    "load_noveltybench_curated",
    "model_coverage",
    "model_pairs",
    "noveltybench_partitions",
    "parse_json_lenient",
    "read_atoms",
    "read_audit",
    "read_responses",
    "reference_models",
    "response_labels",
    "select_cliche_clusters",
    "stem_key",
    "to_igraph",
    "validate_audit_record",
    "write_atoms",
    "write_audit",
    "write_graph_json",
    "write_graphml",
    "write_responses",
]
