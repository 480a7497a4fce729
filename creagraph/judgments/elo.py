"""The Elo scale of a Bradley–Terry estimate [1]_, and classic sequential Elo.

References
----------
.. [1] Chiang, W.-L. et al. (2024). Chatbot Arena: an open platform for evaluating LLMs
   by human preference. *ICML*.
"""

from __future__ import annotations

import math

import numpy as np

from creagraph.judgments.comparisons import LEFT, RIGHT, Comparisons, _check_arrays

__all__ = [
    "ELO_BASE_RATING",
    "ELO_SCALE",
    "elo_scale",
    "sequential_elo",
]

ELO_BASE_RATING = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)


def elo_scale(theta: np.ndarray, *, base_rating: float = ELO_BASE_RATING) -> np.ndarray:
    """Log-strengths on the Elo scale: ``base + 400 / ln(10) * (theta - mean(theta))``.

    A 400-point gap means 10:1 odds, as in chess and Chatbot Arena [1]_.

    Examples
    --------
    >>> elo_scale(np.array([math.log(10.0), 0.0])).round(1).tolist()
    [1200.0, 800.0]
    """
    theta = np.asarray(theta, float)
    return base_rating + ELO_SCALE * (theta - theta.mean())


def sequential_elo(
    comparisons: Comparisons,
    *,
    k: float = 4.0,
    initial: float = ELO_BASE_RATING,
    base: float = 10.0,
    scale: float = 400.0,
) -> np.ndarray:
    """Classic sequential (online) Elo ratings, updated comparison by comparison in order.

    Unlike :attr:`BTResult.elo` (the Bradley–Terry estimate shown on the Elo scale, which
    ignores order), these ratings depend on the order of the comparisons and on ``k``. For
    each comparison, with ``E = 1 / (1 + base ** ((r_right - r_left) / scale))``, the
    left rating moves by ``k * weight * (S - E)`` and the right one by the opposite,
    ``S`` = 1 (left wins), 0 (right wins) or 0.5 (tie). Defaults are evalica's.

    Examples
    --------
    >>> from creagraph.judgments import make_comparisons
    >>> c = make_comparisons(["a", "a"], ["b", "b"], ["left", "tie"])
    >>> sequential_elo(c, k=32).round(3).tolist()
    [1014.53, 985.47]
    """
    if k < 0 or scale <= 0 or base <= 1:
        raise ValueError("need k >= 0, scale > 0 and base > 1")
    li, ri, oc, w = _check_arrays(
        comparisons.n_items, comparisons.left, comparisons.right, comparisons.outcome,
        comparisons.weight,
    )
    ratings = np.full(comparisons.n_items, float(initial))
    for a, b, o, wt in zip(li.tolist(), ri.tolist(), oc.tolist(), w.tolist(), strict=True):
        expected = 1.0 / (1.0 + base ** ((ratings[b] - ratings[a]) / scale))
        score = 1.0 if o == LEFT else 0.0 if o == RIGHT else 0.5
        delta = k * wt * (score - expected)
        ratings[a] += delta
        ratings[b] -= delta
    return ratings
