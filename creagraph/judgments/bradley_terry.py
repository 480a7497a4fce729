"""Bradley–Terry models for pairwise comparisons, with ties, bootstrap and tiers.

Data convention (shared by every function in :mod:`creagraph.judgments`): ``n_items``
items are numbered ``0 .. n_items-1``; a comparison is a ``left`` index, a ``right`` index
and an ``outcome`` (``LEFT = 1``: left wins, ``RIGHT = -1``: right wins, ``TIE = 0``),
with an optional non-negative ``weight``. Swapping the two sides of a comparison negates
its outcome. Parameters are natural-log strengths ``theta`` (mean-centred), so that

    P(i beats j) = 1 / (1 + exp(-(theta_i - theta_j))),

as in choix [4]_. Three tie policies are offered:

``"exclude"``
    Only decisive comparisons enter the likelihood; ties are kept for the diagnostics
    (tie rate, raw win rate, tie-as-half-win rate). This is the Ekphrasis rule.
``"half"``
    A tie counts as half a win for each side (the Chatbot Arena / evalica rule).
``"davidson"``
    Ties are modelled explicitly (Davidson [2]_, in Newman's parametrisation [3]_):
    P(i beats j) = pi_i / D, P(tie) = 2 nu sqrt(pi_i pi_j) / D,
    D = pi_i + pi_j + 2 nu sqrt(pi_i pi_j), pi = exp(theta).

Empty responses (SPEC §5): an empty response loses to a non-empty one and two empty
responses tie; see :func:`apply_empty_rule`.

References
----------
.. [1] Hunter, D. R. (2004). MM algorithms for generalized Bradley–Terry models.
   *The Annals of Statistics*, 32(1), 384–406.
.. [2] Davidson, R. R. (1970). On extending the Bradley–Terry model to accommodate ties
   in paired comparison experiments. *JASA*, 65(329), 317–328.
.. [3] Newman, M. E. J. (2023). Efficient computation of rankings from pairwise
   comparisons. *JMLR*, 24(238), 1–25.
.. [4] Maystre, L. choix: inference algorithms for models based on Luce's choice axiom.
   https://github.com/lucasmaystre/choix
.. [5] Chiang, W.-L. et al. (2024). Chatbot Arena: an open platform for evaluating LLMs
   by human preference. *ICML*.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from creagraph.judgments.choices import BootstrapUnit, Ties
from creagraph.judgments.uncertainty import (
    MIN_CLUSTERS,
    model_covariance,
    sandwich_covariance,
    significance_ranks,
)

__all__ = [
    "LEFT",
    "RIGHT",
    "TIE",
    "TiePolicy",
    "Ties",
    "BootstrapUnit",
    "RecordError",
    "Comparisons",
    "BTResult",
    "NotIdentifiableError",
    "DisconnectedComparisonsError",
    "ConvergenceWarning",
    "parse_outcome",
    "apply_empty_rule",
    "make_comparisons",
    "comparisons_from_records",
    "count_matrices",
    "is_identifiable",
    "bt_mle",
    "davidson_mle",
    "bt_covariance",
    "win_probabilities",
    "elo_scale",
    "sequential_elo",
    "comparison_components",
    "bradley_terry",
    "bradley_terry_by_component",
    "next_pairs",
]

LEFT = 1
RIGHT = -1
TIE = 0

TiePolicy = Literal["exclude", "half", "davidson"]
_TIE_POLICIES = ("exclude", "half", "davidson")

_LEFT_WORDS = {"left", "a", "x", "model_a", "first", "1"}
_RIGHT_WORDS = {"right", "b", "y", "model_b", "second", "2", "-1"}
_TIE_WORDS = {"tie", "draw", "equal", "both", "neither", "0", "tie (bothbad)", "tie_bothbad"}

ELO_BASE_RATING = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)


class NotIdentifiableError(ValueError):
    """The maximum-likelihood estimate does not exist (some item never wins or never loses
    against the rest, i.e. the comparison graph is not strongly connected)."""


class DisconnectedComparisonsError(ValueError):
    """The comparison graph falls into groups never compared with each other: their
    strengths are not on a common scale, so one ranking across them would be arbitrary.

    Attributes
    ----------
    components : list of list of str
        The item labels of each connected group, largest first.
    """

    def __init__(self, message: str, components: list[list[str]]):
        super().__init__(message)
        self.components = components


class RecordError(ValueError):
    """A bad input record, located: ``str()`` reads ``"<what> <index>: <detail>"``.

    Attributes
    ----------
    index : int
        Position of the record (0-based), for the caller to turn into a file line.
    column : str or None
        The column at fault, when known.
    detail : str
        What is wrong, without the location.
    """

    def __init__(self, index: int, column: str | None, detail: str, *, what: str = "record"):
        super().__init__(f"{what} {index}: {detail}")
        self.index = index
        self.column = column
        self.detail = detail


class DegenerateClustersWarning(UserWarning):
    """Too few raters / prompts for a cluster-robust interval."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped before meeting its tolerance; the estimate it returned
    may be off. The message names the solver, the iterations and the last change."""


def _warn_unconverged(detail: str, stacklevel: int = 3) -> None:
    warnings.warn(detail, ConvergenceWarning, stacklevel=stacklevel)


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Comparisons:
    """Pairwise comparisons over labelled items (plain arrays; see module docstring).

    Attributes
    ----------
    items : list of str
        Item labels; index ``k`` of ``left``/``right`` refers to ``items[k]``.
    left, right : ndarray of int, shape (n,)
    outcome : ndarray of int8, shape (n,)
        ``LEFT`` (1), ``RIGHT`` (-1) or ``TIE`` (0).
    weight : ndarray of float, shape (n,)
    raters, prompts : ndarray of object, shape (n,), optional
        Who judged and on which prompt (for agreement and order-swap analyses).
    """

    items: list[str]
    left: np.ndarray
    right: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    raters: np.ndarray | None = None
    prompts: np.ndarray | None = None

    @property
    def n_items(self) -> int:
        return len(self.items)

    def __len__(self) -> int:
        return int(self.left.shape[0])

    def subset(self, mask: np.ndarray) -> Comparisons:
        """The comparisons selected by a boolean mask or index array (same item list)."""
        return Comparisons(
            items=list(self.items),
            left=self.left[mask],
            right=self.right[mask],
            outcome=self.outcome[mask],
            weight=self.weight[mask],
            raters=None if self.raters is None else self.raters[mask],
            prompts=None if self.prompts is None else self.prompts[mask],
        )


def parse_outcome(value: Any, left_label: Any = None, right_label: Any = None) -> int:
    """Map a winner cell to ``LEFT``, ``RIGHT`` or ``TIE``.

    Accepts ``"left"``/``"right"``/``"tie"`` (and common synonyms such as ``"draw"``,
    ``"model_a"``, ``"model_b"``), the ints 1/-1/0, the label of the left or right item
    (when ``left_label``/``right_label`` are given), and an empty cell (a tie: no side
    preferred).

    Examples
    --------
    >>> parse_outcome("left"), parse_outcome("tie"), parse_outcome("gpt", "llama", "gpt")
    (1, 0, -1)
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return TIE
    if isinstance(value, bool):
        raise ValueError(f"unrecognised winner value {value!r}")
    text = str(value).strip()
    left_s = None if left_label is None else str(left_label).strip()
    right_s = None if right_label is None else str(right_label).strip()
    # labels are labels: a winner cell naming one of the two items means that item, even
    # when it looks like a side code
    if left_s is not None and text == left_s and text != right_s:
        return LEFT
    if right_s is not None and text == right_s and text != left_s:
        return RIGHT
    if isinstance(value, int | np.integer):
        if _integer_like(left_s) or _integer_like(right_s):
            raise ValueError(
                f"ambiguous winner value {value!r}: the items have integer labels "
                f"({left_label!r}, {right_label!r}), so an integer is neither a side code nor "
                "one of them; write left/right/tie or the winner's label")
        if int(value) in (LEFT, RIGHT, TIE):
            return int(value)
        raise ValueError(f"unrecognised winner value {value!r} (use 1, -1 or 0)")
    low = text.lower()
    if low == "":
        return TIE
    if low in _LEFT_WORDS:
        return LEFT
    if low in _RIGHT_WORDS:
        return RIGHT
    if low in _TIE_WORDS:
        return TIE
    raise ValueError(
        f"unrecognised winner value {value!r} (expected left/right/tie"
        + (f", {left_label!r} or {right_label!r}" if left_label is not None else "")
        + ")"
    )


def _integer_like(label: str | None) -> bool:
    return label is not None and label.lstrip("+-").isdigit()


def _labels(values: Sequence[Any], side: str) -> list[str]:
    """Item labels as stripped strings; a missing label (None, NaN, blank) is an error
    naming the comparison."""
    out = []
    for k, x in enumerate(values):
        if x is None or (isinstance(x, float) and math.isnan(x)) or not str(x).strip():
            raise RecordError(k, None, f"missing {side} item label ({x!r})",
                              what="comparison")
        out.append(str(x).strip())
    return out


def _check_collisions(raw: Sequence[Any], stripped: Sequence[str]) -> None:
    """Two different labels that differ only in surrounding spaces are one name shown
    twice: refuse rather than rank them as two items."""
    seen: dict[str, str] = {}
    for x, s in zip(raw, stripped, strict=True):
        text = str(x)
        if seen.setdefault(s, text) != text:
            raise ValueError(f"item labels {seen[s]!r} and {text!r} differ only in surrounding "
                             f"spaces; they would be shown as one name ({s!r})")


def apply_empty_rule(
    outcome: np.ndarray, left_empty: np.ndarray, right_empty: np.ndarray
) -> np.ndarray:
    """Override outcomes for empty responses (SPEC §5).

    An empty response loses to a non-empty one; two empty responses tie; otherwise the
    recorded outcome stands.

    Examples
    --------
    >>> apply_empty_rule(np.array([1, 1, -1, 1]), np.array([True, False, False, True]),
    ...                  np.array([False, True, False, True])).tolist()
    [-1, 1, -1, 0]
    """
    out = np.asarray(outcome, dtype=np.int8).copy()
    le = np.asarray(left_empty, dtype=bool)
    re = np.asarray(right_empty, dtype=bool)
    if not (out.shape == le.shape == re.shape):
        raise ValueError("outcome, left_empty and right_empty must have the same length")
    out[le & ~re] = RIGHT
    out[~le & re] = LEFT
    out[le & re] = TIE
    return out


def make_comparisons(
    left: Sequence[Any],
    right: Sequence[Any],
    winner: Sequence[Any],
    *,
    weight: Sequence[float] | None = None,
    left_empty: Sequence[bool] | None = None,
    right_empty: Sequence[bool] | None = None,
    items: Sequence[str] | None = None,
    raters: Sequence[Any] | None = None,
    prompts: Sequence[Any] | None = None,
) -> Comparisons:
    """Build :class:`Comparisons` from labels and winner cells.

    Parameters
    ----------
    left, right : sequence
        Item labels (converted with ``str`` and stripped of surrounding spaces; a missing
        label, or two labels differing only in spaces, is an error).
    winner : sequence
        Winner cells, see :func:`parse_outcome` (``"left"``, ``"right"``, ``"tie"``, or an
        item label).
    weight : sequence of float, optional
        Non-negative comparison weights (default 1).
    left_empty, right_empty : sequence of bool, optional
        Whether each side's response was empty (:func:`apply_empty_rule`).
    items : sequence of str, optional
        Item order; default: labels sorted. Must contain every label.
    raters, prompts : sequence, optional
        Kept alongside for agreement analyses.

    Examples
    --------
    >>> c = make_comparisons(["a", "b"], ["b", "c"], ["left", "c"])
    >>> c.items, c.outcome.tolist()
    (['a', 'b', 'c'], [1, -1])
    """
    n = len(left)
    if len(right) != n or len(winner) != n:
        raise ValueError(
            f"left, right and winner must have the same length ({n}, {len(right)}, {len(winner)})"
        )
    ls = _labels(left, "left")
    rs = _labels(right, "right")
    _check_collisions([*left, *right], [*ls, *rs])
    labels = list(items) if items is not None else sorted(set(ls) | set(rs))
    index = {label: k for k, label in enumerate(labels)}
    if len(index) != len(labels):
        raise ValueError("items contains duplicate labels")
    missing = (set(ls) | set(rs)) - set(index)
    if missing:
        raise ValueError(f"labels not in items: {sorted(missing)[:5]}")
    li = np.fromiter((index[x] for x in ls), dtype=np.int64, count=n)
    ri = np.fromiter((index[x] for x in rs), dtype=np.int64, count=n)
    if np.any(li == ri):
        k = int(np.flatnonzero(li == ri)[0])
        raise ValueError(f"comparison {k} compares item {ls[k]!r} with itself")
    outcome = np.empty(n, dtype=np.int8)
    for k, (w, a, b) in enumerate(zip(winner, ls, rs, strict=True)):
        try:
            outcome[k] = parse_outcome(w, a, b)
        except ValueError as exc:
            raise RecordError(k, None, str(exc), what="comparison") from None
    if left_empty is not None or right_empty is not None:
        le = np.zeros(n, bool) if left_empty is None else np.asarray(left_empty, bool)
        re = np.zeros(n, bool) if right_empty is None else np.asarray(right_empty, bool)
        outcome = apply_empty_rule(outcome, le, re)
    w_arr = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    if w_arr.shape != (n,) or np.any(~np.isfinite(w_arr)) or np.any(w_arr < 0):
        raise ValueError("weight must be n finite non-negative numbers")
    return Comparisons(
        items=labels,
        left=li,
        right=ri,
        outcome=outcome,
        weight=w_arr,
        raters=None if raters is None else np.asarray(list(raters), dtype=object),
        prompts=None if prompts is None else np.asarray(list(prompts), dtype=object),
    )


def _is_blank(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    return value is None or (isinstance(value, str) and not value.strip())


def _truthy(value: Any) -> bool:
    """A flag cell: a bool, or ``1``/``true``/``yes``/``y``/``t`` (any case)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "y", "t"}


def comparisons_from_records(
    records: Sequence[Mapping[str, Any]],
    *,
    left: str,
    right: str,
    winner: str,
    weight: str | None = None,
    left_empty: str | None = None,
    right_empty: str | None = None,
    rater: str | None = None,
    prompt: str | None = None,
) -> Comparisons:
    """:func:`make_comparisons` from records (e.g. the rows of a table), by column name.

    Parameters
    ----------
    records : sequence of mapping
        One comparison per record.
    left, right, winner : str
        Columns of the two items and of the winner cell (:func:`parse_outcome`).
    weight : str, optional
        Column of numeric weights.
    left_empty, right_empty : str, optional
        Columns flagging an empty response (``true``/``false``, ``1``/``0``, ``yes``/``no``).
    rater, prompt : str, optional
        Columns of the rater and prompt ids.

    Raises
    ------
    RecordError
        A record with an empty item, an item compared with itself, a weight that is not a
        number or a winner cell that names neither side — with the record's index and
        the column at fault.
    ValueError
        Any other inconsistency (e.g. a negative weight).

    Examples
    --------
    >>> c = comparisons_from_records([{"l": "a", "r": "b", "w": "b"}], left="l", right="r",
    ...                              winner="w")
    >>> c.items, c.outcome.tolist()
    (['a', 'b'], [-1])
    >>> comparisons_from_records([{"l": "a", "r": "a", "w": "l"}], left="l", right="r",
    ...                          winner="w")
    Traceback (most recent call last):
    ...
    creagraph.judgments.bradley_terry.RecordError: record 0: item compared with itself
    """
    ls, rs, ws, wts = [], [], [], []
    for k, r in enumerate(records):
        a, b = r.get(left), r.get(right)
        if _is_blank(a) or _is_blank(b):
            raise RecordError(k, left if _is_blank(a) else right, "empty item")
        if str(a).strip() == str(b).strip():
            raise RecordError(k, right, "item compared with itself")
        ls.append(str(a))
        rs.append(str(b))
        ws.append(r.get(winner))
        if weight:
            try:
                wts.append(float(r[weight]))
            except (TypeError, ValueError):
                raise RecordError(k, weight, f"not a number: {r.get(weight)!r}") from None

    def column(name: str | None, convert: Any = None) -> list[Any] | None:
        if not name:
            return None
        return [convert(r.get(name)) if convert else r.get(name) for r in records]

    try:
        return make_comparisons(
            ls, rs, ws,
            weight=wts if weight else None,
            left_empty=column(left_empty, _truthy),
            right_empty=column(right_empty, _truthy),
            raters=column(rater),
            prompts=column(prompt),
        )
    except RecordError as exc:
        raise RecordError(exc.index, exc.column or winner, exc.detail) from None


def _check_arrays(
    n_items: int, left: Any, right: Any, outcome: Any, weight: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    li = np.asarray(left, dtype=np.int64).reshape(-1)
    ri = np.asarray(right, dtype=np.int64).reshape(-1)
    oc = np.asarray(outcome, dtype=np.int64).reshape(-1)
    w = np.ones(li.shape[0]) if weight is None else np.asarray(weight, float).reshape(-1)
    if not (li.shape == ri.shape == oc.shape == w.shape):
        raise ValueError("left, right, outcome and weight must have the same length")
    if li.size and (min(li.min(), ri.min()) < 0 or max(li.max(), ri.max()) >= n_items):
        raise ValueError(f"item indices must lie in [0, {n_items})")
    if not np.isin(oc, (LEFT, RIGHT, TIE)).all():
        raise ValueError("outcome values must be 1 (left), -1 (right) or 0 (tie)")
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    return li, ri, oc, w


def count_matrices(
    n_items: int,
    left: Sequence[int] | np.ndarray,
    right: Sequence[int] | np.ndarray,
    outcome: Sequence[int] | np.ndarray,
    weight: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted win and tie count matrices.

    Returns
    -------
    wins : ndarray, shape (n_items, n_items)
        ``wins[i, j]`` = weighted number of times ``i`` beat ``j``.
    ties : ndarray, shape (n_items, n_items)
        Symmetric; ``ties[i, j]`` = weighted number of ties between ``i`` and ``j``.

    Examples
    --------
    >>> w, t = count_matrices(3, [0, 1, 2], [1, 2, 0], [1, 0, -1])
    >>> w.tolist(), float(t[1, 2]), float(t[2, 1])
    ([[0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], 1.0, 1.0)
    """
    li, ri, oc, w = _check_arrays(n_items, left, right, outcome, weight)
    winners = np.where(oc == LEFT, li, ri)
    losers = np.where(oc == LEFT, ri, li)
    dec = oc != TIE
    wins = np.zeros((n_items, n_items))
    np.add.at(wins, (winners[dec], losers[dec]), w[dec])
    ties = np.zeros((n_items, n_items))
    np.add.at(ties, (li[~dec], ri[~dec]), w[~dec])
    ties = ties + ties.T
    return wins, ties


def is_identifiable(wins: np.ndarray) -> bool:
    """Whether the unpenalised ML estimate exists (Ford's condition, [1]_).

    True when the directed graph with an edge ``i -> j`` whenever ``wins[i, j] > 0`` is
    strongly connected: then no subset of items beats (or loses to) all the others.

    Examples
    --------
    >>> is_identifiable(np.array([[0, 1], [1, 0]])), is_identifiable(np.array([[0, 2], [0, 0]]))
    (True, False)
    """
    wins = np.asarray(wins, dtype=float)
    if wins.shape[0] <= 1:
        return True
    graph = sparse.csr_matrix(wins > 0)
    n_comp, _ = connected_components(graph, directed=True, connection="strong")
    return n_comp == 1


def _not_identifiable_message(wins: np.ndarray, items: Sequence[str] | None) -> str:
    names = items if items is not None else [str(k) for k in range(wins.shape[0])]
    won = wins.sum(axis=1)
    lost = wins.sum(axis=0)
    never_lose = [names[k] for k in np.flatnonzero((lost == 0) & (won > 0)).tolist()]
    never_win = [names[k] for k in np.flatnonzero((won == 0) & (lost > 0)).tolist()]
    unseen = [names[k] for k in np.flatnonzero((won == 0) & (lost == 0)).tolist()]
    parts = []
    if never_lose:
        parts.append(f"never lose: {never_lose[:5]}")
    if never_win:
        parts.append(f"never win: {never_win[:5]}")
    if unseen:
        parts.append(f"no decisive comparison: {unseen[:5]}")
    detail = "; ".join(parts) if parts else "the comparison graph is not strongly connected"
    return (
        f"the maximum-likelihood Bradley–Terry estimate does not exist ({detail}); "
        "pass alpha > 0 for a regularised (MAP) estimate"
    )


# --------------------------------------------------------------------------- fitting


def _bt_objective(theta: np.ndarray, wins: np.ndarray, games: np.ndarray, alpha: float):
    diff = theta[:, None] - theta[None, :]
    p = 0.5 * (1.0 + np.tanh(0.5 * diff))  # sigmoid, numerically stable
    # negative log-likelihood: sum_ij wins_ij * log(1 + exp(-(t_i - t_j)))
    nll = float(np.sum(wins * np.logaddexp(0.0, -diff))) + alpha * float(theta @ theta)
    grad = -(wins.sum(axis=1) - np.sum(games * p, axis=1)) + 2.0 * alpha * theta
    q = p * (1.0 - p) * games
    hess = -q
    np.fill_diagonal(hess, 0.0)
    hess[np.diag_indices_from(hess)] = q.sum(axis=1) - np.diag(q)
    hess = hess + 2.0 * alpha * np.eye(theta.size)
    return nll, grad, hess


def bt_mle(
    wins: np.ndarray,
    *,
    alpha: float = 0.0,
    method: Literal["newton", "mm"] = "newton",
    tol: float = 1e-10,
    max_iter: int = 10_000,
    items: Sequence[str] | None = None,
) -> np.ndarray:
    """Maximum-likelihood (``alpha = 0``) or MAP Bradley–Terry log-strengths.

    Minimises ``alpha * sum(theta**2) - sum_ij wins[i, j] * log sigmoid(theta_i - theta_j)``
    (choix's penalty convention). Fractional ``wins`` are allowed (ties as half-wins).

    Parameters
    ----------
    wins : ndarray, shape (n_items, n_items)
        ``wins[i, j]`` = (weighted) number of times ``i`` beat ``j``.
    alpha : float
        L2 penalty on the log-strengths; 0 gives the ML estimate, which exists only when
        :func:`is_identifiable` holds (else :class:`NotIdentifiableError`).
    method : {"newton", "mm"}
        Damped Newton–Raphson on the (strictly convex, after centring) objective, or
        Hunter's MM / Zermelo iteration [1]_ (ML only).
    tol : float
        Stop when the largest parameter change is below ``tol``.
    max_iter : int
    items : sequence of str, optional
        Labels used in error messages.

    Returns
    -------
    theta : ndarray, shape (n_items,)
        Natural-log strengths; mean-centred when ``alpha = 0``.

    Warns
    -----
    ConvergenceWarning
        When the solver stops at ``max_iter`` (or its line search stalls) before the
        largest parameter change falls below ``tol``; the message names the solver.

    Examples
    --------
    >>> wins = count_matrices(3, [0, 0, 1, 2], [1, 1, 2, 0], [1, 1, 1, 1])[0]
    >>> (np.round(bt_mle(wins), 6) + 0.0).tolist()
    [0.419618, -0.419618, 0.0]
    """
    theta, converged, detail = _bt_mle_fit(
        wins, alpha, items, method=method, tol=tol, max_iter=max_iter
    )
    if not converged:
        _warn_unconverged(detail)
    return theta


def _bt_mle_fit(
    wins: np.ndarray, alpha: float, items: Sequence[str] | None, *, method: str = "newton",
    tol: float = 1e-10, max_iter: int = 10_000,
) -> tuple[np.ndarray, bool, str]:
    """:func:`bt_mle` returning ``(theta, converged, detail)`` instead of warning."""
    wins = _checked_wins(wins, alpha, max_iter)
    n = wins.shape[0]
    if n == 0:
        return np.zeros(0), True, ""
    if alpha == 0 and not is_identifiable(wins):
        raise NotIdentifiableError(_not_identifiable_message(wins, items))
    if method == "mm":
        if alpha != 0:
            raise ValueError("method='mm' fits the unpenalised model only (alpha=0)")
        return _mm_fit(wins, tol, max_iter)
    if method != "newton":
        raise ValueError(f"unknown method {method!r} (use 'newton' or 'mm')")
    return _newton_fit(wins, alpha, tol, max_iter)


def _checked_wins(wins: np.ndarray, alpha: float, max_iter: int) -> np.ndarray:
    """A copy of ``wins`` as floats with a zero diagonal, after checking the arguments."""
    wins = np.asarray(wins, dtype=float)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
        raise ValueError("wins must be a square matrix")
    if np.any(~np.isfinite(wins)) or np.any(wins < 0):
        raise ValueError("wins must be finite and non-negative")
    if alpha < 0:
        raise ValueError("alpha must be >= 0")
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    wins = wins.copy()
    np.fill_diagonal(wins, 0.0)
    return wins


def _mm_fit(wins: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, bool, str]:
    """Hunter's MM (Zermelo) iteration for the ML estimate [1]_."""
    games = wins + wins.T
    won = wins.sum(axis=1)
    pi = np.ones(wins.shape[0])
    change = float("inf")
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        new = won / np.sum(games / (pi[:, None] + pi[None, :]), axis=1)
        new /= math.exp(float(np.mean(np.log(new))))
        change = float(np.max(np.abs(np.log(new) - np.log(pi))))
        pi = new
        if change < tol:
            break
    return _fixed_point_end(pi, change, tol, it, "Bradley–Terry MM (Hunter/Zermelo) iteration")


def _fixed_point_end(
    pi: np.ndarray, change: float, tol: float, it: int, solver: str
) -> tuple[np.ndarray, bool, str]:
    """End of a fixed-point iteration on strengths ``pi``: the mean-centred log-strengths,
    whether the last change met ``tol``, and what to warn otherwise."""
    theta = np.log(pi)
    converged = change < tol
    detail = (
        f"{solver} did not converge in {it} iterations "
        f"(last change {change:.3g} > tol {tol:.3g}); raise max_iter"
    )
    return theta - theta.mean(), converged, "" if converged else detail


def _newton_fit(
    wins: np.ndarray, alpha: float, tol: float, max_iter: int
) -> tuple[np.ndarray, bool, str]:
    """Damped Newton–Raphson with a backtracking (Armijo) line search."""
    n = wins.shape[0]
    games = wins + wins.T
    change = float("inf")
    theta = np.zeros(n)
    # the unpenalised objective is flat along the all-ones direction: fix the mean at 0
    centre = np.full((n, n), 1.0 / n) if alpha == 0 else 0.0
    nll, grad, hess = _bt_objective(theta, wins, games, alpha)
    stalled = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        step = np.linalg.solve(hess + centre, grad)
        t = 1.0
        while True:
            cand = theta - t * step
            new_nll, new_grad, new_hess = _bt_objective(cand, wins, games, alpha)
            if new_nll <= nll + 1e-4 * t * float(grad @ (-step)):
                break
            if t < 1e-10:
                stalled = True
                break
            t *= 0.5
        change = float(np.max(np.abs(cand - theta)))
        theta, nll, grad, hess = cand, new_nll, new_grad, new_hess
        if change < tol:
            break
        if stalled:
            # the line search found no decrease: accept only if already at a stationary point
            break
    if alpha == 0:
        theta = theta - theta.mean()
    grad_norm = float(np.max(np.abs(grad - (grad.mean() if alpha == 0 else 0.0))))
    converged = change < tol or grad_norm < 1e-8 * max(1.0, float(games.sum()))
    detail = (
        f"Bradley–Terry Newton solver did not converge in {it} iterations "
        f"(last change {change:.3g} > tol {tol:.3g}, gradient {grad_norm:.3g}"
        + ("; line search stalled" if stalled else "")
        + "); raise max_iter or check the data"
    )
    return theta, converged, "" if converged else detail


def _davidson_nll(params: np.ndarray, wins: np.ndarray, ties: np.ndarray, alpha: float):
    theta, log_nu = params[:-1], params[-1]
    nu = math.exp(log_nu)
    half = 0.5 * (theta[:, None] + theta[None, :])
    # log D_ij = log(e^ti + e^tj + 2 nu e^((ti+tj)/2)), computed stably
    stack = np.stack(
        [np.broadcast_to(theta[:, None], half.shape), np.broadcast_to(theta[None, :], half.shape),
         half + math.log(2.0 * nu)]
    )
    log_d = np.logaddexp.reduce(stack, axis=0)
    a = np.exp(theta[:, None] - log_d) + nu * np.exp(half - log_d)  # d log D_ij / d theta_i
    tau = 2.0 * nu * np.exp(half - log_d)  # P(tie), = d log D_ij / d log nu
    games = wins + wins.T + ties
    ll = float(np.sum(wins * (theta[:, None] - log_d)))
    ll += 0.5 * float(np.sum(ties * (math.log(2.0 * nu) + half - log_d)))
    g_theta = wins.sum(axis=1) + 0.5 * ties.sum(axis=1) - np.sum(games * a, axis=1)
    g_nu = 0.5 * float(ties.sum()) - 0.5 * float(np.sum(games * tau))
    nll = -ll + alpha * float(theta @ theta)
    grad = np.concatenate([-g_theta + 2 * alpha * theta, [-g_nu]])
    return nll, grad


def davidson_mle(
    wins: np.ndarray,
    ties: np.ndarray,
    *,
    alpha: float = 0.0,
    nu_init: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    items: Sequence[str] | None = None,
) -> tuple[np.ndarray, float]:
    """Davidson-type tie model, in Newman's parametrisation [2]_ [3]_.

    With ``alpha = 0`` this runs Newman's (2023) fixed-point iteration to convergence;
    with ``alpha > 0`` it minimises the penalised negative log-likelihood with L-BFGS.

    Parameters
    ----------
    wins : ndarray, shape (n_items, n_items)
    ties : ndarray, shape (n_items, n_items)
        Symmetric tie counts (see :func:`count_matrices`).
    alpha : float
        L2 penalty on ``theta`` (choix convention).
    nu_init : float
        Starting tie parameter.

    Returns
    -------
    theta : ndarray, shape (n_items,)
        Mean-centred log-strengths.
    nu : float
        Tie parameter (0 when there are no ties).

    Warns
    -----
    ConvergenceWarning
        When Newman's iteration reaches ``max_iter``, or L-BFGS reports failure
        (``res.success`` false), naming the solver.

    Examples
    --------
    >>> w, t = count_matrices(2, [0, 0, 0], [1, 1, 1], [1, 0, -1])
    >>> theta, nu = davidson_mle(w, t)
    >>> np.round(theta, 6).tolist(), round(nu, 6)
    ([0.0, 0.0], 0.5)
    """
    theta, nu, converged, detail = _davidson_fit(
        wins, ties, alpha, items, nu_init=nu_init, tol=tol, max_iter=max_iter
    )
    if not converged:
        _warn_unconverged(detail)
    return theta, nu


def _davidson_fit(
    wins: np.ndarray, ties: np.ndarray, alpha: float, items: Sequence[str] | None, *,
    nu_init: float = 0.5, tol: float = 1e-10, max_iter: int = 10_000,
) -> tuple[np.ndarray, float, bool, str]:
    """:func:`davidson_mle` returning ``(theta, nu, converged, detail)``."""
    wins = np.asarray(wins, dtype=float).copy()
    ties = np.asarray(ties, dtype=float).copy()
    if wins.shape != ties.shape or wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
        raise ValueError("wins and ties must be square matrices of the same shape")
    if not np.allclose(ties, ties.T):
        raise ValueError("ties must be symmetric")
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    np.fill_diagonal(wins, 0.0)
    np.fill_diagonal(ties, 0.0)
    n = wins.shape[0]
    if n == 0:
        return np.zeros(0), 0.0, True, ""
    if alpha == 0 and not is_identifiable(wins + ties):
        raise NotIdentifiableError(_not_identifiable_message(wins + ties, items))
    if ties.sum() == 0:
        theta, conv, detail = _bt_mle_fit(wins, alpha, items, tol=tol, max_iter=max_iter)
        return theta, 0.0, conv, detail
    from scipy import optimize  # imported here: costs ~1 s, paid only when used

    if alpha > 0:
        x0 = np.concatenate([np.zeros(n), [math.log(nu_init)]])
        res = optimize.minimize(
            _davidson_nll, x0, args=(wins, ties, alpha), jac=True, method="L-BFGS-B",
            options={"maxiter": max_iter, "gtol": 1e-10, "ftol": 1e-15},
        )
        detail = (
            f"Davidson L-BFGS-B (scipy.optimize.minimize) did not converge after {res.nit} "
            f"iterations: {res.message}"
        )
        ok = bool(res.success)
        if not ok:
            # ftol/gtol this tight can end on "ABNORMAL" line searches at the optimum:
            # accept when the projected gradient is negligible
            g = np.asarray(res.jac, dtype=float)
            ok = float(np.max(np.abs(g))) < 1e-6 * max(1.0, float((wins + ties).sum()))
        return res.x[:-1], float(math.exp(res.x[-1])), ok, "" if ok else detail
    half_wins = wins + ties / 2.0
    pi = np.ones(n)
    nu = float(nu_init)
    change = float("inf")
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        sq = np.sqrt(np.outer(pi, pi))
        denom = pi[:, None] + pi[None, :] + 2.0 * nu * sq
        num = np.sum(half_wins * (pi[None, :] + nu * sq) / denom, axis=1)
        den = np.sum(half_wins.T * (1.0 + nu * np.sqrt(pi[None, :] / pi[:, None])) / denom, axis=1)
        new = num / den
        new /= math.exp(float(np.mean(np.log(new))))
        sq = np.sqrt(np.outer(new, new))
        denom = new[:, None] + new[None, :] + 2.0 * nu * sq
        new_nu = float(
            (0.5 * np.sum(ties * (new[:, None] + new[None, :]) / denom))
            / (2.0 * np.sum(wins * sq / denom))
        )
        change = max(float(np.max(np.abs(np.log(new) - np.log(pi)))),
                     abs(math.log(new_nu) - math.log(nu)) if nu > 0 and new_nu > 0 else 0.0)
        pi, nu = new, new_nu
        if change < tol:
            break
    theta, converged, detail = _fixed_point_end(
        pi, change, tol, it, "Davidson (Newman 2023) fixed-point iteration"
    )
    return theta, nu, converged, detail


def bt_covariance(theta: np.ndarray, games: np.ndarray, *, alpha: float = 0.0) -> np.ndarray:
    """Wald covariance of the log-strengths: inverse of the (penalised) Fisher information.

    With ``alpha = 0`` the information is singular along the all-ones direction; the
    Moore–Penrose pseudo-inverse gives the covariance under the sum-to-zero constraint.

    Parameters
    ----------
    theta : ndarray, shape (n_items,)
    games : ndarray, shape (n_items, n_items)
        Symmetric number of (decisive) comparisons between each pair.
    alpha : float

    Examples
    --------
    >>> cov = bt_covariance(np.zeros(2), np.array([[0.0, 4.0], [4.0, 0.0]]))
    >>> round(float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]), 6)  # Var(theta_0 - theta_1)
    1.0
    """
    theta = np.asarray(theta, float)
    games = np.asarray(games, float)
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    q = games * p * (1 - p)
    np.fill_diagonal(q, 0.0)
    info = np.diag(q.sum(axis=1)) - q + 2.0 * alpha * np.eye(theta.size)
    if alpha == 0:
        return np.linalg.pinv(info, hermitian=True)
    return np.linalg.inv(info)


def win_probabilities(theta: np.ndarray) -> np.ndarray:
    """``P[i, j] = P(i beats j) = sigmoid(theta_i - theta_j)`` (diagonal 0.5).

    Examples
    --------
    >>> float(win_probabilities(np.array([math.log(3.0), 0.0]))[0, 1])
    0.75
    """
    theta = np.asarray(theta, float)
    return 0.5 * (1.0 + np.tanh(0.5 * (theta[:, None] - theta[None, :])))


def elo_scale(theta: np.ndarray, *, base_rating: float = ELO_BASE_RATING) -> np.ndarray:
    """Log-strengths on the Elo scale: ``base + 400 / ln(10) * (theta - mean(theta))``.

    A 400-point gap means 10:1 odds, as in chess and Chatbot Arena [5]_.

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


def comparison_components(comparisons: Comparisons) -> list[list[str]]:
    """Groups of items linked by comparisons (ties included), largest first.

    Items in different groups were never compared, directly or through others, so their
    strengths are not on a common scale. Items without any comparison form groups of one.

    Examples
    --------
    >>> c = make_comparisons(["a", "c"], ["b", "d"], ["left", "tie"], items=list("abcde"))
    >>> comparison_components(c)
    [['a', 'b'], ['c', 'd'], ['e']]
    """
    labels = _component_labels(comparisons.n_items, comparisons.left, comparisons.right)
    groups: dict[int, list[str]] = {}
    for k, lab in enumerate(labels.tolist()):
        groups.setdefault(lab, []).append(comparisons.items[k])
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def _component_labels(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    li = np.asarray(left, dtype=np.int64)
    ri = np.asarray(right, dtype=np.int64)
    graph = sparse.csr_matrix((np.ones(li.size), (li, ri)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels


# --------------------------------------------------------------------------- results


@dataclass
class BTResult:
    """A fitted Bradley–Terry leaderboard (plain arrays, indexed like ``items``).

    Attributes
    ----------
    items : list of str
    theta : ndarray
        Log-strengths (mean-centred).
    strength : ndarray
        ``exp(theta)`` normalised to sum 1 (evalica's convention).
    se : ndarray
        Wald standard errors of ``theta``.
    ci_low, ci_high : ndarray
        Confidence interval of ``theta`` (bootstrap percentile when ``n_bootstrap > 0``,
        otherwise Wald).
    standardized : ndarray
        ``(theta - mean) / std`` across items.
    elo : ndarray
        :func:`elo_scale` of ``theta``: the Bradley–Terry estimate on the Elo scale
        (1000 + 400·log10 odds), *not* sequential Elo (see :func:`sequential_elo`).
    elo_ci_low, elo_ci_high : ndarray
        ``ci_low``/``ci_high`` on the same Elo scale.
    expected_win_rate : ndarray
        Mean predicted win probability against every other item (the population).
    rank : ndarray of int
        1 = best.
    tier : ndarray of int
        Significance rank: ``1 +`` the number of items significantly better (at the
        interval's level and with its covariance). Never chained: two items share a
        value only if neither is significantly below the same set.
    rank_best, rank_worst : ndarray of int
        The range of ranks the item could take: ``tier`` and ``n −`` the number of items
        significantly worse.
    interval_method : str
        ``"wald"`` (the fitted model's information; for half-ties its sandwich),
        ``"bootstrap percentile"``, or ``"cluster-robust t (G raters, G−1 df)"`` when the
        comparisons are clustered (``cluster`` = rater or prompt).
    rank_probabilities : ndarray, shape (n_items, n_items)
        ``[i, r]`` = probability that item ``i`` has rank ``r + 1`` (bootstrap, or draws
        from the Wald normal approximation when no bootstrap was run).
    covariance : ndarray
        Covariance of ``theta`` behind ``se`` and ``tier`` (Wald of the fitted model, or
        cluster-robust).
    n_comparisons, n_wins, n_losses, n_ties : ndarray
        Per-item counts (weighted), ties included.
    raw_win_rate, tie_half_win_rate : ndarray
        ``wins / comparisons`` and ``(wins + ties / 2) / comparisons``.
    tie_rate : float
        Overall fraction of comparisons that were ties.
    tie_policy : str
    alpha : float
    nu : float or None
        Davidson tie parameter (``tie_policy="davidson"``).
    n_bootstrap : int
    n_degenerate_resamples : int
        Bootstrap resamples with no ML estimate, refitted with a small ridge.
    bootstrap_theta : ndarray or None, shape (n_bootstrap, n_items)
    bootstrap_cluster : str
        What the bootstrap resampled: ``"comparison"``, ``"rater"`` or ``"prompt"``.
    n_clusters : int
        Number of resampled units (comparisons, raters or prompts).
    converged : bool
        Whether the solver met its tolerance on the full data (else a
        :class:`ConvergenceWarning` was issued with ``convergence_message``).
    convergence_message : str
    n_unconverged_resamples : int
        Bootstrap resamples whose solver did not converge.
    component : ndarray of int
        Connected group of the comparison graph each item belongs to (0 = largest);
        several groups are only ranked together with ``across_components=True``.
    """

    items: list[str]
    theta: np.ndarray
    strength: np.ndarray
    se: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    standardized: np.ndarray
    elo: np.ndarray
    expected_win_rate: np.ndarray
    rank: np.ndarray
    tier: np.ndarray
    rank_probabilities: np.ndarray
    covariance: np.ndarray
    n_comparisons: np.ndarray
    n_wins: np.ndarray
    n_losses: np.ndarray
    n_ties: np.ndarray
    raw_win_rate: np.ndarray
    tie_half_win_rate: np.ndarray
    tie_rate: float
    tie_policy: str
    alpha: float
    ci_level: float
    nu: float | None = None
    n_bootstrap: int = 0
    n_degenerate_resamples: int = 0
    bootstrap_theta: np.ndarray | None = field(default=None, repr=False)
    elo_ci_low: np.ndarray | None = None
    elo_ci_high: np.ndarray | None = None
    bootstrap_cluster: str = "comparison"
    n_clusters: int = 0
    converged: bool = True
    convergence_message: str = ""
    n_unconverged_resamples: int = 0
    component: np.ndarray | None = None
    rank_best: np.ndarray | None = None
    rank_worst: np.ndarray | None = None
    interval_method: str = "wald"

    def order(self) -> np.ndarray:
        """Item indices from best to worst."""
        return np.argsort(self.rank, kind="stable")

    def leaderboard(self) -> list[dict[str, Any]]:
        """One record per item, best first (for tables and :func:`write_records`)."""
        rows = []
        for k in self.order():
            rows.append(
                {
                    "rank": int(self.rank[k]),
                    "tier": int(self.tier[k]),
                    "rank_best": int(self.rank_best[k]) if self.rank_best is not None
                    else int(self.tier[k]),
                    "rank_worst": int(self.rank_worst[k]) if self.rank_worst is not None
                    else len(self.items),
                    "item": self.items[k],
                    "theta": float(self.theta[k]),
                    "ci_low": float(self.ci_low[k]),
                    "ci_high": float(self.ci_high[k]),
                    "se": float(self.se[k]),
                    "strength": float(self.strength[k]),
                    "standardized": float(self.standardized[k]),
                    "elo": float(self.elo[k]),
                    "elo_ci_low": float(self.elo_ci_low[k])
                    if self.elo_ci_low is not None else float("nan"),
                    "elo_ci_high": float(self.elo_ci_high[k])
                    if self.elo_ci_high is not None else float("nan"),
                    "expected_win_rate": float(self.expected_win_rate[k]),
                    "p_rank_1": float(self.rank_probabilities[k, 0]),
                    "n_comparisons": float(self.n_comparisons[k]),
                    "wins": float(self.n_wins[k]),
                    "losses": float(self.n_losses[k]),
                    "ties": float(self.n_ties[k]),
                    "raw_win_rate": float(self.raw_win_rate[k]),
                    "tie_half_win_rate": float(self.tie_half_win_rate[k]),
                    "component": int(self.component[k]) if self.component is not None else 0,
                }
            )
        return rows


def _fit(
    wins: np.ndarray, ties: np.ndarray, policy: str, alpha: float, items: Sequence[str] | None
) -> tuple[np.ndarray, float | None, bool, str]:
    if policy == "exclude":
        theta, ok, detail = _bt_mle_fit(wins, alpha, items)
        return theta, None, ok, detail
    if policy == "half":
        theta, ok, detail = _bt_mle_fit(wins + ties / 2.0, alpha, items)
        return theta, None, ok, detail
    return _davidson_fit(wins, ties, alpha, items)


def _ranks(theta: np.ndarray) -> np.ndarray:
    """1-based ranks, best first; exact ties broken by index (stable)."""
    order = np.argsort(-theta, kind="stable")
    rank = np.empty(theta.size, dtype=np.int64)
    rank[order] = np.arange(1, theta.size + 1)
    return rank


def _rank_probabilities(samples: np.ndarray) -> np.ndarray:
    n_draws, n = samples.shape
    out = np.zeros((n, n))
    ranks = np.argsort(np.argsort(-samples, axis=1, kind="stable"), axis=1, kind="stable")
    for r in range(n):
        out[:, r] = np.mean(ranks == r, axis=0)
    return out


# over 80 lines only for the docstring of its ten options; the body (~50 lines) calls helpers
def bradley_terry(
    comparisons: Comparisons,
    *,
    ties: TiePolicy | Ties = "exclude",
    alpha: float = 0.0,
    n_bootstrap: int = 0,
    ci: float = 0.95,
    seed: int | None = 0,
    degenerate_alpha: float = 0.01,
    show_progress: bool = False,
    cluster: Literal["comparison", "rater", "prompt"] | BootstrapUnit = "comparison",
    across_components: bool = False,
) -> BTResult:
    """Fit a Bradley–Terry leaderboard with diagnostics, intervals, ranks and tiers.

    Parameters
    ----------
    comparisons : Comparisons
        See :func:`make_comparisons`.
    ties : {"exclude", "half", "davidson"}
        Tie policy (module docstring). Ties always enter the diagnostics.
    alpha : float
        L2 penalty on the log-strengths (0: maximum likelihood).
    n_bootstrap : int
        Number of bootstrap resamples (with replacement); when > 0, ``ci_low``/``ci_high``
        are percentile intervals and rank probabilities come from the resamples.
    ci : float
        Confidence level of the intervals and of the tier test.
    seed : int or None
        Seed of the bootstrap / rank-probability draws.
    degenerate_alpha : float
        Ridge used for bootstrap resamples (and only those) where the ML estimate does
        not exist; they are counted in ``n_degenerate_resamples``.
    show_progress : bool
        Show a progress bar over the bootstrap.
    cluster : {"comparison", "rater", "prompt"}
        What the bootstrap resamples: single comparisons (independent), or whole raters /
        prompts with all their comparisons (a cluster bootstrap: raters with their own
        tastes, or prompts that favour some model, make comparisons dependent, and
        resampling them one by one gives intervals that are too narrow).
    across_components : bool
        When the comparison graph falls into groups never compared with each other,
        raise :class:`DisconnectedComparisonsError` naming them (default), or — when true —
        rank all items together anyway (their relative position across groups then only
        reflects the penalty ``alpha``). See also :func:`bradley_terry_by_component`.

    Returns
    -------
    BTResult

    Warns
    -----
    ConvergenceWarning
        When the solver did not converge on the data or on some bootstrap resamples.

    Examples
    --------
    >>> c = make_comparisons(["a", "a", "b", "c", "a"], ["b", "b", "c", "a", "c"],
    ...                      ["left", "left", "left", "left", "tie"])
    >>> res = bradley_terry(c)
    >>> [row["item"] for row in res.leaderboard()], round(res.tie_rate, 2)
    (['a', 'c', 'b'], 0.2)
    """
    _check_fit_args(ties, ci, n_bootstrap, comparisons)
    n = comparisons.n_items
    li, ri, oc, w = _check_arrays(
        n, comparisons.left, comparisons.right, comparisons.outcome, comparisons.weight
    )
    component = _components(comparisons, li, ri, across_components)
    cluster_ids = _cluster_ids(comparisons, cluster)
    n_clusters = int(cluster_ids.max()) + 1 if cluster_ids.size else 0

    wins, tie_m = count_matrices(n, li, ri, oc, w)
    if ties == "davidson" and alpha == 0 and tie_m.sum() > 0 and wins.sum() == 0:
        raise NotIdentifiableError(
            "every comparison is a tie: the Davidson tie parameter has no finite estimate "
            "and no item is ranked above another (use ties='half', or alpha > 0)")
    theta, nu, converged, conv_msg = _fit(wins, tie_m, ties, alpha, comparisons.items)
    if not converged:
        _warn_unconverged(conv_msg)

    total_w = float(w.sum())
    tie_rate = float(w[oc == TIE].sum() / total_w) if total_w > 0 else 0.0
    cov, crit, method = _covariance(theta, nu, (li, ri, oc, w), ties, alpha, cluster,
                                    cluster_ids, ci)
    rng = np.random.default_rng(seed)
    boot: np.ndarray | None = None
    n_degenerate = n_unconverged = 0
    if n_bootstrap > 0:
        boot, n_degenerate, n_unconverged = _bootstrap(
            comparisons, (li, ri, oc, w), cluster_ids, rng, n_bootstrap, ties, alpha,
            degenerate_alpha, show_progress,
        )
    return BTResult(
        items=list(comparisons.items),
        theta=theta,
        **_scales(theta),
        **_uncertainty(theta, cov, ci, rng, boot, crit, method),
        covariance=cov,
        **_item_counts(wins, tie_m),
        tie_rate=tie_rate,
        tie_policy=ties,
        alpha=alpha,
        ci_level=ci,
        nu=nu,
        n_bootstrap=n_bootstrap,
        n_degenerate_resamples=n_degenerate,
        bootstrap_theta=boot,
        bootstrap_cluster=cluster,
        n_clusters=n_clusters if (n_bootstrap > 0 or cluster != "comparison") else 0,
        converged=converged,
        convergence_message=conv_msg,
        n_unconverged_resamples=n_unconverged,
        component=component,
    )


def _item_counts(wins: np.ndarray, tie_m: np.ndarray) -> dict[str, Any]:
    """Per item: comparisons, wins, losses, ties (always counted) and the raw win rates."""
    n_wins = wins.sum(axis=1)
    n_losses = wins.sum(axis=0)
    n_ties = tie_m.sum(axis=1)
    n_comp = n_wins + n_losses + n_ties
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.where(n_comp > 0, n_wins / n_comp, np.nan)
        half = np.where(n_comp > 0, (n_wins + n_ties / 2.0) / n_comp, np.nan)
    return {"n_comparisons": n_comp, "n_wins": n_wins, "n_losses": n_losses,
            "n_ties": n_ties, "raw_win_rate": raw, "tie_half_win_rate": half}


def _scales(theta: np.ndarray) -> dict[str, Any]:
    """The estimate read other ways: strengths summing to 1, z-scores, Elo, expected win
    rate against the field and ranks."""
    n = theta.size
    sd = float(theta.std())
    strength = np.exp(theta - theta.max())
    return {
        "strength": strength / strength.sum(),
        "standardized": (theta - theta.mean()) / sd if sd > 0 else np.zeros(n),
        "elo": elo_scale(theta),
        "expected_win_rate": (win_probabilities(theta).sum(axis=1) - 0.5) / max(n - 1, 1),
        "rank": _ranks(theta),
    }


def _covariance(
    theta: np.ndarray, nu: float | None, arrays: tuple[np.ndarray, ...], ties: str,
    alpha: float, cluster: str, cluster_ids: np.ndarray, ci: float,
) -> tuple[np.ndarray, float, str]:
    """Covariance of ``theta``, the critical value of its intervals and their method:
    the fitted model's Wald covariance, or — when comparisons are clustered by rater or
    prompt — the cluster-robust sandwich with Student's t on G − 1 degrees of freedom
    (:mod:`~creagraph.judgments.uncertainty`)."""
    from scipy import stats

    li, ri, oc, w = arrays
    z = float(stats.norm.ppf(0.5 + ci / 2.0))
    cov = model_covariance(theta, nu, li, ri, oc, w, ties, alpha)
    method = "wald" if ties != "half" else "wald (robust to half-ties)"
    if cluster == "comparison":
        return cov, z, method
    cov_c, g = sandwich_covariance(theta, nu, li, ri, oc, w, ties, cluster_ids, alpha)
    if g < MIN_CLUSTERS:
        warnings.warn(
            f"only {g} {cluster}(s): too few clusters for a cluster-robust interval; the "
            "intervals assume independent comparisons and are too narrow if the "
            f"{cluster}s differ", DegenerateClustersWarning, stacklevel=4,
        )
        return cov, z, f"{method} (too few {cluster}s: {g})"
    return cov_c, float(stats.t.ppf(0.5 + ci / 2.0, g - 1)), (
        f"cluster-robust t ({g} {cluster}s, {g - 1} df)")


def _normal_draws(theta: np.ndarray, cov: np.ndarray, rng: np.random.Generator,
                  size: int) -> np.ndarray:
    """Draws from N(theta, cov) through a Cholesky factor (an eigendecomposition costs far
    more). ``cov`` is singular along the all-ones direction when unpenalised: factor
    ``cov + c·11ᵀ/n`` and remove each draw's mean shift, which leaves N(0, cov) exactly."""
    n = theta.size
    ones = np.full((n, n), 1.0 / n)
    c = max(float(np.trace(cov)) / n, 1e-12)
    try:
        chol = np.linalg.cholesky(cov + c * ones)
    except np.linalg.LinAlgError:  # not positive definite beyond the ones direction
        return rng.multivariate_normal(theta, cov, size=size, method="eigh")
    z = rng.standard_normal((size, n)) @ chol.T
    if np.allclose(cov.sum(axis=1), 0.0, atol=1e-9 * c):
        z -= z.mean(axis=1, keepdims=True)
    else:  # a penalised fit: the ones direction is part of cov, no shift was added there
        return rng.multivariate_normal(theta, cov, size=size, method="eigh")
    return theta + z


def _uncertainty(
    theta: np.ndarray, cov: np.ndarray, ci: float, rng: np.random.Generator,
    boot: np.ndarray | None, crit: float, method: str,
) -> dict[str, Any]:
    """Standard errors, intervals (bootstrap percentiles for independent comparisons,
    else ``theta ± crit · se``), significance ranks and rank probabilities (from the
    resamples, else from 2000 normal draws)."""
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if boot is not None and method.startswith("wald"):
        lo_q, hi_q = (1 - ci) / 2.0, 1 - (1 - ci) / 2.0
        ci_low = np.quantile(boot, lo_q, axis=0)
        ci_high = np.quantile(boot, hi_q, axis=0)
        method = "bootstrap percentile"
    else:
        ci_low = theta - crit * se
        ci_high = theta + crit * se
    if boot is not None:
        rank_prob = _rank_probabilities(boot)
    else:
        rank_prob = _rank_probabilities(_normal_draws(theta, cov, rng, 2000))
    centre = float(theta.mean())
    tier, rank_best, rank_worst = significance_ranks(theta, cov, crit)
    return {
        "se": se, "ci_low": ci_low, "ci_high": ci_high, "tier": tier,
        "rank_best": rank_best, "rank_worst": rank_worst, "interval_method": method,
        "rank_probabilities": rank_prob,
        "elo_ci_low": ELO_BASE_RATING + ELO_SCALE * (ci_low - centre),
        "elo_ci_high": ELO_BASE_RATING + ELO_SCALE * (ci_high - centre),
    }


def _check_fit_args(ties: str, ci: float, n_bootstrap: int, comparisons: Comparisons) -> None:
    if ties not in _TIE_POLICIES:
        raise ValueError(f"unknown tie policy {ties!r} (use one of {_TIE_POLICIES})")
    if not 0 < ci < 1:
        raise ValueError("ci must lie in (0, 1)")
    if n_bootstrap < 0:
        raise ValueError("n_bootstrap must be >= 0")
    if len(comparisons) == 0:
        raise ValueError("no comparisons")


def _components(
    comparisons: Comparisons, li: np.ndarray, ri: np.ndarray, across_components: bool
) -> np.ndarray:
    """Connected group of each item, largest group first (0); raises
    :class:`DisconnectedComparisonsError` for several groups unless ``across_components``."""
    n = comparisons.n_items
    components = _component_labels(n, li, ri)
    n_groups = int(components.max()) + 1 if n else 0
    if n_groups > 1:
        groups = comparison_components(comparisons)
        if not across_components:
            shown = " | ".join(str(g[:6]) + ("…" if len(g) > 6 else "") for g in groups[:5])
            raise DisconnectedComparisonsError(
                f"the comparisons fall into {n_groups} groups never compared with each other "
                f"({shown}); their strengths are not on a common scale. Rank each group "
                "separately (bradley_terry_by_component) or pass across_components=True",
                groups,
            )
    # number components largest first
    sizes = np.bincount(components, minlength=n_groups) if n else np.zeros(0, np.int64)
    order_groups = sorted(
        range(n_groups), key=lambda g: (-sizes[g], int(np.argmax(components == g)))
    )
    relabel = {g: k for k, g in enumerate(order_groups)}
    return np.array([relabel[int(c)] for c in components], dtype=np.int64)


def _cluster_ids(comparisons: Comparisons, cluster: str) -> np.ndarray:
    """The bootstrap unit of each comparison: itself, or its rater / prompt (numbered in
    order of first appearance)."""
    if cluster == "comparison":
        return np.arange(len(comparisons))
    if cluster in ("rater", "prompt"):
        keys = comparisons.raters if cluster == "rater" else comparisons.prompts
        if keys is None:
            raise ValueError(f"cluster={cluster!r} needs comparisons with {cluster}s recorded")
        first_seen: dict[Any, int] = {}
        return np.fromiter(
            (first_seen.setdefault(key, len(first_seen)) for key in keys.tolist()),
            dtype=np.int64, count=len(keys),
        )
    raise ValueError(f"unknown cluster {cluster!r} (use 'comparison', 'rater' or 'prompt')")


def _bootstrap(
    comparisons: Comparisons,
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    cluster_ids: np.ndarray,
    rng: np.random.Generator,
    n_bootstrap: int,
    ties: str,
    alpha: float,
    degenerate_alpha: float,
    show_progress: bool,
) -> tuple[np.ndarray, int, int]:
    """Refit on ``n_bootstrap`` resamples of the clusters (with replacement): the centred
    estimates, the number of resamples refitted with ``degenerate_alpha`` and the number
    that did not converge (warned about)."""
    li, ri, oc, w = arrays
    n = comparisons.n_items
    n_clusters = int(cluster_ids.max()) + 1 if cluster_ids.size else 0
    boot = np.empty((n_bootstrap, n))
    n_degenerate = 0
    n_unconverged = 0
    draws: Iterable[int] = range(n_bootstrap)
    if show_progress:
        from creagraph.core.progress import progress

        draws = progress(draws, total=n_bootstrap, desc="bootstrap")
    for b in draws:
        counts = np.bincount(rng.integers(0, n_clusters, size=n_clusters),
                             minlength=n_clusters)
        bw, bt = count_matrices(n, li, ri, oc, w * counts[cluster_ids])
        try:
            fit = _fit(bw, bt, ties, alpha, comparisons.items)
        except NotIdentifiableError:
            n_degenerate += 1
            fit = _fit(bw, bt, ties, max(alpha, degenerate_alpha), comparisons.items)
        boot[b] = fit[0] - fit[0].mean()
        n_unconverged += not fit[2]
    if n_unconverged:
        _warn_unconverged(
            f"{n_unconverged} of {n_bootstrap} bootstrap resamples did not converge "
            f"(solver for ties={ties!r})",
            stacklevel=4,
        )
    return boot, n_degenerate, n_unconverged


def bradley_terry_by_component(comparisons: Comparisons, **kwargs: Any) -> list[BTResult]:
    """Fit :func:`bradley_terry` separately on each group of items linked by comparisons.

    Parameters
    ----------
    comparisons : Comparisons
    **kwargs
        Passed to :func:`bradley_terry`.

    Returns
    -------
    list of BTResult
        One per group, largest first (see :func:`comparison_components`); groups of a
        single item (nothing to rank) are skipped.

    Examples
    --------
    >>> c = make_comparisons(["a", "b", "c", "d"], ["b", "a", "d", "c"],
    ...                      ["left", "left", "left", "left"])
    >>> [r.items for r in bradley_terry_by_component(c)]
    [['a', 'b'], ['c', 'd']]
    """
    results = []
    for group in comparison_components(comparisons):
        if len(group) < 2:
            continue
        idx = np.array([comparisons.items.index(g) for g in group], dtype=np.int64)
        results.append(bradley_terry(_restrict(comparisons, idx), **kwargs))
    return results


def _restrict(comparisons: Comparisons, idx: np.ndarray) -> Comparisons:
    """The comparisons among the items ``idx`` only, re-indexed to those items."""
    remap = np.full(comparisons.n_items, -1, dtype=np.int64)
    remap[idx] = np.arange(idx.size)
    keep = (remap[comparisons.left] >= 0) & (remap[comparisons.right] >= 0)
    return Comparisons(
        items=[comparisons.items[k] for k in idx.tolist()],
        left=remap[comparisons.left[keep]],
        right=remap[comparisons.right[keep]],
        outcome=comparisons.outcome[keep],
        weight=comparisons.weight[keep],
        raters=None if comparisons.raters is None else comparisons.raters[keep],
        prompts=None if comparisons.prompts is None else comparisons.prompts[keep],
    )


# --------------------------------------------------------------------------- active sampling


def next_pairs(
    theta: np.ndarray,
    covariance: np.ndarray,
    pair_counts: np.ndarray,
    k: int = 1,
    *,
    warm_start: int = 1,
) -> list[tuple[int, int]]:
    """Choose the next ``k`` pairs to compare (active sampling).

    Warm start first: while some pair has fewer than ``warm_start`` comparisons, the
    least-compared pairs are returned (lowest index first among equals). After that,
    pairs are scored by ``Var(theta_i - theta_j) * p_ij * (1 - p_ij)`` — the current
    uncertainty of their difference times the Fisher information one more comparison
    would bring — and the ``k`` highest are returned.

    Parameters
    ----------
    theta : ndarray, shape (n_items,)
    covariance : ndarray, shape (n_items, n_items)
        E.g. :attr:`BTResult.covariance` or :func:`bt_covariance`.
    pair_counts : ndarray, shape (n_items, n_items)
        Symmetric number of comparisons made so far per pair.
    k : int
    warm_start : int
        Minimum comparisons per pair before uncertainty-driven selection.

    Returns
    -------
    list of (i, j) with ``i < j``.

    Examples
    --------
    >>> next_pairs(np.zeros(3), np.eye(3), np.zeros((3, 3)), k=2)
    [(0, 1), (0, 2)]
    """
    theta = np.asarray(theta, float)
    cov = np.asarray(covariance, float)
    counts = np.asarray(pair_counts, float)
    n = theta.size
    if cov.shape != (n, n) or counts.shape != (n, n):
        raise ValueError("covariance and pair_counts must be (n_items, n_items)")
    if k < 1:
        raise ValueError("k must be >= 1")
    iu, ju = np.triu_indices(n, 1)
    c = counts[iu, ju]
    chosen: list[tuple[int, int]] = []
    cold = np.flatnonzero(c < warm_start)
    if cold.size:
        order = cold[np.argsort(c[cold], kind="stable")]
        chosen = [(int(iu[q]), int(ju[q])) for q in order[:k]]
        if len(chosen) == k:
            return chosen
    var = cov[iu, iu] + cov[ju, ju] - 2 * cov[iu, ju]
    p = 1.0 / (1.0 + np.exp(-(theta[iu] - theta[ju])))
    score = var * p * (1 - p)
    taken = {pair for pair in chosen}
    for q in np.argsort(-score, kind="stable"):
        pair = (int(iu[q]), int(ju[q]))
        if pair not in taken:
            chosen.append(pair)
            taken.add(pair)
        if len(chosen) == k:
            break
    return chosen
