"""Tournament win rates of the Human Creativity Benchmark (SPEC §5, the paper's Table 2).

A *tournament* is one evaluator × one prompt: the evaluator compares every pair of the
prompt's models. Each model scores 1 per pairing won and ½ per pairing with no
preference (a tie is counted as stated, not dropped); the model(s) with the highest score
win the tournament, a tie for first being split equally. A model's
``tournament_win_rate`` is its share of the tournaments of a cell won, so the rates sum to
1 over the cell's models and are multiples of ``1 / (n_tournaments × k)`` for a k-way
split. The *pairwise* win rate — the share of a model's own comparisons won, ties
counting half — is the other figure of the paper and can exceed ½ for several models.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from creagraph.judgments.comparisons import LEFT, RIGHT, Comparisons

__all__ = ["TournamentWins", "tournament_wins"]


@dataclass(frozen=True)
class TournamentWins:
    """Per model (indexed like the comparisons' ``items``).

    Attributes
    ----------
    tournaments : ndarray of int
        Tournaments the model took part in.
    won : ndarray of float
        Tournaments won (fractions for a shared first place).
    n_tournaments : int
        Tournaments in the cell.
    points : list of (key, ndarray)
        Each tournament's key ``(rater, prompt)`` and the models' scores (NaN = not in it).
    """

    tournaments: np.ndarray
    won: np.ndarray
    n_tournaments: int
    points: list[tuple[tuple[Hashable, Hashable], np.ndarray]]

    @property
    def win_rate(self) -> np.ndarray:
        """Share of the cell's tournaments each model won (sums to 1)."""
        return self.won / self.n_tournaments if self.n_tournaments else self.won * np.nan


def tournament_wins(comps: Comparisons) -> TournamentWins:
    """Tournament scores and winners of a cell's comparisons.

    Parameters
    ----------
    comps : Comparisons
        With ``raters`` and ``prompts`` (the tournament of each comparison).

    Examples
    --------
    >>> from creagraph.judgments import make_comparisons
    >>> c = make_comparisons(["a", "a", "b", "a"], ["b", "c", "c", "b"],
    ...                      ["a", "tie", "b", "b"], raters=["r", "r", "r", "s"],
    ...                      prompts=["p", "p", "p", "p"])
    >>> tw = tournament_wins(c)
    >>> tw.won.tolist(), tw.win_rate.tolist()
    ([1.0, 1.0, 0.0], [0.5, 0.5, 0.0])
    """
    if comps.raters is None or comps.prompts is None:
        raise ValueError("tournament win rates need the rater and prompt of each comparison")
    n = comps.n_items
    score: dict[tuple[Hashable, Hashable], np.ndarray] = defaultdict(lambda: np.full(n, np.nan))
    for i, j, o, r, p in zip(comps.left.tolist(), comps.right.tolist(), comps.outcome.tolist(),
                             comps.raters.tolist(), comps.prompts.tolist(), strict=True):
        pts = score[(r, p)]
        for k in (i, j):
            if np.isnan(pts[k]):
                pts[k] = 0.0
        pts[i] += 1.0 if o == LEFT else 0.0 if o == RIGHT else 0.5
        pts[j] += 1.0 if o == RIGHT else 0.0 if o == LEFT else 0.5
    won = np.zeros(n)
    played = np.zeros(n, dtype=np.int64)
    keys = sorted(score, key=lambda k: (str(k[0]), str(k[1])))
    for key in keys:
        pts = score[key]
        present = ~np.isnan(pts)
        played += present
        best = np.nanmax(pts)
        top = present & (pts == best)
        won[top] += 1.0 / top.sum()
    return TournamentWins(played, won, len(keys), [(k, score[k]) for k in keys])
