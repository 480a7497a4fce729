"""Per-task atom tables and the population pipeline: canonical atoms → graph → clusters.

Two steps, so that leave-two-models-out (:mod:`creagraph.tig.l2mo`) does not redo work:

1. :func:`build_atom_tables` extracts the atoms of every response once, embeds every
   distinct atom form once (through the cached embedder), and keeps per task an
   :class:`AtomTable`: the responses, each atom occurrence (response, form, text), the form
   vectors and the same-type similarity blocks (computed on first use, then cached).
2. :func:`build_population` takes a table and the set of models to include, and computes
   only from those models' atoms: canonical groups (:mod:`creagraph.tig.canonical`), the
   Typed Idea Graph's edges (:mod:`creagraph.tig.graph`), per-type clusters
   (:mod:`creagraph.tig.cluster`) and ClichéScores (:mod:`creagraph.tig.cliche`).

Everything in step 2 is a function of the included atoms' forms, counts and vectors — not
of row indices — so a table built from a subset of responses and a larger table restricted
to the same subset give identical populations (tested).

Examples
--------
Pre-extracted atoms and the hashing embedder (the defaults are the offline extractor and
all-MiniLM-L6-v2):

>>> from creagraph.core.embeddings import HashingEmbedder
>>> from creagraph.tig.schema import Response, Atom
>>> from creagraph.tig.atoms import PreExtractedAtoms
>>> rs = [Response("t", "calm", m, 0, f"A {thing} in a jar")
...       for m, thing in (("a", "fern"), ("b", "fern"), ("c", "lamp"))]
>>> ex = PreExtractedAtoms({r.response_id: [Atom("carrier", r.core_idea.split()[1]),
...                                         Atom("setting", "jar")] for r in rs})
>>> tables = build_atom_tables(rs, ex, HashingEmbedder(64), show_progress=False)
>>> pop = build_population(tables["t"])
>>> [c.label for c in pop.canonical]
['fern', 'lamp', 'jar']
>>> [(c.labels, c.models, c.coverage, c.cliche_score) for c in pop.clusters]
[(('fern',), ('a', 'b'), 0.666667, 0.739233),
 (('lamp',), ('c',), 0.333333, 0.187919),
 (('jar',), ('a', 'b', 'c'), 1.0, 1.0)]
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from creagraph.core.progress import progress
from creagraph.tig.atoms import AtomExtractor, atom_form
from creagraph.tig.canonical import (
    canonical_id,
    canonical_leaders,
    canonical_order,
    round_similarity,
    stem_key,
)
from creagraph.tig.cliche import (
    centrality_share,
    cliche_score,
    coverage_share,
    internal_convergence,
    model_coverage,
    response_coverage,
)
from creagraph.tig.cluster import cluster_nodes, resolve_method
from creagraph.tig.config import TigConfig
from creagraph.tig.graph import (
    EdgeList,
    concat_edges,
    cooccurrence_edges,
    node_centrality,
    similarity_edges,
)
from creagraph.tig.schema import ATOM_TYPES, Atom, CanonicalAtom, Cluster, Response

__all__ = [
    "TigConfig",
    "AtomTable",
    "Population",
    "build_atom_table",
    "build_atom_tables",
    "build_population",
    "group_by_task",
]


@dataclass
class AtomTable:
    """All atoms of one task's responses, with form vectors (see the module docstring).

    Responses are sorted by ``response_id``; atoms by response, then position. Forms are
    sorted by (type, form text), so each type's forms are a contiguous slice.
    """

    task_id: str
    responses: list[Response]
    models: list[str]
    response_model: np.ndarray
    atom_response: np.ndarray
    atom_position: np.ndarray
    atom_form: np.ndarray
    atom_text: list[str]
    form_text: list[str]
    form_type: np.ndarray
    form_stem: list[str]
    form_vectors: np.ndarray
    type_slices: dict[str, tuple[int, int]]
    atom_from_brief: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    _similarity: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _provenance: list[tuple[str, str, str, str, int]] | None = field(default=None, repr=False)
    _texts: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _canonical_ids: dict[tuple[int, str], str] = field(default_factory=dict, repr=False)
    _cluster_cache: dict[tuple, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # a table built without brief flags: no atom restates the brief
        if len(self.atom_from_brief) != self.n_atoms:
            self.atom_from_brief = np.zeros(self.n_atoms, dtype=bool)

    @property
    def n_atoms(self) -> int:
        return len(self.atom_form)

    def similarity(self, atom_type: str) -> np.ndarray:
        """Rounded cosine similarities between the forms of ``atom_type`` (cached)."""
        block = self._similarity.get(atom_type)
        if block is None:
            start, end = self.type_slices[atom_type]
            vectors = self.form_vectors[start:end].astype(np.float64)
            block = round_similarity(vectors @ vectors.T).astype(np.float32)
            self._similarity[atom_type] = block
        return block

    def form_texts(self) -> tuple[np.ndarray, np.ndarray]:
        """``(text id of each form, one representative form per text id)`` (cached): a
        form text that occurs with several types is one text."""
        cached = self._texts
        if cached is None:
            ids: dict[str, int] = {}
            of_form = np.array([ids.setdefault(t, len(ids)) for t in self.form_text],
                               dtype=np.int64)
            rep = np.zeros(len(ids), dtype=np.int64)
            rep[of_form[::-1]] = np.arange(len(of_form))[::-1]
            cached = self._texts = (of_form, rep)
        return cached

    def atom_id(self, index: int) -> str:
        response = self.responses[int(self.atom_response[index])]
        return f"{response.response_id}#{int(self.atom_position[index])}"

    def canonical_id(self, type_index: int, label: str) -> str:
        """:func:`~creagraph.tig.canonical.canonical_id` of a label (memoised)."""
        key = (type_index, label)
        found = self._canonical_ids.get(key)
        if found is None:
            found = canonical_id(self.task_id, ATOM_TYPES[type_index], label)
            self._canonical_ids[key] = found
        return found

    def cluster(self, n: int, edges: np.ndarray, weights: np.ndarray, **options: Any) -> Any:
        """:func:`~creagraph.tig.cluster.cluster_nodes`, memoised on its exact input.

        Leave-two-models-out populations of one task often share a same-type subgraph
        (when neither left-out model added a form of that type); its clustering is then
        reused. The key is the full input (node count, edge and weight bytes, options), so
        a hit returns what a fresh run would.
        """
        key = (n, edges.tobytes(), weights.tobytes(), tuple(sorted(options.items())))
        found = self._cluster_cache.get(key)
        if found is None:
            if len(self._cluster_cache) >= _CLUSTER_CACHE_SIZE:
                self._cluster_cache.clear()
            found = cluster_nodes(n, edges, weights, **options)
            self._cluster_cache[key] = found
        return found

    @property
    def atom_provenance(self) -> list[tuple[str, str, str, str, int]]:
        """``(atom_id, response_id, model, task_id, sample)`` of every atom (cached)."""
        cached = self._provenance
        if cached is None:
            cached = []
            for a in range(self.n_atoms):
                response = self.responses[int(self.atom_response[a])]
                cached.append((self.atom_id(a), response.response_id, response.model,
                               response.task_id, response.sample))
            self._provenance = cached
        return cached

    def model_responses(self) -> dict[str, int]:
        """Number of responses per model."""
        counts = np.bincount(self.response_model, minlength=len(self.models))
        return {m: int(c) for m, c in zip(self.models, counts, strict=True)}


@dataclass
class Population:
    """Canonical atoms, graph and clusters of one (reference) population of a task.

    ``comparison_key`` is ``""`` for a whole population and ``"a||b"`` for the reference
    population that leaves models a and b out. ``canonical`` is in node order;
    ``node_cluster[i]`` indexes ``clusters``; ``atom_node`` maps the included atoms'
    table indices to nodes.
    """

    task_id: str
    comparison_key: str
    models: tuple[str, ...]
    response_ids: tuple[str, ...]
    canonical: list[CanonicalAtom]
    node_type: np.ndarray
    edges: EdgeList
    clusters: list[Cluster]
    node_cluster: np.ndarray
    atom_index: np.ndarray
    atom_node: np.ndarray
    cluster_method: str
    #: unit vector of each node's leader form (what anchors compare labels with)
    node_vectors: np.ndarray | None = None

    @property
    def n_responses(self) -> int:
        return len(self.response_ids)

    def to_networkx(self) -> Any:
        """This population's Typed Idea Graph as a ``networkx.MultiGraph``
        (:func:`creagraph.tig.graph.to_networkx`)."""
        from creagraph.tig.graph import to_networkx

        return to_networkx(self)

    def cluster_atoms(self, cluster_index: int) -> list[tuple[str, str, str, str, int]]:
        """Provenance of every atom in a cluster, in canonical-node order."""
        nodes = np.flatnonzero(self.node_cluster == cluster_index)
        return [p for n in nodes.tolist() for p in self.canonical[n].provenance]


def group_by_task(responses: Iterable[Response]) -> dict[str, list[Response]]:
    """Responses grouped by task id (tasks and responses sorted)."""
    grouped: dict[str, list[Response]] = {}
    for response in responses:
        grouped.setdefault(response.task_id, []).append(response)
    return {
        task: sorted(items, key=lambda r: r.response_id) for task, items in sorted(grouped.items())
    }


def _form_rows(responses: Sequence[Response], atoms: Sequence[Sequence[Atom]]
               ) -> list[tuple[int, int, int, str, str]]:
    rows: list[tuple[int, int, int, str, str]] = []
    for r_index, found in enumerate(atoms):
        seen: set[str] = set()
        for position, atom in enumerate(found):
            form = atom_form(atom.text)
            if form and form not in seen:
                seen.add(form)
                rows.append((r_index, position, ATOM_TYPES.index(atom.type), form, atom.text))
    return rows


def build_atom_table(
    task_id: str,
    responses: Sequence[Response],
    atoms: Sequence[Sequence[Atom]],
    vectors_by_form: dict[str, np.ndarray],
    *,
    concept: str | None = None,
) -> AtomTable:
    """Assemble one task's :class:`AtomTable` from its responses, their atoms and the form
    vectors (a dict ``form text → unit vector`` covering every atom form).

    Each form takes its most frequent type in the task (one type per canonical form), and
    atoms restating the brief (:func:`creagraph.tig.brief.is_from_brief` against the terms
    of each response's brief, plus ``concept`` when given, or a brief term with only
    modifiers before it, :func:`creagraph.tig.atoms.modifies_a_brief_term`) are marked in
    ``atom_from_brief``; populations leave them out (SPEC §4.9).
    """
    from creagraph.tig.atoms import modifies_a_brief_term
    from creagraph.tig.brief import brief_terms, is_from_brief

    if len(responses) != len(atoms):
        raise ValueError("responses and atoms must have the same length")
    order = sorted(range(len(responses)), key=lambda i: responses[i].response_id)
    responses = [responses[i] for i in order]
    atoms = [atoms[i] for i in order]
    for response in responses:
        if response.task_id != task_id:
            raise ValueError(f"response {response.response_id!r} is not of task {task_id!r}")
    models = sorted({r.model for r in responses})
    model_index = {m: i for i, m in enumerate(models)}
    rows = _form_rows(responses, atoms)
    keys = sorted({(t, form) for _, _, t, form, _ in rows})
    form_index = {key: i for i, key in enumerate(keys)}
    type_slices: dict[str, tuple[int, int]] = {}
    for t, kind in enumerate(ATOM_TYPES):
        members = [i for i, key in enumerate(keys) if key[0] == t]
        type_slices[kind] = (members[0], members[-1] + 1) if members else (0, 0)
    dim = len(next(iter(vectors_by_form.values()))) if vectors_by_form else 1
    form_vectors = (
        np.stack([vectors_by_form[form] for _, form in keys]).astype(np.float32)
        if keys else np.zeros((0, dim), dtype=np.float32)
    )
    terms_of: dict[str, frozenset[str]] = {}
    from_brief = np.zeros(len(rows), dtype=bool)
    for i, (r, _, _, form, _) in enumerate(rows):
        brief = responses[r].brief
        terms = terms_of.get(brief)
        if terms is None:
            terms = terms_of[brief] = brief_terms(brief, concept, instructions=True)
        from_brief[i] = is_from_brief(form, terms) or modifies_a_brief_term(form, terms)
    return AtomTable(
        task_id=task_id,
        responses=responses,
        models=models,
        response_model=np.array([model_index[r.model] for r in responses], dtype=np.int64),
        atom_response=np.array([r for r, *_ in rows], dtype=np.int64),
        atom_position=np.array([p for _, p, *_ in rows], dtype=np.int64),
        atom_form=np.array([form_index[(t, f)] for _, _, t, f, _ in rows], dtype=np.int64),
        atom_text=[text for *_, text in rows],
        form_text=[form for _, form in keys],
        form_type=np.array([t for t, _ in keys], dtype=np.int64),
        form_stem=[stem_key(form) for _, form in keys],
        form_vectors=form_vectors,
        type_slices=type_slices,
        atom_from_brief=from_brief,
    )


def build_atom_tables(
    responses: Sequence[Response],
    extractor: AtomExtractor | None = None,
    embedder: Any = None,
    *,
    show_progress: bool = True,
    batch_size: int = 2000,
    concepts: dict[str, str] | None = None,
) -> dict[str, AtomTable]:
    """Extract atoms and embed their forms once; one :class:`AtomTable` per task.

    Parameters
    ----------
    responses : sequence of Response
        The whole population (any number of tasks).
    extractor : AtomExtractor, optional
        Default :class:`~creagraph.tig.atoms.OfflineExtractor` sharing ``embedder``.
    embedder : Embedder, optional
        Default :func:`creagraph.core.embeddings.default_embedder` (cached MiniLM).
    show_progress : bool
        Progress bars for extraction and embedding.
    batch_size : int
        Responses per extraction call (bounds memory and drives the progress bar).
    concepts : dict task_id → str, optional
        Concepts overriding nothing but adding to what each task's brief names (the
        ``--concept`` option); atoms restating them are marked ``from_brief``.
    """
    from creagraph.tig.atoms import OfflineExtractor

    if embedder is None:
        from creagraph.core.embeddings import default_embedder

        embedder = default_embedder()
    if extractor is None:
        extractor = OfflineExtractor(embedder)
    grouped = group_by_task(responses)
    ordered = [r for items in grouped.values() for r in items]
    atoms: list[list[Atom]] = []
    starts = range(0, len(ordered), batch_size)
    for start in progress(starts, total=len(starts), desc="extract atoms", unit="batch") \
            if show_progress else starts:
        atoms.extend(extractor.extract(ordered[start : start + batch_size]))
    forms = sorted({atom_form(a.text) for found in atoms for a in found} - {""})
    vectors: dict[str, np.ndarray] = {}
    chunks = range(0, len(forms), 4096)
    for start in progress(chunks, total=len(chunks), desc="embed forms", unit="chunk") \
            if show_progress else chunks:
        chunk = forms[start : start + 4096]
        for form, vector in zip(chunk, embedder.encode(chunk), strict=True):
            vectors[form] = vector
    tables: dict[str, AtomTable] = {}
    offset = 0
    for task_id, items in grouped.items():
        found = atoms[offset : offset + len(items)]
        offset += len(items)
        task_forms = {atom_form(a.text) for f in found for a in f} - {""}
        tables[task_id] = build_atom_table(
            task_id, items, found, {form: vectors[form] for form in task_forms},
            concept=(concepts or {}).get(task_id),
        )
    return tables


#: Clusterings memoised per table (cleared when full).
_CLUSTER_CACHE_SIZE = 2048

#: Above this many canonical atoms the co-occurrence product uses sparse matrices.
_DENSE_LIMIT = 2500


def _cluster_id(atom_type: str, member_ids: Sequence[str]) -> str:
    digest = hashlib.sha1("\x00".join(sorted(member_ids)).encode()).hexdigest()
    return f"{atom_type}-{digest[:10]}"


@dataclass
class _Selection:
    """The included models' atoms of a table (what :func:`build_population` keeps)."""

    included: list[str]
    keep_model: np.ndarray
    keep_response: np.ndarray
    response_local: np.ndarray
    atom_index: np.ndarray
    atom_forms: np.ndarray
    form_count: np.ndarray


@dataclass
class _Nodes:
    """Canonical nodes: ``(type, label, leader form, member forms)`` sorted by (type, label),
    the node of every form (``-1`` when absent) and of every included atom."""

    nodes: list[tuple[int, str, int, list[int]]]
    node_of_form: np.ndarray
    node_type: np.ndarray
    atom_node: np.ndarray


def _select(table: AtomTable, models: Iterable[str] | None) -> _Selection:
    """Included models (checked), their responses and their atoms not restating the brief."""
    included = sorted(set(table.models) if models is None else set(models))
    unknown = set(included) - set(table.models)
    if unknown:
        raise ValueError(f"task {table.task_id!r} has no responses from {sorted(unknown)}")
    if not included:
        raise ValueError("a population needs at least one model")
    model_index = {m: i for i, m in enumerate(table.models)}
    keep_model = np.zeros(len(table.models), dtype=bool)
    keep_model[[model_index[m] for m in included]] = True
    keep_response = keep_model[table.response_model]
    atom_index = np.flatnonzero(keep_response[table.atom_response] & ~table.atom_from_brief)
    atom_forms = table.atom_form[atom_index]
    return _Selection(
        included=included,
        keep_model=keep_model,
        keep_response=keep_response,
        response_local=np.cumsum(keep_response) - 1,
        atom_index=atom_index,
        atom_forms=atom_forms,
        form_count=np.bincount(atom_forms, minlength=len(table.form_text)),
    )


def _text_types(table: AtomTable, form_count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step 1: ``(count, type)`` of each form text.

    One type per form text: the type it has most often among the included atoms (earlier
    type on ties), so an idea never lands in clusters of several types and the candidates
    of an L2MO comparison never decide a reference atom's type.
    """
    text_of_form, text_rep = table.form_texts()
    type_count = np.zeros((len(text_rep), len(ATOM_TYPES)), dtype=np.int64)
    np.add.at(type_count, (text_of_form, table.form_type), form_count)
    return type_count.sum(axis=1), type_count.argmax(axis=1)


def _canonical_nodes(table: AtomTable, selection: _Selection, config: TigConfig) -> _Nodes:
    """Steps 1–2: canonical groups per type, by leader clustering of the present form texts."""
    text_of_form, text_rep = table.form_texts()
    text_count, text_type = _text_types(table, selection.form_count)
    nodes: list[tuple[int, str, int, list[int]]] = []
    forms_of_text: dict[int, list[int]] = {}
    for f in np.flatnonzero(selection.form_count > 0).tolist():
        forms_of_text.setdefault(int(text_of_form[f]), []).append(f)
    for t in range(len(ATOM_TYPES)):
        present = np.flatnonzero((text_count > 0) & (text_type == t))
        if not len(present):
            continue
        reps = text_rep[present]
        order = canonical_order([table.form_text[f] for f in reps], text_count[present])
        ordered_reps = reps[order]
        ordered_texts = present[order]
        vectors = table.form_vectors[ordered_reps].astype(np.float64)
        sims = round_similarity(vectors @ vectors.T)
        leaders = canonical_leaders(
            sims,
            [table.form_text[f] for f in ordered_reps],
            threshold=config.canonical_threshold,
            stems=[table.form_stem[f] for f in ordered_reps],
        )
        groups: dict[int, list[int]] = {}
        for position, leader in enumerate(leaders.tolist()):
            groups.setdefault(leader, []).extend(forms_of_text[int(ordered_texts[position])])
        for leader, members in groups.items():
            leader_form = int(ordered_reps[leader])
            nodes.append((t, table.form_text[leader_form], leader_form, members))
    nodes.sort(key=lambda n: (n[0], n[1]))
    node_of_form = np.full(len(table.form_text), -1, dtype=np.int64)
    for node, (_, _, _, members) in enumerate(nodes):
        node_of_form[members] = node
    return _Nodes(
        nodes=nodes,
        node_of_form=node_of_form,
        node_type=np.array([n[0] for n in nodes], dtype=np.int64),
        atom_node=node_of_form[selection.atom_forms],
    )


def _canonical_records(
    table: AtomTable, selection: _Selection, graph: _Nodes, config: TigConfig
) -> list[CanonicalAtom]:
    """Step 3: provenance and canonical records, in node order."""
    provenance: list[list[tuple[str, str, str, str, int]]] = [[] for _ in graph.nodes]
    atom_provenance = table.atom_provenance
    for a, node in zip(selection.atom_index.tolist(), graph.atom_node.tolist(), strict=True):
        provenance[node].append(atom_provenance[a])
    canonical = []
    for node, (t, label, leader_form, members) in enumerate(graph.nodes):
        aliases = tuple(sorted({table.form_text[f] for f in members} - {label}))
        embedding = (
            tuple(float(x) for x in table.form_vectors[leader_form])
            if config.keep_embeddings else None
        )
        canonical.append(
            CanonicalAtom(
                id=table.canonical_id(t, label),
                task_id=table.task_id,
                type=ATOM_TYPES[t],
                label=label,
                aliases=aliases,
                count=len(provenance[node]),
                provenance=tuple(provenance[node]),
                embedding=embedding,
            )
        )
    return canonical


def _population_edges(
    table: AtomTable, selection: _Selection, graph: _Nodes, config: TigConfig
) -> EdgeList:
    """Step 4: edges: co-occurrence, same-type similarity (typed relations: see below)."""
    from scipy.sparse import csr_matrix

    n_nodes = len(graph.nodes)
    n_kept = int(selection.keep_response.sum())
    rows = selection.response_local[table.atom_response[selection.atom_index]]
    if n_nodes <= _DENSE_LIMIT:
        incidence = np.zeros((n_kept, n_nodes), dtype=np.float32)
        incidence[rows, graph.atom_node] = 1.0
    else:
        incidence = csr_matrix(
            (np.ones(len(graph.atom_node)), (rows, graph.atom_node)),
            shape=(n_kept, n_nodes),
        )
        incidence.sum_duplicates()
    cooccurrence = cooccurrence_edges(incidence)
    # typed relation edges only where an extractor gave relations (none of the current
    # backends does): deriving them from co-occurrence would count each pair twice
    parts = [cooccurrence]
    for t in range(len(ATOM_TYPES)):
        members = np.flatnonzero(graph.node_type == t)
        if len(members) < 1:
            continue
        leader_forms = np.array([graph.nodes[m][2] for m in members], dtype=np.int64)
        vectors = table.form_vectors[leader_forms].astype(np.float64)
        block = round_similarity(vectors @ vectors.T)
        if len(members) > 1:
            parts.append(similarity_edges(block, members, config.similarity_threshold))
    return concat_edges(parts)


#: One cluster before its scores: (type, leaf nodes, hierarchy path, nodes of the parent
#: cluster or None).
_ClusterSpec = tuple[int, list[int], tuple[int, ...], list[int] | None]


def _cluster_types(
    table: AtomTable, node_type: np.ndarray, edges: EdgeList, config: TigConfig,
    method_used: str,
) -> tuple[np.ndarray, list[_ClusterSpec]]:
    """Step 5: clusters per type on the similarity subgraph: ``(node_cluster, specs)``."""
    node_cluster = np.full(len(node_type), -1, dtype=np.int64)
    cluster_specs: list[_ClusterSpec] = []
    sim_edges = edges.of_kind("similarity")
    for t in range(len(ATOM_TYPES)):
        members = np.flatnonzero(node_type == t)
        if not len(members):
            continue
        offset = int(members[0])  # nodes of one type are contiguous
        mask = node_type[sim_edges.source] == t
        local_edges = np.column_stack(
            [sim_edges.source[mask] - offset, sim_edges.target[mask] - offset]
        )
        clustering = table.cluster(
            len(members),
            np.ascontiguousarray(local_edges, dtype=np.int64),
            np.ascontiguousarray(sim_edges.weight[mask], dtype=np.float64),
            method=method_used,
            resolution=config.resolution,
            seed=config.seed,
            hierarchical=config.hierarchical,
            max_levels=config.max_levels,
            min_split_size=config.min_split_size,
            min_component_weight=config.min_component_weight,
        )
        leaves = [members[clustering.membership == leaf].tolist()
                  for leaf in range(clustering.n_clusters)]
        ancestors: dict[tuple[int, ...], list[int]] = {}
        for leaf, path in enumerate(clustering.paths):
            for depth in range(1, len(path)):
                ancestors.setdefault(path[:depth], []).extend(leaves[leaf])
        for leaf, path in enumerate(clustering.paths):
            node_cluster[leaves[leaf]] = len(cluster_specs)
            cluster_specs.append((t, leaves[leaf], path, ancestors.get(path[:-1])))
    return node_cluster, cluster_specs


@dataclass
class _Factors:
    """Step 6: per cluster, which included models hit it and its ClichéScore factors
    (``coverage`` combines ``model_share`` and ``response_share``, SPEC §4.5 as refined in
    :mod:`creagraph.tig.cliche`)."""

    model_cluster: np.ndarray
    coverage: np.ndarray
    centrality: np.ndarray
    convergence: np.ndarray
    scores: np.ndarray
    model_share: np.ndarray
    response_share: np.ndarray


def _cliche_factors(
    table: AtomTable, selection: _Selection, graph: _Nodes, edges: EdgeList,
    node_cluster: np.ndarray, n_clusters: int, config: TigConfig,
) -> _Factors:
    """Step 6: ClichéScore factors of every cluster (rounded to 6 decimals)."""
    included = selection.included
    local_model = np.searchsorted(np.flatnonzero(selection.keep_model), table.response_model)
    atom_responses = table.atom_response[selection.atom_index]
    model_cluster = np.zeros((len(included), n_clusters), dtype=bool)
    model_cluster[local_model[atom_responses], node_cluster[graph.atom_node]] = True
    hit_models = model_cluster.sum(axis=0)
    model_share = model_coverage(hit_models, len(included))
    # responses hitting each cluster (a response with two atoms in C counts once)
    n_kept = int(selection.keep_response.sum())
    hit_pairs = np.unique(selection.response_local[atom_responses] * max(n_clusters, 1)
                          + node_cluster[graph.atom_node])
    response_share = response_coverage(
        np.bincount(hit_pairs % max(n_clusters, 1), minlength=n_clusters), n_kept)
    model_share, response_share = np.round(model_share, 6), np.round(response_share, 6)
    coverage = coverage_share(model_share, response_share)
    centrality = centrality_share(
        node_centrality(len(graph.nodes), edges, config.centrality), node_cluster, n_clusters
    )
    present_forms = np.flatnonzero(selection.form_count > 0)
    convergence = internal_convergence(
        table.form_vectors[present_forms],
        selection.form_count[present_forms],
        node_cluster[graph.node_of_form[present_forms]],
        n_clusters,
    )
    coverage, centrality, convergence = (np.round(x, 6) for x in (coverage, centrality,
                                                                  convergence))
    scores = np.round(
        np.asarray(cliche_score(coverage, centrality, convergence, weights=config.weights,
                                epsilon=config.epsilon)).reshape(-1), 6)
    return _Factors(model_cluster, coverage, centrality, convergence, scores, model_share,
                    response_share)


def _cluster_records(
    table: AtomTable, included: Sequence[str], canonical: Sequence[CanonicalAtom],
    cluster_specs: Sequence[_ClusterSpec], factors: _Factors,
) -> list[Cluster]:
    """Step 7: the cluster records."""
    clusters: list[Cluster] = []
    for k, (t, leaf_nodes, path, parent_members) in enumerate(cluster_specs):
        kind = ATOM_TYPES[t]
        member_ids = [canonical[n].id for n in leaf_nodes]
        ranked = sorted(leaf_nodes, key=lambda n: (-canonical[n].count, canonical[n].label))
        clusters.append(
            Cluster(
                id=_cluster_id(kind, member_ids),
                task_id=table.task_id,
                type=kind,
                canonical_ids=tuple(member_ids),
                labels=tuple(canonical[n].label for n in ranked),
                atom_count=sum(canonical[n].count for n in leaf_nodes),
                models=tuple(m for m, hit in zip(included, factors.model_cluster[:, k],
                                                 strict=True) if hit),
                coverage=float(factors.coverage[k]),
                centrality=float(factors.centrality[k]),
                convergence=float(factors.convergence[k]),
                cliche_score=float(factors.scores[k]),
                model_share=float(factors.model_share[k]),
                response_share=float(factors.response_share[k]),
                level=len(path) - 1,
                parent_id=(
                    _cluster_id(kind, [canonical[n].id for n in parent_members])
                    if parent_members else None
                ),
            )
        )
    return clusters


def build_population(
    table: AtomTable,
    models: Iterable[str] | None = None,
    config: TigConfig | None = None,
    *,
    comparison_key: str = "",
) -> Population:
    """Canonical atoms, Typed Idea Graph, clusters and ClichéScores of a population.

    Parameters
    ----------
    table : AtomTable
        The task's atoms.
    models : iterable of str, optional
        Models whose responses (all samples) form the population; default all of them.
    config : TigConfig, optional
        Pipeline parameters.
    comparison_key : str
        Recorded on the result (``"a||b"`` for an L2MO reference population).

    Returns
    -------
    Population

    Raises
    ------
    ValueError
        When ``models`` names a model absent from the table or is empty.
    """
    config = config or TigConfig()
    selection = _select(table, models)
    graph = _canonical_nodes(table, selection, config)            # 1.–2. types, canonical
    canonical = _canonical_records(table, selection, graph, config)  # 3. records
    edges = _population_edges(table, selection, graph, config)    # 4. edges
    method_used = resolve_method(config.cluster_method)
    node_cluster, cluster_specs = _cluster_types(                 # 5. clusters per type
        table, graph.node_type, edges, config, method_used
    )
    factors = _cliche_factors(                                    # 6. ClichéScore factors
        table, selection, graph, edges, node_cluster, len(cluster_specs), config
    )
    clusters = _cluster_records(                                  # 7. cluster records
        table, selection.included, canonical, cluster_specs, factors
    )
    return Population(
        task_id=table.task_id,
        comparison_key=comparison_key,
        models=tuple(selection.included),
        response_ids=tuple(r.response_id for r, keep in zip(table.responses,
                                                            selection.keep_response,
                                                            strict=True) if keep),
        canonical=canonical,
        node_type=graph.node_type,
        edges=edges,
        clusters=clusters,
        node_cluster=node_cluster,
        atom_index=selection.atom_index,
        atom_node=graph.atom_node,
        cluster_method=method_used,
        node_vectors=table.form_vectors[[n[2] for n in graph.nodes]]
        if graph.nodes else None,
    )
