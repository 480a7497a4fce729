"""The examples in the querygen docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["catalogue", "filters", "generate", "oracle", "phrasing", "sampling"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"creagraph.querygen.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
