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
from tests.kg.slicedump import slice_dump


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


def test_fuzzy_tables_saved_at_import_equal_those_built_on_first_use(slice_path, tmp_path):
    """``kg import`` saves the name tables and trigram index (fuzzy.npz, recorded and
    checked in meta.json like every store file); loading them gives exactly what a store
    built before (no fuzzy.npz) reads and builds on first use, and the same search hits."""
    import json
    import shutil

    from creagraph.core.io import InputError
    from creagraph.kg import EmbeddedKG, import_dumps
    from creagraph.kg.embedded import _FUZZY_QUERY, _fuzzy_table

    store = tmp_path / "store"
    import_dumps([slice_dump(slice_path, tmp_path, step=29)], store, show_progress=False)
    meta = json.loads((store / "meta.json").read_text())
    assert meta["files"]["fuzzy.npz"]["size"] == (store / "fuzzy.npz").stat().st_size
    old = tmp_path / "old"  # as imported before fuzzy.npz existed
    shutil.copytree(store, old)
    (old / "fuzzy.npz").unlink()
    del meta["files"]["fuzzy.npz"]
    (old / "meta.json").write_text(json.dumps(meta))
    new_kg, old_kg = EmbeddedKG(store), EmbeddedKG(old)
    assert "fuzzy.npz" in new_kg.verify() and "fuzzy.npz" not in old_kg.verify()
    for prefix in ("Q", "P"):
        keys, info, lengths, index = new_kg._fuzzy_names(prefix)
        built_keys, built_info = _fuzzy_table(new_kg._sql(_FUZZY_QUERY, (prefix,)))
        assert len(keys) > (100 if prefix == "Q" else 0)
        assert keys == built_keys and info == [tuple(i) for i in built_info]
        assert lengths.tolist() == [len(k) for k in keys]
        saved, built = index.index(3).arrays(), NgramIndex(built_keys, 3).arrays()
        for name in NgramIndex.FIELDS:
            assert saved[name].dtype == built[name].dtype, name
            assert np.array_equal(saved[name], built[name]), name
    names = [info[2] for info in new_kg._fuzzy_names("Q")[1][::97]]
    for text in names:
        typo = text[:-1] if len(text) > 6 else text + "x"
        for cutoff in (90.0, 75.0):
            assert new_kg.search(typo, limit=3, min_score=cutoff) == old_kg.search(
                typo, limit=3, min_score=cutoff
            )
    new_kg.close()
    old_kg.close()
    # damaged: refused on opening (size, checksum) naming the file
    for how in ("truncated", "garbled"):
        copy = tmp_path / how
        shutil.copytree(store, copy)
        data = (copy / "fuzzy.npz").read_bytes()
        middle = len(data) // 2
        garbled = data[:middle] + b"\xff" * 8 + data[middle + 8 :]
        (copy / "fuzzy.npz").write_bytes(data[:middle] if how == "truncated" else garbled)
        with pytest.raises(InputError, match="fuzzy.npz.*re-import"):
            EmbeddedKG(copy)
