"""Does ``creagraph tig score`` rank ideas the way people do? (SPEC §4.10; information only.)

Data: ``../shared/external/aut-human/aut_human_dev.csv`` (see its PROVENANCE.md): 15,832
Alternative Uses / Instances answers to nine prompts with human originality ratings
(``target``, mean over raters, Organisciak et al. 2023). Only this dev file is read; the
collection's other prompts are kept apart for independent checks.

For each prompt, the answers form one task (brief = the question, the answer = the whole
idea); participants are hashed into 10 pseudo-models (``sha1(participant) mod 10``), so each
answer is judged against the answers of the other nine groups, exactly as ``tig score``
judges a model's response against the other models'. Printed per prompt, with its task kind,
as Spearman's ρ with the human rating:

* ``default``: ``tig score`` novelty with the shipped settings (τ = 0.8, α = 0.5) — chosen
  on these same prompts, so an in-sample figure;
* ``LOPO``: leave-one-prompt-out — for each prompt, τ ∈ {0.75, 0.8, 0.85} and α ∈ {0.25,
  0.5, 0.75} are chosen on the other eight prompts and the held-out prompt is scored with
  that choice (the honest figure these prompts allow);
* ``calib.``: the optional calibration (:mod:`creagraph.tig.calibration`: per kind, a
  ridge over D, R, concept distance and — for uses — a probe on the answer's "brief +
  answer" vector) under leave-one-prompt-out: fitted on the other eight prompts' answers
  (probe penalty chosen inside them), applied to the held-out prompt
  (``benchmarks/fit_novelty_calibration.py`` fits the shipped one on all nine);
* ``plain``: the plain-distance baseline ``D`` (the brief + answer embedded, distance to the
  nearest 15 % of the other groups' answers — no atoms, graph or clusters);
* ``sem.dist``: 1 − cos(answer, prompt word);
* ``words``: the answer's word count;

then the means per kind and over prompts, all from the same embedder in the same run.

Usage::

    python benchmarks/novelty_human.py                 # all nine prompts
    python benchmarks/novelty_human.py --prompts rope,shoe
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

from creagraph.core.embeddings import default_embedder  # noqa: E402
from creagraph.tig.adapters import default_shared_dir  # noqa: E402
from creagraph.tig.atoms import OfflineExtractor  # noqa: E402
from creagraph.tig.brief import task_kind  # noqa: E402
from creagraph.tig.calibration import (  # noqa: E402
    PromptData,
    concept_distances,
    feature_matrix,
    leave_one_prompt_out,
)
from creagraph.tig.population import build_atom_tables  # noqa: E402
from creagraph.tig.schema import Response  # noqa: E402
from creagraph.tig.score import ScoreConfig, idea_novelty, idea_text, score_tables  # noqa: E402

DEV_FILE = Path("external") / "aut-human" / "aut_human_dev.csv"
N_GROUPS = 10


def load(path: Path, prompts: set[str] | None) -> tuple[list[Response], dict[str, float]]:
    """Responses (task = prompt, model = participant group) and human targets by id."""
    responses: list[Response] = []
    targets: dict[str, float] = {}
    samples: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            prompt = row["prompt"].strip()
            if prompts is not None and prompt not in prompts:
                continue
            text = (row["response"] or "").strip()
            if not text:
                continue
            try:
                target = float(row["target"])
            except ValueError:
                sys.exit(f"{path}:{line}: field 'target' is not a number: {row['target']!r}")
            group = int(hashlib.sha1(row["participant"].encode()).hexdigest(), 16) % N_GROUPS
            model = f"group-{group}"
            sample = samples.get((prompt, model), 0)
            samples[(prompt, model)] = sample + 1
            response = Response(task_id=prompt, brief=row["question"].strip(), model=model,
                                sample=sample, core_idea=text, family=row["type"],
                                response_id=f"{prompt}|{row['id']}")
            responses.append(response)
            targets[response.response_id] = target
    return responses, targets


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


TAUS = (0.75, 0.8, 0.85)
ALPHAS = (0.25, 0.5, 0.75)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared-dir", type=Path, default=None)
    parser.add_argument("--prompts", default=None, help="comma-separated prompt words")
    args = parser.parse_args()
    shared = args.shared_dir or default_shared_dir()
    prompts = {p.strip() for p in args.prompts.split(",")} if args.prompts else None
    responses, targets = load(shared / DEV_FILE, prompts)
    embedder = default_embedder()

    start = time.perf_counter()
    tables = build_atom_tables(responses, OfflineExtractor(), embedder, show_progress=False)
    build_seconds = time.perf_counter() - start
    default = ScoreConfig()
    runs = {}
    seconds = {}
    for tau in TAUS:
        start = time.perf_counter()
        runs[tau] = score_tables(tables, embedder,
                                 score_config=ScoreConfig(match_threshold=tau),
                                 show_progress=False)
        seconds[tau] = time.perf_counter() - start

    by_task: dict[str, list[Response]] = {}
    for r in responses:
        by_task.setdefault(r.task_id, []).append(r)
    tasks = sorted(by_task)
    # ρ[task][(τ, α)] and the baselines per task
    grid: dict[str, dict[tuple[float, float], float]] = {t: {} for t in tasks}
    base: dict[str, dict[str, Any]] = {}
    concept = concept_distances(responses, embedder)
    calibration_data: dict[str, PromptData] = {}
    for tau, run in runs.items():
        scores = {s.response_id: s for s in run.scores}
        for task_id in tasks:
            items = by_task[task_id]
            y = np.array([targets[r.response_id] for r in items])
            rarity = np.array([scores[r.response_id].rarity for r in items], dtype=float)
            distance = np.array([scores[r.response_id].distance for r in items])
            for alpha in ALPHAS:
                grid[task_id][(tau, alpha)] = spearman(
                    np.asarray(idea_novelty(rarity, distance, alpha)), y)
            if tau == default.match_threshold:
                calibration_data[task_id] = PromptData(
                    task_kind(items[0].brief, items[0].family),
                    feature_matrix([scores[r.response_id] for r in items], concept), y,
                    np.asarray(embedder.encode([idea_text(r) for r in items])))
                answers = embedder.encode([r.core_idea for r in items])
                (word,) = embedder.encode([task_id])
                base[task_id] = {
                    "plain": spearman(distance, y),
                    "sem.dist": spearman(1.0 - answers @ word, y),
                    "words": spearman(np.array([len(r.core_idea.split()) for r in items],
                                               dtype=float), y),
                    "kind": task_kind(items[0].brief, items[0].family),
                    "n": len(items),
                    "matched": float(np.mean([scores[r.response_id].matched["n_responses"] > 0
                                              for r in items])),
                }
    calibrated_ratings = leave_one_prompt_out(calibration_data) if len(tasks) > 1 else {}
    rows = []
    for task_id in tasks:
        others = [t for t in tasks if t != task_id] or [task_id]
        chosen = max(grid[task_id], key=lambda c: (statistics.fmean(grid[t][c] for t in others),
                                                   c == (default.match_threshold,
                                                         default.rarity_weight)))
        b = base[task_id]
        y = calibration_data[task_id].ratings
        rows.append({"calibrated": (spearman(calibrated_ratings[task_id], y) if calibrated_ratings
                                    else float("nan")),
                     "task": task_id, "kind": b["kind"], "n": b["n"],
                     "default": grid[task_id][(default.match_threshold, default.rarity_weight)],
                     "lopo": grid[task_id][chosen], "chosen": chosen,
                     "plain": b["plain"], "sem.dist": b["sem.dist"], "words": b["words"],
                     "matched": b["matched"]})

    print(f"aut-human dev: {len(responses)} answers, {len(tasks)} prompts, {N_GROUPS} "
          f"pseudo-models; tables {build_seconds:.1f} s; tig score at τ = 0.8: "
          f"{seconds[default.match_threshold]:.1f} s "
          f"({len(responses) / seconds[default.match_threshold]:.0f} answers/s)")
    header = (f"{'prompt':<8} {'kind':<9} {'n':>6} {'default':>8} {'LOPO':>7} {'(τ, α)':>12} "
              f"{'calib.':>7} {'plain':>7} {'sem.dist':>9} {'words':>7} {'matched':>8}")
    print(header)
    for r in rows:
        print(f"{r['task']:<8} {r['kind']:<9} {r['n']:>6} {r['default']:>8.3f} {r['lopo']:>7.3f} "
              f"{str(r['chosen']):>12} {r['calibrated']:>7.3f} {r['plain']:>7.3f} "
              f"{r['sem.dist']:>9.3f} "
              f"{r['words']:>7.3f} {r['matched']:>8.1%}")
    groups = {"all": rows} | {k: [r for r in rows if r["kind"] == k]
                              for k in sorted({r["kind"] for r in rows})}
    for name, members in groups.items():
        means = {c: statistics.fmean(r[c] for r in members)
                 for c in ("default", "lopo", "calibrated", "plain", "sem.dist", "words")}
        print(f"{'mean ' + name:<18} {len(members):>3}p {means['default']:>8.3f} "
              f"{means['lopo']:>7.3f} {'':>12} {means['calibrated']:>7.3f} {means['plain']:>7.3f} "
              f"{means['sem.dist']:>9.3f} "
              f"{means['words']:>7.3f}")
    lopo = statistics.fmean(r["lopo"] for r in rows)
    plain = statistics.fmean(r["plain"] for r in rows)
    print(f"LOPO − plain distance: {lopo - plain:+.3f} (target ≥ +0.03 on held-out prompts); "
          f"LOPO mean {lopo:.3f} (target ≥ 0.45)")
    calibrated = statistics.fmean(r["calibrated"] for r in rows)
    print(f"calibrated (LOPO) − plain distance: {calibrated - plain:+.3f}; calibrated mean "
          f"{calibrated:.3f}")
    for name, column in (("LOPO", "lopo"), ("calibrated", "calibrated")):
        worst = [r["task"] for r in rows if r[column] < r["sem.dist"]]
        print(f"prompts where {name} is below semantic distance: "
              + (", ".join(worst) if worst else "none"))
        wordy = [r["task"] for r in rows if r["words"] > r[column]]
        print(f"prompts where word count alone beats {name}: "
              + (", ".join(wordy) if wordy else "none"))


if __name__ == "__main__":
    main()
