"""Where a label's word restates a brief word: the figures behind SYNONYM_SIMILARITY.

For every graded anchor of issue 27 (``benchmarks/anchor_grading_issue27{b,c,d}.csv``),
each content word of its labels (no function, generic or brief word, no number) is
embedded with all-MiniLM-L6-v2 beside the brief's content words and the bases of the
brief's superlatives ("safe" of "safest"); the script prints the highest cosine of each
word, its brief word, the grade and the grader's reason, highest first, and the largest
cosine of a word in an anchor graded useful. ``creagraph.tig.anchors.SYNONYM_SIMILARITY``
must lie above that (a word of a kept idea is no synonym) and below the words graded as
restating the brief.

With ``--single`` (issue 27, session 9) it prints instead, for every graded NoveltyBench
anchor (``anchor_grading_issue27{,b,c,d,e,f}.csv``; not 27g, held out) led by a label of
a single content word, that word's highest cosine to a brief word, highest first, and
where ``SINGLE_WORD_SIMILARITY`` falls between the words graded restating and the words
of kept ideas.

Usage::

    python benchmarks/anchor_grading_synonyms.py [--shared-dir ../shared] [--single]
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.core.embeddings import default_embedder
from creagraph.tig.anchors import (
    CRITERION_SIMILARITY,
    SINGLE_WORD_SIMILARITY,
    SYNONYM_SIMILARITY,
    _brief_anchor_words,
    _is_generic,
    _label_words,
)
from creagraph.tig.brief import brief_terms, matches_brief_term

HERE = Path(__file__).resolve().parent
GRADINGS = ("anchor_grading_issue27b.csv", "anchor_grading_issue27c.csv",
            "anchor_grading_issue27d.csv")
SINGLE_GRADINGS = ("anchor_grading_issue27.csv", *GRADINGS, "anchor_grading_issue27e.csv",
                   "anchor_grading_issue27f.csv")


def single_words(briefs: dict[str, str], embedder: Any) -> None:
    """The ``--single`` table: one-word leading labels against the brief's words."""
    rows: dict[tuple[str, str], tuple[float, str, str, str]] = {}
    for name in SINGLE_GRADINGS:
        with (HERE / name).open(encoding="utf-8") as handle:
            for grade in csv.DictReader(handle):
                task = grade["task_id"]
                if task not in briefs or not grade.get("anchor_labels"):
                    continue
                terms = brief_terms(briefs[task], instructions=True)
                content = [w for w in _label_words(grade["anchor_labels"].split(" | ")[0])
                           if not w[0].isdigit() and not _is_generic(w)
                           and not matches_brief_term(w, terms)]
                words, _ = _brief_anchor_words(briefs[task])
                if len(content) != 1 or not words:
                    continue
                vectors = np.asarray(embedder.encode([content[0], *words]), dtype=np.float64)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                sims = vectors[1:] @ vectors[0]
                best = int(np.argmax(sims))
                rows[(task, content[0])] = (float(sims[best]), words[best], grade["useful"],
                                            grade["reason"][:60])
    print(f"{'cosine':>7} {'word':<14} {'brief word':<12} useful  reason")
    for (task, word), (cos, brief_word, useful, reason) in sorted(
            rows.items(), key=lambda item: -item[1][0])[:20]:
        mark = "  <- SINGLE_WORD_SIMILARITY" if cos >= SINGLE_WORD_SIMILARITY > cos - 0.02 \
            else ""
        print(f"{cos:7.3f} {word:<14} {brief_word:<12} {useful:<7} {task}: {reason}{mark}")
    kept = [c for c, _, useful, _ in rows.values() if useful == "yes"]
    dropped = [(c, u) for c, _, u, _ in rows.values() if c >= SINGLE_WORD_SIMILARITY]
    print(f"\n{len(rows)} one-word leading labels; SINGLE_WORD_SIMILARITY "
          f"{SINGLE_WORD_SIMILARITY}: at or above it {sum(u == 'no' for _, u in dropped)} "
          f"graded not useful, {sum(u == 'yes' for _, u in dropped)} useful; highest kept "
          f"idea {max(kept):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared-dir", default=str(HERE.parent.parent / "shared"))
    parser.add_argument("--single", action="store_true",
                        help="one-word leading labels (SINGLE_WORD_SIMILARITY)")
    args = parser.parse_args()
    prompts = Path(args.shared_dir) / "external/novelty-bench/repo/data/curated.jsonl"
    briefs = {row["id"]: row["prompt"] for row in map(json.loads, prompts.open())}
    embedder = default_embedder()
    if args.single:
        single_words(briefs, embedder)
        return
    rows: dict[tuple[str, str], tuple[float, str, str, str]] = {}
    for name in GRADINGS:
        with (HERE / name).open(encoding="utf-8") as handle:
            for grade in csv.DictReader(handle):
                task = grade["task_id"]
                brief = briefs.get(task) or f"List alternative uses for a {task[4:]}."
                terms = brief_terms(brief, instructions=True)
                words, criteria = _brief_anchor_words(brief)
                for label in grade["anchor_labels"].split(" | "):
                    for word in _label_words(label):
                        if (word[0].isdigit() or _is_generic(word)
                                or matches_brief_term(word, terms) or (task, word) in rows):
                            continue
                        vectors = np.asarray(embedder.encode([word, *words, *criteria]),
                                             dtype=np.float64)
                        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                        sims = vectors[1:] @ vectors[0]
                        best = int(np.argmax(sims))
                        limit = SYNONYM_SIMILARITY if best < len(words) \
                            else CRITERION_SIMILARITY
                        rows[(task, word)] = (float(sims[best] - limit),
                                              [*words, *criteria][best], grade["useful"],
                                              grade["reason"][:70])
    print(f"{'margin':>7} {'word':<14} {'brief word':<12} useful  reason")
    for (task, word), (margin, brief_word, useful, reason) in sorted(
            rows.items(), key=lambda item: -item[1][0])[:40]:
        print(f"{margin:+7.3f} {word:<14} {brief_word:<12} {useful:<7} {task}: {reason}")
    kept = [m for m, _, useful, _ in rows.values() if useful == "yes"]
    print(f"\n{len(rows)} words; margin = cosine − its threshold (SYNONYM_SIMILARITY "
          f"{SYNONYM_SIMILARITY} for a brief word, CRITERION_SIMILARITY "
          f"{CRITERION_SIMILARITY} for a superlative's base)")
    print(f"largest margin of a word in an anchor graded useful: {max(kept):+.3f} "
          f"(must be < 0)")


if __name__ == "__main__":
    main()
