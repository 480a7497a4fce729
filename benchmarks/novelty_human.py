"""Does ``creagraph tig score`` rank ideas the way people do? (SPEC §4.10; information only.)

Data: ``../shared/external/aut-human/aut_human_dev.csv`` (see its PROVENANCE.md): 15,832
Alternative Uses / Instances answers to nine prompts with human originality ratings
(``target``, mean over raters, Organisciak et al. 2023). Only this dev file is read; the
collection's other prompts are kept apart for independent checks.

For each prompt, the answers form one task (brief = the question, Core Idea = the answer);
participants are hashed into 10 pseudo-models (``sha1(participant) mod 10``), so each answer
is judged against the answers of the other nine groups, exactly as ``tig score`` judges a
model's response against the other models'. Printed per prompt and as the mean over
prompts: Spearman's ρ between the human rating and

* ``tig score`` novelty (offline atom extractor, cached all-MiniLM-L6-v2);
* baseline *semantic distance*: 1 − cos(answer, prompt word);
* baseline *kNN-10*: 1 − mean cosine of the answer to its 10 nearest other answers of
  the prompt;

all computed in the same run from the same embedder. Also printed: wall time of
``tig score`` and the share of answers without atoms beyond the brief.

Usage::

    python benchmarks/novelty_human.py                 # all nine prompts (a few minutes)
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

import numpy as np

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")

from creagraph.core.embeddings import default_embedder  # noqa: E402
from creagraph.tig.adapters import default_shared_dir  # noqa: E402
from creagraph.tig.schema import Response  # noqa: E402
from creagraph.tig.score import ScoreConfig, knn_distance, score_responses  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared-dir", type=Path, default=None)
    parser.add_argument("--prompts", default=None, help="comma-separated prompt words")
    parser.add_argument("--neighbour-share", type=float, default=ScoreConfig.neighbour_share)
    parser.add_argument("--cliche-weight", type=float, default=ScoreConfig.cliche_weight)
    args = parser.parse_args()
    shared = args.shared_dir or default_shared_dir()
    prompts = {p.strip() for p in args.prompts.split(",")} if args.prompts else None
    responses, targets = load(shared / DEV_FILE, prompts)
    embedder = default_embedder()

    start = time.perf_counter()
    run = score_responses(responses, embedder=embedder,
                          score_config=ScoreConfig(neighbour_share=args.neighbour_share,
                                                   cliche_weight=args.cliche_weight),
                          show_progress=False)
    seconds = time.perf_counter() - start
    novelty = {s.response_id: s.novelty for s in run.scores}
    no_atoms = run.n_without_atoms

    by_task: dict[str, list[Response]] = {}
    for r in responses:
        by_task.setdefault(r.task_id, []).append(r)
    rows = []
    for task_id, items in sorted(by_task.items()):
        y = np.array([targets[r.response_id] for r in items])
        answers = embedder.encode([r.core_idea for r in items])
        (word,) = embedder.encode([task_id])
        semantic = 1.0 - answers @ word
        sims = answers @ answers.T
        np.fill_diagonal(sims, -np.inf)
        k = min(10, len(items) - 1)
        knn = 1.0 - np.sort(sims, axis=1)[:, -k:].mean(axis=1)
        ours = np.array([novelty[r.response_id] for r in items])
        rows.append((task_id, len(items), spearman(ours, y), spearman(semantic, y),
                     spearman(knn, y)))
    # knn_distance is the same blockwise routine tig score uses; keep it exercised here
    assert knn_distance(answers[:1], answers[1:2], 1)[0].shape == (1,)

    print(f"aut-human dev: {len(responses)} answers, {len(rows)} prompts, "
          f"{N_GROUPS} pseudo-models; tig score {seconds:.1f} s "
          f"({len(responses) / seconds:.0f} answers/s); without atoms beyond the brief: "
          f"{no_atoms} ({no_atoms / len(run.scores):.2%})")
    print(f"{'prompt':<8} {'n':>6} {'tig score':>10} {'sem.dist':>9} {'kNN-10':>7}")
    for task_id, n, ours, semantic, knn in rows:
        print(f"{task_id:<8} {n:>6} {ours:>10.3f} {semantic:>9.3f} {knn:>7.3f}")
    means = [statistics.fmean(r[i] for r in rows) for i in (2, 3, 4)]
    print(f"{'mean':<8} {'':>6} {means[0]:>10.3f} {means[1]:>9.3f} {means[2]:>7.3f}")
    print(f"tig score − semantic distance: {means[0] - means[1]:+.3f}")
    for warning in run.warnings:
        print(f"warning: {warning}")


if __name__ == "__main__":
    main()
