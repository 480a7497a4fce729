"""Records of the Typed Idea Graph pipeline and the atom-type schema (SPEC §4).

The six atom types, their descriptions (used by the offline extractor to type phrases by
embedding similarity and by the LLM prompt), the typed relations drawn between atoms of one
response, and the audit vocabulary are defined here and nowhere else.

Records are frozen dataclasses over plain values, so they hash, compare and serialise
without surprises; ``to_dict``/``from_dict`` give the JSON form.

References
----------
SPEC §4 "Ekphrasis novelty: Typed Idea Graphs" (docs/spec.md).

Examples
--------
>>> r = Response(task_id="calm", brief="Show calm.", model="m1", sample=0,
...              core_idea="A fern unfurls inside a glass bell jar.")
>>> r.response_id
'calm|m1|0'
>>> Atom("carrier", "fern").type
'carrier'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "ATOM_TYPES",
    "TYPE_DESCRIPTIONS",
    "TYPE_PROTOTYPES",
    "EXCLUDED_ASPECT_PROTOTYPES",
    "RELATION_RULES",
    "CRITERIA",
    "CRITERION_CODES",
    "ACTIONS",
    "Response",
    "Atom",
    "CanonicalAtom",
    "Cluster",
    "ChecklistAnchor",
    "AuditRecord",
    "check_atom_type",
    "comparison_key",
    "join_labels",
]

#: The atom types, in the order used for sorting and display.
ATOM_TYPES: tuple[str, ...] = (
    "carrier",
    "motif",
    "mechanism",
    "setting",
    "purpose",
    "perspective",
)

#: One-line definition of each type (shown to LLM extractors and in reports).
TYPE_DESCRIPTIONS: dict[str, str] = {
    "carrier": "the concrete object, creature, person or scene that carries the concept",
    "motif": "a recurring visual symbol or emblem used in the image",
    "mechanism": (
        "how the concept becomes visible: the transformation, fusion, material swap or "
        "process shown"
    ),
    "setting": "the place, environment or backdrop where the image happens",
    "purpose": "what the image communicates: the feeling, idea or message conveyed",
    "perspective": "the viewpoint, scale or framing choice (close-up, aerial, from inside)",
}

#: Short example phrases per type; the offline extractor types a phrase by its embedding
#: similarity to these (maximum over a type's prototypes).
TYPE_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "carrier": (
        "a concrete object",
        "an everyday household object",
        "an animal or creature",
        "a person or character",
        "a famous person's name",
        "a building, machine or vehicle",
        "a tree, flower or plant",
        "a fruit or food",
        "a tool or instrument",
        "a book, a lamp, a clock",
    ),
    "motif": (
        "a recurring visual symbol",
        "a symbolic emblem",
        "a repeated pattern of shapes",
        "a heart, a key, a feather, an eye",
        "threads, roots and branches",
        "birds, butterflies and stars",
    ),
    "mechanism": (
        "transforming into something else",
        "made of an unexpected material",
        "merging two things together",
        "melting, dissolving and reforming",
        "growing out of",
        "turning into",
    ),
    "setting": (
        "a place or location",
        "a landscape or natural environment",
        "a city street",
        "inside a room",
        "in a forest, at sea, in the sky",
        "a desert or a mountain",
    ),
    "purpose": (
        "to express an emotion",
        "the meaning or message of the image",
        "a feeling of hope and calm",
        "an abstract idea like freedom, memory or time",
        "to symbolize change",
        "evoking loneliness and connection",
    ),
    "perspective": (
        "seen from above",
        "a close-up view",
        "a bird's-eye view",
        "a wide panoramic shot",
        "viewed from inside",
        "the camera angle",
    ),
}

#: Aspects SPEC §4.1 says not to extract unless central (lighting, colour, texture,
#: composition). The offline extractor drops phrases closest to these.
EXCLUDED_ASPECT_PROTOTYPES: tuple[str, ...] = (
    "soft warm lighting",
    "vivid bright colors",
    "a pastel color palette",
    "a rough grainy texture",
    "a symmetrical composition",
    "dramatic shadows and highlights",
)

#: Typed relations between atoms of one response: (source type, target type, relation).
#: Edges run from source to target; both directions of a pair are never both listed.
RELATION_RULES: tuple[tuple[str, str, str], ...] = (
    ("motif", "purpose", "supports"),
    ("carrier", "purpose", "carries"),
    ("mechanism", "carrier", "realises"),
    ("mechanism", "purpose", "expresses"),
    ("setting", "carrier", "situates"),
    ("perspective", "carrier", "frames"),
    ("motif", "carrier", "adorns"),
)

#: The five audit criteria of SPEC §4.8, as column names.
CRITERIA: tuple[str, ...] = (
    "cluster_validity",
    "visual_specificity",
    "cluster_faithfulness",
    "candidate_non_leakage",
    "actionability",
)

#: Allowed values of a criterion code; the empty string means "not yet audited".
CRITERION_CODES: tuple[str, ...] = ("yes", "partly", "no", "")

#: Allowed overall actions; the empty string means "not yet audited".
ACTIONS: tuple[str, ...] = ("accept", "revise", "exclude", "")


def check_atom_type(value: str) -> str:
    """Return ``value`` if it is one of :data:`ATOM_TYPES`, else raise ``ValueError``.

    Examples
    --------
    >>> check_atom_type("motif")
    'motif'
    """
    if value not in ATOM_TYPES:
        raise ValueError(f"unknown atom type {value!r} (expected one of {', '.join(ATOM_TYPES)})")
    return value


def comparison_key(model_a: str, model_b: str) -> str:
    """Order-free key of a model pair, ``"a||b"`` with the names sorted.

    Examples
    --------
    >>> comparison_key("zeta", "alpha")
    'alpha||zeta'
    """
    if model_a == model_b:
        raise ValueError(f"a comparison needs two different models, got {model_a!r} twice")
    first, second = sorted((model_a, model_b))
    return f"{first}||{second}"


@dataclass(frozen=True)
class Response:
    """One model response to a brief.

    ``response_id`` defaults to ``"{task_id}|{model}|{sample}"`` and must be unique in a
    population; ``meta`` holds source-specific extras (kept out of comparisons); ``kind``
    is an explicit task kind (:data:`creagraph.tig.brief.TASK_KINDS`) overriding what is
    read from the brief.
    """

    task_id: str
    brief: str
    model: str
    sample: int
    core_idea: str
    visual_description: str = ""
    family: str | None = None
    response_id: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    kind: str | None = None

    def __post_init__(self) -> None:
        if not self.response_id:
            object.__setattr__(self, "response_id", f"{self.task_id}|{self.model}|{self.sample}")

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        if not record["meta"]:
            del record["meta"]
        if record["kind"] is None:
            del record["kind"]
        return record


@dataclass(frozen=True)
class Atom:
    """A typed phrase taken from a Core Idea (``text`` is a span of the idea)."""

    type: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True)
class CanonicalAtom:
    """A group of synonymous atoms of one type within one task's population (SPEC §4.2).

    ``provenance`` lists ``(atom_id, response_id, model, task_id, sample)`` for every atom
    in the group; ``atom_id`` is ``"{response_id}#{position}"``.
    """

    id: str
    task_id: str
    type: str
    label: str
    aliases: tuple[str, ...]
    count: int
    provenance: tuple[tuple[str, str, str, str, int], ...]
    embedding: tuple[float, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["aliases"] = list(self.aliases)
        record["provenance"] = [
            {"atom_id": a, "response_id": r, "model": m, "task_id": t, "sample": s}
            for a, r, m, t, s in self.provenance
        ]
        if self.embedding is None:
            del record["embedding"]
        else:
            record["embedding"] = list(self.embedding)
        return record


@dataclass(frozen=True)
class Cluster:
    """A cluster of canonical atoms of one type, with its ClichéScore and factors."""

    id: str
    task_id: str
    type: str
    canonical_ids: tuple[str, ...]
    labels: tuple[str, ...]
    atom_count: int
    models: tuple[str, ...]
    coverage: float
    centrality: float
    convergence: float
    cliche_score: float
    level: int = 0
    parent_id: str | None = None
    #: the two shares ``coverage`` combines (:func:`creagraph.tig.cliche.coverage_share`)
    model_share: float = 0.0
    response_share: float = 0.0

    @property
    def summary(self) -> str:
        """The cluster's top labels joined as a phrase ("plants, leaves or green growth")."""
        return join_labels(self.labels[:3])

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["canonical_ids"] = list(self.canonical_ids)
        record["labels"] = list(self.labels)
        record["models"] = list(self.models)
        record["summary"] = self.summary
        # coherence: the cluster's internal convergence (mean within-cluster similarity)
        record["coherence"] = self.convergence
        return record


@dataclass(frozen=True)
class ChecklistAnchor:
    """A natural-language novelty checklist item built from one cliché cluster (SPEC §4.7).

    ``comparison_key`` is ``""`` for anchors built from the whole population and
    ``"a||b"`` for leave-two-models-out anchors used to compare models a and b.
    ``atom_ids`` and ``response_ids`` trace the item back to the atoms of the reference
    population that formed its cluster; ``cluster_models`` are the models whose responses
    hit it, ``reference_models`` all models of the reference population.
    """

    item_id: str
    task_id: str
    comparison_key: str
    rank: int
    text: str
    cluster_id: str
    cluster_summary: str
    atom_type: str
    labels: tuple[str, ...]
    canonical_ids: tuple[str, ...]
    atom_ids: tuple[str, ...]
    response_ids: tuple[str, ...]
    reference_models: tuple[str, ...]
    cluster_models: tuple[str, ...]
    cliche_score: float
    coverage: float
    centrality: float
    convergence: float
    #: the two shares ``coverage`` combines (:func:`creagraph.tig.cliche.coverage_share`)
    model_share: float = 0.0
    response_share: float = 0.0
    #: who named it (:mod:`creagraph.tig.anchor_writer`): empty for the offline rules
    #: (and then left out of :meth:`to_dict`); else the writer, its model, the labels the
    #: offline rules named (replaced by the writer's) and the writer's reason
    writer: str = ""
    writer_model: str = ""
    offline_labels: tuple[str, ...] = ()
    writer_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        if not self.writer:
            for key in ("writer", "writer_model", "offline_labels", "writer_reason"):
                del record[key]
        else:
            record["offline_labels"] = list(record["offline_labels"])
        for key in ("labels", "canonical_ids", "atom_ids", "response_ids", "reference_models",
                    "cluster_models"):
            record[key] = list(record[key])
        record["coherence"] = self.convergence  # mean within-cluster similarity
        return record


@dataclass(frozen=True)
class AuditRecord:
    """One human audit of a checklist item (SPEC §4.8).

    Criterion codes are ``"yes"``, ``"partly"``, ``"no"`` or ``""`` (not yet audited);
    ``overall_action`` is ``"accept"``, ``"revise"``, ``"exclude"`` or ``""``.
    """

    audit_id: str
    task_id: str
    comparison_key: str
    checklist_item_id: str
    checklist_text: str
    cluster_id: str
    cluster_summary: str
    cluster_validity: str = ""
    visual_specificity: str = ""
    cluster_faithfulness: str = ""
    candidate_non_leakage: str = ""
    actionability: str = ""
    overall_action: str = ""
    revision_note: str = ""
    annotator_id: str = ""
    timestamp: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def join_labels(labels: tuple[str, ...] | list[str]) -> str:
    """Join labels as an English alternative: ``"a"``, ``"a or b"``, ``"a, b or c"``.

    Examples
    --------
    >>> join_labels(["plants", "leaves", "soft green growth"])
    'plants, leaves or soft green growth'
    """
    items = [str(x) for x in labels]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]
