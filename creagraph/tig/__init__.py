"""Ekphrasis novelty anchors from Typed Idea Graphs (SPEC §4).

From many models' responses to the same brief: extract typed atoms from each Core Idea
(:mod:`~creagraph.tig.atoms`), group synonyms (:mod:`~creagraph.tig.canonical`), build the
task's Typed Idea Graph (:mod:`~creagraph.tig.graph`), cluster each type with Leiden
(:mod:`~creagraph.tig.cluster`), score clusters as clichés (:mod:`~creagraph.tig.cliche`),
and turn the top ones into checklist anchors (:mod:`~creagraph.tig.anchors`) — for model
comparisons always from a leave-two-models-out reference population
(:mod:`~creagraph.tig.l2mo`) — with audit records for human review
(:mod:`~creagraph.tig.audit`); score each response's novelty against the other models'
responses (:mod:`~creagraph.tig.score`), leaving out atoms that restate the brief
(:mod:`~creagraph.tig.brief`).

Typical use::

    from creagraph.tig import build_atom_tables, l2mo_results, read_responses
    tables = build_atom_tables(read_responses("responses.jsonl"))
    for result in l2mo_results(tables):
        for anchor in result.anchors:
            print(result.comparison_key, anchor.text)
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name → defining module; imported on first use so that `creagraph --help`
#: (which loads ``creagraph.tig.cli``) does not pay for numpy, scipy or igraph.
_EXPORTS: dict[str, str] = {
    "ResponseScore": "creagraph.tig.score",
    "ScoreConfig": "creagraph.tig.score",
    "ScoreRun": "creagraph.tig.score",
    "novelty_value": "creagraph.tig.score",
    "score_responses": "creagraph.tig.score",
    "score_tables": "creagraph.tig.score",
    "write_scores": "creagraph.tig.score",
    "brief_terms": "creagraph.tig.brief",
    "brief_concept": "creagraph.tig.brief",
    "is_from_brief": "creagraph.tig.brief",
    "task_kind": "creagraph.tig.brief",
    "ATOM_TYPES": "creagraph.tig.schema",
    "Atom": "creagraph.tig.schema",
    "AtomExtractor": "creagraph.tig.atoms",
    "AtomTable": "creagraph.tig.population",
    "AuditRecord": "creagraph.tig.schema",
    "CanonicalAtom": "creagraph.tig.schema",
    "ChecklistAnchor": "creagraph.tig.schema",
    "Cluster": "creagraph.tig.schema",
    "Clustering": "creagraph.tig.cluster",
    "L2MOResult": "creagraph.tig.l2mo",
    "OfflineExtractor": "creagraph.tig.atoms",
    "OpenAIChatExtractor": "creagraph.tig.atoms",
    "Population": "creagraph.tig.population",
    "PreExtractedAtoms": "creagraph.tig.atoms",
    "RELATION_RULES": "creagraph.tig.schema",
    "Response": "creagraph.tig.schema",
    "TYPE_DESCRIPTIONS": "creagraph.tig.schema",
    "TigConfig": "creagraph.tig.population",
    "adjusted_rand_index": "creagraph.tig.evaluation",
    "anchor_text": "creagraph.tig.anchors",
    "anchors_for_population": "creagraph.tig.anchors",
    "assign_types": "creagraph.tig.atoms",
    "atom_form": "creagraph.tig.atoms",
    "audit_records_for_anchors": "creagraph.tig.audit",
    "build_atom_table": "creagraph.tig.population",
    "build_atom_tables": "creagraph.tig.population",
    "build_population": "creagraph.tig.population",
    "canonical_leaders": "creagraph.tig.canonical",
    "canonical_order": "creagraph.tig.canonical",
    "centrality_share": "creagraph.tig.cliche",
    "chunk_phrases": "creagraph.tig.atoms",
    "cliche_score": "creagraph.tig.cliche",
    "cluster_nodes": "creagraph.tig.cluster",
    "comparison_key": "creagraph.tig.schema",
    "default_shared_dir": "creagraph.tig.adapters",
    "first_content_sentence": "creagraph.tig.adapters",
    "graph_to_json": "creagraph.tig.graph",
    "internal_convergence": "creagraph.tig.cliche",
    "is_grounded": "creagraph.tig.atoms",
    "l2mo_population": "creagraph.tig.l2mo",
    "l2mo_population_from_scratch": "creagraph.tig.l2mo",
    "l2mo_results": "creagraph.tig.l2mo",
    "leakage_violations": "creagraph.tig.audit",
    "leiden_available": "creagraph.tig.cluster",
    "load_aut_population": "creagraph.tig.adapters",
    "load_noveltybench_curated": "creagraph.tig.adapters",
    "model_coverage": "creagraph.tig.cliche",
    "model_pairs": "creagraph.tig.l2mo",
    "noveltybench_partitions": "creagraph.tig.adapters",
    "parse_json_lenient": "creagraph.tig.atoms",
    "read_atoms": "creagraph.tig.io",
    "read_audit": "creagraph.tig.audit",
    "read_responses": "creagraph.tig.io",
    "reference_models": "creagraph.tig.l2mo",
    "response_labels": "creagraph.tig.evaluation",
    "select_cliche_clusters": "creagraph.tig.anchors",
    "stem_key": "creagraph.tig.canonical",
    "to_igraph": "creagraph.tig.graph",
    "validate_audit_record": "creagraph.tig.audit",
    "write_atoms": "creagraph.tig.io",
    "write_audit": "creagraph.tig.audit",
    "write_graph_json": "creagraph.tig.graph",
    "write_graphml": "creagraph.tig.graph",
    "write_responses": "creagraph.tig.io",
}


__all__ = [
    "ResponseScore",
    "ScoreConfig",
    "ScoreRun",
    "novelty_value",
    "score_responses",
    "score_tables",
    "write_scores",
    "brief_terms",
    "brief_concept",
    "is_from_brief",
    "task_kind",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'creagraph.tig' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
