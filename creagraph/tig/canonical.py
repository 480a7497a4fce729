"""Canonicalisation: grouping synonymous atoms of one type (SPEC §4.2).

Atoms are first reduced to their *form* (:func:`creagraph.tig.atoms.atom_form`: normalised
text), so identical phrasings are one form. Forms of one type are then grouped greedily,
most frequent first ("leader" clustering): a form joins the earliest leader it matches —
same :func:`stem_key` (plural/possessive endings ignored) or cosine similarity at least
``threshold`` to the leader — else it becomes a leader. The leader's form is the group's
canonical label, the group's other forms its aliases. Every form (hence every atom) is in
exactly one group, and nothing is invented: labels and aliases are atom texts.

The result depends only on the forms, their counts and their similarities — never on
indices or on the order the population was read — so a population built from any subset
of responses gets the same groups whichever way it is assembled (this is what the
leave-two-models-out invariant relies on).

References
----------
SPEC §4.2. Leader clustering: Hartigan (1975), *Clustering Algorithms*, ch. 3.

Examples
--------
>>> sims = np.array([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
>>> canonical_leaders(sims, ["plant", "green plant", "lamp"], threshold=0.8).tolist()
[0, 0, 2]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from creagraph.core.text import normalize_loose

__all__ = [
    "stem_key",
    "canonical_order",
    "canonical_leaders",
    "canonical_id",
    "round_similarity",
]


def stem_key(form: str) -> str:
    """Form with punctuation folded and plural/possessive endings removed from each word.

    Examples
    --------
    >>> stem_key("Bird's nests")
    'bird nest'
    >>> stem_key("butterflies") == stem_key("butterfly")
    True
    """
    from creagraph.tig.atoms_base import _word_stem

    words = normalize_loose(form.replace("'s ", " ").replace("'s", "")).split()
    return " ".join(_word_stem(w) for w in words)


def round_similarity(similarity: np.ndarray, decimals: int = 6) -> np.ndarray:
    """Cosine similarities in float64 rounded to ``decimals`` places.

    Rounding makes a value independent of how the matrix was computed (a sub-block of a
    larger product or a product of its own), so thresholds and edge weights agree between
    the incremental and the from-scratch builds.
    """
    return np.round(np.asarray(similarity, dtype=np.float64), decimals)


def canonical_order(forms: Sequence[str], counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """Processing order for :func:`canonical_leaders`: count descending, then form text.

    Returns
    -------
    ndarray of int
        Positions into ``forms``.

    Examples
    --------
    >>> canonical_order(["b", "a", "c"], [1, 1, 3]).tolist()
    [2, 1, 0]
    """
    counts = np.asarray(counts)
    if len(forms) != len(counts):
        raise ValueError("forms and counts must have the same length")
    return np.array(
        sorted(range(len(forms)), key=lambda i: (-int(counts[i]), forms[i])), dtype=np.int64
    )


def canonical_leaders(
    similarity: np.ndarray,
    forms: Sequence[str],
    *,
    threshold: float = 0.8,
    stems: Sequence[str] | None = None,
) -> np.ndarray:
    """Greedy leader grouping of forms given in processing order.

    Parameters
    ----------
    similarity : ndarray, shape (n, n)
        Cosine similarities between the forms, in processing order.
    forms : sequence of str
        The forms in processing order (see :func:`canonical_order`).
    threshold : float
        Minimum similarity to a leader for joining its group.
    stems : sequence of str, optional
        :func:`stem_key` of each form (computed when omitted); equal stems always group.

    Returns
    -------
    ndarray of int, shape (n,)
        For each form, the position of its group's leader (a leader points to itself).
    """
    n = len(forms)
    similarity = np.asarray(similarity)
    if similarity.shape != (n, n):
        raise ValueError(f"similarity must be {n}×{n}, got {similarity.shape}")
    if stems is None:
        stems = [stem_key(f) for f in forms]
    leader_of = np.empty(n, dtype=np.int64)
    leaders: list[int] = []
    leader_by_stem: dict[str, int] = {}
    # forms with no other form above the threshold can only join through their stem
    close = similarity >= threshold
    has_neighbour = close.sum(axis=1) - np.diagonal(close) > 0
    for i in range(n):
        leader = leader_by_stem.get(stems[i])
        if leader is None and leaders and has_neighbour[i]:
            row = similarity[i, leaders]
            best = int(np.argmax(row))
            if row[best] >= threshold:
                leader = leaders[best]
        if leader is None:
            leader = i
            leaders.append(i)
        leader_by_stem.setdefault(stems[i], leader)
        leader_of[i] = leader
    return leader_of


def canonical_id(task_id: str, atom_type: str, label: str) -> str:
    """Stable id of a canonical atom: ``"<type>:<12 hex digits>"`` of (task, type, label).

    Examples
    --------
    >>> canonical_id("t1", "carrier", "fern")[:8]
    'carrier:'
    """
    digest = hashlib.sha1(f"{task_id}\x00{atom_type}\x00{label}".encode()).hexdigest()
    return f"{atom_type}:{digest[:12]}"
