"""Pairwise comparison data: outcomes, labels, counts, connected groups (SPEC §5).

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
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from creagraph.judgments.choices import BootstrapUnit, Ties  # noqa: F401 (re-exported)

__all__ = [
    "LEFT",
    "RIGHT",
    "TIE",
    "TiePolicy",
    "NotIdentifiableError",
    "DisconnectedComparisonsError",
    "RecordError",
    "DegenerateClustersWarning",
    "ConvergenceWarning",
    "Comparisons",
    "parse_outcome",
    "apply_empty_rule",
    "make_comparisons",
    "comparisons_from_records",
    "as_comparisons",
    "count_matrices",
    "is_identifiable",
    "comparison_components",
]

LEFT = 1
RIGHT = -1
TIE = 0

#: The tie policies as a type; their one list of values is :class:`Ties` (a test holds the two
#: equal, since a ``Literal`` cannot be built from an enum).
TiePolicy = Literal["exclude", "half", "davidson"]
_TIE_POLICIES = tuple(policy.value for policy in Ties)

_LEFT_WORDS = {"left", "a", "x", "model_a", "first", "1"}
_RIGHT_WORDS = {"right", "b", "y", "model_b", "second", "2", "-1"}
_TIE_WORDS = {"tie", "draw", "equal", "both", "neither", "0", "tie (bothbad)", "tie_bothbad"}



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
    creagraph.judgments.comparisons.RecordError: record 0: item compared with itself
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
    # bincount adds in input order, like np.add.at (same sums), and far faster
    size = n_items * n_items
    wins = np.bincount(winners[dec] * n_items + losers[dec], w[dec], size).reshape(
        n_items, n_items)
    ties = np.bincount(li[~dec] * n_items + ri[~dec], w[~dec], size).reshape(n_items, n_items)
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


#: Column names :func:`as_comparisons` reads from a table (pandas DataFrame).
TABLE_COLUMNS = ("left", "right", "winner", "weight", "rater", "prompt")


def as_comparisons(data: Any) -> Comparisons:
    """``data`` as :class:`Comparisons`: a :class:`Comparisons` as is, a table (a pandas
    DataFrame) with columns ``left``, ``right`` and ``winner`` (optionally ``weight``,
    ``rater``, ``prompt``) through :func:`comparisons_from_records`; anything else is a
    ``TypeError`` saying what to pass.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"left": ["a", "b"], "right": ["b", "c"], "winner": ["a", "tie"]})
    >>> as_comparisons(table).outcome.tolist()
    [1, 0]
    >>> as_comparisons(table.rename(columns={"winner": "choice"}))
    Traceback (most recent call last):
    ...
    TypeError: a table of comparisons needs the columns 'left', 'right' and 'winner' (it has 'left', 'right', 'choice'); rename them, or pass comparisons_from_records(table.to_dict('records'), left=..., right=..., winner=...)
    """  # noqa: E501
    if isinstance(data, Comparisons):
        return data
    columns = getattr(data, "columns", None)
    if columns is not None and hasattr(data, "to_dict"):
        names = [str(c) for c in columns]
        if not {"left", "right", "winner"} <= set(names):
            raise TypeError(
                "a table of comparisons needs the columns 'left', 'right' and 'winner' (it has "
                + ", ".join(repr(n) for n in names)
                + "); rename them, or pass comparisons_from_records(table.to_dict('records'), "
                "left=..., right=..., winner=...)"
            )
        optional = {c: c if c in names else None for c in ("weight", "rater", "prompt")}
        return comparisons_from_records(
            data.to_dict("records"), left="left", right="right", winner="winner",
            weight=optional["weight"], rater=optional["rater"], prompt=optional["prompt"],
        )  # fmt: skip
    raise TypeError(
        f"expected Comparisons, not {type(data).__name__}: build them with make_comparisons("
        "left_items, right_items, winners) or comparisons_from_records(records, left=..., "
        "right=..., winner=...), or pass a DataFrame with columns left, right, winner"
    )
