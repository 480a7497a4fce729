"""RelationLinker.prepare: run-level batched phrase embeddings give the same links as one
model call per phrase, and linking afterwards makes no model call (issue 19, item 2)."""

import itertools

import pytest

from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder
from creagraph.core.relations import RelationLinker
from creagraph.scoring.inputs import read_answers
from creagraph.scoring.prepare import run_relation_phrases


class Counting:
    """The real model, counting its calls."""

    def __init__(self, model):
        self.model, self.name, self.calls = model, model.name, 0

    @property
    def dim(self):
        return self.model.dim

    def encode(self, texts):
        self.calls += 1
        return self.model.encode(texts)


@pytest.fixture(scope="module")
def phrases(shared_dir):
    files = sorted((shared_dir / "external/create-leaderboard/sample_outputs").glob("*.jsonl"))
    rows = read_answers(files[:1])[:6]
    return list(itertools.islice(run_relation_phrases(rows), 200))


@pytest.fixture(scope="module")
def properties(kg):
    counts = kg.property_counts()
    return sorted(counts, key=lambda pid: -counts[pid])[:150]  # keeps the name table small


def test_prepared_links_equal_one_call_per_phrase(kg, phrases, properties):
    model = Counting(SentenceTransformerEmbedder())
    batched = RelationLinker(kg, model, properties=properties)
    embedded = batched.prepare(phrases)
    assert 15 < embedded <= len(set(p.lower() for p in phrases))
    calls = model.calls
    assert calls == 2  # the property names, then every phrase in one call
    links_batched = [batched.link(p) for p in phrases]
    assert model.calls == calls  # linking made no model call
    assert batched.prepare(phrases) == 0  # all linked already

    single = RelationLinker(kg, model, properties=properties)
    single._vectors = batched._name_vectors()  # the same property-name vectors
    links_single = [single.link(p) for p in phrases]
    assert model.calls > calls + 15  # one call per distinct phrase
    for a, b in zip(links_batched, links_single, strict=True):
        assert [(x.pid, x.direction, x.method) for x in a] == [
            (x.pid, x.direction, x.method) for x in b
        ]
        assert all(abs(x.score - y.score) < 1e-5 for x, y in zip(a, b))
    assert any(x.method == "embedding" for links in links_batched for x in links)


def test_prepare_fills_a_cache_that_link_then_reads(kg, phrases, properties, tmp_path):
    cached = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "cache.sqlite")
    linker = RelationLinker(kg, cached, properties=properties)
    linker.prepare(phrases, chunk=50)
    misses = cached.misses
    for phrase in phrases:
        linker.link(phrase)
    assert cached.misses == misses  # every phrase vector came from the cache
    assert linker._prepared == {}  # nothing kept in memory with a caching embedder


def test_property_implications_reads_the_table_in_its_stated_format():
    from creagraph.core.paths import wikidata_dir
    from creagraph.core.relations import property_implications, read_implication_table

    table = property_implications()
    # located in the administrative territorial entity => part of (Queens, New York City)
    assert ("P361", "forward") in table["P131"]
    # the triviality-only table: a film's cast member is known for the film,
    # (film, P161, actor) -> (actor, P800, film); the judge's table must not say so
    loose = read_implication_table("triviality_implications.tsv")
    assert ("P800", "inverse") in loose["P161"]
    assert ("P800", "inverse") not in table.get("P161", [])
    tables = {"property_implications.tsv": table, "triviality_implications.tsv": loose}
    for name, parsed in tables.items():
        rows = {
            tuple(line.split("\t")[:3])
            for line in (wikidata_dir() / name).read_text().splitlines()
            if line.strip() and not line.startswith("#")
        }
        assert sum(len(v) for v in parsed.values()) == len(rows)
        assert all(d in ("forward", "inverse") for v in parsed.values() for _, d in v)
