"""Order-swap consistency of a (LLM) judge: how often a verdict survives swapping the
two sides [1]_.

References
----------
.. [1] Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena.
   *NeurIPS* (position bias and swap consistency of LLM judges).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from creagraph.judgments.comparisons import LEFT, RIGHT, TIE, Comparisons

__all__ = [
    "SwapConsistency",
    "order_swap_consistency",
    "swapped_pairs",
]


# --------------------------------------------------------------------------- order swaps


@dataclass(frozen=True)
class SwapConsistency:
    """Order-swap consistency of a judge [1]_.

    Attributes
    ----------
    consistency : float
        Fraction of pairs whose verdict names the same winner (or a tie both times) when
        the two sides are swapped.
    n_pairs : int
    first_position_rate : float
        Among inconsistent pairs, the fraction where the judge chose whichever response
        was shown first both times (position bias towards the left/first slot).
    second_position_rate : float
        Same, for the second slot.
    """

    consistency: float
    n_pairs: int
    first_position_rate: float
    second_position_rate: float


def order_swap_consistency(
    original: Sequence[int] | np.ndarray, swapped: Sequence[int] | np.ndarray
) -> SwapConsistency:
    """Fraction of pairs whose verdict survives swapping left and right.

    Parameters
    ----------
    original : array_like of int
        Outcomes (``LEFT``/``RIGHT``/``TIE``) with the pair shown as (a, b).
    swapped : array_like of int
        Outcomes for the same pairs shown as (b, a). Consistent means
        ``swapped == -original``.

    Examples
    --------
    >>> r = order_swap_consistency([1, 1, 0, -1], [-1, 1, 0, 1])
    >>> r.consistency, r.first_position_rate
    (0.75, 1.0)
    """
    a = np.asarray(original, dtype=np.int64).reshape(-1)
    b = np.asarray(swapped, dtype=np.int64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError("original and swapped must have the same length")
    if a.size == 0:
        raise ValueError("no pairs")
    for arr in (a, b):
        if not np.isin(arr, (LEFT, RIGHT, TIE)).all():
            raise ValueError("outcomes must be 1 (left), -1 (right) or 0 (tie)")
    consistent = b == -a
    bad = ~consistent
    n_bad = int(bad.sum())
    first = int(np.sum(bad & (a == LEFT) & (b == LEFT)))
    second = int(np.sum(bad & (a == RIGHT) & (b == RIGHT)))
    return SwapConsistency(
        consistency=float(consistent.mean()),
        n_pairs=int(a.size),
        first_position_rate=first / n_bad if n_bad else 0.0,
        second_position_rate=second / n_bad if n_bad else 0.0,
    )


def swapped_pairs(comparisons: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """Match comparisons judged in both orders by the same rater on the same prompt.

    Each (rater, prompt, a, b) seen as ``a`` vs ``b`` is paired with the first unused
    ``b`` vs ``a`` by that rater on that prompt. Missing raters/prompts count as one group.

    Returns
    -------
    original, swapped : ndarray of int
        Outcomes ready for :func:`order_swap_consistency`.
    """
    n = len(comparisons)
    raters = comparisons.raters if comparisons.raters is not None else np.zeros(n, dtype=object)
    prompts = comparisons.prompts if comparisons.prompts is not None else np.zeros(n, dtype=object)
    pending: dict[tuple[Any, Any, int, int], list[int]] = {}
    orig: list[int] = []
    swap: list[int] = []
    for k in range(n):
        a, b = int(comparisons.left[k]), int(comparisons.right[k])
        key_rev = (raters[k], prompts[k], b, a)
        waiting = pending.get(key_rev)
        if waiting:
            j = waiting.pop(0)
            orig.append(int(comparisons.outcome[j]))
            swap.append(int(comparisons.outcome[k]))
        else:
            pending.setdefault((raters[k], prompts[k], a, b), []).append(k)
    return np.asarray(orig, dtype=np.int64), np.asarray(swap, dtype=np.int64)
