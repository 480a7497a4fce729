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

Session 9 added features that are *not* another within-prompt density:

* (a) cross-task genericness — each answer with the prompt's object word removed
  (:func:`strip_object`) against the *other* prompts' object-free answers (the reference
  population's other tasks): ``X_rare`` = :func:`~creagraph.tig.score.rarity_value` of the
  matches at the synonym threshold τ = 0.8 (share of the other prompts' responses and of the
  other prompts), ``X_nn`` = 1 − the mean over other prompts of the nearest answer's cosine,
  ``X_generic`` = 1 − ``X_nn`` (the reverse direction: an idea that fits any object), and
  ``X_cluster`` = the same rarity for the matched Leiden cluster
  (:func:`~creagraph.tig.cluster.cluster_nodes`) of the pooled answer graph at τ;
* (b) community structure of the prompt's answer graph — Leiden communities of the
  symmetrised 10-NN graph of the "brief + answer" vectors: ``comm_rare`` (rarity of the
  answer's community by the other groups' answers and groups), ``comm_models`` (by groups
  alone) and ``comm_atyp`` (1 − the answer's PageRank percentile inside its community);
* (c) path length in a semantic network (Kenett, Levi, Anaki & Faust 2017; Kenett et al.
  2018: remote associates lie at longer path lengths): the 10-NN network of the bare answers
  and the brief's concept, ``path`` = shortest weighted path (edge length 1 − cos) from the
  concept to the answer, ``hops`` = its unweighted length.

Printed: each feature's mean Spearman ρ with the human rating (and per prompt: the feature
alone), its mean ρ with ``D``; each new feature's partial ρ with the rating given ``D`` per
prompt and source study (``src``); then, leave-one-prompt-out, a non-negative ridge over
within-prompt z-scores of each feature set, fitted on the other eight prompts and applied to
the held-out one, its mean ρ (all, per kind, per prompt) and the difference from ``D`` (the
issue's target: ≥ +0.03; the session-9 rule for wiring a feature in: ≥ +0.02 over the best
comparison without it) — with every answer weighted alike (as the calibration fits), with
every prompt weighted alike, and *leave-study-out* (fitted only on prompts that share no
source study with the held-out one); and the same sets under the calibration's own model
(:func:`creagraph.tig.calibration.leave_one_prompt_out`: the probe on the answer's vector
for uses), against ``probe + D + concept``.

Usage::

    python benchmarks/novelty_graph_features.py --shared-dir ../shared
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
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
from creagraph.tig.brief import (  # noqa: E402
    brief_concept,
    brief_terms,
    is_from_brief,
    task_kind,
    word_stem,
)
from creagraph.tig.calibration import (  # noqa: E402
    PromptData,
    centred_unit,
    fit_kind_models,
    leave_one_prompt_out,
)
from creagraph.tig.score import knn_distance, rarity_value  # noqa: E402

SHARE = 0.15
TAU = 0.8
#: The new columns of session 9: (a) cross-task genericness, (b) community structure,
#: (c) path length in a semantic network (module docstring).
CROSS = ("X_rare", "X_nn", "X_generic", "X_cluster")
COMMUNITY = ("comm_rare", "comm_models", "comm_atyp")
PATH = ("path", "hops")
NEW = CROSS + COMMUNITY + PATH
FEATURE_SETS: tuple[tuple[str, ...], ...] = (
    ("D",), ("D", "R"), ("D", "R", "concept"), ("D", "R", "concept", "sem.dist"),
    *(("D", f) for f in NEW),
    ("D",) + CROSS, ("D",) + COMMUNITY, ("D",) + PATH, ("D", "X_generic", "path"),
    ("D",) + NEW, ("D", "R", "concept", "sem.dist") + NEW,
)
#: Sets measured again with every prompt weighted alike and leave-study-out.
WEIGHTED_SETS: tuple[tuple[str, ...], ...] = (
    ("D",), ("D", "R", "concept", "sem.dist"), ("D", "X_generic"), ("D", "X_rare"),
    ("D", "comm_rare", "comm_atyp"), ("D", "path"), ("D", "X_generic", "path"),
    ("D", "R", "concept", "sem.dist", "X_generic", "path"),
)
#: Sets measured with the calibration's model (probe on the answer's vector).
PROBE_SETS: tuple[tuple[str, ...], ...] = (
    ("D", "concept"), ("D", "R", "concept"), ("D", "concept", "X_rare"),
    ("D", "concept", "X_generic"), ("D", "concept", "comm_rare", "comm_atyp"),
    ("D", "concept", "path"), ("D", "concept", "X_generic", "path"),
)
#: Features whose partial ρ given D is printed per prompt and source study.
PARTIAL = ("X_rare", "X_generic", "X_cluster", "comm_rare", "comm_atyp", "path", "concept")


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
    found.update(community_features(idea, groups))
    found.update(path_features(bare, concept_vec))
    return found


OBJECT_TAU = 0.8          # the synonym threshold, on object-free bare answers
COMMUNITY_K = 10          # neighbours per answer in the prompt's answer graph
PATH_K = 10               # neighbours per node in the semantic network of (c)


def strip_object(answer: str, word: str) -> str:
    """The answer with the prompt's object word (and its inflections) removed — whole words
    and hyphen parts, not compounds ("shoelace" stays); "it" when nothing is left ("use a
    rope as a belt" → "use a as a belt")."""
    word = word.lower()
    stems = {word_stem(word), word_stem(word + "s"), word_stem(word + "es")}
    if word.endswith("fe") or word.endswith("f"):
        stems.add(word_stem(word.rstrip("e").rstrip("f") + "ves"))
    kept = [t for t in re.split(r"[\s-]+", answer)
            if re.sub(r"[^\w]", "", t.lower()) != word
            and word_stem(re.sub(r"[^\w]", "", t.lower())) not in stems]
    return " ".join(t for t in kept if t) or "it"


def _threshold_edges(unit: np.ndarray, tau: float, block: int = 1024
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Edges (i < j) of unit rows with cosine ≥ tau, and their cosines."""
    pairs, weights = [], []
    for lo in range(0, len(unit), block):
        sims = unit[lo:lo + block] @ unit.T
        i, j = np.nonzero(sims >= tau)
        keep = j > i + lo
        pairs.append(np.column_stack([i[keep] + lo, j[keep]]))
        weights.append(sims[i[keep], j[keep]])
    return (np.vstack(pairs).astype(np.int64) if pairs else np.zeros((0, 2), np.int64),
            np.concatenate(weights) if weights else np.zeros(0))


def cross_task_features(stripped: dict[str, list[str]], embedder: Any
                        ) -> dict[str, dict[str, np.ndarray]]:
    """(a) Cross-task genericness: each answer against the *other* prompts' object-free
    answers (module docstring): ``X_rare`` (matches at τ, rarity of responses and prompts),
    ``X_nn`` (1 − mean over other prompts of the nearest answer's cosine), its reverse
    ``X_generic`` (= 1 − ``X_nn``: how well the idea fits any object) and ``X_cluster``
    (rarity of the matched Leiden cluster of the pooled graph at τ)."""
    from creagraph.tig.cluster import cluster_nodes

    prompts = sorted(stripped)
    texts = sorted({t for p in prompts for t in stripped[p]})
    unit = dict(zip(texts, _unit(embedder.encode(texts)), strict=True))
    vecs = {p: np.stack([unit[t] for t in stripped[p]]) for p in prompts}
    found: dict[str, dict[str, np.ndarray]] = {}
    for p in prompts:
        others = [q for q in prompts if q != p]
        n = len(stripped[p])
        hits = np.zeros((n, len(others)))
        nearest = np.zeros((n, len(others)))
        for col, q in enumerate(others):
            sims = vecs[p] @ vecs[q].T
            hits[:, col] = (sims >= OBJECT_TAU).sum(axis=1)
            nearest[:, col] = sims.max(axis=1)
        pool_n = sum(len(stripped[q]) for q in others)
        x_rare = np.asarray(rarity_value(hits.sum(axis=1), pool_n,
                                         (hits > 0).sum(axis=1), len(others)))
        # the pooled answer graph over the other prompts' distinct object-free answers
        distinct = sorted({t for q in others for t in stripped[q]})
        index = {t: i for i, t in enumerate(distinct)}
        pool = np.stack([unit[t] for t in distinct])
        count = np.zeros(len(distinct))
        owners: list[set[str]] = [set() for _ in distinct]
        for q in others:
            for t in stripped[q]:
                count[index[t]] += 1
                owners[index[t]].add(q)
        edges, weights = _threshold_edges(pool, OBJECT_TAU)
        member = cluster_nodes(len(distinct), edges, weights, seed=0).membership
        size = np.bincount(member, weights=count)
        spread = [set() for _ in range(int(member.max()) + 1)]
        for i, c in enumerate(member.tolist()):
            spread[c] |= owners[i]
        sims = vecs[p] @ pool.T
        best = sims.argmax(axis=1)
        matched = sims[np.arange(n), best] >= OBJECT_TAU
        c_of = member[best]
        n_r = np.where(matched, size[c_of], 0)
        n_p = np.where(matched, [len(spread[c]) for c in c_of], 0)
        found[p] = {"X_rare": x_rare, "X_nn": 1.0 - nearest.mean(axis=1),
                    "X_generic": nearest.mean(axis=1),
                    "X_cluster": np.asarray(rarity_value(n_r, pool_n, n_p, len(others)))}
    return found


def _knn_graph(unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetrised k-nearest-neighbour graph of unit rows: edges (i < j) and cosines."""
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    k = min(k, len(unit) - 1)
    nbr = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    i = np.repeat(np.arange(len(unit)), k)
    j = nbr.ravel()
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    pairs = np.unique(np.column_stack([lo, hi]), axis=0)
    return pairs, np.clip(sims[pairs[:, 0], pairs[:, 1]], 1e-6, None)


def community_features(idea: np.ndarray, groups: np.ndarray) -> dict[str, np.ndarray]:
    """(b) Community structure of the prompt's answer graph (module docstring):
    ``comm_rare`` (rarity of the answer's Leiden community: its other-group answers and
    other groups), ``comm_models`` (the same by groups alone) and ``comm_atyp`` (1 − the
    answer's PageRank percentile inside its community: a peripheral wording)."""
    import igraph

    from creagraph.tig.cluster import cluster_nodes

    edges, weights = _knn_graph(idea, COMMUNITY_K)
    member = cluster_nodes(len(idea), edges, weights, seed=0).membership
    graph = igraph.Graph(n=len(idea), edges=edges.tolist())
    rank = np.asarray(graph.pagerank(weights=weights.tolist()))
    n = len(idea)
    comm_rare, comm_models, comm_atyp = np.zeros(n), np.zeros(n), np.zeros(n)
    for c in np.unique(member).tolist():
        rows = np.flatnonzero(member == c)
        order = rank[rows].argsort().argsort()
        comm_atyp[rows] = 1.0 - (order + 0.5) / len(rows)
        for g in np.unique(groups[rows]).tolist():
            mine = rows[groups[rows] == g]
            others = groups[rows][groups[rows] != g]
            ref_n = int((groups != g).sum())
            models = len(set(others.tolist()))
            comm_rare[mine] = rarity_value(len(others), ref_n, models, N_GROUPS - 1)
            comm_models[mine] = math.log(N_GROUPS / (models + 1)) / math.log(N_GROUPS)
    return {"comm_rare": comm_rare, "comm_models": comm_models, "comm_atyp": comm_atyp}


def path_features(bare: np.ndarray, concept_vec: np.ndarray) -> dict[str, np.ndarray]:
    """(c) Path length in a semantic network (Kenett et al. 2017/2018): the k-NN network of
    the prompt's bare answers plus the brief's concept; ``path`` is the shortest weighted
    path (edge length 1 − cos) from the concept to the answer, ``hops`` its edge count on
    the unweighted network."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import dijkstra

    nodes = np.vstack([concept_vec[None, :], bare])
    edges, weights = _knn_graph(nodes, PATH_K)
    n = len(nodes)
    length = np.clip(1.0 - weights, 1e-6, None)
    graph = coo_matrix((length, (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    ones = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    path = dijkstra(graph, directed=False, indices=0)[1:]
    hops = dijkstra(ones, directed=False, indices=0, unweighted=True)[1:]
    finite = np.isfinite(path)
    path = np.where(finite, path, path[finite].max() if finite.any() else 1.0)
    hops = np.where(np.isfinite(hops), hops, np.nanmax(np.where(np.isfinite(hops), hops, 0)) + 1)
    return {"path": path, "hops": hops}


def _z(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    sd = values.std()
    return (values - values.mean()) / (sd if sd > 0 else 1.0)


def lopo(features: dict[str, dict[str, np.ndarray]], ratings: dict[str, np.ndarray],
         names: tuple[str, ...], *, equal: bool = False,
         studies: dict[str, set[str]] | None = None) -> list[float]:
    """Per held-out prompt: ρ of a non-negative ridge over within-prompt z-scores, fitted
    on the other prompts — every answer weighted alike (``equal=False``, as the shipped
    calibration) or every prompt alike (``equal=True``); with ``studies`` (prompt → source
    studies), only on prompts sharing no source study with the held-out one."""
    from sklearn.linear_model import Ridge

    prompts = sorted(features)
    found = []
    for held in prompts:
        others = [p for p in prompts if p != held
                  and not (studies and studies[p] & studies[held])] or [held]
        x = np.vstack([np.column_stack([_z(features[p][f]) for f in names]) for p in others])
        y = np.concatenate([_z(ratings[p]) for p in others])
        weight = np.concatenate([np.full(len(ratings[p]), len(y) / (len(others) * len(ratings[p]))
                                         if equal else 1.0) for p in others])
        model = Ridge(alpha=1.0, fit_intercept=False, positive=True).fit(
            x, y, sample_weight=weight)
        held_x = np.column_stack([_z(features[held][f]) for f in names])
        found.append(spearman(held_x @ model.coef_, ratings[held]))
    return found


def partial_rho(feature: np.ndarray, rating: np.ndarray, given: np.ndarray) -> float:
    """Partial Spearman ρ of ``feature`` with ``rating`` given ``given`` (ranks residualised
    on the ranks of ``given``): what the feature says that D does not."""
    from scipy.stats import rankdata

    def residual(a: np.ndarray) -> np.ndarray:
        design = np.column_stack([np.ones(len(given)), rankdata(given)])
        return a - design @ np.linalg.lstsq(design, a, rcond=None)[0]

    return float(np.corrcoef(residual(rankdata(feature)), residual(rankdata(rating)))[0, 1])


def source_studies(path: Path) -> dict[str, str]:
    """The source study (``src``) of each answer, by the response id ``load`` gives it."""
    with path.open(encoding="utf-8", newline="") as handle:
        return {f"{row['prompt'].strip()}|{row['id']}": row["src"]
                for row in csv.DictReader(handle)}


def lopo_probe(features: dict[str, dict[str, np.ndarray]], ratings: dict[str, np.ndarray],
               vectors: dict[str, np.ndarray], kinds: dict[str, str],
               names: tuple[str, ...]) -> list[float]:
    """Per held-out prompt: ρ of the shipped calibration's model
    (:func:`creagraph.tig.calibration.leave_one_prompt_out`: per kind, non-negative weights
    on ``names``, z-scored within prompt, plus the probe on the answer's vector for a kind
    with ≥ 3 training prompts, its penalty chosen inside the training prompts)."""
    data = {p: PromptData(kinds[p], np.column_stack([_z(features[p][f]) for f in names]),
                          ratings[p], vectors[p]) for p in features}
    predicted = leave_one_prompt_out(data)
    return [spearman(predicted[p], ratings[p]) for p in sorted(features)]


def calibration_by_study(features: dict[str, dict[str, np.ndarray]],
                         ratings: dict[str, np.ndarray], vectors: dict[str, np.ndarray],
                         kinds: dict[str, str], studies: dict[str, set[str]] | None
                         ) -> tuple[list[float], list[str]]:
    """The shipped calibration's model (raw ``D``, ``R``, ``concept``; probe for a kind with
    ≥ 3 training prompts) per held-out prompt, fitted on the other prompts — all of them
    (``studies=None``: LOPO) or those sharing no source study with it; also, per fold,
    whether the held-out prompt's model had a probe."""
    data = {p: PromptData(kinds[p], np.column_stack([features[p][f]
                                                     for f in ("D", "R", "concept")]),
                          ratings[p], vectors[p]) for p in features}
    found, probed = [], []
    for held in sorted(features):
        train = {p: d for p, d in data.items() if p != held
                 and not (studies and studies[p] & studies[held])}
        model = fit_kind_models(train, sorted(set(kinds.values())))[kinds[held]]
        vecs = centred_unit(data[held].vectors) if model.probe is not None else None
        found.append(spearman(model.rating(data[held].features, vecs), ratings[held]))
        probed.append(f"{held} {'probe' if model.probe is not None else 'no probe'} "
                      f"({len(train)} prompts)")
    return found, probed


def _row(label: str, per: list[float], prompts: list[str], kinds: dict[str, str],
         plain: float) -> str:
    def mean_of(kind: str | None) -> str:
        vals = [v for v, p in zip(per, prompts, strict=True) if kind in (None, kinds[p])]
        return f"{statistics.fmean(vals):.3f}" if vals else "  —  "

    mean = statistics.fmean(per)
    return (f"  {label:<40} {mean:.3f} {mean - plain:+.3f} {mean_of('use'):>6} "
            f"{mean_of('instance'):>6}   " + " ".join(f"{v:>6.3f}" for v in per))


def main() -> None:
    import warnings

    from scipy.stats import ConstantInputWarning

    warnings.filterwarnings("ignore", category=ConstantInputWarning)
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
    crossed = cross_task_features(
        {t: [strip_object(r.core_idea, t) for r in items] for t, items in by_task.items()},
        embedder)
    for t in features:
        features[t].update(crossed[t])
    ratings = {t: np.array([targets[r.response_id] for r in items])
               for t, items in by_task.items()}
    prompts = sorted(features)
    kinds = {t: task_kind(by_task[t][0].brief, by_task[t][0].family) for t in prompts}
    vectors = {t: np.asarray(embedder.encode([f"{r.brief} {r.core_idea}" for r in by_task[t]]))
               for t in prompts}
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
    header = (f"  {'features':<40} {'all':>5} {'Δ D':>6} {'use':>6} {'inst.':>6}   "
              + " ".join(f"{p:>6}" for p in prompts))
    src = source_studies(shared / DEV_FILE)
    study = {t: np.array([src[r.response_id] for r in by_task[t]]) for t in prompts}
    print("partial ρ with the rating given D, per prompt and source study:")
    print(f"  {'prompt':<7} {'study':<8} {'n':>5} " + " ".join(f"{f:>10}" for f in PARTIAL))
    for t in prompts:
        for u in sorted(set(study[t].tolist())):
            rows = study[t] == u
            part = [partial_rho(features[t][f][rows], ratings[t][rows], features[t]["D"][rows])
                    for f in PARTIAL]
            print(f"  {t:<7} {u:<8} {int(rows.sum()):>5} "
                  + " ".join(f"{v:>+10.3f}" for v in part))
    print("leave-one-prompt-out, non-negative ridge over within-prompt z-scores "
          "(Δ D: against the plain distance D alone):")
    print(header)
    for names in FEATURE_SETS:
        print(_row(" + ".join(names), lopo(features, ratings, names), prompts, kinds, plain))
    studies = {t: set(study[t].tolist()) for t in prompts}
    for title, equal, by_study in (
            ("every prompt weighted alike", True, None),
            ("leave-study-out: fitted only on prompts sharing no source study", False, studies),
            ("leave-study-out, every prompt weighted alike", True, studies)):
        print(f"{title}:")
        print(header)
        for names in WEIGHTED_SETS:
            print(_row(" + ".join(names), lopo(features, ratings, names, equal=equal,
                                               studies=by_study), prompts, kinds, plain))
    print("leave-one-prompt-out, the calibration's model (probe on the answer's vector for "
          "uses, features-only ridge for instances; features z-scored within prompt):")
    print(header)
    for names in PROBE_SETS:
        print(_row("probe + " + " + ".join(names),
                   lopo_probe(features, ratings, vectors, kinds, names), prompts, kinds, plain))
    print("the shipped calibration's model (D, R, concept unscaled; probe for uses with ≥ 3 "
          "training use prompts):")
    print(header)
    for title, by_study in (("LOPO", None), ("leave-study-out", studies)):
        per, probed = calibration_by_study(features, ratings, vectors, kinds, by_study)
        print(_row(f"calibration, {title}", per, prompts, kinds, plain))
        if by_study:
            print("    folds: " + "; ".join(probed))
    print(f"total {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} CPU-s")


if __name__ == "__main__":
    main()
