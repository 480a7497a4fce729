"""Embedding precision (issue 19, item 3): fp32 by default; bf16 under CPU autocast where the
processor has native bf16, close to fp32 and cached under its own key; a clear error
elsewhere or for an unknown precision."""

import numpy as np
import pytest

from creagraph.core import embeddings
from creagraph.core.embeddings import (
    CachedEmbedder,
    SentenceTransformerEmbedder,
    bf16_support,
    check_precision,
)
from creagraph.core.io import InputError

TEXTS = [
    "Marie Curie educated at University of Paris",
    "University of Paris located in Paris; Paris capital of France",
    "a cat",
    "Pierre Curie spouse Marie Curie; Marie Curie award received Nobel Prize in Physics",
]


def test_unknown_precision_is_refused():
    with pytest.raises(InputError, match="--precision must be one of fp32, bf16, not 'fp16'"):
        check_precision("fp16")
    assert check_precision("fp32") == "fp32"


def test_bf16_refused_without_native_support(monkeypatch):
    monkeypatch.setattr(embeddings, "_cpu_flags", lambda: {"avx2", "fma"})
    bf16_support.cache_clear()
    try:
        with pytest.raises(InputError, match="no native bf16 arithmetic.*use fp32"):
            SentenceTransformerEmbedder(precision="bf16")
    finally:
        bf16_support.cache_clear()


@pytest.mark.skipif(not bf16_support()[0], reason="this processor has no native bf16")
def test_bf16_vectors_are_close_to_fp32_and_cached_apart(tmp_path):
    fp32 = SentenceTransformerEmbedder()
    bf16 = SentenceTransformerEmbedder(precision="bf16")
    assert fp32.name == embeddings.DEFAULT_MODEL_NAME
    assert bf16.name == embeddings.DEFAULT_MODEL_NAME + "+bf16"
    a, b = fp32.encode(TEXTS), bf16.encode(TEXTS)
    assert b.dtype == np.float32 and b.shape == a.shape
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-6)
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.999 and not np.array_equal(a, b)  # close, but really bf16
    path = tmp_path / "cache.sqlite"
    c32 = CachedEmbedder(fp32, path)
    c32.encode(TEXTS)
    c16 = CachedEmbedder(bf16, path)
    assert np.array_equal(c16.encode(TEXTS), b)
    assert c16.misses == len(TEXTS)  # nothing of the fp32 run was reused
    assert np.array_equal(c32.encode(TEXTS), a)
