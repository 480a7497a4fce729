"""Bradley–Terry and Davidson maximum-likelihood fits and the plain Wald covariance:
Hunter's MM iteration [1]_, Davidson's tie model [2]_ in Newman's parametrisation [3]_
(conventions: :mod:`creagraph.judgments.comparisons`).

References
----------
.. [1] Hunter, D. R. (2004). MM algorithms for generalized Bradley–Terry models.
   *The Annals of Statistics*, 32(1), 384–406.
.. [2] Davidson, R. R. (1970). On extending the Bradley–Terry model to accommodate ties
   in paired comparison experiments. *JASA*, 65(329), 317–328.
.. [3] Newman, M. E. J. (2023). Efficient computation of rankings from pairwise
   comparisons. *JMLR*, 24(238), 1–25.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from creagraph.judgments.comparisons import (
    NotIdentifiableError,
    _not_identifiable_message,
    _warn_unconverged,
    is_identifiable,
)

# --------------------------------------------------------------------------- fitting


__all__ = [
    "bt_mle",
    "davidson_mle",
    "bt_covariance",
    "win_probabilities",
]

def _bt_objective(theta: np.ndarray, wins: np.ndarray, games: np.ndarray, alpha: float
                  ) -> tuple[float, np.ndarray, np.ndarray]:
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
    >>> from creagraph.judgments import count_matrices
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
    # the unpenalised objective is flat along the all-ones direction: fix the mean at 0
    centre = np.full((n, n), 1.0 / n) if alpha == 0 else 0.0
    theta, (_, grad, _), change, stalled, it = _newton(
        lambda x: _bt_objective(x, wins, games, alpha), np.zeros(n),
        lambda x, state: np.linalg.solve(state[2] + centre, state[1]), tol, max_iter)
    if alpha == 0:
        theta = theta - theta.mean()
    grad_norm = float(np.max(np.abs(grad - (grad.mean() if alpha == 0 else 0.0))))
    converged, detail = _newton_end("Bradley–Terry Newton solver", it, change, tol, grad_norm,
                                    float(games.sum()), stalled)
    return theta, converged, detail


def _backtrack(objective: Callable[[np.ndarray], tuple[Any, ...]], x: np.ndarray,
               step: np.ndarray, nll: float, grad: np.ndarray
               ) -> tuple[np.ndarray, tuple[Any, ...], bool]:
    """Armijo backtracking from ``x`` along ``-step``: the accepted point, its objective
    tuple and whether the step shrank below 1e-10 without sufficient decrease."""
    t = 1.0
    while True:
        cand = x - t * step
        new = objective(cand)
        if new[0] <= nll + 1e-4 * t * float(grad @ (-step)):
            return cand, new, False
        if t < 1e-10:
            return cand, new, True
        t *= 0.5


def _newton(
    objective: Callable[[np.ndarray], tuple[Any, ...]], x: np.ndarray,
    step_of: Callable[[np.ndarray, tuple[Any, ...]], np.ndarray], tol: float, max_iter: int,
) -> tuple[np.ndarray, tuple[Any, ...], float, bool, int]:
    """Newton-type steps ``step_of(x, objective(x))`` with :func:`_backtrack`, from ``x``
    until the largest change is below ``tol``, the line search stalls (no decrease: the
    caller accepts the point only if it is already stationary) or ``max_iter`` steps.
    ``objective`` returns ``(nll, grad, …)``. Returns the point, its objective tuple, the
    last change, whether the search stalled and the steps taken."""
    state = objective(x)
    change, stalled, it = float("inf"), False, 0
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        cand, state_new, stalled = _backtrack(objective, x, step_of(x, state), state[0],
                                              state[1])
        change = float(np.max(np.abs(cand - x)))
        x, state = cand, state_new
        if change < tol or stalled:
            break
    return x, state, change, stalled, it


def _newton_end(solver: str, it: int, change: float, tol: float, grad_norm: float,
                total: float, stalled: bool) -> tuple[bool, str]:
    """Whether a Newton-type fit converged — its last change below ``tol``, or its gradient
    negligible against ``total`` (the comparisons counted over ordered pairs) — and,
    when not, what to warn."""
    converged = change < tol or grad_norm < 1e-8 * max(1.0, total)
    detail = (
        f"{solver} did not converge in {it} iterations "
        f"(last change {change:.3g} > tol {tol:.3g}, gradient {grad_norm:.3g}"
        + ("; line search stalled" if stalled else "")
        + "); raise max_iter or check the data"
    )
    return converged, "" if converged else detail


def _davidson_nll(params: np.ndarray, wins: np.ndarray, ties: np.ndarray, alpha: float
                  ) -> tuple[float, np.ndarray]:
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
    >>> from creagraph.judgments import count_matrices
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
