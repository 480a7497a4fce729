"""The grounding-verdict cache (issue 19): a warm kg-judged run reads the verdicts a cold
run computed and scores identically; another graph or another setting misses it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from creagraph.kg import EmbeddedKG
from creagraph.scoring.api import ScorerConfig, build_scorer
from creagraph.scoring.groundcache import (
    GroundingCache,
    default_grounding_cache,
    grounding_context,
    linker_context,
)
from creagraph.scoring.grounding import EntityLinker, Grounder, RelationLinker, TripleGrounding
from creagraph.scoring.inputs import read_answers


@pytest.fixture(scope="module")
def rows(sample_files):
    return read_answers(sample_files)[1:80:20]


def _run(store_dir: Path, rows) -> tuple[list, GroundingCache]:
    scorer = build_scorer(ScorerConfig(judge="kg", store=str(store_dir)))
    results = [scorer.score(r) for r in rows]
    return [(r.paths, r.query) for r in results], scorer.judge.grounder.cache


def test_a_warm_run_reads_the_verdicts_and_scores_identically(
    store_dir, rows, tmp_path, monkeypatch
):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    cold, cache = _run(store_dir, rows)
    assert cache.path == tmp_path / "cache" / "grounding.sqlite"
    assert cache.misses > 100 and cache.hits == 0
    warm, cache = _run(store_dir, rows)
    assert cache.misses == 0 and cache.hits > 100  # every verdict and entity link was read
    assert json.dumps(warm, sort_keys=True) == json.dumps(cold, sort_keys=True)
    statuses = {j["status"] for paths, _ in cold for p in paths for j in p["judgments"]}
    assert {"verified", "unknown"} <= statuses
    monkeypatch.setenv("CREAGRAPH_GROUNDING_CACHE", "0")
    assert default_grounding_cache() is None
    off, cache = _run(store_dir, rows)
    assert cache is None and json.dumps(off, sort_keys=True) == json.dumps(cold, sort_keys=True)


def test_a_verdict_round_trips():
    g = TripleGrounding(
        "verified", "statement found (stated)", "Q1", "P19", "Q2", 3, 1, 4,
        {"statement": ["Q1", "P19", "Q2"], "links": {"head": {"confidence": 0.9}}},
    )
    again = TripleGrounding(**json.loads(json.dumps(g.fields())))
    assert again == g and again.as_dict() == g.as_dict() and again.factual == 1.0


def _grounder(kg, cache, **settings) -> Grounder:
    return Grounder(kg, EntityLinker(kg), RelationLinker(kg), cache=cache, **settings)


def test_another_store_or_setting_misses(store_dir, tmp_path):
    cache = GroundingCache(tmp_path / "grounding.sqlite")
    kg = EmbeddedKG(store_dir)
    triple = ("Douglas Adams", "educated at", "St John's College")
    first = _grounder(kg, cache)
    verdict = first.ground(*triple)
    assert first.entities.cache is cache  # shared with its entity linker
    assert (cache.hits, cache.misses) == (0, 3)  # the verdict and both ends' links
    assert _grounder(kg, cache).ground(*triple) == verdict
    assert (cache.hits, cache.misses) == (1, 3)  # read: nothing linked again
    _grounder(kg, cache, min_confidence=0.8).ground(*triple)
    assert cache.misses == 4  # another setting: grounded again (links still shared)
    _grounder(kg, cache).ground(*triple, context={"douglas adams": "Q42"})
    assert cache.misses == 5  # another query entity tied to an end
    copy = tmp_path / "store"
    shutil.copytree(store_dir, copy, copy_function=os.link)
    meta = json.loads((copy / "meta.json").read_text())
    (copy / "meta.json").unlink()  # a new file, not the store's own through the link
    (copy / "meta.json").write_text(json.dumps({**meta, "created": "another import"}))
    other = _grounder(EmbeddedKG(copy), cache)
    assert grounding_context(other) != grounding_context(first)
    assert linker_context(other.entities) != linker_context(first.entities)
    assert other.ground(*triple) == verdict  # the same answer, computed again
    assert cache.misses == 8


def test_a_graph_without_a_store_is_not_cached(kg, tmp_path):
    class Remote:  # a backend with no store folder (like a SPARQL endpoint)
        def __getattr__(self, name):
            return getattr(kg, name) if name != "store" else None

    cache = GroundingCache(tmp_path / "grounding.sqlite")
    grounder = _grounder(Remote(), cache)
    assert grounding_context(grounder) is None
    grounder.ground("Douglas Adams", "educated at", "St John's College")
    assert cache.hits == cache.misses == 0


def test_a_scorer_given_its_own_embedding_cache_keeps_its_verdicts_beside_it(
    store_dir, rows, tmp_path, monkeypatch
):
    from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder

    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "default"))
    embedder = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "own" / "cache.sqlite")
    scorer = build_scorer(ScorerConfig(judge="kg", store=str(store_dir)), embedder=embedder)
    scorer.score(rows[0])
    cache = scorer.judge.grounder.cache
    assert cache.path == tmp_path / "own" / "grounding.sqlite"
    assert cache.misses > 0 and cache.hits == 0  # a fresh embedding cache: fresh verdicts
    assert not (tmp_path / "default" / "grounding.sqlite").exists()
    embedder.close()


def test_a_full_disk_is_said_as_such_naming_the_file_not_as_damage(tmp_path):
    """Issue 23: "database or disk is full" under the grounding cache is not "damaged"."""
    from creagraph.core.io import InputError
    from creagraph.scoring.groundcache import GroundingCache

    cache = GroundingCache(tmp_path / "grounding.sqlite")
    cache._conn.execute("PRAGMA max_page_count = 8")  # the file may not grow: a full disk
    with pytest.raises(InputError) as info:
        for i in range(200):
            cache.put(GroundingCache.key("c", ("x" * 200, str(i)), ()), {"v": "y" * 500})
        cache.flush()  # written at the latest here
    message = str(info.value)
    assert message.startswith(str(tmp_path / "grounding.sqlite")), message
    assert "grounding cache cannot be used" in message and "full" in message, message
    assert "delete" not in message


_TRIPLES = [
    ("Douglas Adams", "educated at", "St John's College"),
    ("douglas  ADAMS", "Educated at", "St John's college"),  # normalises as the first
    ("Douglas Adams", "place of birth", "Cambridge"),
    ("Douglas Adams", "", "Cambridge"),  # malformed: skipped
    ("Marie Curie", "award received", "Nobel Prize in Physics"),
]


def test_a_batched_read_returns_what_single_reads_return(store_dir, tmp_path):
    """Issue 31: a warm run reads an answer's verdicts in one query (chunks of ≤ 500);
    each value is the one a single read returns, absent keys are absent, hits and misses
    are counted alike."""
    cache = GroundingCache(tmp_path / "grounding.sqlite")
    kg = EmbeddedKG(store_dir)
    context = {"douglas adams": "Q42"}
    cold = [_grounder(kg, cache).ground(*t, context=context) for t in _TRIPLES if all(t)]
    cache.flush()
    ctx = grounding_context(_grounder(kg, cache))
    assert ctx is not None
    keys = [bytes(k) for (k,) in cache._conn.execute("SELECT triple FROM triple_verdicts")]
    assert len(keys) == 4  # the 4 well-formed triples, each by a grounder of its own
    absent = [GroundingCache.triple_key(("a", "b", str(i)), ()) for i in range(3)]
    mixed = [absent[0], *keys, absent[1], keys[0], absent[2]]
    before = (cache.hits, cache.misses)
    found = cache.get_verdicts(ctx, mixed, chunk=2)  # several chunks, a repeated key
    assert (cache.hits - before[0], cache.misses - before[1]) == (len(keys), 3)
    assert set(found) == set(keys)
    assert all(found[k] == cache.get_verdicts(ctx, [k])[k] for k in keys)
    distinct = {(g.status, g.reason, g.subject, g.property, g.object) for g in cold}
    assert {(f["status"], f["reason"], f["subject"], f["property"], f["object"])
            for f in found.values()} == distinct  # fmt: skip
    assert cache.get_verdicts(ctx, []) == {}
    assert cache.get_verdicts("another context", keys) == {}  # kept per context
    # a grounder that prefetches reads every verdict at once and grounds nothing again
    warm = _grounder(kg, cache)
    before = (cache.hits, cache.misses)
    assert warm.prefetch(_TRIPLES, context=context) == 3  # the 4 well-formed: 3 distinct
    assert cache.hits - before[0] == 3 and cache.misses == before[1]
    hits = cache.hits
    again = [warm.ground(*t, context=context) for t in _TRIPLES if all(t)]
    assert again == cold and cache.hits == hits  # from the prefetched verdicts
    # another setting still misses: prefetch finds nothing, ground computes the same
    other = _grounder(kg, cache, min_confidence=0.8)
    misses = cache.misses
    assert other.prefetch(_TRIPLES, context=context) == 0
    assert cache.misses == misses + 3
    assert [other.ground(*t, context=context) for t in _TRIPLES if all(t)] == cold
    assert cache.misses == misses + 3  # the misses prefetch counted are not asked again
    cache.flush()
    rows = cache._conn.execute("SELECT COUNT(*), COUNT(DISTINCT context) FROM triple_verdicts")
    assert rows.fetchone() == (7, 2)  # kept under the prefetched keys, once each


def test_the_triple_keys_are_unambiguous():
    """Issue 31: a verdict's key is the triple's text and the ends' query entities, not a
    hash; two different triples (or ties) must never share one."""
    cases = [
        (("ab", "c", "d"), (None, None)),
        (("a", "bc", "d"), (None, None)),
        (("a", "b", "cd"), (None, None)),
        (("a", "b", "c"), ("Q1", None)),
        (("a", "b", "c"), (None, "Q1")),
        (("a", "b", "c"), ("Q1", "Q1")),
        (("a", "b", "c"), (None, None)),
        (("a", "b", "c"), ()),
        (("a", "b", "c"), ("",)),
        (("a", "b", "c/1:Q"), (None,)),
        (("a", "b", "c"), ("Q", None)),
        (("1:a", "b", "c"), ()),
        (("a", "b", "c\ud800"), ()),
        (("a", "b", "c\udc00"), ()),
        (("Penélope Cruz", 'say "hi"', "\u2028 \ud800"), ()),
    ]
    keys = [GroundingCache.triple_key(t, i) for t, i in cases]
    assert len(set(keys)) == len(cases)
    assert keys == [GroundingCache.triple_key(t, i) for t, i in cases]  # the same each time


def test_a_damaged_verdict_row_is_a_clear_error_naming_the_file(store_dir, tmp_path):
    from creagraph.core.io import InputError

    path = tmp_path / "grounding.sqlite"
    cache = GroundingCache(path)
    kg = EmbeddedKG(store_dir)
    verdict = _grounder(kg, cache).ground(*_TRIPLES[0])
    cache.flush()
    for column, value in (
        ("evidence", '{"backend": '),  # not JSON
        ("evidence", '{"a": 1} {"b": 2}'),  # more than one value
        ("evidence", "[1, 2]"),  # not an object
        ("status", "maybe"),
        ("specificity", "many"),
        ("subject", b"Q42"),  # a blob (TEXT affinity keeps a number as its text)
    ):
        broken = GroundingCache(path)
        with broken._conn:
            broken._conn.execute(
                f"UPDATE triple_verdicts SET {column} = ?", (value,)  # noqa: S608
            )
        with pytest.raises(InputError) as info:
            _grounder(kg, broken).ground(*_TRIPLES[0])
        message = str(info.value)
        assert message.startswith(str(path)) and "delete it and re-run" in message, message
        with broken._conn:  # repaired for the next case: the verdict written again
            broken._conn.execute("DELETE FROM triple_verdicts")
        again = GroundingCache(path)
        assert _grounder(kg, again).ground(*_TRIPLES[0]) == verdict
        again.flush()


def test_verdicts_an_earlier_version_kept_are_not_read(store_dir, tmp_path):
    """Issue 31 moved the verdicts from a JSON blob under a SHA-256 key (table
    ``verdicts``) to typed columns: a cache written before is read cold once, never
    misread."""
    import hashlib

    cache = GroundingCache(tmp_path / "grounding.sqlite")
    kg = EmbeddedKG(store_dir)
    grounder = _grounder(kg, cache)
    ctx = grounding_context(grounder)
    text = json.dumps([ctx, list(_TRIPLES[0]), [None, None]], ensure_ascii=False)
    old_key = hashlib.sha256(text.encode("utf-8")).digest()
    wrong = TripleGrounding("refuted", "an old verdict", "Q1", "P1", "Q2", 1, 1, 1, {})
    cache.put(old_key, wrong.fields())  # as the earlier layout kept it
    verdict = grounder.ground(*_TRIPLES[0])
    assert verdict.reason != "an old verdict" and cache.misses >= 1
    assert _grounder(kg, cache).ground(*_TRIPLES[0]) == verdict


def test_a_grounder_without_a_cache_or_a_store_prefetches_nothing(kg, store_dir, tmp_path):
    assert _grounder(EmbeddedKG(store_dir), None).prefetch(_TRIPLES) == 0

    class Remote:  # a backend with no store folder (like a SPARQL endpoint)
        def __getattr__(self, name):
            return getattr(kg, name) if name != "store" else None

    cache = GroundingCache(tmp_path / "grounding.sqlite")
    assert _grounder(Remote(), cache).prefetch(_TRIPLES) == 0
    assert cache.hits == cache.misses == 0


def test_the_keys_stay_those_of_earlier_runs():
    """Issue 31 sped the key up (one JSON encoder, not one per call); the keys must stay
    the SHA-256 of the same JSON, or every verdict kept so far would be lost."""
    import hashlib

    for triple, ids in (
        (("Douglas Adams", "educated at", "St John's College"), ("Q42", None)),
        (("Penélope Cruz", 'say "hi"', "\u2028 \ud800"), ()),
    ):
        text = json.dumps(["ctx", list(triple), list(ids)], ensure_ascii=False)
        expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        assert GroundingCache.key("ctx", triple, ids) == expected


def _rows_on_disk(path: Path) -> tuple[int, int]:
    """(verdicts, links) as another connection reads them from the file."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return (
            conn.execute("SELECT COUNT(*) FROM triple_verdicts").fetchone()[0],
            conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0],
        )
    finally:
        conn.close()


def test_kept_entries_are_written_together_and_read_before(store_dir, tmp_path):
    """Issue 31: verdicts and links are written in one transaction per flush (a cold run
    made one commit per entry); until then this cache reads them from memory; a flush
    every FLUSH_EVERY entries, at close and at the end of the process."""
    from creagraph.scoring import groundcache

    path = tmp_path / "grounding.sqlite"
    cache = GroundingCache(path)
    kg = EmbeddedKG(store_dir)
    verdict = _grounder(kg, cache).ground(*_TRIPLES[0])
    assert _rows_on_disk(path) == (0, 0)  # pending
    before = cache.hits
    assert _grounder(kg, cache).ground(*_TRIPLES[0]) == verdict  # read from memory
    assert cache.hits == before + 1
    link_key = GroundingCache.key("c", ("a mention",), ())
    cache.put(link_key, [{"qid": "Q1"}])
    assert cache.get(link_key) == [{"qid": "Q1"}] == cache.get_many([link_key])[link_key]
    cache.flush()
    assert _rows_on_disk(path) == (1, 3)  # the verdict, both ends' links, the put one
    assert _grounder(kg, GroundingCache(path)).ground(*_TRIPLES[0]) == verdict
    cache.put(GroundingCache.key("c", ("another",), ()), [])
    cache.close()  # writes what is pending
    assert _rows_on_disk(path) == (1, 4)
    many = GroundingCache(tmp_path / "many.sqlite")
    for i in range(groundcache.FLUSH_EVERY):
        many.put(GroundingCache.key("c", (str(i),), ()), [])
    assert _rows_on_disk(tmp_path / "many.sqlite") == (0, groundcache.FLUSH_EVERY)


def test_what_is_pending_is_written_when_the_process_ends(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "grounding.sqlite"
    code = (
        "import sys; from creagraph.scoring.groundcache import GroundingCache as G\n"
        "c = G(sys.argv[1]); c.put(G.key('c', ('m',), ()), [1])\n"
        "c.put_verdict('ctx', G.triple_key(('a', 'b', 'c'), (None, None)), {'status': "
        "'unknown', 'reason': 'r', 'subject': None, 'property': None, 'object': None, "
        "'class_size_subjects': None, 'class_size_objects': None, 'specificity': None, "
        "'evidence': {'backend': 'kg'}})\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)  # no close()
    assert _rows_on_disk(path) == (1, 1)
    cache = GroundingCache(path)
    key = GroundingCache.triple_key(("a", "b", "c"), (None, None))
    assert cache.get_verdicts("ctx", [key])[key]["evidence"] == {"backend": "kg"}


def test_a_scorer_writes_each_answers_verdicts_after_it(store_dir, rows, tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path))
    scorer = build_scorer(ScorerConfig(judge="kg", store=str(store_dir)))
    scorer.score(rows[0])
    verdicts, links = _rows_on_disk(tmp_path / "grounding.sqlite")
    assert verdicts > 5 and links > 5
    assert verdicts == scorer.judge.grounder.cache.misses - links


def test_verdicts_of_one_evidence_text_are_read_equal_and_apart(tmp_path):
    """Each evidence text is decoded once per cache (issue 31); every verdict read still
    gets its own evidence dict."""
    cache = GroundingCache(tmp_path / "grounding.sqlite")
    fields = TripleGrounding("unknown", "head and tail not linked", evidence={
        "backend": "kg:embedded", "relation_candidates": ["P19:forward"]}).fields()  # fmt: skip
    keys = [GroundingCache.triple_key(("a", "b", str(i)), (None, None)) for i in range(3)]
    for key in keys:
        cache.put_verdict("ctx", key, fields)
    cache.flush()
    found = GroundingCache(tmp_path / "grounding.sqlite").get_verdicts("ctx", keys)
    assert [found[k] for k in keys] == [fields] * 3
    found[keys[0]]["evidence"]["backend"] = "changed"
    assert found[keys[1]]["evidence"]["backend"] == "kg:embedded"
