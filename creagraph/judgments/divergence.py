"""Convergence and divergence of raters about models (SPEC §5, the HCB reading).

*Divergence* is raters legitimately disagreeing **about the models** — taste, a rater ×
model interaction — not raters disagreeing in general, and not "the models differ for
each rater". Both tests here work on *tournament profiles*: one evaluator's ratings of
the models for one prompt (a row of the block × model matrix), centred on the row mean,
which removes the evaluator's leniency and the prompt's difficulty.

- :func:`model_effect_test` — do the models differ at all? Under the null every profile
  is exchangeable over models, so the permutation shuffles the model labels within each
  tournament (the outputs are fixed: a difference all raters see on a prompt
  counts); the statistic is the squared length of the mean profile (the model main
  effect).
- :func:`interaction_test` — do the evaluators disagree about the models? Under the null
  (shared model differences plus noise, no taste) the profiles are exchangeable over
  evaluators, so the permutation shuffles the evaluator labels among the tournaments
  (within each prompt when every prompt is seen by several evaluators, after removing
  the prompt's mean profile — the prompt × model effect its raters share);
  the statistic is the one-way MANOVA pseudo-F of the profiles grouped by evaluator
  (between-evaluator over within-evaluator sums of squares). Strata (domains) are
  permuted separately and their pseudo-F values summed.
- :func:`convergence_verdict` — the single rule combining the two tests with
  Krippendorff's α.

Both p-values are ``(1 + #{T* ≥ T}) / (1 + B)``, valid at any size; with few
tournaments per evaluator the interaction test has little power — the simulation in
``benchmarks/hcb_sim.py`` measures it at the HCB design's size.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Profiles",
    "PermutationResult",
    "tournament_profiles",
    "model_effect_test",
    "interaction_test",
    "interaction_power",
    "POWER_TASTE_RATIO",
    "convergence_verdict",
    "VERDICTS",
]

VERDICTS = ("convergent", "divergent", "mixed", "no_difference", "undetermined")


@dataclass(frozen=True)
class Profiles:
    """Centred tournament profiles of one stratum.

    Attributes
    ----------
    values : ndarray, shape (n_tournaments, n_models)
        Each tournament's ratings minus their mean (complete tournaments only).
    raters : ndarray of int, shape (n_tournaments,)
        Index of the tournament's evaluator (0 … n_raters − 1).
    n_dropped : int
        Tournaments left out because they did not rate every model.
    prompts : ndarray of int, optional
        Index of the tournament's prompt. When every prompt is seen by two or more
        evaluators (a crossed design), :func:`interaction_test` removes each prompt's
        mean profile (the prompt × model effect all its raters share) and permutes the
        evaluators within prompts.
    """

    values: np.ndarray
    raters: np.ndarray
    n_dropped: int = 0
    prompts: np.ndarray | None = None

    @property
    def n_raters(self) -> int:
        return int(self.raters.max()) + 1 if self.raters.size else 0


@dataclass(frozen=True)
class PermutationResult:
    """A permutation test: observed statistic, p-value, permutations used."""

    statistic: float
    pvalue: float
    n_permutations: int
    n_tournaments: int
    n_raters: int


def tournament_profiles(
    values: Sequence[float],
    raters: Sequence[Hashable],
    tournaments: Sequence[Hashable],
    models: Sequence[Hashable],
    prompts: Sequence[Hashable] | None = None,
) -> Profiles:
    """Build centred profiles from long-format ratings of one stratum.

    Parameters
    ----------
    values : sequence of float
        One rating per row (NaN = not rated; such rows are skipped).
    raters, tournaments, models : sequences
        The evaluator, tournament (e.g. ``(evaluator, prompt)``) and model of each row.
        Repeated (tournament, model) rows are averaged.
    prompts : sequence, optional
        The prompt of each row (constant within a tournament), see :class:`Profiles`.

    Examples
    --------
    >>> p = tournament_profiles([3, 5, 2, 4], ["r", "r", "s", "s"],
    ...                         ["t1", "t1", "t2", "t2"], ["a", "b", "a", "b"])
    >>> p.values.tolist(), p.raters.tolist()
    ([[-1.0, 1.0], [-1.0, 1.0]], [0, 1])
    """
    model_ix = {m: k for k, m in enumerate(sorted(set(models), key=str))}
    sums: dict[Hashable, np.ndarray] = {}
    counts: dict[Hashable, np.ndarray] = {}
    owner: dict[Hashable, Hashable] = {}
    prompt_of: dict[Hashable, Hashable] = {}
    prompt_list = [None] * len(values) if prompts is None else prompts
    for v, r, t, m, q in zip(values, raters, tournaments, models, prompt_list, strict=True):
        v = float(v)
        if math.isnan(v):
            continue
        if t not in sums:
            sums[t] = np.zeros(len(model_ix))
            counts[t] = np.zeros(len(model_ix))
            owner[t] = r
            prompt_of[t] = q
        sums[t][model_ix[m]] += v
        counts[t][model_ix[m]] += 1
    keys = sorted(sums, key=str)
    complete = [t for t in keys if np.all(counts[t] > 0)]
    rater_ix = {r: k for k, r in enumerate(sorted({owner[t] for t in complete}, key=str))}
    if complete:
        rows = np.array([sums[t] / counts[t] for t in complete])
        rows -= rows.mean(axis=1, keepdims=True)
    else:
        rows = np.zeros((0, len(model_ix)))
    prompt_ix = {q: k for k, q in enumerate(sorted({prompt_of[t] for t in complete}, key=str))}
    return Profiles(rows, np.array([rater_ix[owner[t]] for t in complete], dtype=np.int64),
                    len(keys) - len(complete),
                    None if prompts is None else
                    np.array([prompt_ix[prompt_of[t]] for t in complete], dtype=np.int64))


def _pvalue(observed: float, null: np.ndarray) -> float:
    # a tolerance so that permutations reproducing the observed value count as ≥
    tol = 1e-9 * max(1.0, abs(observed))
    return float((1 + np.sum(null >= observed - tol)) / (1 + null.size))


def _model_stat(values: np.ndarray) -> np.ndarray:
    """Squared length of the mean profile; ``values`` (..., n, m)."""
    return np.sum(values.mean(axis=-2) ** 2, axis=-1) * values.shape[-2]


def model_effect_test(
    strata: Sequence[Profiles], *, n_permutations: int = 999, seed: int | None = 0
) -> PermutationResult | None:
    """Permutation test of the model main effect (model labels shuffled within each
    tournament): do the raters see differences between these models' outputs? The
    prompts are fixed, so a prompt × model effect all raters see counts as a difference
    (whether it generalises to other prompts is another question). ``None`` when no
    stratum has two tournaments over two or more models.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(20, 3)) + [1.0, 0.0, -1.0]
    >>> p = Profiles(x - x.mean(1, keepdims=True), np.arange(20) % 4)
    >>> model_effect_test([p]).pvalue < 0.01
    True
    """
    usable = [p for p in strata if p.values.shape[0] >= 2 and p.values.shape[1] >= 2]
    if not usable:
        return None
    rng = np.random.default_rng(seed)
    observed = float(sum(_model_stat(p.values) for p in usable))
    null = np.zeros(n_permutations)
    for p in usable:
        n, m = p.values.shape
        order = np.argsort(rng.random((n_permutations, n, m)), axis=-1)
        shuffled = np.take_along_axis(np.broadcast_to(p.values, (n_permutations, n, m)),
                                      order, axis=-1)
        null += _model_stat(shuffled)
    return PermutationResult(observed, _pvalue(observed, null), n_permutations,
                             sum(p.values.shape[0] for p in usable),
                             sum(p.n_raters for p in usable))


def _pseudo_f(values: np.ndarray, onehot: np.ndarray) -> np.ndarray:
    """One-way MANOVA pseudo-F; ``onehot`` (..., n, g) assigns tournaments to raters."""
    n, g = onehot.shape[-2], onehot.shape[-1]
    sizes = onehot.sum(axis=-2)  # (..., g)
    sums = np.swapaxes(onehot, -1, -2) @ values  # (..., g, m)
    grand = values.sum(axis=0)
    ss_total = float(np.sum(values ** 2) - np.sum(grand ** 2) / n)
    ss_between = np.sum(np.sum(sums ** 2, axis=-1) / sizes, axis=-1) - np.sum(grand ** 2) / n
    ss_within = np.maximum(ss_total - ss_between, 1e-12 * max(ss_total, 1e-300))
    return (ss_between / (g - 1)) / (ss_within / (n - g))


def _within_prompt(p: Profiles) -> tuple[np.ndarray, np.ndarray]:
    """Profiles and permutation groups: in a crossed design (every prompt seen by two or
    more tournaments) each prompt's mean profile is removed and the groups are the
    prompts; otherwise one group."""
    n = p.values.shape[0]
    if p.prompts is None:
        return p.values, np.zeros(n, dtype=np.int64)
    sizes = np.bincount(p.prompts)
    if np.any(sizes[p.prompts] < 2):
        return p.values, np.zeros(n, dtype=np.int64)
    means = np.zeros((sizes.size, p.values.shape[1]))
    np.add.at(means, p.prompts, p.values)
    return p.values - means[p.prompts] / sizes[p.prompts, None], p.prompts


def _group_permutations(rng: np.random.Generator, groups: np.ndarray, b: int) -> np.ndarray:
    """``b`` random permutations of ``range(n)`` that move indices only within groups."""
    n = groups.size
    base = np.argsort(groups, kind="stable")  # the indices, grouped
    keys = groups[base][None, :] + rng.random((b, n))  # shuffle inside each group
    perm = np.empty((b, n), dtype=np.int64)
    perm[:, base] = base[np.argsort(keys, axis=-1)]
    return perm


def interaction_test(
    strata: Sequence[Profiles], *, n_permutations: int = 999, seed: int | None = 0
) -> PermutationResult | None:
    """Permutation test of the evaluator × model interaction (taste).

    Evaluator labels are shuffled among the tournaments of each stratum (group sizes
    kept); the statistic is the sum over strata of the pseudo-F of the centred profiles
    grouped by evaluator. A stratum counts when it has two or more evaluators and more
    tournaments than evaluators. ``None`` when none does.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> taste = rng.normal(size=(5, 4)) * 2
    >>> raters = np.repeat(np.arange(5), 6)
    >>> x = taste[raters] + rng.normal(size=(30, 4))
    >>> p = Profiles(x - x.mean(1, keepdims=True), raters)
    >>> interaction_test([p]).pvalue < 0.01
    True
    """
    usable = [p for p in strata
              if p.n_raters >= 2 and p.values.shape[0] > p.n_raters and p.values.shape[1] >= 2
              and np.any(p.values != 0)]
    if not usable:
        return None
    rng = np.random.default_rng(seed)
    observed = 0.0
    null = np.zeros(n_permutations)
    for p in usable:
        values, groups = _within_prompt(p)
        g = p.n_raters
        eye = np.eye(g)
        observed += float(_pseudo_f(values, eye[p.raters]))
        null += _pseudo_f(values, eye[p.raters[_group_permutations(rng, groups,
                                                                   n_permutations)]])
    return PermutationResult(observed, _pvalue(observed, null), n_permutations,
                             sum(p.values.shape[0] for p in usable),
                             sum(p.n_raters for p in usable))


#: the planted taste at which :func:`interaction_power` is reported: the s.d. of the
#: evaluator × model offsets, as a share of the s.d. of one rating's noise
POWER_TASTE_RATIO = 0.5


def interaction_power(
    strata: Sequence[Profiles], *, taste_ratio: float = POWER_TASTE_RATIO,
    significance: float = 0.05, n_simulations: int = 200, n_permutations: int = 199,
    seed: int | None = 0,
) -> float | None:
    """Simulated power of :func:`interaction_test` at the design of ``strata``.

    Each simulation keeps every stratum's tournaments — their evaluators, prompts and
    number of models — and draws new ratings: an evaluator × model taste offset
    (normal, s.d. ``taste_ratio``) plus independent noise (s.d. 1) per rating, centred
    per tournament as :func:`tournament_profiles` does; the test is scale-free, so only
    the ratio matters. Shared model or prompt effects are left out: the test removes
    them. Power = the share of simulations with ``p < significance`` (Monte Carlo
    s.e. ≤ 0.5/√``n_simulations``). ``None`` when the design admits no test.

    Examples
    --------
    >>> raters = np.repeat(np.arange(5), 6)  # HCB: 5 evaluators x 6 tournaments, 4 models
    >>> design = [Profiles(np.zeros((30, 4)), raters)]
    >>> null = interaction_power(design, taste_ratio=0.0, n_simulations=100)
    >>> strong = interaction_power(design, taste_ratio=1.5, n_simulations=100)
    >>> null < 0.15, strong > 0.9
    (True, True)
    """
    if n_simulations < 1:
        raise ValueError("n_simulations must be >= 1")
    shapes = [p for p in strata
              if p.n_raters >= 2 and p.values.shape[0] > p.n_raters and p.values.shape[1] >= 2]
    if not shapes:
        return None
    rng = np.random.default_rng(seed)
    hits = 0
    for k in range(n_simulations):
        drawn = []
        for p in shapes:
            n, m = p.values.shape
            taste = rng.normal(scale=taste_ratio, size=(p.n_raters, m))
            x = taste[p.raters] + rng.normal(size=(n, m))
            drawn.append(Profiles(x - x.mean(axis=1, keepdims=True), p.raters, 0, p.prompts))
        res = interaction_test(drawn, n_permutations=n_permutations,
                               seed=None if seed is None else seed + 1 + k)
        hits += res is not None and res.pvalue < significance
    return hits / n_simulations


def convergence_verdict(
    alpha: float | None,
    models_p: float | None,
    interaction_p: float | None,
    *,
    converge_at: float = 0.667,
    significance: float = 0.05,
) -> str:
    """The convergence verdict of one axis (the one place the rule lives).

    - ``divergent``: the evaluator × model interaction is significant (raters disagree
      about the models: taste) and α < ``converge_at``;
    - ``convergent``: the models differ and α ≥ ``converge_at`` (raters agree on the
      models' differences; an interaction too small to lower α is not divergence);
    - ``no_difference``: neither the models nor the interaction are significant (no
      signal — low α here is noise, not taste);
    - ``mixed``: the rest (the models differ but the raters agree only partly and show
      no detectable taste; or an interaction without low α);
    - ``undetermined``: a test or α could not be computed.

    Examples
    --------
    >>> convergence_verdict(0.2, 0.3, 0.01), convergence_verdict(0.8, 0.001, 0.6)
    ('divergent', 'convergent')
    >>> convergence_verdict(0.1, 0.4, 0.5), convergence_verdict(0.5, 0.001, 0.6)
    ('no_difference', 'mixed')
    """
    if alpha is None or math.isnan(alpha) or models_p is None or interaction_p is None:
        return "undetermined"
    if interaction_p < significance and alpha < converge_at:
        return "divergent"
    if models_p < significance and alpha >= converge_at:
        return "convergent"
    if interaction_p >= significance and models_p >= significance:
        return "no_difference"
    return "mixed"
