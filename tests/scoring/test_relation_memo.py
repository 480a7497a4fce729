"""Relation links kept between runs (issue 31): a warm linker reads each phrase's links from
the grounding cache and no vector at all; the links read equal the links computed; another
setting, model or store misses them; and a kg-judged run saves the property-name vectors
in the store on their first use (the importer is not loaded by a scoring run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from creagraph.core.embeddings import CachedEmbedder, HashingEmbedder, SentenceTransformerEmbedder
from creagraph.core.io import InputError
from creagraph.core.propvectors import FILE_NAME, RECORD_NAME
from creagraph.core.relations import RelationLinker
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.scoring.groundcache import (
    GroundingCache,
    RelationLinkMemo,
    relation_link_context,
)
from creagraph.scoring.grounding import EntityLinker, Grounder
from tests.kg.slicedump import slice_dump

ROOT = Path(__file__).resolve().parents[2]

#: Exact names, genitives, passives and phrases that only embedding links.
PHRASES = [
    "directed by", "Directed By", "spouse", "was born in", "father of", "capital city of",
    "employer", "plays for the team", "is the author of", "studied at", "won the award",
]  # fmt: skip


def _store(slice_path: Path, folder: Path, step: int) -> Path:
    """A store of 20,000 slice lines (every ``step``-th), as ``kg import`` leaves it."""
    import_dumps([slice_dump(slice_path, folder, step)], folder / "store", show_progress=False)
    return folder / "store"


@pytest.fixture(scope="module")
def small_store(slice_path, tmp_path_factory) -> Path:
    """~200 properties' statements, labels and aliases."""
    return _store(slice_path, tmp_path_factory.mktemp("memo"), 31)


@pytest.fixture(scope="module")
def other_store(slice_path, tmp_path_factory) -> Path:
    """Another graph (other slice lines): another store identity."""
    return _store(slice_path, tmp_path_factory.mktemp("memo-other"), 37)


def _linker(store: Path, cache: Path, model=None, **settings) -> RelationLinker:
    """A relation linker with a caching embedder and the grounding cache beside it, wired
    as scoring wires it (the grounder gives it its memo)."""
    kg = EmbeddedKG(store)
    embedder = CachedEmbedder(model or HashingEmbedder(), cache / "embeddings.sqlite")
    relations = RelationLinker(kg, embedder, **settings)
    Grounder(kg, EntityLinker(kg), relations, cache=GroundingCache(cache / "grounding.sqlite"))
    assert isinstance(relations.memo, RelationLinkMemo)
    return relations


def _links(linker: RelationLinker) -> dict[str, list]:
    links = {p: linker.link(p) for p in PHRASES}
    if isinstance(linker.memo, RelationLinkMemo):
        linker.memo.cache.flush()  # written, as the scorer has them written after each answer
    return links


def test_a_warm_linker_reads_the_links_and_no_vector(small_store, tmp_path):
    model = SentenceTransformerEmbedder()  # the real model: real similarities
    cold = _linker(small_store, tmp_path, model)
    assert cold.prepare(PHRASES) == len(PHRASES) - 1  # "Directed By" is "directed by"
    computed = _links(cold)
    assert any(link.method == "embedding" for links in computed.values() for link in links)
    warm = _linker(small_store, tmp_path, model)
    assert warm.prepare(PHRASES) == 0  # every phrase's links are kept: nothing to embed
    assert _links(warm) == computed
    assert warm.embedder.hits == warm.embedder.misses == 0  # not a vector was read
    assert warm._vectors is None  # nor the property names'
    assert warm._table is None  # whose table is not even built
    # without the memo (the same vectors, from the embedding cache): the same links
    plain = RelationLinker(EmbeddedKG(small_store), cold.embedder)
    assert _links(plain) == computed


def test_link_without_prepare_reads_the_memo(small_store, tmp_path):
    computed = _links(_linker(small_store, tmp_path))
    warm = _linker(small_store, tmp_path)
    assert _links(warm) == computed  # one read per phrase, no vector
    assert warm.embedder.hits == warm.embedder.misses == 0 and warm._vectors is None


@pytest.mark.parametrize(
    "change",
    [{"top_k": 2}, {"min_similarity": 0.5}, {"properties": ["P26", "P57", "P19", "P108"]},
     {"model": 64}, {"store": "other"}],
    ids=["top_k", "min_similarity", "properties", "model", "store"],
)
def test_another_setting_model_or_store_misses(small_store, other_store, tmp_path, change):
    _links(_linker(small_store, tmp_path))  # kept under the default settings
    store = other_store if change.pop("store", None) else small_store
    dim = change.pop("model", None)
    model = HashingEmbedder(dim) if dim else None
    changed = _linker(store, tmp_path, model, **change)
    assert changed.prepare(PHRASES) == len(PHRASES) - 1  # none kept: all embedded again
    fresh = RelationLinker(EmbeddedKG(store), CachedEmbedder(model or HashingEmbedder(),
                           tmp_path / "fresh.sqlite"), **change)  # fmt: skip
    assert _links(changed) == _links(fresh)
    assert relation_link_context(changed) != relation_link_context(_linker(small_store, tmp_path))


def test_no_memo_without_a_caching_embedder(small_store, tmp_path):
    """A plain embedder's vectors of a phrase depend on the batch it came in: its links are
    not kept (they could differ in the last bits from a later run's)."""
    kg = EmbeddedKG(small_store)
    cache = GroundingCache(tmp_path / "grounding.sqlite")
    relations = RelationLinker(kg, HashingEmbedder())
    Grounder(kg, EntityLinker(kg), relations, cache=cache)
    _links(relations)
    assert cache._conn.execute("SELECT count(*) FROM verdicts").fetchone() == (0,)


def test_a_damaged_kept_link_is_reported(small_store, tmp_path):
    linker = _linker(small_store, tmp_path)
    _links(linker)
    memo = linker.memo
    assert isinstance(memo, RelationLinkMemo)
    key = memo.cache.key(memo._context_key(), ("spouse", "spouse"), ())
    for bad in (["P26"], [["P26", "sideways", "label", 1.0]], [["P26", "forward", "label", "1"]]):
        memo.cache.put(key, bad)
        memo.cache.flush()
        fresh = _linker(small_store, tmp_path)
        with pytest.raises(InputError, match="grounding.sqlite"):
            fresh.link("spouse")


def test_a_scoring_run_saves_the_property_vectors_on_first_use(small_store, sample_files, tmp_path):
    """`creagraph score --judge kg` in a fresh process: the store writer is registered by
    opening a store (a scoring run never loads the importer, which used to register it),
    so the first run saves the vectors and the next cold run reads them."""
    store = tmp_path / "store"  # as imported (an earlier test here may have saved them)
    shutil.copytree(small_store, store, ignore=shutil.ignore_patterns(FILE_NAME, RECORD_NAME))
    answers = tmp_path / "in" / sample_files[0].name  # the model's name is in the file's
    answers.parent.mkdir()
    answers.write_text("".join(sample_files[0].read_text(encoding="utf-8").splitlines(True)[:2]))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0"}
    outputs = []
    for run in ("first", "second"):
        env["CREAGRAPH_CACHE_DIR"] = str(tmp_path / f"cache-{run}")  # cold each time
        out = tmp_path / f"out-{run}"
        cmd = [sys.executable, "-m", "creagraph.cli", "score", str(answers), "--judge", "kg",
               "--store", str(store), "--out", str(out)]  # fmt: skip
        done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "not saved" not in done.stderr
        assert (store / FILE_NAME).is_file() and (store / RECORD_NAME).is_file()
        outputs.append([(out / n).read_bytes() for n in ("paths.jsonl", "summary.csv")])
    assert outputs[0] == outputs[1]
    record = json.loads((store / RECORD_NAME).read_text(encoding="utf-8"))
    assert record[FILE_NAME]["size"] == (store / FILE_NAME).stat().st_size
    probe = ("import sys, creagraph.core.propvectors as p; from creagraph.kg import EmbeddedKG; "
             f"EmbeddedKG({str(store)!r}); print(p._STORE_WRITER is not None, "
             "'creagraph.kg.build' in sys.modules)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.split() == ["True", "False"]
