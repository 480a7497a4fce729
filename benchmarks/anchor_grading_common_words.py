"""Words common to the answers of many open prompts: the data behind COMMON_WORD_SHARE.

A label whose words the models write in answer to almost any prompt ("experience",
"choice", "challenging", "love") names no idea of *this* prompt (issue 27, session 9:
specificity from the data). The background is the NoveltyBench curated generations in
the shared folder (100 prompts x 24 models x 10 samples, whole generations): a prompt
*uses* a word when at least ``MIN_SHARE`` (0.5 %) of its generations hold it.

``build`` writes ``creagraph/tig/data/open_prompt_words.json``: every word used by at
least ``--min-prompts`` prompts, with the prompts that use it (a bit mask over the listed
prompt ids), so that :func:`creagraph.tig.anchors.common_words` can leave a prompt's own
population out of its background. ``measure`` (the default) prints, for the anchors graded
in ``benchmarks/anchor_grading_issue27{,b,c,d,e,f}.csv`` (NoveltyBench rows; not 27g, whose
held-out rows were graded to test the rule, not to set it), the share of the *other*
prompts using each content word of the leading label, and how many labels graded useful
and not useful a threshold on the least common content word would remove.

Usage::

    python benchmarks/anchor_grading_common_words.py build [--shared-dir ../shared]
    python benchmarks/anchor_grading_common_words.py measure [--shared-dir ../shared]
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

from creagraph.core.io import atomic_write
from creagraph.tig.adapters import load_noveltybench_curated
from creagraph.tig.anchors import COMMON_WORD_SHARE, _is_generic, _label_words
from creagraph.tig.brief import _WORD, brief_terms, matches_brief_term

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "creagraph" / "tig" / "data" / "open_prompt_words.json"
GRADINGS = ("anchor_grading_issue27.csv", "anchor_grading_issue27b.csv",
            "anchor_grading_issue27c.csv", "anchor_grading_issue27d.csv",
            "anchor_grading_issue27e.csv", "anchor_grading_issue27f.csv")
#: A prompt uses a word when at least this share of its generations hold it.
MIN_SHARE = 0.005


def prompt_words(shared_dir: str) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Prompt id -> the words its generations use (:data:`MIN_SHARE`), and id -> brief."""
    texts: dict[str, list[str]] = defaultdict(list)
    briefs: dict[str, str] = {}
    for response in load_noveltybench_curated(shared_dir, core_idea="first_sentence"):
        texts[response.task_id].append(response.visual_description)
        briefs[response.task_id] = response.brief
    used: dict[str, set[str]] = {}
    for task, generations in texts.items():
        counts: Counter[str] = Counter()
        for text in generations:
            counts.update({w.casefold() for w in _WORD.findall(text)})
        used[task] = {w for w, n in counts.items() if n >= MIN_SHARE * len(generations)}
    return used, briefs


def _order(task: str) -> tuple[int, str]:
    tail = task.rsplit("-", 1)[-1]
    return (int(tail), task) if tail.isdigit() else (10**9, task)


def build(shared_dir: str, min_prompts: int) -> None:
    used, _ = prompt_words(shared_dir)
    prompts = sorted(used, key=_order)
    counts: Counter[str] = Counter(w for words in used.values() for w in words)
    words = {}
    for word in sorted(w for w, n in counts.items() if n >= min_prompts):
        mask = sum(1 << i for i, task in enumerate(prompts) if word in used[task])
        words[word] = format(mask, "x")
    record = {
        "description": "Words the NoveltyBench curated generations use across prompts "
                       "(issue 27, session 9): a prompt uses a word when at least "
                       f"{MIN_SHARE} of its generations hold it; 'words' maps each word "
                       f"used by at least {min_prompts} prompts to a hexadecimal bit mask "
                       "over 'prompts' (bit i: prompts[i] uses it).",
        "command": "python benchmarks/anchor_grading_common_words.py build "
                   f"--min-prompts {min_prompts}",
        "source": "../shared/external/novelty-bench (curated, all models, whole generations)",
        "min_share": MIN_SHARE,
        "min_prompts": min_prompts,
        "prompts": prompts,
        "words": words,
    }
    with atomic_write(DATA) as handle:
        json.dump(record, handle, ensure_ascii=False, indent=0, sort_keys=True)
        handle.write("\n")
    print(f"{len(words)} words used by >= {min_prompts} of {len(prompts)} prompts -> {DATA}")


def measure(shared_dir: str) -> None:
    used, briefs = prompt_words(shared_dir)
    rows: dict[tuple[str, str], tuple[str, str]] = {}
    for name in GRADINGS:
        with (HERE / name).open(encoding="utf-8") as handle:
            for grade in csv.DictReader(handle):
                if grade["population"] != "noveltybench" or not grade.get("anchor_labels"):
                    continue
                lead = grade["anchor_labels"].split(" | ")[0]
                rows[(grade["task_id"], lead)] = (grade["useful"], grade["reason"])
    found = []
    for (task, lead), (useful, reason) in rows.items():
        terms = brief_terms(briefs[task], instructions=True)
        content = [w for w in _label_words(lead) if not w[0].isdigit()
                   and not _is_generic(w) and not matches_brief_term(w, terms)]
        if not content:
            continue
        others = [t for t in used if t != task]
        share = {w: sum(w in used[t] for t in others) / len(others) for w in content}
        found.append((min(share.values()), useful, task, lead, reason))
    found.sort(key=lambda row: -row[0])
    print(f"{len(found)} graded leading labels with a content word; least common word's "
          "share of the other prompts, highest first:")
    for share, useful, task, lead, reason in found[:25]:
        print(f"  {share:.2f}  {useful:3s}  {task:11s}  {lead[:36]:36s}  {reason[:50]}")
    print("threshold  useful removed  not useful removed")
    for threshold in (0.25, 0.3, 0.35, 0.4, 0.45, 0.5):
        removed = [row for row in found if row[0] >= threshold - 1e-9]
        print(f"  {threshold:.2f}     {sum(r[1] == 'yes' for r in removed):5d}"
              f"          {sum(r[1] == 'no' for r in removed):5d}"
              + ("   <- COMMON_WORD_SHARE" if abs(threshold - COMMON_WORD_SHARE) < 1e-9
                 else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", nargs="?", choices=("measure", "build"), default="measure")
    parser.add_argument("--shared-dir", default=str(HERE.parent.parent / "shared"))
    parser.add_argument("--min-prompts", type=int, default=30,
                        help="build: keep words used by at least this many prompts")
    args = parser.parse_args()
    if args.action == "build":
        build(args.shared_dir, args.min_prompts)
    else:
        measure(args.shared_dir)


if __name__ == "__main__":
    main()
