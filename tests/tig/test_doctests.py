import doctest
import importlib

import pytest

MODULES = ["adapters", "anchors", "atoms", "audit", "brief", "canonical", "cliche", "cluster",
           "evaluation", "graph", "io", "l2mo", "schema", "score"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"creagraph.tig.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_public_api_resolves():
    import creagraph.tig as tig

    for name in tig.__all__:
        value = getattr(tig, name)
        assert getattr(value, "__name__", name) == name or not callable(value)
    assert set(tig.__all__) <= set(dir(tig))
    with pytest.raises(AttributeError):
        tig.no_such_name  # noqa: B018
