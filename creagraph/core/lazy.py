"""Lazy package exports: a package's public names are imported on first use, so that
``import creagraph.<job>`` (and ``creagraph --help``) stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module-level ``__getattr__`` and ``__dir__`` for ``package``.

    ``exports`` maps each public name to the module that defines it; the first access
    imports that module and caches the value in the package's namespace.

    Examples
    --------
    >>> getattr_, dir_ = lazy_exports("creagraph.core", {"normalize": "creagraph.core.text"})
    >>> getattr_("normalize").__name__
    'normalize'
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
