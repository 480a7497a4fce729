"""Does what the idea graph knows add to the plain distance? (SPEC §4.10; issue 27.)

Data: ``../shared/external/aut-human/aut_human_dev.csv`` only, read as
``benchmarks/novelty_human.py`` reads it (one task per prompt, participants hashed into 10
pseudo-models; each answer is judged against the other nine groups' answers).

Per answer, beside the plain distance ``D`` (SPEC §4.10, ρ = 0.15) and the shipped rarity
``R`` (τ = 0.8, responses and models), features that a single embedding of the answer does
not give — from the answer's content phrases (its idea units: the offline extractor's
chunker, phrases restating the brief left out):

* ``units`` — elaboration in idea units: ln(1 + distinct content phrases);
* ``remote`` — remote association: mean cosine distance between the answer's own phrases
  (0 with fewer than two);
* ``unit_concept`` — the farthest phrase from the brief's concept (1 − cos; the bare
  answer's when it has no phrase);
* ``unit_rarity`` — the rarest phrase: the largest plain distance of a phrase to the other
  groups' phrases (same ρ);
* and the answer-level baselines ``concept`` (1 − cos(bare answer, brief concept, "a
  rope")), ``sem.dist`` (1 − cos(bare answer, prompt word)), ``words`` (ln(1 + word
  count)), ``D`` on the bare answer, ``D`` at ρ = 0.05 / 0.5, nearest-neighbour distance.

Printed: each feature's mean Spearman ρ with the human rating (and per prompt), its mean ρ
with ``D``; then, leave-one-prompt-out, a non-negative ridge over within-prompt z-scores of
each feature set, fitted on the other eight prompts and applied to the held-out one, its
mean ρ and the difference from ``D`` (the issue's target: ≥ +0.03).

Usage::

    python benchmarks/novelty_graph_features.py --shared-dir ../shared
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from novelty_human import DEV_FILE, N_GROUPS, load, spearman  # noqa: E402

from creagraph.core.embeddings import default_embedder  # noqa: E402
from creagraph.tig.adapters import default_shared_dir  # noqa: E402
from creagraph.tig.atoms import atom_form, chunk_phrases, idea_head  # noqa: E402
from creagraph.tig.brief import brief_concept, brief_terms, is_from_brief, task_kind  # noqa: E402
from creagraph.tig.score import knn_distance, rarity_value  # noqa: E402

SHARE = 0.15
TAU = 0.8
FEATURE_SETS = (
    ("D",), ("D", "R"), ("D", "concept"), ("D", "R", "concept"),
    ("D", "R", "concept", "sem.dist"), ("D", "R", "concept", "words"),
    ("D", "R", "concept", "units"), ("D", "concept", "remote"),
    ("D", "concept", "unit_concept"), ("D", "concept", "unit_rarity"),
    ("D", "R", "concept", "unit_concept", "remote", "unit_rarity", "units"),
    ("D", "D5", "D50", "NN", "R", "concept"), ("D", "D_bare", "concept"),
)


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def _by_group(vectors: np.ndarray, groups: np.ndarray, share: float) -> np.ndarray:
    """Plain distance of each row to the other groups' rows (ρ = ``share``)."""
    out = np.zeros(len(vectors))
    for g in range(N_GROUPS):
        own, ref = np.flatnonzero(groups == g), np.flatnonzero(groups != g)
        if len(own) and len(ref):
            k = max(1, math.ceil(share * len(ref)))
            out[own] = knn_distance(vectors[own], vectors[ref], k)[0]
    return out


def prompt_features(items: list[Any], embedder: Any) -> dict[str, np.ndarray]:
    """The features of one prompt's answers (module docstring)."""
    brief, word = items[0].brief, items[0].task_id
    kind = task_kind(brief, items[0].family)
    concept = brief_concept(brief, None, kind) or word
    terms = brief_terms(brief, instructions=True)
    answers = [r.core_idea for r in items]
    groups = np.array([int(r.model.rsplit("-", 1)[1]) for r in items])
    idea = _unit(embedder.encode([f"{brief} {a}" for a in answers]))
    bare = _unit(embedder.encode(answers))
    concept_vec, word_vec = _unit(embedder.encode([concept, word]))
    phrases = [sorted({f for f in (atom_form(p.text) for p in chunk_phrases(idea_head(a)))
                       if f and not is_from_brief(f, terms)}) for a in answers]
    forms = sorted({f for ph in phrases for f in ph})
    vec = dict(zip(forms, _unit(embedder.encode(forms)), strict=True)) if forms else {}
    n = len(items)
    found: dict[str, np.ndarray] = {
        "D": _by_group(idea, groups, SHARE), "D5": _by_group(idea, groups, 0.05),
        "D50": _by_group(idea, groups, 0.5), "D_bare": _by_group(bare, groups, SHARE),
        "NN": np.zeros(n), "R": np.zeros(n),
        "concept": 1.0 - bare @ concept_vec, "sem.dist": 1.0 - bare @ word_vec,
        "words": np.log1p([len(a.split()) for a in answers]),
        "units": np.log1p([len(ph) for ph in phrases]),
    }
    for g in range(N_GROUPS):
        own, ref = np.flatnonzero(groups == g), np.flatnonzero(groups != g)
        if not len(own):
            continue
        sims = idea[own] @ idea[ref].T
        found["NN"][own] = 1.0 - sims.max(axis=1)
        hit = sims >= TAU
        models = sum((hit[:, groups[ref] == h].any(axis=1)).astype(int)
                     for h in range(N_GROUPS) if h != g)
        found["R"][own] = rarity_value(hit.sum(axis=1), len(ref), models, N_GROUPS - 1)
    owner = np.array([i for i, ph in enumerate(phrases) for _ in ph], dtype=np.int64)
    rows = (np.stack([vec[f] for ph in phrases for f in ph]) if forms
            else np.zeros((0, idea.shape[1]), dtype=np.float32))
    rarity = _by_group(rows, groups[owner], SHARE) if len(rows) else np.zeros(0)
    far = 1.0 - rows @ concept_vec if len(rows) else np.zeros(0)
    found["unit_concept"] = found["concept"].copy()
    found["unit_rarity"] = found["D_bare"].copy()
    found["remote"] = np.zeros(n)
    for i in np.unique(owner).tolist():
        mine = np.flatnonzero(owner == i)
        found["unit_concept"][i] = far[mine].max()
        found["unit_rarity"][i] = rarity[mine].max()
        if len(mine) > 1:
            sims = rows[mine] @ rows[mine].T
            found["remote"][i] = 1.0 - sims[np.triu_indices(len(mine), 1)].mean()
    return found


def _z(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    sd = values.std()
    return (values - values.mean()) / (sd if sd > 0 else 1.0)


def lopo(features: dict[str, dict[str, np.ndarray]], ratings: dict[str, np.ndarray],
         names: tuple[str, ...]) -> list[float]:
    """Per held-out prompt: ρ of a non-negative ridge over within-prompt z-scores."""
    from sklearn.linear_model import Ridge

    prompts = sorted(features)
    found = []
    for held in prompts:
        others = [p for p in prompts if p != held] or [held]
        x = np.vstack([np.column_stack([_z(features[p][f]) for f in names]) for p in others])
        y = np.concatenate([_z(ratings[p]) for p in others])
        model = Ridge(alpha=1.0, fit_intercept=False, positive=True).fit(x, y)
        held_x = np.column_stack([_z(features[held][f]) for f in names])
        found.append(spearman(held_x @ model.coef_, ratings[held]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared-dir", type=Path, default=None)
    args = parser.parse_args()
    shared = args.shared_dir or default_shared_dir()
    responses, targets = load(shared / DEV_FILE, None)
    embedder = default_embedder()
    by_task: dict[str, list[Any]] = {}
    for r in responses:
        by_task.setdefault(r.task_id, []).append(r)
    start, cpu = time.perf_counter(), time.process_time()
    features = {t: prompt_features(items, embedder) for t, items in sorted(by_task.items())}
    ratings = {t: np.array([targets[r.response_id] for r in items])
               for t, items in by_task.items()}
    prompts = sorted(features)
    print(f"aut-human dev: {len(responses)} answers, {len(prompts)} prompts; features in "
          f"{time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} CPU-s")
    print(f"{'feature':<13} {'mean ρ':>7} {'ρ with D':>9}   "
          + " ".join(f"{p:>6}" for p in prompts))
    for name in features[prompts[0]]:
        per = [spearman(features[p][name], ratings[p]) for p in prompts]
        with_d = statistics.fmean(spearman(features[p][name], features[p]["D"]) for p in prompts)
        print(f"{name:<13} {statistics.fmean(per):>7.3f} {with_d:>9.2f}   "
              + " ".join(f"{v:>6.3f}" for v in per))
    plain = statistics.fmean(spearman(features[p]["D"], ratings[p]) for p in prompts)
    print("leave-one-prompt-out, non-negative ridge over within-prompt z-scores:")
    for names in FEATURE_SETS:
        per = lopo(features, ratings, names)
        mean = statistics.fmean(per)
        print(f"  {' + '.join(names):<62} {mean:.3f} ({mean - plain:+.3f} vs D)")


if __name__ == "__main__":
    main()
