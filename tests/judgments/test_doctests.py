from __future__ import annotations

import doctest
import importlib

import pytest

# importlib: ``creagraph.judgments.bradley_terry`` the attribute is the re-exported function
MODULES = ["agreement", "bradley_terry", "hcb", "llmfao", "synthetic"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"creagraph.judgments.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
