"""core.registry: names resolve lazily to module:attr targets; a user's module:attr works
anywhere a name does; unknown names, modules that do not import, missing attributes and
objects without the protocol's attributes are errors naming them (issue 30, item 4)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from creagraph.core.registry import EMBEDDERS, Registry, RegistryError, is_target


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A real module on sys.path, as a user's package would be."""
    (tmp_path / "usershapes.py").write_text(textwrap.dedent('''
        class Square:
            def __init__(self, side=1.0, context=None):
                self.side, self.context = side, context

            def area(self):
                return self.side ** 2

        class Blob:
            pass

        class Lazy:
            @property
            def area(self):
                raise RuntimeError("the protocol check ran a property")

        def broken():
            raise TypeError("inside the factory")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "usershapes"
    sys.modules.pop("usershapes", None)


def shapes() -> Registry:
    return Registry("shape", required=("area",), entries={"square": "usershapes:Square"})


def test_names_and_targets_do_not_import(user_module):
    registry = shapes()
    assert registry.names() == ("square",) and "square" in registry
    assert registry.target("square") == "usershapes:Square"
    assert "usershapes" not in sys.modules  # listing and looking up import nothing
    assert registry.choices() == "square | MODULE:ATTR"


def test_create_by_name_and_by_path_with_arguments_and_context(user_module):
    registry = shapes()
    made = registry.create("square", side=3.0, context="ctx")
    assert made.area() == 9.0 and made.context == "ctx"
    made = registry.create("usershapes:Square", side=2.0)
    assert made.area() == 4.0 and made.context is None


def test_context_only_reaches_targets_that_declare_it():
    registry = Registry("number", entries={"fraction": "fractions:Fraction"})
    assert registry.create("fraction", 3, context="ignored") == 3


def test_errors_name_the_problem(user_module):
    registry = shapes()
    with pytest.raises(RegistryError, match=r"^shape must be square, not 'circle' \(or a "
                       r"'module:attr' path"):
        registry.create("circle")
    with pytest.raises(RegistryError, match=r"shape 'nosuchmod:X': module 'nosuchmod' does "
                       r"not import"):
        registry.create("nosuchmod:X")
    with pytest.raises(RegistryError, match=r"shape 'usershapes:Circle': 'usershapes' has "
                       r"no 'Circle'"):
        registry.load("usershapes:Circle")
    assert registry.create("usershapes:Lazy")  # checked without running the property
    with pytest.raises(RegistryError, match=r"shape 'usershapes:Blob' lacks area"):
        registry.create("usershapes:Blob")
    with pytest.raises(RegistryError, match=r"does not take these arguments \['radius'\]"):
        registry.create("square", radius=2)
    with pytest.raises(TypeError, match="inside the factory"):  # not hidden as a misuse
        Registry("shape", entries={"b": "usershapes:broken"}).create("b")


def test_register_checks_names_and_targets():
    registry = Registry("shape")
    registry.register("frac", "fractions:Fraction", help="a number")
    assert registry.entries()[0].help == "a number"
    with pytest.raises(ValueError, match="already registered"):
        registry.register("frac", "fractions:Fraction")
    registry.register("frac", "decimal:Decimal", replace=True)
    assert registry.target("frac") == "decimal:Decimal"
    with pytest.raises(ValueError, match="must be 'module:attr'"):
        registry.register("x", "fractions.Fraction")
    with pytest.raises(ValueError, match="plain word"):
        registry.register("a:b", "fractions:Fraction")
    assert is_target("a.b:C.d") and not is_target(":C") and not is_target("a:")


def test_builtin_embedders():
    assert EMBEDDERS.names() == ("minilm", "hashing")
    hashing = EMBEDDERS.create("hashing", dim=16)
    assert hashing.dim == 16 and hashing.encode(["a b"]).shape == (1, 16)
