"""A character q-gram index that finds, among many names, every one whose rapidfuzz
``ratio`` to a query can reach a score cutoff — a lossless filter in front of rapidfuzz.

``fuzz.ratio(a, b) = 100 · (1 − d / (|a| + |b|))`` where ``d`` is the Indel distance (insertions
and deletions). A score of at least ``c`` therefore allows at most
``D = ⌊(|a| + |b|) · (100 − c) / 100⌋`` edits, and each edit changes at most ``q``
of a string's q-grams, so two such strings share at least
``max(|a|, |b|) − q + 1 − q·D`` q-grams counted with multiplicity (the q-gram lemma:
Ukkonen 1992, *Approximate string-matching with q-grams and maximal matches*; Gravano et
al. 2001). Names below that count cannot reach ``c``; where the bound is ≤ 0 (very short
strings, low cutoffs) every name of that length stays a candidate. The index therefore
returns a superset of the names rapidfuzz would accept, in their original order, and
scoring only those gives exactly the results of scanning all names (ties included,
since rapidfuzz breaks them by position and the order is kept).

The index is a few numpy arrays, built by sorting one packed integer per q-gram occurrence
(:func:`_postings`, :func:`_forward`: ~0.1 s for the slice's 1.6·10⁵ names); a query reads
only the postings of its own q-grams within the names whose length allows the cutoff
(names are sorted by length), skipping its most frequent q-grams as far as the bound
allows (prefix filtering) and checking the names found against the full bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["FuzzyIndex", "NgramIndex", "length_window"]

Q = 3


def length_window(length: int, cutoff: float) -> tuple[int, int]:
    """Shortest and longest name length whose ``ratio`` to a ``length``-character query can
    reach ``cutoff`` (``2·min(a, b)/(a + b) ≥ cutoff/100``)."""
    c = min(max(float(cutoff), 1.0), 100.0)
    shortest = math.ceil(length * c / (200.0 - c) - 1e-9)
    longest = math.floor(length * (200.0 - c) / c + 1e-9)
    return shortest, longest


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


class NgramIndex:
    """q-gram postings and per-name q-gram lists over ``keys`` (sorted by length).

    Parameters
    ----------
    keys : sequence of str
        The names to search, shortest first.

    Examples
    --------
    >>> index = NgramIndex(["ab", "abc", "abd", "xyz"])
    >>> index.candidates("abc", 90.0).tolist()
    [1]
    >>> index.candidates("abc", 80.0).tolist()  # bound ≤ 0: every length-allowed name
    [0, 1, 2, 3]
    """

    def __init__(self, keys: Sequence[str], q: int = Q):
        if q < 1 or q > 3:
            raise ValueError(f"q must be 1, 2 or 3, not {q}")
        self.q = q
        n = len(keys)
        self.lengths = np.fromiter(map(len, keys), dtype=np.int64, count=n)
        if n and bool(np.any(np.diff(self.lengths) < 0)):
            raise ValueError("keys must be sorted by length")
        self.vocab, gram_ids, self.names, self.counts = _postings(keys, self.lengths, q)
        v = max(len(self.vocab), 1)
        self.indptr = np.zeros(v + 1, dtype=np.int64)
        np.cumsum(np.bincount(gram_ids, minlength=v), out=self.indptr[1:])
        # forward lists: each name's distinct q-grams (ids) and their counts, by name
        self.fwd_grams, self.fwd_counts = _forward(self.names, gram_ids, self.counts, n, v)
        self.fwd_indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.names, minlength=n), out=self.fwd_indptr[1:])
        # by_length[L]: index of the first key of length ≥ L (L = 0 .. longest + 1)
        longest = int(self.lengths[-1]) if n else 0
        self.by_length = np.searchsorted(self.lengths, np.arange(longest + 2), "left")

    #: The arrays that make up an index (what :meth:`arrays` saves and
    #: :meth:`from_arrays` reads back).
    FIELDS = (
        "lengths", "vocab", "names", "counts", "indptr",
        "fwd_grams", "fwd_counts", "fwd_indptr", "by_length",
    )

    def arrays(self) -> dict[str, np.ndarray]:
        """The index as named arrays (for storing it; see :meth:`from_arrays`)."""
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], q: int = Q) -> NgramIndex:
        """An index from the arrays :meth:`arrays` returned, without rebuilding it.

        Raises ``ValueError`` when the arrays do not fit together (a damaged file)."""
        index = cls.__new__(cls)
        index.q = q
        for name in cls.FIELDS:
            if name not in arrays or arrays[name].ndim != 1:
                raise ValueError(f"array {name!r} missing or not 1-D")
            setattr(index, name, arrays[name])
        n, v = len(index.lengths), len(index.vocab)
        if (
            len(index.indptr) != max(v, 1) + 1
            or len(index.fwd_indptr) != n + 1
            or len(index.names) != len(index.counts)
            or len(index.fwd_grams) != len(index.names)
            or len(index.fwd_counts) != len(index.names)
            or (n and len(index.by_length) != int(index.lengths[-1]) + 2)
            or int(index.indptr[-1]) != len(index.names)
            or int(index.fwd_indptr[-1]) != len(index.names)
        ):
            raise ValueError("index arrays of inconsistent lengths")
        return index

    def __len__(self) -> int:
        return len(self.lengths)

    def window(self, length: int, cutoff: float) -> tuple[int, int]:
        """Index range ``[lo, hi)`` of the keys whose length allows ``cutoff``."""
        shortest, longest = length_window(length, cutoff)
        lo = int(np.searchsorted(self.lengths, shortest, "left"))
        hi = int(np.searchsorted(self.lengths, longest, "right"))
        return lo, hi

    def candidates(self, query: str, cutoff: float) -> np.ndarray:
        """Ascending indices of every key that may have ``ratio(query, key) ≥ cutoff``:
        those in the length window sharing at least their bound of q-grams with the query
        (names whose bound is ≤ 0 are all kept). Never leaves out a key that reaches the
        cutoff (see the module docstring)."""
        q = self.q
        la = len(query)
        shortest, longest = length_window(la, cutoff)
        shortest, longest = max(shortest, 0), min(longest, len(self.by_length) - 2)
        if longest < shortest:
            return np.zeros(0, dtype=np.int64)
        lo, hi = int(self.by_length[shortest]), int(self.by_length[longest + 1])
        c = min(max(float(cutoff), 1.0), 100.0)
        sizes = np.arange(shortest, longest + 1)
        edits = np.floor((la + sizes) * (100.0 - c) / 100.0 + 1e-6)
        bound = (np.maximum(la, sizes) - q + 1 - q * edits).astype(np.int64)  # by length
        kept = [
            np.arange(self.by_length[size], self.by_length[size + 1])
            for size in sizes[bound <= 0].tolist()
        ]
        if la >= q and bool(np.any(bound > 0)):
            codes = _codes(query)
            grams, q_counts = np.unique(
                _grams(codes, np.arange(la - q + 1), q), return_counts=True
            )
            slots = np.searchsorted(self.vocab, grams)
            ok = slots < len(self.vocab)
            ok[ok] = self.vocab[slots[ok]] == grams[ok]
            slots, q_counts = slots[ok], q_counts[ok]
            # Skip the most frequent q-grams while their occurrences stay below the smallest
            # positive bound: a qualifying name then still shares one of the others, and
            # at least (its bound − skipped occurrences) of them.
            least = int(bound[bound > 0].min())
            skipped = 0
            frequent = np.argsort(self.indptr[slots] - self.indptr[slots + 1], kind="stable")
            use = np.ones(len(slots), dtype=bool)
            for k in frequent.tolist():
                if skipped + int(q_counts[k]) >= least:
                    break
                skipped += int(q_counts[k])
                use[k] = False
            parts, weights = [], []
            for slot, count in zip(slots[use].tolist(), q_counts[use].tolist()):
                a, b = int(self.indptr[slot]), int(self.indptr[slot + 1])
                block = self.names[a:b]
                i, j = np.searchsorted(block, (lo, hi))
                if j > i:
                    parts.append(block[i:j])
                    weights.append(np.minimum(self.counts[a + i : a + j], count))
            if parts:
                shared = np.bincount(
                    np.concatenate(parts) - lo,
                    weights=np.concatenate(weights),
                    minlength=hi - lo,
                )
                unique = np.flatnonzero(shared) + lo
                needed = bound[self.lengths[unique] - shortest]
                unique = unique[(needed > 0) & (shared[unique - lo] >= needed - skipped)]
                if skipped and len(unique):
                    unique = self._verify(unique, slots, q_counts, bound, shortest)
                kept.append(unique)
        if not kept:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate(kept).astype(np.int64))


    def _verify(
        self,
        names: np.ndarray,
        slots: np.ndarray,
        q_counts: np.ndarray,
        bound: np.ndarray,
        shortest: int,
    ) -> np.ndarray:
        """The ``names`` sharing at least their bound of q-grams with the query (all of
        its q-grams, ``slots`` with ``q_counts`` occurrences), from their forward lists."""
        query_count = np.zeros(len(self.vocab), dtype=np.int64)
        query_count[slots] = q_counts
        starts, ends = self.fwd_indptr[names], self.fwd_indptr[names + 1]
        spans = ends - starts
        offsets = np.cumsum(spans) - spans
        flat = np.repeat(starts - offsets, spans) + np.arange(int(spans.sum()))
        shared = np.minimum(query_count[self.fwd_grams[flat]], self.fwd_counts[flat])
        sums = np.add.reduceat(shared, offsets)  # spans ≥ 1: each name shares a q-gram
        return names[sums >= bound[self.lengths[names] - shortest]]


class FuzzyIndex:
    """Trigram postings (fewer, shorter postings) at high cutoffs, bigram postings at low
    ones (where the trigram bound is ≤ 0 for most lengths); each built on first use.

    Examples
    --------
    >>> FuzzyIndex(["ab", "abc", "abd", "xyz"]).candidates("abc", 90.0).tolist()
    [1]
    """

    def __init__(self, keys: Sequence[str], indexes: dict[int, NgramIndex] | None = None):
        self.keys = keys
        self._indexes: dict[int, NgramIndex] = dict(indexes or {})

    def index(self, q: int) -> NgramIndex:
        if q not in self._indexes:
            self._indexes[q] = NgramIndex(self.keys, q)
        return self._indexes[q]

    def window(self, length: int, cutoff: float) -> tuple[int, int]:
        """See :meth:`NgramIndex.window`."""
        shortest, longest = length_window(length, cutoff)
        lengths = self.index(self.q_for(length, cutoff)).lengths
        return (
            int(np.searchsorted(lengths, shortest, "left")),
            int(np.searchsorted(lengths, longest, "right")),
        )

    def candidates(self, query: str, cutoff: float) -> np.ndarray:
        """See :meth:`NgramIndex.candidates` (q from :meth:`q_for`)."""
        return self.index(self.q_for(len(query), cutoff)).candidates(query, cutoff)

    @staticmethod
    def q_for(length: int, cutoff: float) -> int:
        """Trigrams at cutoffs ≥ 85 (the entity linker's 90), bigrams below: one index per
        cutoff range, built once (short queries there keep whole length buckets, a few
        thousand names, which rapidfuzz scores in well under a millisecond)."""
        return 3 if cutoff >= 85.0 else 2


def _bits(count: int) -> int:
    """Bits that hold the numbers ``0 .. count - 1`` (at least one)."""
    return max(int(count - 1).bit_length(), 1)


def _postings(
    keys: Sequence[str], lengths: np.ndarray, q: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The q-gram postings of ``keys`` (of ``lengths``): the distinct q-grams packed by
    :func:`_grams`, ascending (``vocab``), and each distinct (q-gram, key) pair ordered by
    q-gram, then key, as the q-gram's position in ``vocab`` (int64), the key (int32) and its
    occurrences in that key (int32).

    One sort of one integer per q-gram occurrence (issue 31): the characters are renumbered
    by rank among those present (so that the order of q-grams is kept) and a q-gram's
    renumbered characters packed with its key's number into 64 bits; when they do not fit
    (more than ~2¹⁵ distinct characters with 2¹⁸ keys), two sorts, with :func:`_grams`.
    Memory: about 33 bytes per character of the keys at the peak, the index's own ~15
    included (arrays shifted and combined in place, each freed once used)."""
    n = len(lengths)
    codes = np.frombuffer("".join(keys).encode("utf-32-le"), dtype=np.uint32)
    span = max(len(codes) - q + 1, 0)
    # a position starts a q-gram unless it is among the last q - 1 characters of its key
    # (a position near the end of a key shorter than q - 1 lies in an earlier key's tail)
    starts = np.ones(span, dtype=bool)
    ends = np.cumsum(lengths)
    for back in range(1, q):
        tail = ends - back
        starts[tail[(tail >= 0) & (tail < span)]] = False
    del ends
    per_key = np.maximum(lengths - q + 1, 0)
    # the characters present, and each character's rank among them (a table over code
    # points up to the largest present: at most 2.2 MB while it is used, 4.4 MB for an
    # alphabet of more than 2¹⁶ characters)
    present = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
    present[codes] = True
    alphabet = np.flatnonzero(present)
    del present
    char_bits, key_bits = _bits(len(alphabet)), _bits(n)
    if q * char_bits + key_bits > 64:
        owner = np.repeat(np.arange(n, dtype=np.int64), per_key)
        return _postings_by_unique(codes.astype(np.uint64), starts, owner, n, q)
    wide = np.dtype(np.uint16 if len(alphabet) <= 1 << 16 else np.uint32)
    table: np.ndarray[Any, np.dtype[np.unsignedinteger[Any]]] = np.zeros(
        int(alphabet[-1]) + 1 if len(alphabet) else 0, dtype=wide
    )
    table[alphabet] = np.arange(len(alphabet))
    rank = table[codes]
    del table, codes
    packed = rank[:span][starts].astype(np.uint64)
    for k in range(1, q):
        packed <<= np.uint64(char_bits)
        packed |= rank[k : k + span][starts]
    del rank, starts
    packed <<= np.uint64(key_bits)
    packed |= np.repeat(np.arange(n, dtype=np.uint64), per_key)
    packed.sort()
    first = np.ones(len(packed), dtype=bool)
    np.not_equal(packed[1:], packed[:-1], out=first[1:])
    at = np.flatnonzero(first)
    del first
    counts = np.empty(len(at), dtype=np.int32)
    counts[:-1] = np.diff(at)
    if len(at):
        counts[-1] = len(packed) - at[-1]
    pairs = packed[at]
    del packed, at
    names = (pairs & np.uint64((1 << key_bits) - 1)).astype(np.int32)
    pairs >>= np.uint64(key_bits)  # now each pair's q-gram
    new_gram = np.ones(len(pairs), dtype=bool)
    np.not_equal(pairs[1:], pairs[:-1], out=new_gram[1:])
    ranked = pairs[new_gram]
    del pairs
    gram_ids = np.cumsum(new_gram, dtype=np.int64)
    gram_ids -= 1
    vocab = np.zeros(len(ranked), dtype=np.uint64)
    for k in range(q):  # back to code points, 21 bits a character as _grams packs them
        char = (ranked >> np.uint64(char_bits * (q - 1 - k))) & np.uint64((1 << char_bits) - 1)
        vocab = (vocab << np.uint64(21)) | alphabet[char.astype(np.int64)].astype(np.uint64)
    return vocab, gram_ids, names, counts


def _postings_by_unique(
    codes: np.ndarray, starts: np.ndarray, owner: np.ndarray, n: int, q: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_postings` for alphabets too large to pack: q-grams numbered by one
    ``np.unique``, (q-gram, key) pairs by another."""
    vocab, gram_ids = np.unique(_grams(codes, np.flatnonzero(starts), q), return_inverse=True)
    pair, counts = np.unique(gram_ids.reshape(-1) * max(n, 1) + owner, return_counts=True)
    names = (pair % max(n, 1)).astype(np.int32)
    return vocab, (pair // max(n, 1)).astype(np.int64), names, counts.astype(np.int32)


def _forward(
    names: np.ndarray, gram_ids: np.ndarray, counts: np.ndarray, n: int, v: int,
    bits: int = 64,
) -> tuple[np.ndarray, np.ndarray]:
    """The postings regrouped by key (a stable regrouping: each key's q-grams ascending):
    their q-gram ids and counts (int32). One sort of (key, q-gram, count) packed into
    ``bits`` bits when they fit, else a stable argsort by key."""
    count_bits = _bits(int(counts.max()) + 1) if len(counts) else 1
    gram_bits = _bits(v)
    if _bits(n) + gram_bits + count_bits > bits:
        by_name = np.argsort(names, kind="stable")
        return gram_ids[by_name].astype(np.int32), counts[by_name]
    packed = names.astype(np.uint64)
    packed <<= np.uint64(gram_bits)
    packed |= gram_ids.view(np.uint64)  # non-negative: the same bits
    packed <<= np.uint64(count_bits)
    packed |= counts.astype(np.uint32)
    packed.sort()
    fwd_counts = (packed & np.uint64((1 << count_bits) - 1)).astype(np.int32)
    packed >>= np.uint64(count_bits)
    packed &= np.uint64((1 << gram_bits) - 1)
    return packed.astype(np.int32), fwd_counts


def _grams(codes: np.ndarray, positions: np.ndarray, q: int) -> np.ndarray:
    """The q-grams starting at ``positions`` packed into one integer (21 bits a character)."""
    out = codes[positions].copy()
    for k in range(1, q):
        out = (out << np.uint64(21)) | codes[positions + k]
    return out
