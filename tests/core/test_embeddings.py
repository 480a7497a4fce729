import socket

import numpy as np

from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder


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
