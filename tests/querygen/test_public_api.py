"""The names creagraph.querygen exports are listed once and resolve lazily to the
submodules that define them."""

import importlib

import pytest


def test_public_api_resolves_to_its_defining_module():
    import creagraph.querygen as querygen

    for module, names in querygen._MODULES.items():
        defined = importlib.import_module(module)
        for name in names:
            assert name in defined.__all__, (module, name)
            assert getattr(querygen, name) is getattr(defined, name)
    assert len(querygen.__all__) == len(set(querygen.__all__))
    assert set(querygen.__all__) <= set(dir(querygen))
    with pytest.raises(AttributeError):
        querygen.no_such_name  # noqa: B018
