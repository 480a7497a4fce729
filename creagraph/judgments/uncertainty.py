"""Covariances and intervals of Bradley–Terry fits that hold (SPEC §5).

- The **model's own information**: plain Bradley–Terry for ``ties="exclude"``; the
  Davidson likelihood's (θ and log ν together, the θ block of its inverse) for
  ``"davidson"``; for ``"half"`` (ties as half a win each way, a quasi-likelihood whose
  binomial information overstates the variance of a 0.5 outcome) the sandwich with one
  comparison per cluster.
- **Cluster-robust** (sandwich) covariance when comparisons are dependent within raters
  or prompts: ``B M B`` with ``B`` the inverse information and ``M = G/(G−1) Σ_g U_g U_gᵀ``
  (CR1), ``U_g`` the score summed over cluster ``g``; intervals use Student's t with
  ``G − 1`` degrees of freedom [1]_, which holds its coverage with few clusters where the
  percentile cluster bootstrap does not (``benchmarks/hcb_sim.py``).
- **Ranks** as ``1 + number of items significantly better`` with the range
  ``[best, worst]`` they could take — never chained tiers.

References
----------
.. [1] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements
   for inference with clustered errors. *Rev. Econ. Stat.* 90(3), 414–427.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "MIN_CLUSTERS",
    "information",
    "model_covariance",
    "score_contributions",
    "sandwich_covariance",
    "significance_ranks",
]

#: fewer clusters than this: a cluster-robust interval is not computed (and is said so)
MIN_CLUSTERS = 3


def _bt_probs(theta: np.ndarray, li: np.ndarray, ri: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(theta[li] - theta[ri])))


def _davidson_terms(theta: np.ndarray, nu: float, li: np.ndarray, ri: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per comparison: P(left), P(right), P(tie) under Davidson (Newman's form)."""
    half = 0.5 * (theta[li] + theta[ri])
    log_d = np.logaddexp(np.logaddexp(theta[li], theta[ri]), half + np.log(2.0 * nu))
    return np.exp(theta[li] - log_d), np.exp(theta[ri] - log_d), np.exp(
        half + np.log(2.0 * nu) - log_d)


def _sparse_scores(
    theta: np.ndarray, nu: float | None, li: np.ndarray, ri: np.ndarray, oc: np.ndarray,
    w: np.ndarray, policy: str,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-comparison scores in sparse form: columns (m, k), values (m, k), and ``p``.
    A comparison's score touches its two items (and log ν under Davidson) only."""
    n = theta.size
    left = (oc == 1).astype(float)
    tie = (oc == 0).astype(float)
    if policy == "davidson":
        p_l, p_r, p_t = _davidson_terms(theta, float(nu or 0.0), li, ri)
        # d log D / d theta_left = P(left) + P(tie)/2
        g_l = left + 0.5 * tie - (p_l + 0.5 * p_t)
        g_r = (1.0 - left - tie) + 0.5 * tie - (p_r + 0.5 * p_t)
        cols = np.stack([li, ri, np.full(li.size, n)], axis=1)
        return cols, np.stack([g_l, g_r, tie - p_t], axis=1) * w[:, None], n + 1
    y = left + 0.5 * tie
    keep = np.ones(li.size) if policy == "half" else 1.0 - tie
    g_l = (y - _bt_probs(theta, li, ri)) * keep
    return np.stack([li, ri], axis=1), np.stack([g_l, -g_l], axis=1) * w[:, None], n


def score_contributions(
    theta: np.ndarray, nu: float | None, li: np.ndarray, ri: np.ndarray, oc: np.ndarray,
    w: np.ndarray, policy: str,
) -> np.ndarray:
    """Per-comparison score (gradient of the log-likelihood), shape (n_comp, p): ``p =
    n_items`` (+1 for log ν under Davidson). Ties give zero rows under ``"exclude"``."""
    cols, vals, p = _sparse_scores(theta, nu, li, ri, oc, w, policy)
    out = np.zeros((li.size, p))
    np.add.at(out, (np.arange(li.size)[:, None], cols), vals)
    return out


def information(
    theta: np.ndarray, nu: float | None, li: np.ndarray, ri: np.ndarray, oc: np.ndarray,
    w: np.ndarray, policy: str, alpha: float = 0.0,
) -> np.ndarray:
    """Expected (penalised) information of the fitted model, shape (p, p)."""
    n = theta.size
    if policy == "davidson":
        p_l, p_r, p_t = _davidson_terms(theta, float(nu or 0.0), li, ri)
        # scores of the three outcomes, per comparison: expected outer product
        s_l = np.stack([1 - (p_l + p_t / 2), -(p_r + p_t / 2), -p_t], axis=1)
        s_r = np.stack([-(p_l + p_t / 2), 1 - (p_r + p_t / 2), -p_t], axis=1)
        s_t = np.stack([0.5 - (p_l + p_t / 2), 0.5 - (p_r + p_t / 2), 1 - p_t], axis=1)
        e = (p_l[:, None, None] * s_l[:, :, None] * s_l[:, None, :]
             + p_r[:, None, None] * s_r[:, :, None] * s_r[:, None, :]
             + p_t[:, None, None] * s_t[:, :, None] * s_t[:, None, :]) * w[:, None, None]
        info = np.zeros((n + 1, n + 1))
        idx = [li, ri, np.full(li.size, n)]
        for a in range(3):
            for b in range(3):
                np.add.at(info, (idx[a], idx[b]), e[:, a, b])
        info[:n, :n] += 2.0 * alpha * np.eye(n)
        return info
    keep = w if policy == "half" else w * (oc != 0)
    p = _bt_probs(theta, li, ri)
    q = keep * p * (1 - p)
    # one bincount over the four entries each comparison touches (in np.add.at's order)
    index = np.concatenate([li * n + li, ri * n + ri, li * n + ri, ri * n + li])
    lap = np.bincount(index, np.concatenate([q, q, -q, -q]), n * n).astype(float, copy=False)
    return lap.reshape(n, n) + 2.0 * alpha * np.eye(n)


def _nu_at_boundary(info: np.ndarray, n: int) -> bool:
    """Davidson with no ties: ν = 0 sits on the boundary and carries no information; the
    strengths' covariance is then that of ν held at 0."""
    return info.shape[0] > n and info[n, n] <= 1e-12 * max(float(np.trace(info)), 1e-300)


def _inverse(info: np.ndarray, alpha: float, n_theta: int) -> np.ndarray:
    """Inverse of the information; without a penalty, the inverse under the sum-to-zero
    constraint: the information is singular along ``u`` (ones on the ``n_theta``
    strengths, 0 on log ν), and ``inv(I + c u uᵀ) − u uᵀ / c`` is its pseudo-inverse
    exactly, where a numerical pseudo-inverse may keep a near-zero eigenvalue and blow
    up."""
    if alpha != 0:
        return np.linalg.inv(info)
    u = np.zeros(info.shape[0])
    u[:n_theta] = 1.0 / np.sqrt(n_theta)
    c = max(float(np.trace(info)) / info.shape[0], 1e-300)
    return np.linalg.inv(info + c * np.outer(u, u)) - np.outer(u, u) / c


def sandwich_covariance(
    theta: np.ndarray, nu: float | None, li: np.ndarray, ri: np.ndarray, oc: np.ndarray,
    w: np.ndarray, policy: str, cluster_ids: np.ndarray | None, alpha: float = 0.0,
) -> tuple[np.ndarray, int]:
    """Sandwich covariance of ``theta`` (the θ block) and the number of clusters.

    ``cluster_ids=None``: each comparison its own cluster (heteroscedasticity-robust,
    no small-sample factor); else CR1 with factor ``G / (G − 1)``.

    Examples
    --------
    >>> li, ri = np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])
    >>> oc = np.array([1, 1, 1, -1])
    >>> cov, g = sandwich_covariance(np.array([0.55, -0.55]), None, li, ri, oc,
    ...                              np.ones(4), "exclude", None)
    >>> g, bool(cov[0, 0] > 0)
    (4, True)
    """
    n = theta.size
    cols, vals, p = _sparse_scores(theta, nu, li, ri, oc, w, policy)
    if cluster_ids is None:  # Σ s sᵀ over comparisons, from the few entries of each s
        g = li.size
        k = cols.shape[1]
        index = np.concatenate([cols[:, a] * p + cols[:, b] for a in range(k) for b in range(k)])
        meat = np.bincount(index, np.concatenate(
            [vals[:, a] * vals[:, b] for a in range(k) for b in range(k)]), p * p).astype(
            float, copy=False).reshape(p, p)
    else:
        g = int(cluster_ids.max()) + 1 if cluster_ids.size else 0
        sums = np.zeros((g, p))
        np.add.at(sums, (np.broadcast_to(cluster_ids[:, None], cols.shape), cols), vals)
        meat = (g / (g - 1) if g > 1 else np.nan) * sums.T @ sums
    info = information(theta, nu, li, ri, oc, w, policy, alpha)
    if _nu_at_boundary(info, n):
        info, meat = info[:n, :n], meat[:n, :n]
    bread = _inverse(info, alpha, n)
    cov = (bread @ meat @ bread)[:n, :n]
    return (cov + cov.T) / 2.0, g


def model_covariance(
    theta: np.ndarray, nu: float | None, li: np.ndarray, ri: np.ndarray, oc: np.ndarray,
    w: np.ndarray, policy: str, alpha: float = 0.0,
) -> np.ndarray:
    """Wald covariance of the model actually fitted (see the module docstring)."""
    if policy == "half":
        return sandwich_covariance(theta, nu, li, ri, oc, w, policy, None, alpha)[0]
    n = theta.size
    info = information(theta, nu, li, ri, oc, w, policy, alpha)
    if _nu_at_boundary(info, n):
        info = info[:n, :n]
    cov = _inverse(info, alpha, n)[:n, :n]
    return (cov + cov.T) / 2.0


def significance_ranks(
    theta: np.ndarray, cov: np.ndarray, crit: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # (rank, best, worst); rank == best
    """``1 + number of items significantly better`` (the rank reported), and the rank
    range: best = that, worst = ``n −`` number significantly worse.

    Examples
    --------
    >>> r, lo, hi = significance_ranks(np.array([1.0, 0.9, -2.0]), np.eye(3) * 0.01, 1.96)
    >>> r.tolist(), hi.tolist()
    ([1, 1, 3], [2, 2, 3])
    """
    n = theta.size
    d = theta[:, None] - theta[None, :]
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2.0 * cov
    sig = d > crit * np.sqrt(np.clip(var, 0.0, None))  # sig[i, j]: i significantly above j
    np.fill_diagonal(sig, False)
    best = 1 + sig.sum(axis=0)
    worst = n - sig.sum(axis=1)
    return best.astype(np.int64), best.astype(np.int64), worst.astype(np.int64)
