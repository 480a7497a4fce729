"""The embedded backend on the real shared slice, checked against the raw file."""

import gzip
import random
from collections import Counter

import pytest

from creagraph.core.io import InputError
from creagraph.kg import EmbeddedKG, import_dumps

WDT = "<http://www.wikidata.org/prop/direct/"


@pytest.fixture(scope="module")
def raw_triples(slice_path):
    """Statements parsed straight from the file, independently of creagraph."""
    out = set()
    with gzip.open(slice_path, "rt", encoding="utf-8") as handle:
        for line in handle:
            s, p, o = line.split(" ", 3)[:3]
            if p.startswith(WDT):
                out.add((s[32:-1], p[len(WDT) : -1], o[32:-1]))
    return out


def test_import_reports_exact_counts(kg):
    stats = kg.stats()
    assert (stats["statements"], stats["entities"], stats["properties"]) == (413_419, 86_812, 427)
    assert kg.meta["report"]["skipped"] == {}


def test_reopen_and_reimport_is_skipped(store_dir, slice_path):
    again = import_dumps([slice_path], store_dir, show_progress=False)
    assert again.report.get("reused") is True
    assert again.statements == 413_419
    reopened = EmbeddedKG(store_dir)
    assert reopened.has_triple("Q179051", "P69", "Q174710")


def test_kareem_by_label_and_alias(kg):
    assert kg.search("Kareem Abdul-Jabbar")[0].id == "Q179051"
    hit = kg.search("Lew Alcindor")[0]
    assert hit.id == "Q179051" and hit.kind == "alias" and hit.exact
    assert kg.search("KAREEM ABDUL JABBAR")[0].id == "Q179051"
    fuzzy = kg.search("Kareem Abdul Jabar")[0]
    assert fuzzy.id == "Q179051" and not fuzzy.exact
    record = kg.entity("Q179051")
    assert record.label == "Kareem Abdul-Jabbar"
    assert "Lew Alcindor" in record.aliases
    assert record.description == "American basketball player"


def test_accent_and_case_insensitive_search(kg):
    assert kg.search("penelope cruz", fuzzy=False)[0].id == "Q39666"
    assert kg.search("PELE", fuzzy=False)[0].id == "Q12897"


def test_triple_existence(kg, raw_triples):
    assert kg.has_triple("Q179051", "P69", "Q174710")
    sample = random.Random(1).sample(sorted(raw_triples), 500)
    assert all(kg.has_triple(*t) for t in sample)


def test_hard_negatives_all_absent(kg, negatives_path):
    with gzip.open(negatives_path, "rt") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle][1:]
    assert len(rows) == 8402
    assert not any(kg.has_triple(s, p, o) for s, p, o in rows)


def test_class_sizes_match_raw_counts(kg, raw_triples):
    by_po = Counter((p, o) for _, p, o in raw_triples)
    by_sp = Counter((s, p) for s, p, _ in raw_triples)
    rng = random.Random(7)
    for p, o in rng.sample(sorted(by_po), 400):
        assert kg.count_subjects(p, o) == by_po[(p, o)]
    for s, p in rng.sample(sorted(by_sp), 400):
        assert kg.count_objects(s, p) == by_sp[(s, p)]
    assert kg.count_subjects("P31", "Q5") == by_po[("P31", "Q5")]
    assert kg.count_subjects("P69", "Q999999999") == 0


def test_edges_match_raw(kg, raw_triples):
    out = {}
    for s, p, o in raw_triples:
        out.setdefault(s, set()).add((s, p, o))
    for s in random.Random(3).sample(sorted(out), 200):
        assert {e.as_tuple() for e in kg.out_edges(s)} == out[s]
    ins = [e.as_tuple() for e in kg.in_edges("Q174710", "P69")]
    assert ins == sorted(ins, key=lambda t: int(t[0][1:]))
    assert ("Q179051", "P69", "Q174710") in ins


def test_categories_match_raw(kg, raw_triples):
    sizes = Counter((p, o) for _, p, o in raw_triples if p == "P166")
    expected = {o: n for (_, o), n in sizes.items() if 3 <= n <= 20}
    cats = list(kg.categories(["P166"], side="subject", min_size=3, max_size=20))
    assert {c.entity: c.size for c in cats} == expected
    for c in cats[:20]:
        assert set(c.members) == {s for s, p, o in raw_triples if p == "P166" and o == c.entity}
    casts = Counter(s for s, p, _ in raw_triples if p == "P161")
    got = {c.entity: c.size for c in kg.categories(["P161"], side="object", min_size=5, max_size=9)}
    assert got == {s: n for s, n in casts.items() if 5 <= n <= 9}


def test_bad_ids_and_unknown_ids(kg):
    with pytest.raises(ValueError, match="not a Wikidata item id"):
        kg.out_edges("Q1 } DROP")
    assert kg.entity("Q999999999") is None
    assert kg.out_edges("Q999999999") == []
    assert kg.property("P999999") is None


def test_failed_import_keeps_existing_store(tmp_path, slice_path):
    good = tmp_path / "good.nt"
    good.write_text(
        "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P31> "
        "<http://www.wikidata.org/entity/Q5> .\n"
    )
    store = tmp_path / "store"
    import_dumps([good], store, show_progress=False)
    bad = tmp_path / "bad.nt"
    bad.write_text(good.read_text() + "garbage line\n")
    with pytest.raises(InputError, match=r"bad\.nt:2"):
        import_dumps([bad], store, show_progress=False)
    kept = EmbeddedKG(store)
    assert kept.stats()["statements"] == 1 and kept.has_triple("Q1", "P31", "Q5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.nt", "good.nt", "store"]


def test_skip_malformed_counts_lines(tmp_path):
    bad = tmp_path / "bad.nt"
    bad.write_text(
        "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P31> "
        "<http://www.wikidata.org/entity/Q5> .\nnot a triple\n"
    )
    res = import_dumps([bad], tmp_path / "s", strict=False, show_progress=False)
    assert res.statements == 1 and res.report["skipped"] == {"malformed line": 1}


def test_fuzzy_cutoff_matches_brute_force(kg):
    from rapidfuzz import fuzz

    from creagraph.core.text import normalize_loose

    names = kg._conn.execute(
        "SELECT loose, id FROM names WHERE substr(id, 1, 1) = 'Q'"
    ).fetchall()
    for query in ("Kareem Abdul Jabar", "Univresity of California", "Scrubs tv", "Pelle"):
        loose = normalize_loose(query)
        for cutoff in (80, 90):
            got = {(h.id, round(h.score, 6)) for h in kg._fuzzy(loose, "Q", 10_000, cutoff)}
            want = set()
            for key, ident in names:
                score = fuzz.token_sort_ratio(loose, key)
                if score >= cutoff:
                    want.add((ident, round(score, 6)))
            assert {i for i, _ in got} == {i for i, _ in want}, (query, cutoff)
            assert got == want
