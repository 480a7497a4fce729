"""Property-name vectors saved in the store at import (issue 19): bit-identical to the
vectors relation linking computes on a cold cache, used only for the embedder that made
them, checked like every store file, and optional (no embedding libraries: not written)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from creagraph.core.embeddings import CachedEmbedder, HashingEmbedder, SentenceTransformerEmbedder
from creagraph.core.io import InputError
from creagraph.core.propvectors import FILE_NAME, read_property_vectors, saved_name_vectors
from creagraph.core.relations import RelationLinker
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.scoring.grounding import EntityLinker, Grounder
from tests.kg.slicedump import slice_dump

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def small_dump(slice_path, tmp_path_factory) -> Path:
    """20,000 real slice lines (labels, aliases and statements of ~200 properties)."""
    return slice_dump(slice_path, tmp_path_factory.mktemp("propvectors"), step=31)


@pytest.fixture(scope="module")
def small_store(small_dump, tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("propvectors-store") / "store"
    import_dumps([small_dump], store, show_progress=False)
    return store


def _without_vectors(store: Path, target: Path) -> Path:
    """A copy of ``store`` (hard links) as imported before the file existed."""
    shutil.copytree(store, target, copy_function=os.link)
    (target / FILE_NAME).unlink()
    meta = json.loads((target / "meta.json").read_text())
    del meta["files"][FILE_NAME]
    (target / "meta.json").unlink()  # a new file: the link's target is the store's own
    (target / "meta.json").write_text(json.dumps(meta))
    return target


def test_saved_vectors_equal_a_cold_run(small_store, tmp_path):
    kg = EmbeddedKG(small_store)
    meta = kg.meta["files"][FILE_NAME]
    assert meta["size"] == (small_store / FILE_NAME).stat().st_size
    assert FILE_NAME in kg.verify()
    # what relation linking computes with a cold embedding cache (the file ignored)
    cold = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "cold.sqlite")
    computing = RelationLinker(kg, cold)
    computing._saved_name_vectors = lambda texts: None
    computed = computing._name_vectors()
    texts = computing.name_texts()
    assert len(texts) > 200 and len(set(texts)) < len(texts)  # repeats are rows too
    saved = saved_name_vectors(kg, cold, texts)
    assert saved is not None and saved.dtype == np.float32 and saved.flags["C_CONTIGUOUS"]
    assert np.array_equal(saved, computed)
    # through the linker, with a fresh cache: the file's vectors, written to the cache as a
    # cold run leaves them there
    fresh = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "fresh.sqlite")
    linker = RelationLinker(kg, fresh)
    assert np.array_equal(linker._name_vectors(), computed)
    assert fresh.misses == 0 and fresh.hits == 0  # the model was not asked
    cached = fresh.lookup(texts)
    assert set(cached) == set(texts)
    assert all(np.array_equal(cached[t], cold.lookup([t])[t]) for t in texts[:50])
    file_texts, _, identity = read_property_vectors(small_store / FILE_NAME)
    assert file_texts == list(dict.fromkeys(texts))
    assert identity["model"] == fresh.name and identity["precision"] == "fp32"


@pytest.mark.slow  # ~40 s quiet (the 2,674 names embedded for the copy), 100 s under load
def test_verdicts_identical_with_and_without_the_file(store_dir, shared_dir, tmp_path):
    """The slice store and a copy without the file: the same relation links (with their
    similarity scores) and the same verdicts for every triple of sample answers."""
    from creagraph.scoring.grounding import query_context
    from creagraph.scoring.inputs import read_answers
    from creagraph.scoring.parse import parse_answer

    assert FILE_NAME in EmbeddedKG(store_dir).meta["files"]
    old = _without_vectors(store_dir, tmp_path / "old")
    samples = sorted((shared_dir / "external/create-leaderboard/sample_outputs").glob("*.jsonl"))
    rows = read_answers(samples)[::7][:5]
    triples = [
        (t, query_context(r.extra, r.entity_a, r.entity_b))
        for r in rows
        for p in parse_answer(r.answer).paths
        for t in p.triples
        if len(t) == 3
    ]
    assert len(triples) > 100
    results, links = {}, {}
    for name, store in (("saved", store_dir), ("old", old)):
        graph = EmbeddedKG(store)
        embedder = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / f"{name}.sqlite")
        relations = RelationLinker(graph, embedder)
        grounder = Grounder(graph, EntityLinker(graph), relations)
        results[name] = [grounder.ground(*t, context=c).as_dict() for t, c in triples]
        links[name] = [
            [(r.pid, r.direction, r.method, r.score) for r in relations.link(t[1])]
            for t, _ in triples
        ]
        if name == "saved":  # the model embedded the phrases only, not the names
            assert embedder.misses < len(set(relations.name_texts()))
    assert results["saved"] == results["old"]
    assert links["saved"] == links["old"]
    statuses = [r["status"] for r in results["saved"]]
    assert len(set(statuses)) >= 2, statuses


def test_other_embedders_do_not_use_the_file(small_store, tmp_path):
    kg = EmbeddedKG(small_store)
    texts = RelationLinker(kg).name_texts()
    model = SentenceTransformerEmbedder()
    assert saved_name_vectors(kg, model, texts) is not None
    assert saved_name_vectors(kg, HashingEmbedder(dim=32), texts) is None
    assert saved_name_vectors(kg, SentenceTransformerEmbedder(batch_size=32), texts) is None
    assert saved_name_vectors(kg, model, [*texts, "a name the file lacks"]) is None
    old = EmbeddedKG(_without_vectors(small_store, tmp_path / "old"))
    assert saved_name_vectors(old, model, texts) is None


@pytest.mark.parametrize("how", ["garbled", "truncated"])
def test_a_damaged_file_is_refused_naming_it(small_store, tmp_path, how, monkeypatch):
    copy = tmp_path / "store"
    shutil.copytree(small_store, copy)
    data = (copy / FILE_NAME).read_bytes()
    middle = len(data) // 2
    damaged = data[:middle] if how == "truncated" else data[:middle] + b"\0" + data[middle + 1 :]
    (copy / FILE_NAME).write_bytes(damaged)
    with pytest.raises(InputError) as info:  # opening the store checks it (small store)
        EmbeddedKG(copy)
    assert str(copy / FILE_NAME) in str(info.value)
    import creagraph.kg.embedded as embedded

    monkeypatch.setattr(embedded, "VERIFY_ON_OPEN_BYTES", 0)  # too big to hash on open
    if how == "truncated":
        with pytest.raises(InputError):
            EmbeddedKG(copy)  # the size check still runs
    else:
        kg = EmbeddedKG(copy)
        with pytest.raises(InputError) as info:  # linking checks the file's digest
            RelationLinker(kg, SentenceTransformerEmbedder())._name_vectors()
        assert str(copy / FILE_NAME) in str(info.value) and "--force" in str(info.value)


def _import_in_subprocess(dump: Path, store: Path, prelude: str, env: dict) -> dict:
    code = (
        "import json, sys\n"
        + prelude
        + "from creagraph.kg import EmbeddedKG, import_dumps\n"
        + f"import_dumps([{str(dump)!r}], {str(store)!r}, show_progress=False)\n"
        + f"kg = EmbeddedKG({str(store)!r})\n"
        + "print(json.dumps({'files': sorted(kg.meta['files']), 'ok': bool(kg.verify()),\n"
        + "    'torch': 'torch' in sys.modules}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_without_the_embedding_libraries_writes_no_file(small_dump, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0"}
    blocked = "sys.modules['sentence_transformers'] = None\n"  # as if not installed
    got = _import_in_subprocess(small_dump, tmp_path / "a", blocked, env)
    assert FILE_NAME not in got["files"] and "fuzzy.npz" in got["files"] and got["ok"]
    off = {**env, "CREAGRAPH_PROPERTY_VECTORS": "0"}
    got = _import_in_subprocess(small_dump, tmp_path / "b", "", off)
    assert FILE_NAME not in got["files"] and got["ok"] and not got["torch"]
