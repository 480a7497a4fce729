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


def _brute_postings(keys: list[str], q: int) -> tuple[dict, list[dict]]:
    """Every q-gram's keys with their occurrence counts, and every key's q-gram counts, by
    counting substrings in dicts (the reference for the packed-integer build, issue 31)."""
    by_gram: dict[str, dict[int, int]] = {}
    by_key = []
    for i, key in enumerate(keys):
        counts: dict[str, int] = {}
        for p in range(len(key) - q + 1):
            counts[key[p : p + q]] = counts.get(key[p : p + q], 0) + 1
        by_key.append(counts)
        for gram, c in counts.items():
            by_gram.setdefault(gram, {})[i] = c
    return by_gram, by_key


def _check_against_brute_force(keys: list[str], q: int) -> NgramIndex:
    index = NgramIndex(keys, q)
    by_gram, by_key = _brute_postings(keys, q)
    # the vocabulary: each q-gram's code points, 21 bits each, ascending
    packed = {sum(ord(ch) << (21 * (q - 1 - k)) for k, ch in enumerate(g)): g for g in by_gram}
    assert index.vocab.dtype == np.uint64 and index.vocab.tolist() == sorted(packed)
    grams = [packed[v] for v in index.vocab.tolist()]
    for slot, gram in enumerate(grams):
        a, b = index.indptr[slot], index.indptr[slot + 1]
        assert index.names[a:b].tolist() == sorted(by_gram[gram])
        assert index.counts[a:b].tolist() == [by_gram[gram][i] for i in sorted(by_gram[gram])]
    for i, counts in enumerate(by_key):
        a, b = index.fwd_indptr[i], index.fwd_indptr[i + 1]
        assert [grams[g] for g in index.fwd_grams[a:b].tolist()] == sorted(counts)
        assert index.fwd_counts[a:b].tolist() == [counts[g] for g in sorted(counts)]
    dtypes = {name: str(values.dtype) for name, values in index.arrays().items()}
    assert dtypes == {
        "lengths": "int64", "vocab": "uint64", "names": "int32", "counts": "int32",
        "indptr": "int64", "fwd_grams": "int32", "fwd_counts": "int32",
        "fwd_indptr": "int64", "by_length": "int64",
    }  # fmt: skip
    return index


@pytest.mark.parametrize("q", [1, 2, 3])
def test_index_postings_equal_a_brute_force_count(q):
    """The index built by sorting packed (q-gram, key) integers (issue 31) holds exactly the
    postings and forward lists that counting substrings gives: repeated q-grams, keys
    shorter than q, several scripts and characters outside the Basic Multilingual Plane."""
    rng = random.Random(q)
    for alphabet in ("ab", "abc d", "aé€𝄞z 東", "".join(map(chr, range(0x1F600, 0x1F640)))):
        keys = sorted(
            ("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 9))) for _ in range(80)),
            key=len,
        )
        _check_against_brute_force(keys, q)
    _check_against_brute_force([], q)
    _check_against_brute_force(["", "x"], q)


@pytest.mark.parametrize("q", [1, 2, 3])
def test_index_of_a_large_alphabet_equals_a_brute_force_count(q):
    """More than 2¹⁶ distinct characters: q-grams of ranked characters and the key no longer
    fit 64 bits for trigrams (the build takes two ``np.unique`` there) and the rank table
    is wider than 16 bits; same postings either way."""
    keys = sorted(
        (chr(0x20000 + i) + chr(0x20000 + (7 * i) % 70_000) + "ab"[i % 2] for i in range(70_000)),
        key=len,
    )
    index = _check_against_brute_force(keys, q)
    assert len(index.vocab) > 70_000 // (3 if q == 3 else 1)


def test_forward_lists_by_packed_sort_equal_the_stable_argsort():
    from creagraph.kg.fuzzy import _forward

    rng = np.random.default_rng(5)
    index = NgramIndex(sorted(("".join(rng.choice(list("abcdefgh"), size=int(k)))
                               for k in rng.integers(0, 12, 500)), key=len))  # fmt: skip
    gram_ids = np.repeat(np.arange(len(index.vocab)), np.diff(index.indptr))
    args = (index.names, gram_ids, index.counts, len(index), len(index.vocab))
    packed, stable = _forward(*args), _forward(*args, bits=8)  # 8 bits: too few to pack
    for a, b in zip(packed, stable):
        assert a.dtype == b.dtype == np.int32 and np.array_equal(a, b)
    assert np.array_equal(packed[0], index.fwd_grams)
