"""bradley_terry takes a DataFrame of comparisons, or says what to pass (issue 30)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from creagraph.judgments import bradley_terry, comparisons_from_records, make_comparisons
from creagraph.judgments.comparisons import as_comparisons

LEFT = ["a", "a", "b", "c", "a", "b", "c"]
RIGHT = ["b", "c", "c", "a", "b", "a", "b"]
WINNER = ["left", "left", "tie", "right", "right", "right", "left"]


def test_a_dataframe_gives_the_same_leaderboard_as_comparisons():
    table = pd.DataFrame({"left": LEFT, "right": RIGHT, "winner": WINNER})
    expected = bradley_terry(make_comparisons(LEFT, RIGHT, WINNER), ties="half")
    got = bradley_terry(table, ties="half")
    assert got.items == expected.items
    np.testing.assert_array_equal(got.theta, expected.theta)
    assert got.leaderboard() == expected.leaderboard()


def test_optional_columns_are_read():
    table = pd.DataFrame({"left": LEFT, "right": RIGHT, "winner": WINNER,
                          "rater": list("xyzxyzx"), "weight": [1, 2, 1, 1, 1, 1, 1]})
    got = as_comparisons(table)
    expected = comparisons_from_records(table.to_dict("records"), left="left", right="right",
                                        winner="winner", weight="weight", rater="rater")
    np.testing.assert_array_equal(got.weight, expected.weight)
    assert got.raters is not None and list(got.raters) == list(expected.raters)


def test_other_inputs_say_what_to_pass():
    with pytest.raises(TypeError, match="needs the columns 'left', 'right' and 'winner'"):
        bradley_terry(pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "winner": ["a"]}))
    with pytest.raises(TypeError, match=r"expected Comparisons, not list: build them with"):
        bradley_terry([("a", "b", "left")])  # type: ignore[arg-type]
    c = make_comparisons(LEFT, RIGHT, WINNER)
    assert as_comparisons(c) is c
