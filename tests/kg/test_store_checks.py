"""Opening a store checksums each file once per version of it (issue 31): the cache folder
remembers which (device, inode, size, mtime, ctime) matched ``meta.json``'s SHA-256, and
any change to a file — written in place with its times put back, replaced by another file,
or its recorded digest changed — makes it hashed (and refused) again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import creagraph.kg.store as store_module
from creagraph.core.io import InputError
from creagraph.kg import EmbeddedKG, import_dumps
from tests.kg.slicedump import slice_dump


@pytest.fixture(scope="module")
def small_store(slice_path, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("checks")
    store = folder / "store"
    import_dumps([slice_dump(slice_path, folder, step=97)], store, show_progress=False)
    return store


@pytest.fixture
def store(small_store, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "store"
    shutil.copytree(small_store, target)
    return target


@pytest.fixture
def hashed(monkeypatch) -> list[str]:
    """The names of the files the store module reads to hash (the real hash is computed)."""
    seen: list[str] = []
    real = store_module.sha256_file

    def counting(path):
        seen.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(store_module, "sha256_file", counting)
    return seen


def _memo(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "cache" / store_module.CHECKED_FILE).read_text())["files"]


def _open(store: Path) -> dict[str, int]:
    kg = EmbeddedKG(store)
    try:
        return kg.stats()
    finally:
        kg.close()


def test_second_open_hashes_nothing(store, tmp_path, hashed):
    stats = _open(store)
    files = sorted(EmbeddedKG(store)._files)
    assert sorted(hashed) == files  # the first open hashed every file once
    memo = _memo(tmp_path)
    assert sorted(Path(k).name for k in memo) == files
    hashed.clear()
    assert _open(store) == stats
    assert hashed == []


def test_file_written_in_place_with_times_put_back_is_refused(store, hashed):
    _open(store)
    path = store / "out_obj.npy"
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[-8:] = bytes(reversed(data[-8:]))  # same size, values in range: only a hash sees it
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # mtime as before; ctime moved
    assert path.stat().st_mtime_ns == info.st_mtime_ns and path.stat().st_size == info.st_size
    hashed.clear()
    with pytest.raises(InputError, match="checksum differs") as err:
        EmbeddedKG(store)
    assert str(path) in str(err.value)
    assert hashed.count("out_obj.npy") == 1


def test_file_replaced_by_another_of_the_same_size_and_time_is_refused(store, tmp_path):
    _open(store)
    path = store / "in_subj.npy"
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[-8:] = bytes(reversed(data[-8:]))
    other = tmp_path / "other.npy"
    other.write_bytes(bytes(data))
    os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(other, path)  # a new inode, same size and mtime
    with pytest.raises(InputError, match="checksum differs"):
        EmbeddedKG(store)


def test_changed_record_is_checked_again(store):
    _open(store)
    meta = json.loads((store / "meta.json").read_text())
    meta["files"]["pnums.npy"]["sha256"] = "0" * 64  # the file is as remembered, the record not
    (store / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="checksum differs") as err:
        EmbeddedKG(store)
    assert str(store / "pnums.npy") in str(err.value)


def test_unreadable_memo_means_hashing_again(store, tmp_path, hashed):
    _open(store)
    memo = tmp_path / "cache" / store_module.CHECKED_FILE
    for junk in (b"{not json", b"[1, 2]", b'{"format": 99, "files": {}}'):
        memo.write_bytes(junk)
        hashed.clear()
        _open(store)
        assert hashed, junk  # nothing was trusted
        assert len(_memo(tmp_path)) == len(hashed)  # and the memo is whole again


def test_memo_in_a_folder_that_cannot_be_written(store, tmp_path, monkeypatch, hashed):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    _open(store)
    first = len(hashed)
    _open(store)  # still opens; every file hashed each time
    assert first and len(hashed) == 2 * first


def test_verify_always_hashes(store, hashed):
    kg = EmbeddedKG(store)
    hashed.clear()
    assert set(kg.verify().values()) == {"ok"}
    assert sorted(hashed) == sorted(kg._files)
    kg.close()
