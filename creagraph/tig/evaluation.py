"""Agreement between Typed-Idea-Graph clusters and reference partitions of responses.

NoveltyBench partitions each (prompt, model)'s generations into equivalence classes. To
compare, each response gets a label from the clusters its atoms fall in
(:func:`response_labels`), and the two labelings are compared with the adjusted Rand index
(:func:`adjusted_rand_index`).

References
----------
Hubert & Arabie (1985), "Comparing partitions", Journal of Classification 2, 193–218.

Examples
--------
>>> round(adjusted_rand_index([0, 0, 1, 1], [0, 0, 1, 2]), 4)
0.5714
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from creagraph.tig.population import AtomTable, Population
from creagraph.tig.schema import ATOM_TYPES

__all__ = ["adjusted_rand_index", "response_labels"]


def _codes(labels: Sequence[Hashable]) -> np.ndarray:
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(x, len(index)) for x in labels], dtype=np.int64)


def adjusted_rand_index(labels_true: Sequence[Hashable], labels_pred: Sequence[Hashable]) -> float:
    """Adjusted Rand index of two labelings of the same items.

    ``ARI = (Σ_ij C(n_ij, 2) − E) / (½(Σ_i C(a_i, 2) + Σ_j C(b_j, 2)) − E)`` with
    ``E = Σ_i C(a_i, 2) Σ_j C(b_j, 2) / C(n, 2)`` over the contingency table n_ij and its
    margins a, b. 1 for identical partitions, about 0 for independent ones; defined as 1
    when both labelings are trivial in the same way (all-singletons or one class).

    Examples
    --------
    >>> round(adjusted_rand_index([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]), 8)
    0.24242424
    >>> adjusted_rand_index([0, 1], [5, 7])
    1.0
    """
    if len(labels_true) != len(labels_pred):
        raise ValueError("both labelings must cover the same items")
    n = len(labels_true)
    if n < 2:
        return 1.0
    a, b = _codes(labels_true), _codes(labels_pred)
    table = np.zeros((a.max() + 1, b.max() + 1), dtype=np.float64)
    np.add.at(table, (a, b), 1.0)

    def pairs(x: np.ndarray) -> float:
        return float((x * (x - 1) / 2).sum())

    sum_cells = pairs(table)
    sum_rows = pairs(table.sum(axis=1))
    sum_cols = pairs(table.sum(axis=0))
    expected = sum_rows * sum_cols / (n * (n - 1) / 2)
    maximum = (sum_rows + sum_cols) / 2
    if maximum == expected:
        return 1.0
    return (sum_cells - expected) / (maximum - expected)


def response_labels(
    table: AtomTable,
    population: Population,
    *,
    mode: Literal["signature", "primary"] = "primary",
) -> dict[str, tuple[str, ...]]:
    """A cluster-derived label for every response of ``population``.

    ``"primary"``: the cluster of the response's first atom of the earliest type in
    :data:`~creagraph.tig.schema.ATOM_TYPES` (its carrier, usually); ``"signature"``: the
    sorted set of clusters its atoms hit. Responses without atoms get ``()``.
    """
    if mode not in ("signature", "primary"):
        raise ValueError("mode must be 'signature' or 'primary'")
    hits: dict[str, list[tuple[int, int, str]]] = {r: [] for r in population.response_ids}
    for a, node in zip(population.atom_index.tolist(), population.atom_node.tolist(),
                       strict=True):
        response_id = table.responses[int(table.atom_response[a])].response_id
        cluster = population.clusters[int(population.node_cluster[node])]
        hits[response_id].append(
            (ATOM_TYPES.index(cluster.type), int(table.atom_position[a]), cluster.id)
        )
    labels: dict[str, tuple[str, ...]] = {}
    for response_id, found in hits.items():
        if not found:
            labels[response_id] = ()
        elif mode == "primary":
            labels[response_id] = (min(found)[2],)
        else:
            labels[response_id] = tuple(sorted({c for _, _, c in found}))
    return labels
