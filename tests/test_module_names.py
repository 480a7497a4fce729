"""Issue 30: no package attribute hides a submodule of the same name (as
``judgments.bradley_terry`` once did: the function replaced the module on first use)."""

from __future__ import annotations

import importlib
import pkgutil
import types

import creagraph


def test_every_submodule_stays_reachable_as_a_module():
    packages = ["creagraph"] + [
        f"creagraph.{m.name}" for m in pkgutil.iter_modules(creagraph.__path__) if m.ispkg
    ]
    clashes = []
    for name in packages:
        package = importlib.import_module(name)
        for public in getattr(package, "__all__", ()):
            getattr(package, public)  # lazy exports load here, as in user code
        for sub in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{name}.{sub.name}")
            if not isinstance(getattr(package, sub.name), types.ModuleType):
                clashes.append(f"{name}.{sub.name}")
    assert not clashes, f"a public name hides the module of the same name: {clashes}"
