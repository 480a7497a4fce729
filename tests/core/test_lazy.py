import sys

import pytest

import creagraph.kg
from creagraph.core.lazy import lazy_exports


def test_a_lazy_export_is_imported_on_first_use_and_cached():
    getattr_, dir_ = lazy_exports("creagraph.kg", {"open_graph": "creagraph.kg"})
    vars(sys.modules["creagraph.kg"]).pop("EmbeddedKG", None)
    assert "EmbeddedKG" in dir(creagraph.kg)
    cls = creagraph.kg.EmbeddedKG  # through the package's lazy __getattr__
    assert cls.__module__ == "creagraph.kg.embedded"
    assert vars(sys.modules["creagraph.kg"])["EmbeddedKG"] is cls
    assert "open_graph" in dir_()


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    getattr_, _ = lazy_exports("creagraph.kg", {})
    with pytest.raises(AttributeError, match="'creagraph.kg' has no attribute 'nope'"):
        getattr_("nope")
    with pytest.raises(AttributeError):
        creagraph.kg.nope  # noqa: B018
