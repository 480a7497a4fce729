import socket

import numpy as np
import pytest

from creagraph.core.embeddings import (
    CachedEmbedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
)


def test_real_minilm_offline(monkeypatch, tmp_path):
    def no_network(self, address):
        raise OSError(f"network disabled in this test: {address}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    model = SentenceTransformerEmbedder()
    vectors = model.encode(
        [
            "A man is playing a guitar.",
            "Someone plays an instrument.",
            "The stock market fell sharply today.",
        ]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] + 0.2
    assert model.name == "sentence-transformers/all-MiniLM-L6-v2"

    cached = CachedEmbedder(model, tmp_path / "cache.sqlite")
    first = cached.encode(["alpha", "beta", "alpha"])
    assert cached.misses == 2 and cached.hits == 0
    again = CachedEmbedder(model, tmp_path / "cache.sqlite").encode(["beta", "alpha"])
    assert np.array_equal(again, first[[1, 0]])


def test_hashing_embedder_is_deterministic_normalised_and_lexical(tmp_path):
    import subprocess
    import sys

    from creagraph.core.embeddings import Embedder, HashingEmbedder

    emb = HashingEmbedder(dim=128)
    assert isinstance(emb, Embedder) and emb.name == "hashing-128"
    texts = ["Ann spouse Bob; Bob occupation poet", "Ann spouse Bob", "stock market fell", ""]
    vectors = emb.encode(texts)
    assert vectors.shape == (4, 128) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.5 and abs(sims[0, 2]) < sims[0, 1]
    assert emb.encode([]).shape == (0, 128)
    # the same vectors in another process (no per-process hash seed) and via the cache
    code = (
        "import sys, numpy as np; from creagraph.core.embeddings import HashingEmbedder; "
        "sys.stdout.buffer.write(HashingEmbedder(128).encode(sys.argv[1:]).tobytes())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, *texts[:3]], capture_output=True, check=True
    ).stdout
    assert np.array_equal(np.frombuffer(other, dtype=np.float32).reshape(3, 128), vectors[:3])
    cached = CachedEmbedder(emb, tmp_path / "cache.sqlite")
    assert np.array_equal(cached.encode(texts), vectors)
    assert np.array_equal(CachedEmbedder(emb, tmp_path / "cache.sqlite").encode(texts), vectors)
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedder(dim=1)


def _open_and_encode(args):
    path, barrier = args
    from creagraph.core.embeddings import CachedEmbedder, HashingEmbedder

    barrier.wait()
    cached = CachedEmbedder(HashingEmbedder(16), path)
    vectors = cached.encode(["one", "two", "three"])
    cached.close()
    return vectors.shape


def test_processes_opening_a_new_cache_at_once_all_succeed(tmp_path):
    """Distributed workers open a fresh cache at the same moment: none fails as "locked"."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    n = 6
    with ctx.Manager() as manager:
        barrier = manager.Barrier(n)
        with ctx.Pool(n) as pool:
            shapes = pool.map(_open_and_encode, [(tmp_path / "e.sqlite", barrier)] * n)
    assert shapes == [(3, 16)] * n


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda v: v[:-1].tobytes(), "length 15, the others 16"),
        (lambda v: v.tobytes()[:-2], "a blob of 62 bytes"),
        (lambda v: (v * 3).tobytes(), "norm 3, not 1"),
        (lambda v: np.where(np.arange(16) == 0, np.inf, v).astype(np.float32).tobytes(),
         "not finite"),
    ],
)
def test_cached_vectors_are_checked_when_read(tmp_path, damage, problem):
    """Issue 23: a damaged cached vector is an error naming the cache, never used."""
    import sqlite3

    from creagraph.core.io import InputError

    path = tmp_path / "cache.sqlite"
    cached = CachedEmbedder(HashingEmbedder(16), path)
    vectors = cached.encode(["alpha", "beta", "gamma"])
    cached.close()
    with sqlite3.connect(path) as conn:
        key = CachedEmbedder(HashingEmbedder(16), path)._key("beta")
        conn.execute("UPDATE vectors SET vec = ? WHERE key = ?", (damage(vectors[1]), key))
    with pytest.raises(InputError) as info:
        CachedEmbedder(HashingEmbedder(16), path).encode(["alpha", "beta", "gamma"])
    assert str(path) in str(info.value) and problem in str(info.value), str(info.value)
