"""The names creagraph.tig exports resolve (its docstring examples run through
--doctest-modules, see pyproject.toml)."""

import pytest


def test_public_api_resolves():
    import creagraph.tig as tig

    for name in tig.__all__:
        value = getattr(tig, name)
        assert getattr(value, "__name__", name) == name or not callable(value)
    assert set(tig.__all__) <= set(dir(tig))
    with pytest.raises(AttributeError):
        tig.no_such_name  # noqa: B018
