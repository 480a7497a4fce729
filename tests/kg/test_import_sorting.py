"""The import's row sorts (issue 31): rows packed into one integer each and sorted as such
give exactly the order, the rows and the dtypes of ``np.lexsort`` over the columns."""

import numpy as np
import pytest

from creagraph.kg.build import _sorted_rows, _unique_rows


def _reference(a, b, c, distinct):
    rows = list(zip(a.tolist(), b.tolist(), c.tolist()))
    return sorted(set(rows)) if distinct else sorted(rows)


@pytest.mark.parametrize("distinct", [True, False])
@pytest.mark.parametrize(
    "high",
    [(3, 3, 3), (10**9, 12_000, 10**9), (2**40, 5, 2**40)],  # the last cannot be packed
    ids=["tiny", "wikidata", "too-wide"],
)
def test_sorted_rows_equal_sorting_the_tuples(high, distinct):
    rng = np.random.default_rng(7)
    n = 5_000
    cols = [rng.integers(1, h + 1, n, dtype=np.int64) for h in high]
    cols = [np.concatenate([x, x[:300]]) for x in cols]  # repeated rows
    got = _sorted_rows(*cols, distinct=distinct)
    assert list(zip(*(x.tolist() for x in got))) == _reference(*cols, distinct)
    assert all(x.dtype == np.int64 for x in got)


def test_sorted_rows_either_way_agree_and_keep_dtypes():
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 50_000, 20_000).astype(np.int32) for _ in range(3)]
    packed = _sorted_rows(*cols)
    by_lexsort = _sorted_rows(*cols, bits=16)  # 16 bits: too few, np.lexsort
    order = np.lexsort(cols[::-1])
    for x, y, col in zip(packed, by_lexsort, cols):
        assert x.dtype == y.dtype == np.int32
        assert np.array_equal(x, y) and np.array_equal(x, col[order])
    empty = np.zeros(0, np.int64)
    assert [len(x) for x in _unique_rows(empty, empty, empty)] == [0, 0, 0]
    negative = np.array([-5, 3, -5]), np.array([1, 1, 1]), np.array([2, 0, 2])
    assert [x.tolist() for x in _unique_rows(*negative)] == [[-5, 3], [1, 1], [2, 0]]


def test_distinct_values_ascending():
    from creagraph.kg.build import _distinct

    rng = np.random.default_rng(11)
    for values in (rng.integers(-50, 10**12, 30_000), rng.integers(0, 9, 1_000), np.array([4])):
        assert _distinct(values.copy()).tolist() == sorted(set(values.tolist()))
    assert _distinct(np.zeros(0, np.int64)).tolist() == []


@pytest.mark.parametrize("spread", [1, 3, 1000], ids=["dense", "quarter", "sparse"])
def test_positions_by_table_or_search_equal_searchsorted(spread):
    """Item numbers filling their range (a table) or sparse (binary search): the same
    positions as ``np.searchsorted``, as int32."""
    from creagraph.kg.build import _distinct, _positions

    rng = np.random.default_rng(spread)
    numbers = _distinct(rng.integers(5, 5 + 2_000 * spread, 2_000))
    values = rng.choice(numbers, 10_000)
    got = _positions(numbers, values)
    assert got.dtype == np.int32 and np.array_equal(got, np.searchsorted(numbers, values))
    assert _positions(numbers[:0], values[:0]).tolist() == []
