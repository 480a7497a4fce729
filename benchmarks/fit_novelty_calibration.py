"""Fit the optional novelty calibration on the human-rated prompts (SPEC §4.10; issue 27).

Data: ``../shared/external/aut-human/aut_human_dev.csv`` only (nine Alternative Uses /
Instances prompts with human originality ratings; see its PROVENANCE.md), read and scored
exactly as ``benchmarks/novelty_human.py`` does (one task per prompt, participants hashed
into 10 pseudo-models, ``tig score`` with the shipped settings). The features are those of
:mod:`creagraph.tig.calibration` (distance, rarity, concept distance); the model is its
within-prompt non-negative ridge.

Printed: per prompt, Spearman's ρ with the human rating of the calibrated score under
leave-one-prompt-out (fitted on the other eight prompts, applied to the held-out one), beside
the uncalibrated ``tig score`` novelty, the plain-distance baseline, semantic distance from
the brief's concept and word count; then the means per kind and over prompts. Then the model
fitted on all nine prompts is written (``--out``, default the package's data file) with
this command, the data file's digest and the LOPO figures.

Usage::

    python benchmarks/fit_novelty_calibration.py --shared-dir ../shared
    python benchmarks/fit_novelty_calibration.py --features /tmp/f.npz   # cache features

``--features`` keeps the per-answer features in a file (computed once: building the atom
tables of 15,832 answers takes minutes); a later run with the same file and data reads them.
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
    concept_distances,
    default_calibration_path,
    feature_matrix,
    fit_calibration,
    predict_rating,
)
from creagraph.tig.population import build_atom_tables  # noqa: E402
from creagraph.tig.score import ScoreConfig, score_tables  # noqa: E402

#: The 1–5 scale of the collection's ratings (PROVENANCE.md).
RATING_SCALE = (1.0, 5.0)


def task_features(shared: Path, cache: Path | None) -> dict[str, dict[str, Any]]:
    """Per prompt: feature rows, ratings, uncalibrated novelty, word counts, kind."""
    data_file = shared / DEV_FILE
    digest = sha256_file(data_file)
    if cache is not None and cache.exists():
        stored = np.load(cache, allow_pickle=False)
        if str(stored["digest"]) == digest and list(stored["features"]) == list(FEATURES) \
                and int(stored["feature_version"]) == FEATURE_VERSION:
            return {str(p): {"x": stored[f"x_{p}"], "y": stored[f"y_{p}"],
                             "novelty": stored[f"n_{p}"], "words": stored[f"w_{p}"],
                             "kind": str(stored[f"k_{p}"])}
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
            "novelty": np.array([s.novelty for s in scores]),
            "words": np.array([len(text[s.response_id].core_idea.split()) for s in scores]),
            "kind": task_kind(first.brief, first.family, first.kind),
        }
    if cache is not None:
        arrays: dict[str, Any] = {"digest": digest, "features": np.array(FEATURES),
                                  "feature_version": FEATURE_VERSION,
                                  "prompts": np.array(sorted(found))}
        for p, f in found.items():
            arrays |= {f"x_{p}": f["x"], f"y_{p}": f["y"], f"n_{p}": f["novelty"],
                       f"w_{p}": f["words"], f"k_{p}": f["kind"]}
        with atomic_write(cache, "wb", encoding=None) as handle:
            np.savez(handle, **arrays)
    return found


def leave_one_prompt_out(tasks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per prompt: ρ of the calibration fitted on the other prompts, and the baselines."""
    rows = []
    for held in sorted(tasks):
        others = [p for p in tasks if p != held]
        coef, intercept = fit_calibration({p: tasks[p]["x"] for p in others},
                                          {p: tasks[p]["y"] for p in others})
        t = tasks[held]
        rows.append({
            "prompt": held, "kind": t["kind"], "n": len(t["y"]),
            "calibrated": spearman(predict_rating(t["x"], coef, intercept), t["y"]),
            "novelty": spearman(t["novelty"], t["y"]),
            "plain": spearman(t["x"][:, FEATURES.index("distance")], t["y"]),
            "concept": spearman(t["x"][:, FEATURES.index("concept_distance")], t["y"]),
            "words": spearman(t["words"].astype(float), t["y"]),
            "coef": [round(float(c), 4) for c in coef],
        })
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = ("calibrated", "novelty", "plain", "concept", "words")
    print(f"{'prompt':<8} {'kind':<9} {'n':>6} " + " ".join(f"{c:>10}" for c in columns)
          + "  coefficients (" + ", ".join(FEATURES) + ")")
    for r in rows:
        print(f"{r['prompt']:<8} {r['kind']:<9} {r['n']:>6} "
              + " ".join(f"{r[c]:>10.3f}" for c in columns) + f"  {r['coef']}")
    groups = {"all": rows} | {k: [r for r in rows if r["kind"] == k]
                              for k in sorted({r["kind"] for r in rows})}
    for name, members in groups.items():
        print(f"{'mean ' + name:<18} {len(members):>2}p "
              + " ".join(f"{statistics.fmean(r[c] for r in members):>10.3f}" for c in columns))
    beaten = [r["prompt"] for r in rows if r["words"] > r["calibrated"]]
    print("prompts where word count alone beats the calibrated score: "
          + (", ".join(beaten) if beaten else "none"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared-dir", type=Path, default=None)
    parser.add_argument("--features", type=Path, default=None,
                        help="cache of the per-answer features (.npz)")
    parser.add_argument("--out", type=Path, default=default_calibration_path(),
                        help="calibration file to write (default: the package's)")
    args = parser.parse_args()
    shared = args.shared_dir or default_shared_dir()
    tasks = task_features(shared, args.features)
    rows = leave_one_prompt_out(tasks)
    print_table(rows)
    coef, intercept = fit_calibration({p: t["x"] for p, t in tasks.items()},
                                      {p: t["y"] for p, t in tasks.items()})
    config = ScoreConfig()
    record = {
        "format": FORMAT,
        "feature_version": FEATURE_VERSION,
        "features": list(FEATURES),
        "coef": [round(float(c), 6) for c in coef],
        "intercept": round(intercept, 6),
        "rating_scale": list(RATING_SCALE),
        "kinds": sorted({t["kind"] for t in tasks.values()}),
        "settings": {"match_threshold": config.match_threshold,
                     "neighbour_share": config.neighbour_share,
                     "embedder": DEFAULT_MODEL_NAME},
        "fitted_on": {"file": str(DEV_FILE), "sha256": sha256_file(shared / DEV_FILE),
                      "prompts": sorted(tasks), "n": int(sum(len(t["y"]) for t in tasks.values())),
                      "date": dt.date.today().isoformat()},
        "command": "python benchmarks/fit_novelty_calibration.py --shared-dir ../shared",
        "model": "ŷ = intercept + Σ coef·feature; non-negative ridge (alpha 1) on features and "
                 "ratings centred per prompt (creagraph.tig.calibration)",
        "lopo_spearman": {r["prompt"]: {c: round(r[c], 4) for c in
                                        ("calibrated", "novelty", "plain", "words")}
                          for r in rows},
        "lopo_mean": {c: round(statistics.fmean(r[c] for r in rows), 4)
                      for c in ("calibrated", "novelty", "plain", "words")},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out) as handle:
        handle.write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"fitted on all {len(tasks)} prompts: coef {record['coef']} intercept "
          f"{record['intercept']} → {args.out}")


if __name__ == "__main__":
    main()
