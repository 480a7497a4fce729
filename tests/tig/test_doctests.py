import doctest
import importlib

import pytest

MODULES = ["adapters", "anchors", "atoms", "audit", "canonical", "cliche", "cluster",
           "evaluation", "graph", "io", "l2mo", "schema"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"creagraph.tig.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
