"""Settings of the Typed Idea Graph pipeline and the choices its options take (SPEC §4).

Light to import (no numerical library), so that ``creagraph tig --help`` shows the defaults
of :class:`TigConfig` and :class:`ScoreConfig` without loading NumPy. The classes are
re-exported where they are used: :class:`TigConfig` from :mod:`creagraph.tig.population`,
:class:`ScoreConfig` from :mod:`creagraph.tig.score`.

Every choice is a :class:`enum.StrEnum`: a member equals its string value, so either may be
passed where a choice is expected.

Examples
--------
>>> TigConfig().cluster_method == ClusterMethod.auto
True
>>> [m.value for m in Centrality]
['pagerank', 'degree']
>>> TigConfig(centrality="closeness")
Traceback (most recent call last):
...
ValueError: centrality must be 'pagerank' or 'degree'
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from creagraph.core.registry import Registry

__all__ = [
    "ClusterMethod",
    "Centrality",
    "Source",
    "SOURCES",
    "CoreIdea",
    "ExtractorKind",
    "EXTRACTORS",
    "GraphFormat",
    "DEFAULT_WEIGHTS",
    "DEFAULT_EPSILON",
    "DEFAULT_TOP_K",
    "DEFAULT_MIN_MODELS",
    "TigConfig",
    "ScoreConfig",
]


class ClusterMethod(StrEnum):
    """How per-type clusters are found (:func:`creagraph.tig.cluster.cluster_nodes`)."""

    auto = "auto"
    leidenalg = "leidenalg"
    igraph = "igraph"
    components = "components"


class Centrality(StrEnum):
    """Node centrality behind the ClichéScore (:func:`creagraph.tig.graph.node_centrality`)."""

    pagerank = "pagerank"
    degree = "degree"


#: Where a population comes from: a responses JSONL file or a shared-folder adapter
#: (:mod:`creagraph.tig.adapters`), by name; ``module:attr`` names a user's callable that
#: returns :class:`~creagraph.tig.schema.Response` objects (:func:`creagraph.tig.api.
#: load_population`; a ``context`` parameter receives :class:`creagraph.tig.api.
#: SourceContext`).
SOURCES = Registry(
    "population source",
    entries={
        "jsonl": ("creagraph.tig.api:jsonl_source", "a responses JSONL file"),
        "noveltybench": ("creagraph.tig.api:noveltybench_source",
                         "the curated NoveltyBench population of the shared folder"),
        "aut": ("creagraph.tig.api:aut_source",
                "the MCTB Alternative Uses population of the shared folder"),
    },
)

#: The built-in population sources as a choice, derived from :data:`SOURCES`.
Source = StrEnum("Source", {name: name for name in SOURCES.names()})  # type: ignore[misc]


class CoreIdea(StrEnum):
    """The Core Idea of a NoveltyBench generation: its first content sentence or all of it."""

    first_sentence = "first_sentence"
    full = "full"


#: Atom extraction backends (:mod:`creagraph.tig.atoms`) by name: offline, pre-extracted
#: atoms from a file (``json``) or an LLM; ``module:attr`` names a user's extractor class
#: (``name`` and ``extract(responses)``, :class:`creagraph.tig.atoms_base.AtomExtractor`).
EXTRACTORS = Registry(
    "extractor",
    required=("name", "extract"),
    entries={
        "offline": ("creagraph.tig.atoms:OfflineExtractor", "rules and the embedder, no LLM"),
        "json": ("creagraph.tig.api:json_extractor", "pre-extracted atoms from a file"),
        "llm": ("creagraph.tig.api:llm_extractor", "an OpenAI-compatible chat model"),
    },
)

#: The built-in extractors as a choice, derived from :data:`EXTRACTORS`.
ExtractorKind = StrEnum(  # type: ignore[misc]
    "ExtractorKind", {name: name for name in EXTRACTORS.names()}
)


class GraphFormat(StrEnum):
    """File format of the written Typed Idea Graphs (:mod:`creagraph.tig.graph`)."""

    graphml = "graphml"
    json = "json"
    both = "both"


#: ClichéScore weights (coverage, centrality, convergence) and smoothing (SPEC §4.5).
DEFAULT_WEIGHTS: tuple[float, float, float] = (0.5, 0.25, 0.25)
DEFAULT_EPSILON = 0.05

#: Anchors per comparison, and models a cliché must span (:mod:`creagraph.tig.anchors`).
DEFAULT_TOP_K = 5
DEFAULT_MIN_MODELS = 2


@dataclass(frozen=True)
class TigConfig:
    """Parameters of the population pipeline (defaults tuned for all-MiniLM-L6-v2).

    Attributes
    ----------
    canonical_threshold : float
        Cosine similarity for two forms to be one canonical atom (near-synonyms).
    similarity_threshold : float
        Cosine similarity for a same-type similarity edge (related ideas).
    cluster_method : ClusterMethod or str
        See :func:`creagraph.tig.cluster.cluster_nodes`.
    resolution : float
        Leiden modularity resolution.
    hierarchical, max_levels, min_split_size
        Hierarchical Leiden (see :func:`~creagraph.tig.cluster.cluster_nodes`).
    min_component_weight : float
        Edge cut of the connected-components method.
    seed : int
        Leiden seed.
    centrality : Centrality or str
        Node centrality behind the ClichéScore's centrality factor.
    weights, epsilon
        ClichéScore weights and smoothing (:func:`creagraph.tig.cliche.cliche_score`).
    keep_embeddings : bool
        Store label embeddings in the canonical records.
    """

    canonical_threshold: float = 0.8
    similarity_threshold: float = 0.5
    cluster_method: str = ClusterMethod.auto.value
    resolution: float = 1.0
    hierarchical: bool = False
    max_levels: int = 2
    min_split_size: int = 8
    min_component_weight: float = 0.6
    seed: int = 0
    centrality: str = Centrality.pagerank.value
    weights: tuple[float, float, float] = DEFAULT_WEIGHTS
    epsilon: float = DEFAULT_EPSILON
    keep_embeddings: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.similarity_threshold <= self.canonical_threshold <= 1:
            raise ValueError(
                "need 0 < similarity_threshold <= canonical_threshold <= 1, got "
                f"{self.similarity_threshold} and {self.canonical_threshold}"
            )
        if self.resolution <= 0:
            raise ValueError("resolution must be positive")
        if self.centrality not in ("pagerank", "degree"):
            raise ValueError("centrality must be 'pagerank' or 'degree'")


@dataclass(frozen=True)
class ScoreConfig:
    """Parameters of the response novelty score (see :mod:`creagraph.tig.score`).

    Attributes
    ----------
    neighbour_share : float
        ρ: the share of the reference population averaged as nearest neighbours.
    cliche_weight : float
        w in the plain-distance baseline ``B = D · (1 − w·H)``; in [0, 1].
    match_threshold : float
        τ: cosine similarity at which a reference idea is a paraphrase of the response's
        idea (the synonym threshold; SPEC §4.10).
    rarity_weight : float
        α in ``N = α·R + (1 − α)·D``; in [0, 1].
    bootstrap : int
        Resamples behind each model's novelty interval.
    block : int
        Query rows per nearest-neighbour block (memory: block × reference size floats).
    """

    neighbour_share: float = 0.15
    cliche_weight: float = 0.1
    match_threshold: float = 0.8
    rarity_weight: float = 0.5
    bootstrap: int = 2000
    block: int = 1024

    def __post_init__(self) -> None:
        if not 0 < self.neighbour_share <= 1:
            raise ValueError(f"neighbour_share must lie in (0, 1], got {self.neighbour_share}")
        if not 0 <= self.cliche_weight <= 1:
            raise ValueError(f"cliche_weight must lie in [0, 1], got {self.cliche_weight}")
        if not 0 < self.match_threshold <= 1:
            raise ValueError(f"match_threshold must lie in (0, 1], got {self.match_threshold}")
        if not 0 <= self.rarity_weight <= 1:
            raise ValueError(f"rarity_weight must lie in [0, 1], got {self.rarity_weight}")
        if self.bootstrap < 0:
            raise ValueError("bootstrap must be non-negative")
        if self.block < 1:
            raise ValueError("block must be positive")
