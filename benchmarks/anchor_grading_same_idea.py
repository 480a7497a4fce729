"""When two anchors name one idea: the figures behind ``PARAPHRASE_SIMILARITY``.

For every group of graded anchors (one population, one tree: a task of one round) in
``benchmarks/anchor_grading_issue27{e,f}.csv``, the leading label of each anchor (the
first of ``anchor_labels``) is embedded with all-MiniLM-L6-v2. A pair is *one idea* when
the grader wrote "same idea as rank N" for the lower anchor, *two ideas* when both
anchors were graded useful (a reader kept both). The script prints every one-idea pair
and the two-idea pairs above 0.5, highest first, then the lowest one-idea and the highest
two-idea cosine. ``creagraph.tig.anchors.PARAPHRASE_SIMILARITY`` must lie between them
(issue 27, session 8: "lack of relevant skills" and "necessary skills", cosine ~0.7,
below the synonym threshold τ = 0.8, named one idea twice).

Usage::

    python benchmarks/anchor_grading_same_idea.py
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from creagraph.core.embeddings import default_embedder
from creagraph.tig.anchors import PARAPHRASE_SIMILARITY, SAME_IDEA_SIMILARITY

HERE = Path(__file__).resolve().parent
GRADINGS = ("anchor_grading_issue27e.csv", "anchor_grading_issue27f.csv")
_SAME = re.compile(r"same idea as rank (\d+)")


def main() -> None:
    groups: dict[tuple[str, ...], dict[int, dict[str, str]]] = defaultdict(dict)
    for name in GRADINGS:
        with open(HERE / name, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                key = (name, row["population"], row["set"], row["round"], row["tree"],
                       row["task_id"])
                groups[key][int(row["rank"])] = row
    pairs: dict[tuple[str, str], str] = {}  # (lower lead, higher lead) -> verdict
    for rows in groups.values():
        for rank, row in rows.items():
            lead = row["anchor_labels"].split(" | ")[0]
            same = _SAME.search(row["reason"])
            if same and int(same.group(1)) in rows:
                other = rows[int(same.group(1))]["anchor_labels"].split(" | ")[0]
                pairs[(lead, other)] = "one idea"
            elif row["useful"] == "yes":
                for higher in range(1, rank):
                    if higher in rows and rows[higher]["useful"] == "yes":
                        other = rows[higher]["anchor_labels"].split(" | ")[0]
                        pairs.setdefault((lead, other), "two ideas")
    words = sorted({w for pair in pairs for w in pair})
    vectors = np.asarray(default_embedder().encode(words), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    at = {w: i for i, w in enumerate(words)}
    rows_out = sorted(((float(vectors[at[a]] @ vectors[at[b]]), v, a, b)
                       for (a, b), v in pairs.items()), reverse=True)
    print(f"{'cosine':>6}  verdict    lower anchor's lead  /  higher anchor's lead")
    for cos, verdict, a, b in rows_out:
        if verdict == "one idea" or cos >= 0.5:
            print(f"{cos:6.3f}  {verdict:9}  {a}  /  {b}")
    one = [c for c, v, *_ in rows_out if v == "one idea"]
    two = [c for c, v, *_ in rows_out if v == "two ideas"]
    print(f"\none-idea pairs: {len(one)}, lowest cosine {min(one):.3f}; "
          f"two-idea pairs: {len(two)}, highest cosine {max(two):.3f}")
    caught = sum(c >= PARAPHRASE_SIMILARITY for c in one)
    lost = sum(c >= PARAPHRASE_SIMILARITY for c in two)
    print(f"PARAPHRASE_SIMILARITY = {PARAPHRASE_SIMILARITY} (τ = {SAME_IDEA_SIMILARITY}): "
          f"{caught} / {len(one)} one-idea pairs and {lost} / {len(two)} two-idea pairs at "
          "or above it; the rule merges them only when the lower cluster's answers are "
          "mostly the higher one's (SHARED_ANSWERS; not in the graded rows)")


if __name__ == "__main__":
    main()
