"""Property-name vectors saved in the store (issues 19 and 31): computed once, by the first
run that needs them (``kg import`` does not load the model), bit-identical to the vectors
relation linking computes on a cold cache and to those an import computes
(``CREAGRAPH_PROPERTY_VECTORS=import``), saved atomically under the store's lock (not at all,
with a warning, when the store cannot be written), used only for the embedder that made
them, checked like every store file, and optional (no embedding libraries: not written)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from creagraph.core import settings
from creagraph.core.embeddings import CachedEmbedder, HashingEmbedder, SentenceTransformerEmbedder
from creagraph.core.io import InputError
from creagraph.core.propvectors import (
    FILE_NAME,
    RECORD_NAME,
    read_property_vectors,
    saved_name_vectors,
)
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
    """A store as ``kg import`` leaves it: no property vectors yet."""
    store = tmp_path_factory.mktemp("propvectors-store") / "store"
    import_dumps([small_dump], store, show_progress=False)
    return store


@pytest.fixture(scope="module")
def saved_store(small_store, tmp_path_factory) -> Path:
    """``small_store`` after a first linking run saved the vectors in it."""
    store = tmp_path_factory.mktemp("propvectors-saved") / "store"
    shutil.copytree(small_store, store)
    kg = EmbeddedKG(store)
    RelationLinker(kg, SentenceTransformerEmbedder())._name_vectors()
    kg.close()
    assert (store / FILE_NAME).is_file() and (store / RECORD_NAME).is_file()
    return store


def _without_vectors(store: Path, target: Path) -> Path:
    """A copy of ``store`` (hard links) as imported before the file existed."""
    shutil.copytree(store, target, copy_function=os.link)
    (target / FILE_NAME).unlink()
    (target / RECORD_NAME).unlink(missing_ok=True)
    meta = json.loads((target / "meta.json").read_text())
    meta["files"].pop(FILE_NAME, None)
    (target / "meta.json").unlink()  # a new file: the link's target is the store's own
    (target / "meta.json").write_text(json.dumps(meta))
    return target


def test_import_saves_none_and_the_first_run_saves_the_cold_runs_vectors(
    small_dump, small_store, tmp_path
):
    assert FILE_NAME not in EmbeddedKG(small_store).meta["files"]
    assert not (small_store / FILE_NAME).exists()
    store = tmp_path / "store"
    shutil.copytree(small_store, store)
    kg = EmbeddedKG(store)
    # what relation linking computes with a cold embedding cache (the file ignored)
    cold = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "cold.sqlite")
    computing = RelationLinker(kg, cold)
    computing._saved_name_vectors = lambda texts: None
    computed = computing._name_vectors()
    texts = computing.name_texts()
    assert len(texts) > 200 and len(set(texts)) < len(texts)  # repeats are rows too
    assert FILE_NAME not in kg.meta["files"] and not (store / FILE_NAME).exists()
    # the first run that needs them, with a fresh cache: computes them by the cold run's
    # call, saves them in the store, and leaves the cache as a cold run leaves it
    first = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "first.sqlite")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # saved: nothing to warn about
        got = RelationLinker(kg, first)._name_vectors()
    assert got.dtype == np.float32 and np.array_equal(got, computed)
    cached = first.lookup(texts)
    assert set(cached) == set(texts)
    assert all(np.array_equal(cached[t], cold.lookup([t])[t]) for t in texts[:50])
    # meta.json, the store's identity for every cache keyed on it, is as the import wrote it
    assert (store / "meta.json").read_bytes() == (small_store / "meta.json").read_bytes()
    record = json.loads((store / RECORD_NAME).read_text())
    assert record[FILE_NAME]["size"] == (store / FILE_NAME).stat().st_size
    assert sorted(p.name for p in store.iterdir()) == sorted(
        [p.name for p in small_store.iterdir()] + [FILE_NAME, RECORD_NAME]
    )
    reopened = EmbeddedKG(store)
    reopened.verify()
    assert np.array_equal(RelationLinker(kg, first)._name_vectors(), computed)  # same process
    saved = saved_name_vectors(reopened, first, texts)
    assert saved is not None and saved.flags["C_CONTIGUOUS"] and np.array_equal(saved, computed)
    # a later run, fresh cache: the file's vectors; the model is not asked
    fresh = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / "fresh.sqlite")
    assert np.array_equal(RelationLinker(reopened, fresh)._name_vectors(), computed)
    assert fresh.misses == 0 and fresh.hits == 0
    file_texts, lazy_vectors, identity = read_property_vectors(store / FILE_NAME)
    assert file_texts == list(dict.fromkeys(texts))
    assert identity["model"] == fresh.name and identity["precision"] == "fp32"
    # byte-identical to the vectors an import computes (CREAGRAPH_PROPERTY_VECTORS=import)
    with settings.overridden(CREAGRAPH_PROPERTY_VECTORS="import"):
        import_dumps([small_dump], tmp_path / "at-import", show_progress=False)
    at_import = read_property_vectors(tmp_path / "at-import" / FILE_NAME)
    assert at_import[0] == file_texts and at_import[2] == identity
    assert at_import[1].tobytes() == lazy_vectors.tobytes()


def _meta_bytes(store: Path) -> bytes:
    return (store / "meta.json").read_bytes()


def test_a_store_being_imported_gets_nothing_saved_and_the_run_says_so(
    saved_store, small_store, tmp_path
):
    store = tmp_path / "store"
    shutil.copytree(small_store, store)
    before = _meta_bytes(store)
    kg = EmbeddedKG(store)
    lock = os.open(tmp_path / ".store.import.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running `kg import` holds it
    try:
        with pytest.warns(UserWarning, match="not saved.*another process is writing the store"):
            got = RelationLinker(kg, SentenceTransformerEmbedder())._name_vectors()
    finally:
        os.close(lock)
    assert not (store / FILE_NAME).exists() and not (store / RECORD_NAME).exists()
    assert _meta_bytes(store) == before
    saved = RelationLinker(EmbeddedKG(saved_store), SentenceTransformerEmbedder())
    assert np.array_equal(got, saved._name_vectors())
    # a store re-imported since this run opened it: not written over
    (store / "meta.json").write_text(json.dumps({**json.loads(before), "created": "later"}))
    with pytest.warns(UserWarning, match="not saved.*changed since this run opened it"):
        again = RelationLinker(kg, SentenceTransformerEmbedder())._name_vectors()
    assert np.array_equal(again, got) and not (store / FILE_NAME).exists()


def test_a_read_only_store_computes_in_memory_and_says_nothing_is_saved(
    saved_store, small_store, tmp_path
):
    store = tmp_path / "store"
    shutil.copytree(small_store, store)
    before = _meta_bytes(store)
    # the immutable flag: refused even to root, which ignores permission bits
    if subprocess.run(["chattr", "+i", str(store)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available on this file system")
    try:
        kg = EmbeddedKG(store)
        said = re.escape(f"{store}: ") + ".*not saved in the store .*cannot be written"
        with pytest.warns(UserWarning, match=said):
            got = RelationLinker(kg, SentenceTransformerEmbedder())._name_vectors()
    finally:
        subprocess.run(["chattr", "-i", str(store)], check=True)
    assert not (store / FILE_NAME).exists() and _meta_bytes(store) == before
    assert sorted(p.name for p in store.iterdir()) == sorted(p.name for p in small_store.iterdir())
    expected = RelationLinker(EmbeddedKG(saved_store), SentenceTransformerEmbedder())
    assert np.array_equal(got, expected._name_vectors())


@pytest.mark.slow  # ~40 s quiet (the 2,674 names embedded for the copy), 100 s under load
def test_verdicts_identical_with_and_without_the_file(store_dir, shared_dir, tmp_path):
    """The slice store and a copy without the file: the same relation links (with their
    similarity scores) and the same verdicts for every triple of sample answers."""
    from creagraph.scoring.grounding import query_context
    from creagraph.scoring.inputs import read_answers
    from creagraph.scoring.parse import parse_answer

    first = tmp_path / "first"  # the slice store after its first linking run
    shutil.copytree(store_dir, first, copy_function=os.link)
    if not (first / FILE_NAME).exists():  # (saved atomically: new files, not the links)
        RelationLinker(EmbeddedKG(first), SentenceTransformerEmbedder())._name_vectors()
    assert (first / FILE_NAME).is_file()
    old = _without_vectors(first, tmp_path / "old")
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
    for name, store in (("saved", first), ("old", old)):
        graph = EmbeddedKG(store)
        embedder = CachedEmbedder(SentenceTransformerEmbedder(), tmp_path / f"{name}.sqlite")
        relations = RelationLinker(graph, embedder)
        grounder = Grounder(graph, EntityLinker(graph), relations)
        with settings.overridden(CREAGRAPH_PROPERTY_VECTORS="0"):  # "old" stays without
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


def test_other_embedders_do_not_use_the_file(saved_store, tmp_path):
    kg = EmbeddedKG(saved_store)
    texts = RelationLinker(kg).name_texts()
    model = SentenceTransformerEmbedder()
    assert saved_name_vectors(kg, model, texts) is not None
    assert saved_name_vectors(kg, HashingEmbedder(dim=32), texts) is None
    assert saved_name_vectors(kg, SentenceTransformerEmbedder(batch_size=32), texts) is None
    assert saved_name_vectors(kg, model, [*texts, "a name the file lacks"]) is None
    before = _meta_bytes(saved_store)
    with settings.overridden(CREAGRAPH_PROPERTY_VECTORS="0"):  # never saved: nothing computed
        old_store = _without_vectors(saved_store, tmp_path / "old")
        assert saved_name_vectors(EmbeddedKG(old_store), model, texts) is None
        assert saved_name_vectors(EmbeddedKG(old_store), HashingEmbedder(dim=32), texts) is None
    assert not (old_store / FILE_NAME).exists() and _meta_bytes(saved_store) == before
    # a store from before the file existed gets it on first use (the default)
    assert saved_name_vectors(EmbeddedKG(old_store), model, texts) is not None
    assert (old_store / FILE_NAME).is_file() and (old_store / RECORD_NAME).is_file()
    # a record made for another meta.json (a store changed by hand) is not trusted: saved anew
    record = json.loads((old_store / RECORD_NAME).read_text())
    (old_store / RECORD_NAME).write_text(json.dumps({**record, "meta_sha256": "0" * 64}))
    (old_store / FILE_NAME).write_bytes(b"stale")
    assert saved_name_vectors(EmbeddedKG(old_store), model, texts) is not None
    assert read_property_vectors(old_store / FILE_NAME)[0] == list(dict.fromkeys(texts))


def test_a_store_with_vectors_saved_on_first_use_is_replaced_by_a_new_import(
    small_dump, saved_store, tmp_path
):
    store = tmp_path / "store"
    shutil.copytree(saved_store, store)
    import_dumps([small_dump], store, show_progress=False, force=True)  # not "foreign files"
    assert not (store / FILE_NAME).exists() and not (store / RECORD_NAME).exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / RECORD_NAME).write_text("{}")  # alone: not a store, not replaced
    with pytest.raises(InputError, match="not a creagraph store"):
        import_dumps([small_dump], tmp_path / "other", show_progress=False)


@pytest.fixture(scope="module")
def at_import_store(small_dump, tmp_path_factory) -> Path:
    """A store whose import saved the vectors (``CREAGRAPH_PROPERTY_VECTORS=import``)."""
    store = tmp_path_factory.mktemp("propvectors-at-import") / "store"
    with settings.overridden(CREAGRAPH_PROPERTY_VECTORS="import"):
        import_dumps([small_dump], store, show_progress=False)
    assert FILE_NAME in EmbeddedKG(store).meta["files"] and not (store / RECORD_NAME).exists()
    return store


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    middle = len(data) // 2
    path.write_bytes(data[:middle] if how == "truncated" else
                     data[:middle] + b"\0" + data[middle + 1 :])  # fmt: skip


@pytest.mark.parametrize("how", ["garbled", "truncated"])
def test_a_damaged_file_is_refused_naming_it(
    at_import_store, saved_store, tmp_path, how, monkeypatch
):
    import creagraph.kg.embedded as embedded

    # saved at import: checked on open like every store file listed in meta.json
    copy = tmp_path / "store"
    shutil.copytree(at_import_store, copy)
    _damage(copy / FILE_NAME, how)
    with pytest.raises(InputError) as info:  # opening the store checks it (small store)
        EmbeddedKG(copy)
    assert str(copy / FILE_NAME) in str(info.value)
    monkeypatch.setattr(embedded, "VERIFY_ON_OPEN_BYTES", 0)  # too big to hash on open
    if how == "truncated":
        with pytest.raises(InputError):
            EmbeddedKG(copy)  # the size check still runs
    else:
        kg = EmbeddedKG(copy)
        with pytest.raises(InputError) as info:  # linking checks the file's digest
            RelationLinker(kg, SentenceTransformerEmbedder())._name_vectors()
        assert str(copy / FILE_NAME) in str(info.value) and "--force" in str(info.value)
    # saved on first use: linking checks it against its record
    lazy = tmp_path / "lazy"
    shutil.copytree(saved_store, lazy)
    _damage(lazy / FILE_NAME, how)
    with pytest.raises(InputError) as info:
        RelationLinker(EmbeddedKG(lazy), SentenceTransformerEmbedder())._name_vectors()
    said = str(info.value)
    assert str(lazy / FILE_NAME) in said and RECORD_NAME in said and "delete" in said


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


def test_import_loads_no_model_unless_asked_and_writes_no_file_without_the_libraries(
    small_dump, tmp_path
):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0"}
    env.pop("CREAGRAPH_PROPERTY_VECTORS", None)
    got = _import_in_subprocess(small_dump, tmp_path / "a", "", env)  # the default
    assert FILE_NAME not in got["files"] and "fuzzy.npz" in got["files"] and got["ok"]
    assert not got["torch"]  # the import costs what it costs without vectors
    asked = {**env, "CREAGRAPH_PROPERTY_VECTORS": "import"}
    blocked = "sys.modules['sentence_transformers'] = None\n"  # as if not installed
    got = _import_in_subprocess(small_dump, tmp_path / "b", blocked, asked)
    assert FILE_NAME not in got["files"] and "fuzzy.npz" in got["files"] and got["ok"]
