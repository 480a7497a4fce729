"""The q-gram index in front of fuzzy entity search gives exactly the hits of scanning every
name (issue 19, item 1), on the mentions of the shared sample outputs and on perturbed
names at many cutoffs."""

import random

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from creagraph.core.text import normalize_loose
from creagraph.kg.fuzzy import FuzzyIndex, NgramIndex, length_window
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.parse import parse_answer


@pytest.fixture(scope="module")
def mentions(shared_dir) -> list[str]:
    files = sorted((shared_dir / "external/create-leaderboard/sample_outputs").glob("*.jsonl"))
    found: dict[str, str] = {}
    for row in read_answers(files):
        for path in parse_answer(row.answer).paths:
            for head, _, tail in path.triples:
                for mention in (head, tail):
                    found.setdefault(normalize_loose(mention), mention)
    found.pop("", None)
    return list(found.values())


def test_search_links_equal_the_exhaustive_scan_on_sample_mentions(kg, mentions, monkeypatch):
    assert len(mentions) > 1000
    sample = mentions[::4]  # ~500 of the ~2,000 distinct mentions, from every file
    # the entity linker's call (scoring) and the search command's default cutoff
    calls = [(dict(limit=3, fuzzy=True, min_score=90.0), sample), (dict(limit=10), sample[::3])]
    new = [[kg.search(m, **call) for m in some] for call, some in calls]
    monkeypatch.setattr(kg, "_fuzzy", kg._fuzzy_scan)
    old = [[kg.search(m, **call) for m in some] for call, some in calls]
    assert new == old
    # the comparison covers real fuzzy links, not only exact ones
    assert sum(1 for hits in new[0] if hits and not hits[0].exact) >= 5
    assert sum(1 for hits in new[1] if any(not h.exact for h in hits)) > 50


def test_fuzzy_hits_equal_the_scan_at_several_cutoffs(kg, mentions):
    for cutoff in (60.0, 75.0, 85.0, 95.0):
        for mention in mentions[1::40]:
            loose = normalize_loose(mention)
            assert kg._fuzzy(loose, "Q", 9, cutoff) == kg._fuzzy_scan(loose, "Q", 9, cutoff)


def _perturb(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(0, 3)):
        op = rng.choice("dis")
        pos = rng.randrange(len(chars) + 1)
        if op == "d" and pos < len(chars):
            del chars[pos]
        elif op == "i":
            chars.insert(pos, rng.choice("abcdefghijklmnopqrstuvwxyz éß"))
        elif pos < len(chars):
            chars[pos] = rng.choice("abcdefghijklmnopqrstuvwxyz")
    return "".join(chars)


@pytest.mark.parametrize("q", [1, 2, 3])
def test_candidates_hold_every_name_that_reaches_the_cutoff(kg, q):
    keys = kg._fuzzy_names("Q")[0]
    rng = random.Random(q)
    picks = sorted(rng.sample(range(len(keys)), 3000))
    subset = [keys[i] for i in picks]  # still sorted by length
    index = NgramIndex(subset, q)
    for _ in range(150):
        query = _perturb(rng, rng.choice(subset)) or "a"
        cutoff = rng.choice([50.0, 70.0, 80.0, 85.0, 90.0, 95.0, 100.0])
        shortest, longest = length_window(len(query), cutoff)
        truth = {
            i
            for _, _, i in process.extract(
                query, subset, scorer=fuzz.ratio, processor=None, limit=None, score_cutoff=cutoff
            )
        }
        got = index.candidates(query, cutoff)
        assert truth <= set(got.tolist()), (query, cutoff)
        assert np.all(np.diff(got) > 0)
        assert all(shortest <= len(subset[i]) <= longest for i in got.tolist())


def test_index_input_checks():
    with pytest.raises(ValueError, match="sorted by length"):
        NgramIndex(["abc", "ab"])
    with pytest.raises(ValueError, match="q must be"):
        NgramIndex(["ab"], q=4)
    assert FuzzyIndex([]).candidates("abc", 90.0).tolist() == []
    assert NgramIndex(["", "a", "ab"]).candidates("ab", 50.0).tolist() == [1, 2]
