"""Fit the optional novelty calibration on the human-rated prompts (SPEC §4.10; issue 27).

Data: ``../shared/external/aut-human/aut_human_dev.csv`` only (nine Alternative Uses /
Instances prompts with human originality ratings; see its PROVENANCE.md), read and scored
exactly as ``benchmarks/novelty_human.py`` does (one task per prompt, participants hashed
into 10 pseudo-models, ``tig score`` with the shipped settings). The features are those of
:mod:`creagraph.tig.calibration` (distance, rarity, concept distance) and the probe on the
answer's own "brief + answer" MiniLM vector; the models are its per-kind within-prompt ridges
(:func:`~creagraph.tig.calibration.fit_kind_models`: a probe for uses, fitted on the use
prompts with its penalty chosen leave-one-prompt-out inside them; the features-only ridge
for instances, the kind with one prompt here).

Printed: per prompt, Spearman's ρ with the human rating of the calibrated score under
leave-one-prompt-out (everything — penalty choice included — fitted on the other eight
prompts, applied to the held-out one), beside the uncalibrated ``tig score`` novelty, the
plain-distance baseline, semantic distance from the brief's concept and word count; the
means per kind and over prompts; then an ablation (same LOPO): the features without the
probe, the probe alone, the probe with D, with D and C, with D, R and C (does the graph's
rarity R earn a part of the gain?), one probe for all kinds. Then the models fitted on all
nine prompts are written (``--out``, default the package's data file) with this command,
the data file's digest and the LOPO figures.

Usage::

    python benchmarks/fit_novelty_calibration.py --shared-dir ../shared
    python benchmarks/fit_novelty_calibration.py --features /tmp/f.npz   # cache features

``--features`` keeps the per-answer features and vectors in a file (computed once: building
the atom tables of 15,832 answers takes minutes); a later run with the same file and data
reads them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from novelty_human import DEV_FILE, load, spearman  # noqa: E402

from creagraph.core.embeddings import DEFAULT_MODEL_NAME, default_embedder  # noqa: E402
from creagraph.core.io import atomic_write, sha256_file  # noqa: E402
from creagraph.tig.adapters import default_shared_dir  # noqa: E402
from creagraph.tig.atoms import OfflineExtractor  # noqa: E402
from creagraph.tig.brief import task_kind  # noqa: E402
from creagraph.tig.calibration import (  # noqa: E402
    FEATURE_VERSION,
    FEATURES,
    FORMAT,
    PROBE_RIDGES,
    PromptData,
    centred_unit,
    concept_distances,
    default_calibration_path,
    feature_matrix,
    fit_calibration,
    fit_kind_models,
    leave_one_prompt_out,
    select_probe_ridge,
)
from creagraph.tig.population import build_atom_tables  # noqa: E402
from creagraph.tig.score import ScoreConfig, idea_text, score_tables  # noqa: E402

#: The 1–5 scale of the collection's ratings (PROVENANCE.md).
RATING_SCALE = (1.0, 5.0)


def task_features(shared: Path, cache: Path | None) -> dict[str, dict[str, Any]]:
    """Per prompt: feature rows, ratings, "brief + answer" vectors, uncalibrated novelty,
    word counts, kind, response ids."""
    data_file = shared / DEV_FILE
    digest = sha256_file(data_file)
    if cache is not None and cache.exists():
        stored = np.load(cache, allow_pickle=False)
        if str(stored["digest"]) == digest and list(stored["features"]) == list(FEATURES) \
                and int(stored["feature_version"]) == FEATURE_VERSION:
            return {str(p): {"x": stored[f"x_{p}"], "y": stored[f"y_{p}"],
                             "v": stored[f"v_{p}"], "novelty": stored[f"n_{p}"],
                             "words": stored[f"w_{p}"], "kind": str(stored[f"k_{p}"]),
                             "ids": stored[f"i_{p}"]}
                    for p in stored["prompts"]}
        print(f"{cache}: computed from other data or features; recomputing", file=sys.stderr)
    responses, targets = load(data_file, None)
    embedder = default_embedder()
    start = time.perf_counter()
    tables = build_atom_tables(responses, OfflineExtractor(), embedder, show_progress=False)
    run = score_tables(tables, embedder, score_config=ScoreConfig(), show_progress=False)
    distances = concept_distances(responses, embedder)
    print(f"features of {len(responses)} answers in {time.perf_counter() - start:.1f} s",
          file=sys.stderr)
    by_task: dict[str, list[Any]] = {}
    for s in run.scores:
        by_task.setdefault(s.task_id, []).append(s)
    text = {r.response_id: r for r in responses}
    found = {}
    for task_id, scores in sorted(by_task.items()):
        first = text[scores[0].response_id]
        found[task_id] = {
            "x": feature_matrix(scores, distances),
            "y": np.array([targets[s.response_id] for s in scores]),
            "v": np.asarray(embedder.encode([idea_text(text[s.response_id]) for s in scores]),
                            dtype=np.float32),
            "novelty": np.array([s.novelty for s in scores]),
            "words": np.array([len(text[s.response_id].core_idea.split()) for s in scores]),
            "kind": task_kind(first.brief, first.family, first.kind),
            "ids": np.array([s.response_id for s in scores]),
        }
    if cache is not None:
        arrays: dict[str, Any] = {"digest": digest, "features": np.array(FEATURES),
                                  "feature_version": FEATURE_VERSION,
                                  "prompts": np.array(sorted(found))}
        for p, f in found.items():
            arrays |= {f"x_{p}": f["x"], f"y_{p}": f["y"], f"v_{p}": f["v"],
                       f"n_{p}": f["novelty"], f"w_{p}": f["words"], f"k_{p}": f["kind"],
                       f"i_{p}": f["ids"]}
        with atomic_write(cache, "wb", encoding=None) as handle:
            np.savez(handle, **arrays)
    return found


def prompt_data(tasks: dict[str, dict[str, Any]]) -> dict[str, PromptData]:
    """The fitting data of :mod:`creagraph.tig.calibration` from :func:`task_features`."""
    return {p: PromptData(t["kind"], t["x"], t["y"], t["v"]) for p, t in tasks.items()}


def lopo_table(tasks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per prompt: ρ of the calibration fitted on the other prompts, and the baselines."""
    predicted = leave_one_prompt_out(prompt_data(tasks))
    return [{"prompt": p, "kind": t["kind"], "n": len(t["y"]),
             "calibrated": spearman(predicted[p], t["y"]),
             "novelty": spearman(t["novelty"], t["y"]),
             "plain": spearman(t["x"][:, FEATURES.index("distance")], t["y"]),
             "concept": spearman(t["x"][:, FEATURES.index("concept_distance")], t["y"]),
             "words": spearman(t["words"].astype(float), t["y"])}
            for p, t in sorted(tasks.items())]


#: The ablation (name, feature columns, probe, probe trained on the held-out kind's prompts
#: only). Every variant is leave-one-prompt-out, penalty chosen inside the training prompts.
ABLATION: tuple[tuple[str, tuple[str, ...], bool, bool], ...] = (
    ("D + R + C, no probe (calibration v1)", FEATURES, False, False),
    ("probe alone", (), True, False),
    ("probe + D", ("distance",), True, False),
    ("probe + D + C (no graph feature)", ("distance", "concept_distance"), True, False),
    ("probe + D + R + C", FEATURES, True, False),
    ("uses: probe alone, same kind", (), True, True),
    ("uses: probe + D, same kind", ("distance",), True, True),
    ("uses: probe + D + C, same kind", ("distance", "concept_distance"), True, True),
    ("uses: probe + D + R + C, same kind (shipped)", FEATURES, True, True),
)


def ablation(tasks: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, float]]]:
    """ρ per held-out prompt of each :data:`ABLATION` variant (absent: no training prompt
    of the held-out prompt's kind)."""
    found = []
    for name, columns, probe, same_kind in ABLATION:
        cols = [FEATURES.index(c) for c in columns]
        rhos = {}
        for held, t in sorted(tasks.items()):
            train = [p for p in tasks if p != held
                     and (not same_kind or tasks[p]["kind"] == t["kind"])]
            if len(train) < 2:
                continue
            x = {p: tasks[p]["x"][:, cols] for p in train}
            y = {p: tasks[p]["y"] for p in train}
            v = {p: tasks[p]["v"] for p in train} if probe else None
            ridge = select_probe_ridge(x, y, v, PROBE_RIDGES) if v is not None else None
            model = fit_calibration(x, y, vectors=v, probe_ridge=ridge)
            predicted = model.rating(t["x"][:, cols], centred_unit(t["v"]) if probe else None)
            rhos[held] = spearman(predicted, t["y"])
        found.append((name, rhos))
    return found


def _means(rhos: dict[str, float], kinds: dict[str, str]) -> dict[str, float]:
    groups = {"all": list(rhos)} | {k: [p for p in rhos if kinds[p] == k]
                                    for k in sorted(set(kinds.values()))}
    return {g: statistics.fmean(rhos[p] for p in members) for g, members in groups.items()
            if members}


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = ("calibrated", "novelty", "plain", "concept", "words")
    print(f"{'prompt':<8} {'kind':<9} {'n':>6} " + " ".join(f"{c:>10}" for c in columns))
    for r in rows:
        print(f"{r['prompt']:<8} {r['kind']:<9} {r['n']:>6} "
              + " ".join(f"{r[c]:>10.3f}" for c in columns))
    groups = {"all": rows} | {k: [r for r in rows if r["kind"] == k]
                              for k in sorted({r["kind"] for r in rows})}
    for name, members in groups.items():
        print(f"{'mean ' + name:<18} {len(members):>2}p "
              + " ".join(f"{statistics.fmean(r[c] for r in members):>10.3f}" for c in columns))
    plain = statistics.fmean(r["plain"] for r in rows)
    calibrated = statistics.fmean(r["calibrated"] for r in rows)
    print(f"calibrated (LOPO) − plain distance: {calibrated - plain:+.3f} (target ≥ +0.03)")
    for name, column in (("semantic distance", "concept"), ("word count", "words")):
        beaten = [r["prompt"] for r in rows if r[column] > r["calibrated"]]
        print(f"prompts where {name} alone beats the calibrated score: "
              + (", ".join(beaten) if beaten else "none"))
    below = [r["prompt"] for r in rows if r["plain"] > r["calibrated"]]
    print("prompts where the plain distance beats the calibrated score: "
          + (", ".join(below) if below else "none"))


def print_ablation(tasks: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    kinds = {p: t["kind"] for p, t in tasks.items()}
    plain = _means({r["prompt"]: r["plain"] for r in rows}, kinds)
    print("ablation, leave-one-prompt-out (mean ρ; Δ = all − plain distance D):")
    prompts = sorted(tasks)
    print(f"  {'variant':<46} {'all':>6} {'Δ':>7} {'use':>6} {'inst.':>6}   "
          + " ".join(f"{p:>6}" for p in prompts))
    for name, rhos in [("plain distance D", {r["prompt"]: r["plain"] for r in rows})] \
            + ablation(tasks):
        means = _means(rhos, kinds)
        print(f"  {name:<46} {means.get('all', float('nan')):>6.3f} "
              f"{means.get('all', float('nan')) - plain['all']:>+7.3f} "
              f"{means.get('use', float('nan')):>6.3f} {means.get('instance', float('nan')):>6.3f}"
              "   " + " ".join(f"{rhos[p]:>6.3f}" if p in rhos else f"{'—':>6}"
                               for p in prompts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared-dir", type=Path, default=None)
    parser.add_argument("--features", type=Path, default=None,
                        help="cache of the per-answer features and vectors (.npz)")
    parser.add_argument("--out", type=Path, default=default_calibration_path(),
                        help="calibration file to write (default: the package's)")
    parser.add_argument("--no-ablation", action="store_true",
                        help="skip the ablation table")
    args = parser.parse_args()
    shared = args.shared_dir or default_shared_dir()
    cpu = time.process_time()
    tasks = task_features(shared, args.features)
    rows = lopo_table(tasks)
    print_table(rows)
    if not args.no_ablation:
        print_ablation(tasks, rows)
    models = fit_kind_models(prompt_data(tasks))
    config = ScoreConfig()
    dim = int(next(iter(tasks.values()))["v"].shape[1])
    record = {
        "format": FORMAT,
        "feature_version": FEATURE_VERSION,
        "features": list(FEATURES),
        "rating_scale": list(RATING_SCALE),
        "settings": {"match_threshold": config.match_threshold,
                     "neighbour_share": config.neighbour_share,
                     "embedder": DEFAULT_MODEL_NAME, "embedding_dim": dim,
                     "probe_text": "brief + answer (creagraph.tig.score.idea_text), unit, "
                                   "centred on the task's responses"},
        "models": {kind: model.to_dict() for kind, model in sorted(models.items())},
        "fitted_on": {"file": str(DEV_FILE), "sha256": sha256_file(shared / DEV_FILE),
                      "prompts": sorted(tasks),
                      "prompts_by_kind": {k: sorted(p for p, t in tasks.items()
                                                    if t["kind"] == k)
                                          for k in sorted({t["kind"] for t in tasks.values()})},
                      "n": int(sum(len(t["y"]) for t in tasks.values())),
                      "date": dt.date.today().isoformat()},
        "command": "python benchmarks/fit_novelty_calibration.py --shared-dir ../shared",
        "model": "ŷ = intercept + Σ coef·feature + probe·(unit vector − task mean); per task "
                 "kind; ridge on features, vectors and ratings centred per prompt, coef ≥ 0 "
                 "(creagraph.tig.calibration)",
        "lopo_spearman": {r["prompt"]: {c: round(r[c], 4) for c in
                                        ("calibrated", "novelty", "plain", "words")}
                          for r in rows},
        "lopo_mean": {c: round(statistics.fmean(r[c] for r in rows), 4)
                      for c in ("calibrated", "novelty", "plain", "words")},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out) as handle:
        handle.write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    for kind, model in sorted(models.items()):
        print(f"fitted {kind}: coef {[round(c, 4) for c in model.coef]} intercept "
              f"{model.intercept:.4f}"
              + (f", probe λ {model.probe_ridge} |w| {np.linalg.norm(model.probe):.3f}"
                 if model.probe is not None else ", no probe"))
    print(f"→ {args.out} ({time.process_time() - cpu:.1f} CPU-s)")


if __name__ == "__main__":
    main()
