"""Synthetic Human Creativity Benchmark data with known ground truth (for tests and demos).

The real HCB files are not public; :func:`generate_hcb` writes data in the same format
(:mod:`creagraph.judgments.hcb`) from a seeded generative model whose parameters are
returned alongside, so that an analysis can be checked for recovering them:

- **Pairwise verdicts** follow a Davidson tie model [1]_ (Newman's parametrisation) with
  known model log-strengths ``theta`` and tie parameter ``nu``; left/right order is
  random. Empty responses (probability ``empty_rate`` per prompt × model) lose to
  non-empty ones and tie each other (SPEC §5).
- **Scalar ratings** (1–5) on each axis are
  ``round(3 + quality[axis][model] + u[prompt, model] + t[rater, model] + e)``, clipped
  to 1–5, where ``u ~ N(0, unit_sd)`` is shared by all raters of a response (real
  signal), ``t`` is the rater's lasting *taste* for the model and ``e`` a one-off
  reaction; ``t`` and ``e`` together have s.d. ``rater_noise[axis] * stage_noise[stage]``,
  ``taste_share[axis]`` of its variance being taste. Axes with small rater spread are
  *convergent* (high Krippendorff's α); axes with a large spread that is mostly taste are
  *divergent* (low α while each rater tells the models apart — the HCB reading); a large
  spread of pure one-off noise is no divergence at all. By default prompt adherence
  converges, usability is in between and visual appeal diverges. Empty responses get 1
  on every axis.
- **Model sets** may differ by domain (``domain_models``), as in the real HCB where each
  domain has its own four models.
- **Qualitative feedback**: a theme per (rater, prompt, model) with probability
  ``theme_rate``; sentiment follows the response's mean rating.

References
----------
.. [1] Davidson, R. R. (1970). On extending the Bradley–Terry model to accommodate ties
   in paired comparison experiments. *JASA*, 65(329), 317–328.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from creagraph.judgments.hcb_io import AXES, STAGES, HCBData

__all__ = [
    "HCBTruth",
    "generate_hcb",
    "disjoint_design",
    "DEFAULT_RATER_NOISE",
    "DEFAULT_TASTE_SHARE",
]

DEFAULT_MODELS = ("aurora", "basalt", "cobalt", "dune", "ember")
DEFAULT_THETA = (1.2, 0.6, 0.0, -0.5, -1.3)
DEFAULT_DOMAINS = ("poster", "app_ui", "logo")
DEFAULT_RATER_NOISE: dict[str, float] = {
    "prompt_adherence": 0.3,  # raters converge
    "usability": 0.7,
    "visual_appeal": 1.8,  # taste: raters legitimately diverge
}
DEFAULT_TASTE_SHARE: dict[str, float] = {
    "prompt_adherence": 0.0,
    "usability": 0.0,
    "visual_appeal": 0.8,  # most of the spread is each rater's lasting taste
}
DEFAULT_STAGE_NOISE: dict[str, float] = {"ideation": 1.0, "mockup": 1.0, "refinement": 1.0}
_SKILLS = ("designer", "illustrator", "developer", "marketer")
_THEMES = ("composition", "colour", "originality", "clarity", "typography", "brief fit")


@dataclass(frozen=True)
class HCBTruth:
    """The parameters :func:`generate_hcb` sampled from.

    Attributes
    ----------
    models : tuple of str
    theta : ndarray
        Pairwise log-strengths (mean-centred), indexed like ``models``.
    nu : float
        Davidson tie parameter.
    quality : dict
        ``quality[axis]`` = per-model mean shift of the 1–5 rating.
    unit_sd : float
    rater_noise : dict
        Rater noise s.d. per axis.
    stage_noise : dict
        Multiplier of the rater noise per stage.
    expected_alpha : dict
        Per axis, the interval-level Krippendorff's α implied by the generating model
        before rounding and clipping (stage multiplier 1):
        ``s² / (s² + rater_noise²)`` with ``s² = unit_sd² + Var(quality)``.
    convergent_axes, divergent_axes : tuple of str
        Axes with ``expected_alpha >= 0.667`` / ``< 0.4`` and some taste (the
        :func:`hcb_report` default thresholds).
    taste_share : dict
        Share of the rater spread that is lasting taste, per axis.
    domain_models : dict
        The models of each domain.
    pairwise_taste : float
        S.d. of each rater's own offsets to ``theta`` in the pairwise verdicts.
    """

    models: tuple[str, ...]
    theta: np.ndarray
    nu: float
    quality: dict[str, np.ndarray]
    unit_sd: float
    rater_noise: dict[str, float]
    stage_noise: dict[str, float]
    expected_alpha: dict[str, float]
    convergent_axes: tuple[str, ...]
    divergent_axes: tuple[str, ...]
    taste_share: dict[str, float] = field(default_factory=dict)
    domain_models: dict[str, tuple[str, ...]] = field(default_factory=dict)
    pairwise_taste: float = 0.0

    def rank_order(self) -> list[str]:
        """Models from strongest to weakest."""
        return [self.models[k] for k in np.argsort(-self.theta, kind="stable")]


# over 80 lines only for the docstring of its 19 parameters; the body (~35 lines) calls helpers
def generate_hcb(
    *,
    seed: int = 0,
    models: Sequence[str] = DEFAULT_MODELS,
    theta: Sequence[float] = DEFAULT_THETA,
    domains: Sequence[str] = DEFAULT_DOMAINS,
    stages: Sequence[str] = STAGES,
    prompts_per_cell: int = 4,
    n_evaluators: int = 10,
    raters_per_prompt: int = 5,
    nu: float = 0.25,
    quality_scale: float = 0.5,
    unit_sd: float = 0.8,
    rater_noise: Mapping[str, float] | None = None,
    stage_noise: Mapping[str, float] | None = None,
    empty_rate: float = 0.02,
    theme_rate: float = 0.3,
    taste_share: Mapping[str, float] | None = None,
    domain_models: Mapping[str, Sequence[str]] | None = None,
    pairwise_taste: float = 0.0,
) -> tuple[HCBData, HCBTruth]:
    """Generate HCB-format data with known ground truth.

    Parameters
    ----------
    seed : int
    models, theta : sequences of equal length
        Model names and their pairwise log-strengths.
    domains, stages : sequences of str
        Stages must be HCB stages (ideation, mockup, refinement).
    prompts_per_cell : int
        Prompts per domain × stage.
    n_evaluators, raters_per_prompt : int
        Evaluator pool and how many evaluators see each prompt; every evaluator of a
        prompt compares every pair of models once and rates every model on every axis.
    nu : float
        Davidson tie parameter of the pairwise verdicts.
    quality_scale : float
        Scalar quality of model ``k`` on every axis is ``quality_scale * theta[k]``.
    unit_sd, rater_noise, stage_noise, taste_share : see the module docstring.
    empty_rate, theme_rate : float
    domain_models : mapping, optional
        ``domain -> models`` (names from ``models``) shown in that domain; default: every
        model everywhere. Disjoint sets give HCB-shaped data, where no rating block spans
        two domains.
    pairwise_taste : float
        S.d. of each rater's lasting offsets to the models' pairwise strengths (0: all
        raters share ``theta``); with taste, a rater's comparisons are dependent.

    Returns
    -------
    data : HCBData
    truth : HCBTruth

    Examples
    --------
    >>> data, truth = generate_hcb(seed=1, prompts_per_cell=1)
    >>> len(data.prompts), truth.rank_order()[0]
    (9, 'aurora')
    >>> data, truth = generate_hcb(prompts_per_cell=1, domains=["poster", "logo"],
    ...                            domain_models={"poster": ["aurora", "basalt", "cobalt"],
    ...                                           "logo": ["dune", "ember"]})
    >>> sorted({r["model_a"] for r in data.pairwise if r["prompt_id"] == "p0003"})
    ['dune', 'ember']
    """
    models = tuple(str(m) for m in models)
    th = np.asarray(theta, dtype=float)
    noise = dict(DEFAULT_RATER_NOISE if rater_noise is None else rater_noise)
    snoise = dict(DEFAULT_STAGE_NOISE if stage_noise is None else stage_noise)
    share = dict(DEFAULT_TASTE_SHARE if taste_share is None else taste_share)
    _check_design(models, th, stages, n_evaluators, raters_per_prompt, prompts_per_cell, nu,
                  empty_rate, noise, share, pairwise_taste)
    index = {m: k for k, m in enumerate(models)}
    dmodels = _domain_models(models, domains, domain_models)
    rng = np.random.default_rng(seed)
    taste, p_taste = _draw_tastes(seed, n_evaluators, len(models), noise, share, pairwise_taste)
    th = th - th.mean()
    quality = {axis: quality_scale * th for axis in AXES}
    evaluators = [f"ev{k:03d}" for k in range(n_evaluators)]
    skills = {e: _SKILLS[int(rng.integers(len(_SKILLS)))] for e in evaluators}
    truth = _truth(models, th, nu, quality, unit_sd, noise, snoise, share, dmodels,
                   pairwise_taste)
    sim = _Simulation(rng, truth, taste, p_taste, evaluators, skills,
                      (raters_per_prompt, empty_rate, theme_rate))

    data = HCBData(prompts=[])
    pid = 0
    for domain in domains:
        cell_models = [index[m] for m in dmodels[domain]]
        for stage in stages:
            for _ in range(prompts_per_cell):
                prompt_id = f"p{pid:04d}"
                pid += 1
                data.prompts.append(
                    {"prompt_id": prompt_id, "domain": domain, "stage": stage,
                     "prompt": f"{stage} brief #{pid} for a {domain}", "input_image": ""}
                )
                sim.prompt(data, prompt_id, stage, cell_models)
    return data, truth


def _draw_tastes(
    seed: int, n_evaluators: int, n_models: int, noise: dict[str, float],
    share: dict[str, float], pairwise_taste: float,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Each rater's lasting offsets to the models, per axis and for the comparisons."""
    # taste comes from its own stream, so the other draws do not depend on it
    taste_rng = np.random.default_rng([seed, 17])
    taste = {
        a: taste_rng.normal(0.0, 1.0, size=(n_evaluators, n_models))
        * noise[a] * math.sqrt(share.get(a, 0.0))
        for a in AXES
    }
    p_taste = taste_rng.normal(0.0, 1.0, size=(n_evaluators, n_models)) * pairwise_taste
    return taste, p_taste


def _truth(
    models: tuple[str, ...], th: np.ndarray, nu: float, quality: dict[str, np.ndarray],
    unit_sd: float, noise: dict[str, float], snoise: dict[str, float],
    share: dict[str, float], dmodels: dict[str, tuple[str, ...]], pairwise_taste: float,
) -> HCBTruth:
    """The parameters behind the data and what they imply (expected α, verdicts)."""
    signal = {a: unit_sd**2 + float(np.var(quality[a])) for a in AXES}
    expected = {a: signal[a] / (signal[a] + noise[a] ** 2) for a in AXES}
    return HCBTruth(
        models=models,
        theta=th,
        nu=float(nu),
        quality=quality,
        unit_sd=float(unit_sd),
        rater_noise=noise,
        stage_noise=snoise,
        expected_alpha=expected,
        convergent_axes=tuple(a for a in AXES if expected[a] >= 0.667),
        divergent_axes=tuple(a for a in AXES if expected[a] < 0.4 and share.get(a, 0.0) > 0),
        taste_share={a: float(share.get(a, 0.0)) for a in AXES},
        domain_models={d: tuple(ms) for d, ms in dmodels.items()},
        pairwise_taste=float(pairwise_taste),
    )


def _check_design(
    models: tuple[str, ...], th: np.ndarray, stages: Sequence[str], n_evaluators: int,
    raters_per_prompt: int, prompts_per_cell: int, nu: float, empty_rate: float,
    noise: dict[str, float], share: dict[str, float], pairwise_taste: float,
) -> None:
    """Reject parameters :func:`generate_hcb` cannot simulate."""
    if th.shape != (len(models),) or len(models) < 2:
        raise ValueError("models and theta must have the same length (>= 2)")
    if len(set(models)) != len(models):
        raise ValueError("model names must be unique")
    bad_stages = [s for s in stages if s not in STAGES]
    if bad_stages:
        raise ValueError(f"unknown stages {bad_stages} (use {list(STAGES)})")
    if not 1 <= raters_per_prompt <= n_evaluators:
        raise ValueError("need 1 <= raters_per_prompt <= n_evaluators")
    if prompts_per_cell < 1 or nu < 0 or not 0 <= empty_rate < 1:
        raise ValueError("need prompts_per_cell >= 1, nu >= 0 and 0 <= empty_rate < 1")
    missing = [a for a in AXES if a not in noise]
    if missing:
        raise ValueError(f"rater_noise lacks axes {missing}")
    if any(not 0 <= share.get(a, 0.0) <= 1 for a in AXES):
        raise ValueError("taste_share values must lie in [0, 1]")
    if pairwise_taste < 0:
        raise ValueError("pairwise_taste must be >= 0")


def _domain_models(
    models: tuple[str, ...], domains: Sequence[str],
    domain_models: Mapping[str, Sequence[str]] | None,
) -> dict[str, tuple[str, ...]]:
    """The models shown in each domain (default: all of them everywhere), checked."""
    if domain_models is None:
        return {d: models for d in domains}
    unknown_d = [d for d in domain_models if d not in domains]
    absent = [d for d in domains if d not in domain_models]
    if unknown_d or absent:
        raise ValueError(f"domain_models must name exactly the domains {list(domains)}")
    dmodels = {d: tuple(str(m) for m in ms) for d, ms in domain_models.items()}
    for d, ms in dmodels.items():
        bad = [m for m in ms if m not in models]
        if bad or len(ms) < 2 or len(set(ms)) != len(ms):
            raise ValueError(f"domain {d!r}: need >= 2 distinct models from `models` "
                             f"(unknown: {bad})")
    return dmodels


class _Simulation:
    """The ground truth of :func:`generate_hcb`, the raters' tastes and the random stream;
    :meth:`prompt` simulates the outputs, comparisons and ratings of one prompt (draws in a
    fixed order, so a seed gives the same data)."""

    def __init__(
        self, rng: np.random.Generator, truth: HCBTruth, taste: dict[str, np.ndarray],
        pairwise_taste: np.ndarray, evaluators: list[str], skills: dict[str, str],
        rates: tuple[int, float, float],
    ) -> None:
        self.rng, self.truth = rng, truth
        self.taste, self.pairwise_taste = taste, pairwise_taste
        self.evaluators, self.skills = evaluators, skills
        self.raters_per_prompt, self.empty_rate, self.theme_rate = rates

    def prompt(self, data: HCBData, prompt_id: str, stage: str, cell_models: list[int]) -> None:
        rng, models = self.rng, self.truth.models
        empty_c = rng.random(len(cell_models)) < self.empty_rate
        unit_c = rng.normal(0.0, self.truth.unit_sd, size=len(cell_models))
        empty = dict(zip(cell_models, empty_c.tolist(), strict=True))
        unit = dict(zip(cell_models, unit_c.tolist(), strict=True))
        for k in cell_models:
            m = models[k]
            data.outputs.append(
                {"prompt_id": prompt_id, "model": m, "empty": bool(empty[k]),
                 "output": "" if empty[k] else f"outputs/{prompt_id}/{m}.png"}
            )
        raters = rng.choice(len(self.evaluators), size=self.raters_per_prompt, replace=False)
        for r in sorted(raters.tolist()):
            self._comparisons(data, prompt_id, r, cell_models, empty)
            for k in cell_models:
                rec = self._ratings(prompt_id, stage, r, k, empty[k], unit[k])
                data.scalar.append(rec)
                if rng.random() < self.theme_rate:
                    data.qualitative.append(self._theme(rec))

    def _comparisons(self, data: HCBData, prompt_id: str, r: int, cell_models: list[int],
                     empty: dict[int, bool]) -> None:
        """Rater ``r`` compares every pair of the cell's models once, in random order."""
        rng, th, p_taste = self.rng, self.truth.theta, self.pairwise_taste
        models = self.truth.models
        ev = self.evaluators[r]
        for i, j in itertools.combinations(cell_models, 2):
            if rng.random() < 0.5:
                i, j = j, i
            data.pairwise.append(
                {"prompt_id": prompt_id, "evaluator_id": ev,
                 "model_a": models[i], "model_b": models[j],
                 "chosen": _verdict(rng, th[i] + p_taste[r, i], th[j] + p_taste[r, j],
                                    self.truth.nu, empty[i], empty[j], models[i], models[j]),
                 "evaluator_core_skill": self.skills[ev], "dimension": "overall"}
            )

    def _ratings(self, prompt_id: str, stage: str, r: int, k: int, empty: bool,
                 unit: float) -> dict[str, object]:
        """Rater ``r``'s ratings 1–5 of model ``k`` on every axis (1 for an empty output)."""
        rec: dict[str, object] = {"prompt_id": prompt_id, "evaluator_id": self.evaluators[r],
                                  "model": self.truth.models[k]}
        for axis in AXES:
            if empty:
                rec[axis] = 1.0
                continue
            mult = self.truth.stage_noise.get(stage, 1.0)
            sd = (self.truth.rater_noise[axis] * mult
                  * math.sqrt(1.0 - self.truth.taste_share[axis]))
            raw = (3.0 + self.truth.quality[axis][k] + unit + self.taste[axis][r, k] * mult
                   + self.rng.normal(0.0, sd))
            rec[axis] = float(min(5, max(1, round(raw))))
        return rec

    def _theme(self, rec: dict[str, object]) -> dict[str, object]:
        """A qualitative remark whose sentiment follows the mean rating."""
        mean = float(np.mean([rec[a] for a in AXES]))
        sentiment = "positive" if mean >= 3.5 else "negative" if mean < 2.5 else "neutral"
        theme = _THEMES[int(self.rng.integers(len(_THEMES)))]
        return {"prompt_id": rec["prompt_id"], "evaluator_id": rec["evaluator_id"],
                "model": rec["model"], "theme": theme, "sentiment": sentiment,
                "quote": f"{theme} is {sentiment}"}


_DISJOINT_MODELS = (
    "aurora", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heron", "iris",
    "juniper", "kestrel", "lumen",
)


def disjoint_design(
    domains: Sequence[str] = DEFAULT_DOMAINS, models_per_domain: int = 4
) -> dict[str, Any]:
    """Keyword arguments for :func:`generate_hcb` giving HCB-shaped data: each domain has
    its own ``models_per_domain`` models (disjoint sets; 12 models for the 3 default
    domains), with strengths spread within each domain.

    Examples
    --------
    >>> d = disjoint_design()
    >>> d["domain_models"]["logo"], len(d["models"])
    (('iris', 'juniper', 'kestrel', 'lumen'), 12)
    """
    n = len(domains) * models_per_domain
    names = list(_DISJOINT_MODELS[:n]) + [f"model{k:02d}" for k in range(len(_DISJOINT_MODELS), n)]
    spread = np.linspace(1.0, -1.0, models_per_domain)
    theta = [float(spread[k % models_per_domain]) for k in range(n)]
    dm = {d: tuple(names[i * models_per_domain:(i + 1) * models_per_domain])
          for i, d in enumerate(domains)}
    return {"models": names, "theta": theta, "domains": list(domains), "domain_models": dm}


def _verdict(
    rng: np.random.Generator,
    ti: float,
    tj: float,
    nu: float,
    empty_i: bool,
    empty_j: bool,
    name_i: str,
    name_j: str,
) -> str:
    if empty_i or empty_j:
        if empty_i and empty_j:
            return "tie"
        return name_j if empty_i else name_i
    pi, pj = math.exp(ti), math.exp(tj)
    tie = 2.0 * nu * math.sqrt(pi * pj)
    u = rng.random() * (pi + pj + tie)
    if u < pi:
        return name_i
    if u < pi + pj:
        return name_j
    return "tie"
