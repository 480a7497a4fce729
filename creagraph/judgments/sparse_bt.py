"""Bradley–Terry and Davidson fits, Wald / sandwich covariances and significance ranks
for many items on sparse comparison designs (each item compared with a few others).

The dense path (:mod:`~creagraph.judgments.fit`, :mod:`~creagraph.judgments.uncertainty`)
builds ``n × n`` matrices and inverts the information: 10,000 items take gigabytes and
minutes. Here every quantity is built from the list of compared pairs:

- **fits**: Newton–Raphson (Bradley–Terry: ties excluded or as half-wins) and Fisher
  scoring (Davidson) with a backtracking line search, each step one sparse LU solve of the
  (penalised) information; without a penalty the first item is pinned at 0 (the
  likelihood is flat along the all-ones direction) and the estimate is centred after;
- **covariances** are never formed: the information factorises as ``FᵀF`` (one row per
  compared pair and outcome), the sandwich's meat as ``UᵀU`` (one row per cluster), and
  the columns of the covariance come from LU solves, a block of columns at a time;
- **standard errors** (the diagonal), **significance ranks** (``1 +`` items
  significantly better, and the rank range) and the expected win rate against the field
  are accumulated block by block — ``O(n)`` memory per column, ``O(n²)`` time for the
  pairwise comparisons the ranks need;
- **P(rank 1)** from normal draws ``B Fᵀ z`` (covariance ``B FᵀF B`` exactly).

The formulas are those of :mod:`~creagraph.judgments.uncertainty` (SPEC §5); on small
data both paths agree to 1e-10 (``tests/judgments/test_sparse_bt.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from creagraph.judgments.comparisons import LEFT, RIGHT, TIE, NotIdentifiableError
from creagraph.judgments.fit import _newton, _newton_end

__all__ = ["SPARSE_ITEMS", "Edges", "edge_counts"]

#: above this many items :func:`~creagraph.judgments.leaderboard.bradley_terry` uses
#: this module (below it, the dense path: faster at small sizes)
SPARSE_ITEMS = 400

#: entries of one block of covariance columns (n × block), ~32 MB of float64
_BLOCK_ENTRIES = 4_000_000


@dataclass(frozen=True)
class Edges:
    """Weighted counts per compared pair ``i < j``: ``a`` = i beat j, ``b`` = j beat i,
    ``t`` = ties."""

    n: int
    i: np.ndarray
    j: np.ndarray
    a: np.ndarray
    b: np.ndarray
    t: np.ndarray

    def item_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per item: wins, losses, ties."""
        n = self.n
        wins = np.bincount(self.i, self.a, n) + np.bincount(self.j, self.b, n)
        losses = np.bincount(self.i, self.b, n) + np.bincount(self.j, self.a, n)
        ties = np.bincount(self.i, self.t, n) + np.bincount(self.j, self.t, n)
        return wins, losses, ties


def edge_counts(n: int, li: np.ndarray, ri: np.ndarray, oc: np.ndarray,
                w: np.ndarray) -> Edges:
    """Aggregate comparison rows into :class:`Edges` (self-comparisons dropped, as the
    dense fits zero the diagonal).

    Examples
    --------
    >>> e = edge_counts(3, np.array([0, 1, 2]), np.array([1, 0, 0]), np.array([1, 1, 0]),
    ...                 np.ones(3))
    >>> e.i.tolist(), e.j.tolist(), e.a.tolist(), e.b.tolist(), e.t.tolist()
    ([0, 0], [1, 2], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0])
    """
    keep = li != ri
    li, ri, oc, w = li[keep], ri[keep], oc[keep], w[keep]
    lo, hi = np.minimum(li, ri), np.maximum(li, ri)
    left_low = li < ri
    low_won = ((oc == LEFT) & left_low) | ((oc == RIGHT) & ~left_low)
    high_won = ((oc == LEFT) & ~left_low) | ((oc == RIGHT) & left_low)
    keys, inverse = np.unique(lo * np.int64(n) + hi, return_inverse=True)
    m = keys.size
    return Edges(n, keys // n, keys % n, np.bincount(inverse, w * low_won, m),
                 np.bincount(inverse, w * high_won, m), np.bincount(inverse, w * (oc == TIE), m))


def identifiable(e: Edges, wins_a: np.ndarray, wins_b: np.ndarray) -> bool:
    """Ford's condition on pairs: the graph ``winner -> loser`` is strongly connected."""
    if e.n <= 1:
        return True
    src = np.concatenate([e.i[wins_a > 0], e.j[wins_b > 0]])
    dst = np.concatenate([e.j[wins_a > 0], e.i[wins_b > 0]])
    graph = sparse.csr_matrix((np.ones(src.size), (src, dst)), shape=(e.n, e.n))
    return connected_components(graph, directed=True, connection="strong")[0] == 1


def not_identifiable_message(e: Edges, wins_a: np.ndarray, wins_b: np.ndarray,
                             items: list[str] | None) -> str:
    """The dense path's message (:func:`~creagraph.judgments.comparisons._not_identifiable_message`)
    from pair counts."""
    from creagraph.judgments.comparisons import _not_identifiable_message

    n = e.n
    won = np.bincount(e.i, wins_a, n) + np.bincount(e.j, wins_b, n)
    lost = np.bincount(e.i, wins_b, n) + np.bincount(e.j, wins_a, n)

    class _Sums:  # the two sums the message reads, without an n × n matrix
        shape = (n, n)

        def sum(self, axis: int) -> np.ndarray:
            return won if axis == 1 else lost

    return _not_identifiable_message(_Sums(), items)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- solving


#: largest bandwidth (after reverse Cuthill–McKee) solved as a banded Cholesky factor;
#: wider designs use a sparse LU factor
_MAX_BAND = 32


class _Bread:
    """Factor of the (penalised) information; without a penalty the first item is
    pinned (its row and column dropped), which gives a generalised inverse: contrasts of
    the strengths, and the centred strengths, get their exact covariance.

    Designs that reorder to a narrow band (rings, chains, lattices) get a banded Cholesky
    factor (LAPACK ``pbtrf``; solves 2–3× faster than SuperLU and the diagonal of the
    inverse by Takahashi's recursion without any column); the rest a sparse LU."""

    def __init__(self, info: sparse.spmatrix, pin: bool):
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        p = info.shape[0]
        self.p = p
        self.keep = np.arange(1, p) if pin else np.arange(p)
        reduced = sparse.csr_matrix(info)[self.keep][:, self.keep]
        perm = reverse_cuthill_mckee(reduced, symmetric_mode=True)
        coo = reduced[perm][:, perm].tocoo()
        band = int(np.max(np.abs(coo.row - coo.col))) if coo.nnz else 0
        self.banded = None
        if band <= _MAX_BAND:
            from scipy.linalg import LinAlgError, cholesky_banded

            ab = np.zeros((band + 1, reduced.shape[0]))
            upper = coo.row <= coo.col
            np.add.at(ab, (band + coo.row[upper] - coo.col[upper], coo.col[upper]),
                      coo.data[upper])
            try:
                self.banded = cholesky_banded(ab)
                self.perm = perm
            except LinAlgError:  # not positive definite to working precision
                self.banded = None
        if self.banded is None:
            self.lu = splu(reduced.tocsc())

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        out = np.zeros(rhs.shape)
        if self.banded is not None:
            from scipy.linalg import cho_solve_banded

            out[self.keep[self.perm]] = cho_solve_banded((self.banded, False),
                                                         rhs[self.keep[self.perm]])
        else:
            out[self.keep] = self.lu.solve(np.ascontiguousarray(rhs[self.keep]))
        return out

    def inverse_diagonal(self) -> np.ndarray | None:
        """The diagonal of the (pinned) inverse by Takahashi's recursion on the banded
        factor ``A = UᵀU`` — ``Z_ij = (δ_ij / U_ii − Σ_k U_ik Z_kj) / U_ii`` from the last
        row up, keeping only the band — or None without a banded factor."""
        if self.banded is None:
            return None
        c = self.banded
        band, m = c.shape[0] - 1, c.shape[1]
        zb = np.zeros((band + 1, m))  # zb[d, i] = Z[i, i + d]
        for i in range(m - 1, -1, -1):
            width = min(band, m - 1 - i)
            u_ii = c[band, i]
            if width == 0:
                zb[0, i] = 1.0 / u_ii ** 2
                continue
            d = np.arange(1, width + 1)
            u = c[band - d, i + d]  # U[i, i + d]
            a, b = np.meshgrid(d, d, indexing="ij")
            block = zb[np.abs(a - b), i + np.minimum(a, b)]  # Z[i + a, i + b]
            z_row = -(block @ u) / u_ii  # Z[i, i + d]
            zb[d, i] = z_row
            zb[0, i] = 1.0 / u_ii ** 2 - float(u @ z_row) / u_ii
        out = np.zeros(self.p)
        out[self.keep[self.perm]] = zb[0]
        return out



def _laplacian(e: Edges, q: np.ndarray, ridge: float) -> sparse.csc_matrix:
    n = e.n
    rows = np.concatenate([e.i, e.j, e.i, e.j, np.arange(n)])
    cols = np.concatenate([e.i, e.j, e.j, e.i, np.arange(n)])
    vals = np.concatenate([q, q, -q, -q, np.full(n, ridge)])
    return sparse.csc_matrix((vals, (rows, cols)), shape=(n, n))


def bt_fit(e: Edges, wa: np.ndarray, wb: np.ndarray, alpha: float, items: list[str] | None,
           *, tol: float = 1e-10, max_iter: int = 10_000) -> tuple[np.ndarray, bool, str]:
    """Bradley–Terry by damped Newton on pair counts ``wa`` (i beat j), ``wb`` (j beat
    i); the objective and stopping rule of :func:`~creagraph.judgments.fit.bt_mle`."""
    n = e.n
    if alpha == 0 and not identifiable(e, wa, wb):
        raise NotIdentifiableError(not_identifiable_message(e, wa, wb, items))
    games = wa + wb

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        d = theta[e.i] - theta[e.j]
        nll = float(np.sum(wa * np.logaddexp(0.0, -d) + wb * np.logaddexp(0.0, d)))
        nll += alpha * float(theta @ theta)
        p = 0.5 * (1.0 + np.tanh(0.5 * d))
        r = games * p - wa
        grad = np.bincount(e.i, r, n) - np.bincount(e.j, r, n) + 2.0 * alpha * theta
        return nll, grad, games * p * (1.0 - p)

    theta, (_, grad, _), change, stalled, it = _newton(
        objective, np.zeros(n),
        lambda x, state: _Bread(_laplacian(e, state[2], 2.0 * alpha), alpha == 0).solve(state[1]),
        tol, max_iter)
    if alpha == 0:
        theta = theta - theta.mean()
    grad_norm = float(np.max(np.abs(grad - (grad.mean() if alpha == 0 else 0.0))))
    converged, detail = _newton_end("Bradley–Terry Newton solver (sparse)", it, change, tol,
                                    grad_norm, 2.0 * float(games.sum()), stalled)
    return theta, converged, detail


def _davidson_probs(theta: np.ndarray, nu: float, e: Edges
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    half = 0.5 * (theta[e.i] + theta[e.j])
    log_d = np.logaddexp(np.logaddexp(theta[e.i], theta[e.j]), half + math.log(2.0 * nu))
    return (np.exp(theta[e.i] - log_d), np.exp(theta[e.j] - log_d),
            np.exp(half + math.log(2.0 * nu) - log_d), log_d, half)


def _davidson_factor(theta: np.ndarray, nu: float, e: Edges, games: np.ndarray,
                     ) -> sparse.csr_matrix:
    """``F`` with ``FᵀF`` = the Davidson expected information over (θ, log ν): per pair
    and outcome ``o`` the row ``sqrt(games · p_o) · s_o`` (``s_o`` the outcome's score)."""
    n, m = e.n, e.i.size
    p_l, p_r, p_t, _, _ = _davidson_probs(theta, nu, e)
    a_l, a_r = p_l + p_t / 2, p_r + p_t / 2
    scores = [(p_l, 1 - a_l, -a_r, -p_t), (p_r, -a_l, 1 - a_r, -p_t),
              (p_t, 0.5 - a_l, 0.5 - a_r, 1 - p_t)]
    rows, cols, vals = [], [], []
    for k, (p_o, s_i, s_j, s_nu) in enumerate(scores):
        scale = np.sqrt(games * p_o)
        r = np.arange(m) + k * m
        rows += [r, r, r]
        cols += [e.i, e.j, np.full(m, n)]
        vals += [scale * s_i, scale * s_j, scale * s_nu]
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(3 * m, n + 1))


def davidson_fit(e: Edges, alpha: float, items: list[str] | None, *, nu_init: float = 0.5,
                 tol: float = 1e-10, max_iter: int = 10_000
                 ) -> tuple[np.ndarray, float, bool, str]:
    """Davidson's tie model (Newman's parametrisation) by Fisher scoring on (θ, log ν)
    with a backtracking line search; the likelihood of
    :func:`~creagraph.judgments.fit.davidson_mle`."""
    n = e.n
    if alpha == 0 and not identifiable(e, e.a + e.t, e.b + e.t):
        raise NotIdentifiableError(not_identifiable_message(e, e.a + e.t, e.b + e.t, items))
    if e.t.sum() == 0:
        theta, ok, detail = bt_fit(e, e.a, e.b, alpha, items, tol=tol, max_iter=max_iter)
        return theta, 0.0, ok, detail
    games = e.a + e.b + e.t

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        theta, nu = x[:-1], math.exp(x[-1])
        p_l, p_r, p_t, log_d, half = _davidson_probs(theta, nu, e)
        ll = float(np.sum(e.a * (theta[e.i] - log_d) + e.b * (theta[e.j] - log_d)
                          + e.t * (math.log(2.0 * nu) + half - log_d)))
        g_i = e.a + e.t / 2 - games * (p_l + p_t / 2)
        g_j = e.b + e.t / 2 - games * (p_r + p_t / 2)
        grad = np.concatenate([np.bincount(e.i, g_i, n) + np.bincount(e.j, g_j, n),
                               [float(np.sum(e.t - games * p_t))]])
        grad[:n] -= 2.0 * alpha * theta
        return -ll + alpha * float(theta @ theta), -grad

    def step_of(x: np.ndarray, state: tuple[Any, ...]) -> np.ndarray:
        f = _davidson_factor(x[:-1], math.exp(x[-1]), e, games)
        info = (f.T @ f).tocsc() + sparse.diags(
            np.concatenate([np.full(n, 2.0 * alpha), [0.0]]), format="csc")
        return _Bread(info, alpha == 0).solve(state[1])

    x, (_, grad), change, stalled, it = _newton(
        objective, np.concatenate([np.zeros(n), [math.log(nu_init)]]), step_of, tol, max_iter)
    theta = x[:-1] - (x[:-1].mean() if alpha == 0 else 0.0)
    g = grad[:-1] - (grad[:-1].mean() if alpha == 0 else 0.0)
    grad_norm = max(float(np.max(np.abs(g))), abs(float(grad[-1])))
    converged, detail = _newton_end("Davidson Fisher scoring (sparse)", it, change, tol,
                                    grad_norm, 2.0 * float(games.sum()), stalled)
    return theta, math.exp(x[-1]), converged, detail


# --------------------------------------------------------------------------- covariance


def _scores(theta: np.ndarray, nu: float | None, li: np.ndarray, ri: np.ndarray,
            oc: np.ndarray, w: np.ndarray, policy: str, cluster_ids: np.ndarray | None,
            ) -> tuple[sparse.csr_matrix, int]:
    """``U`` (clusters × p): each cluster's summed score, times √(G/(G−1)) (CR1) when
    clustered; one row per comparison, no factor, when ``cluster_ids`` is None."""
    from creagraph.judgments.uncertainty import _sparse_scores

    cols, vals, p = _sparse_scores(theta, nu, li, ri, oc, w, policy)
    if cluster_ids is None:
        g, rows, factor = li.size, np.arange(li.size), 1.0
    else:
        g = int(cluster_ids.max()) + 1 if cluster_ids.size else 0
        rows, factor = cluster_ids, math.sqrt(g / (g - 1)) if g > 1 else math.nan
    u = sparse.csr_matrix(
        ((vals * factor).ravel(), (np.repeat(rows, cols.shape[1]), cols.ravel())),
        shape=(g, p))
    return u, g


@dataclass
class CovarianceOperator:
    """``Σ = B M B`` (sandwich, ``M = UᵀU``) or ``Σ = B`` (model-based, information
    ``FᵀF + ridge``) for the first ``n`` coordinates, centred when unpenalised; never
    formed, only applied to blocks of columns."""

    bread: _Bread
    n: int
    meat: sparse.csr_matrix | None  # U
    info_factor: sparse.csr_matrix  # F (without the penalty)
    ridge: float
    centre: bool

    def __post_init__(self) -> None:
        if self.centre:
            ones = np.zeros((self.bread.p, 1))
            ones[: self.n] = 1.0
            self._r = self._apply(ones)[: self.n, 0]
            self._s = float(self._r.sum())

    def _apply(self, rhs: np.ndarray) -> np.ndarray:
        x = self.bread.solve(rhs)
        if self.meat is not None:
            x = self.bread.solve(np.asarray(self.meat.T @ (self.meat @ x)))
        return x

    def columns(self, cols: np.ndarray) -> np.ndarray:
        """``Σ[:, cols]`` (n × len(cols))."""
        rhs = np.zeros((self.bread.p, cols.size))
        rhs[cols, np.arange(cols.size)] = 1.0
        y = self._apply(rhs)[: self.n]
        if self.centre:
            n = self.n
            y = y - self._r[:, None] / n - self._r[None, cols] / n + self._s / n ** 2
        return y

    def draws(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws from N(0, Σ), shape (n, size)."""
        factor = self.meat if self.meat is not None else self.info_factor
        rhs = np.asarray(factor.T @ rng.standard_normal((factor.shape[0], size)))
        if self.meat is None and self.ridge > 0:
            rhs[: self.n] += math.sqrt(self.ridge) * rng.standard_normal((self.n, size))
        x = self.bread.solve(rhs)[: self.n]
        if self.centre:
            x -= x.mean(axis=0, keepdims=True)
        return x


def covariance_operator(
    theta: np.ndarray, nu: float | None, e: Edges, arrays: tuple[np.ndarray, ...],
    policy: str, alpha: float, cluster_ids: np.ndarray | None, sandwich: bool,
) -> tuple[CovarianceOperator, int]:
    """The covariance of the fitted model (``sandwich=False``: the model's information;
    for half-ties its sandwich with one comparison per cluster) or the cluster-robust
    sandwich (``cluster_ids``), and the number of clusters."""
    li, ri, oc, w = arrays
    n = e.n
    if policy == "davidson" and nu:
        factor = _davidson_factor(theta, nu, e, e.a + e.b + e.t)
        p = n + 1
    else:
        games = e.a + e.b + (e.t if policy == "half" else 0.0)
        d = theta[e.i] - theta[e.j]
        pr = 0.5 * (1.0 + np.tanh(0.5 * d))
        scale = np.sqrt(games * pr * (1.0 - pr))
        m = e.i.size
        factor = sparse.csr_matrix(
            (np.concatenate([scale, -scale]), (np.tile(np.arange(m), 2),
                                               np.concatenate([e.i, e.j]))), shape=(m, n))
        p = n
    info = (factor.T @ factor).tocsc()
    ridge = np.concatenate([np.full(n, 2.0 * alpha), np.zeros(p - n)])
    info = info + sparse.diags(ridge, format="csc")
    if p > n and info[n, n] <= 1e-12 * max(float(info.diagonal().sum()), 1e-300):
        info, factor, p = info[:n, :n].tocsc(), factor[:, :n], n  # ν = 0: on the boundary
    meat = None
    g = 0
    if sandwich or policy == "half":
        meat, g = _scores(theta, nu, li, ri, oc, w, policy, cluster_ids if sandwich else None)
        meat = meat[:, :p]
    op = CovarianceOperator(_Bread(info, alpha == 0), n, meat, factor, 2.0 * alpha,
                            alpha == 0)
    return op, g


def _blocks(n: int) -> Iterator[np.ndarray]:
    size = max(1, _BLOCK_ENTRIES // max(n, 1))
    for start in range(0, n, size):
        yield np.arange(start, min(n, start + size))


def variances(op: CovarianceOperator) -> np.ndarray:
    """The diagonal of Σ: for the model-based covariance on a banded factor from the
    inverse's diagonal, else from blocks of columns."""
    if op.meat is None:
        diag = op.bread.inverse_diagonal()
        if diag is not None:
            diag = diag[: op.n]
            if op.centre:
                n = op.n
                diag = diag - 2.0 * op._r / n + op._s / n ** 2
            return diag
    out = np.empty(op.n)
    for cols in _blocks(op.n):
        out[cols] = op.columns(cols)[cols, np.arange(cols.size)]
    return out


def significance_ranks(theta: np.ndarray, op: CovarianceOperator, var: np.ndarray,
                       crit: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~creagraph.judgments.uncertainty.significance_ranks` block by block:
    ``(best, worst)``."""
    n = theta.size
    above = np.zeros(n, dtype=np.int64)  # items significantly better than each
    below = np.zeros(n, dtype=np.int64)  # items significantly worse than each
    for cols in _blocks(n):
        cov = op.columns(cols)
        v = var[:, None] + var[None, cols] - 2.0 * cov
        sig = (theta[:, None] - theta[None, cols]) > crit * np.sqrt(np.clip(v, 0.0, None))
        sig[cols, np.arange(cols.size)] = False
        above[cols] += sig.sum(axis=0)
        below += sig.sum(axis=1)
    return 1 + above, n - below


def expected_win_rate(theta: np.ndarray) -> np.ndarray:
    """Mean predicted win probability against every other item, block by block."""
    n = theta.size
    out = np.empty(n)
    for rows in _blocks(n):
        p = 0.5 * (1.0 + np.tanh(0.5 * (theta[rows, None] - theta[None, :])))
        out[rows] = (p.sum(axis=1) - 0.5) / max(n - 1, 1)
    return out


def p_rank_1(theta: np.ndarray, op: CovarianceOperator, rng: np.random.Generator,
             size: int = 2000) -> np.ndarray:
    """P(rank 1) from ``size`` normal draws around ``theta`` (blocks of draws)."""
    n = theta.size
    counts = np.zeros(n)
    step = max(1, min(size, _BLOCK_ENTRIES // max(n, 1)))
    done = 0
    while done < size:
        k = min(step, size - done)
        x = theta[:, None] + op.draws(rng, k)
        np.add.at(counts, np.argmax(x, axis=0), 1.0)
        done += k
    return counts / size
