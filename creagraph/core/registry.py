"""Named, lazily imported implementations of the library's extension points.

A :class:`Registry` maps short names (``"stored"``, ``"offline"``, ``"minilm"`` …) to
``"module:attr"`` targets that are imported only when the name is used, so that listing
the choices (``--help``) loads no heavy library. Anywhere a registered name is accepted, a
``"module:attr"`` string naming a user's class or factory is accepted too: the string is
all a worker process (Dask, Ray) needs to re-create the object, as long as the module
imports there.

The registries themselves live beside the jobs that use them: judges in
:data:`creagraph.scoring.config.JUDGES`, atom extractors and population sources in
:data:`creagraph.tig.config.EXTRACTORS` and :data:`creagraph.tig.config.SOURCES`, graph
backends in :data:`creagraph.kg.GRAPH_BACKENDS`, and embedders here
(:data:`EMBEDDERS`, because the embedders are the core's).

Creating an object calls the target with the keyword arguments the configuration names
(e.g. ``judge_args`` of :class:`creagraph.scoring.config.ScorerConfig`); a target that
declares a ``context`` keyword also receives what the caller has at hand (for a judge:
the scorer's settings, graph and embedder). The object made must have the attributes of
the extension point's protocol, else the error names the missing ones.

Examples
--------
>>> shapes = Registry("shape", required=("area",))
>>> shapes.register("square", "fractions:Fraction", help="not a shape at all")
>>> shapes.names()
('square',)
>>> shapes.target("square")
'fractions:Fraction'
>>> shapes.create("square", 1)
Traceback (most recent call last):
...
creagraph.core.registry.RegistryError: shape 'square' (fractions:Fraction) lacks area
>>> shapes.load("nosuch")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
creagraph.core.registry.RegistryError: shape must be square, not 'nosuch' (or ...)
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from creagraph.core.io import InputError

__all__ = ["Registry", "RegistryError", "Entry", "EMBEDDERS", "is_target", "minilm_embedder"]


class RegistryError(InputError):
    """An unknown name, a ``module:attr`` that does not import, or an object that does not
    satisfy the extension point's protocol (the message names it)."""


@dataclass(frozen=True)
class Entry:
    """One registered implementation: its name, ``module:attr`` target and a help line."""

    name: str
    target: str
    help: str = ""


def is_target(spec: str) -> bool:
    """Whether ``spec`` is a ``module:attr`` path rather than a registered name.

    Examples
    --------
    >>> is_target("mypkg.judges:MyJudge"), is_target("kg")
    (True, False)
    """
    module, sep, attr = spec.partition(":")
    return bool(sep and module and attr)


class Registry:
    """Names of one extension point's implementations, each imported on first use.

    Parameters
    ----------
    kind : str
        What the entries are (``"judge"``), for messages.
    required : tuple of str
        Attributes every created object must have (the protocol, checked by name).
    entries : mapping, optional
        Built-in ``name -> "module:attr"`` (or ``name -> ("module:attr", help)``).
    """

    def __init__(
        self,
        kind: str,
        *,
        required: tuple[str, ...] = (),
        entries: Mapping[str, str | tuple[str, str]] | None = None,
    ) -> None:
        self.kind = kind
        self.required = required
        self._entries: dict[str, Entry] = {}
        for name, value in (entries or {}).items():
            target, help_ = (value, "") if isinstance(value, str) else value
            self.register(name, target, help=help_)

    def register(self, name: str, target: str, *, help: str = "", replace: bool = False) -> None:
        """Register ``name`` for ``target`` (``"module:attr"``, imported when first used).

        A name registered here exists only in this process: give workers the
        ``module:attr`` path itself.
        """
        if not name or is_target(name):
            raise ValueError(f"a {self.kind} name must be a plain word, not {name!r}")
        if not is_target(target):
            raise ValueError(f"{self.kind} {name!r}: target must be 'module:attr', not {target!r}")
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered (replace=True)")
        self._entries[name] = Entry(name, target, help)

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    def entries(self) -> tuple[Entry, ...]:
        """The registered entries, in registration order."""
        return tuple(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def choices(self) -> str:
        """The names as ``a | b | c | MODULE:ATTR`` (for help texts)."""
        return " | ".join([*self._entries, "MODULE:ATTR"])

    def check_spec(self, spec: str) -> str:
        """``spec`` itself if it is a registered name or looks like ``module:attr``."""
        if spec in self._entries or is_target(str(spec)):
            return spec
        names = list(self._entries)
        listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)
        raise RegistryError(
            f"{self.kind} must be {listed}, not {spec!r} (or a 'module:attr' path to your own)"
        )

    def target(self, spec: str) -> str:
        """The ``module:attr`` target of a name (a target is returned as it is)."""
        spec = self.check_spec(spec)
        entry = self._entries.get(spec)
        return entry.target if entry is not None else spec

    def load(self, spec: str) -> Any:
        """Import the target of ``spec`` and return it (a class or a factory)."""
        target = self.target(spec)
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise RegistryError(
                f"{self.kind} {spec!r}: module {module_name!r} does not import ({exc})"
            ) from exc
        value: Any = module
        for part in attr.split("."):
            if not hasattr(value, part):
                raise RegistryError(f"{self.kind} {spec!r}: {module_name!r} has no {attr!r}")
            value = getattr(value, part)
        if not callable(value):
            raise RegistryError(f"{self.kind} {spec!r}: {target} is not a class or a function")
        return value

    def create(self, spec: str, /, *args: Any, context: Any = None, **kwargs: Any) -> Any:
        """Make the object ``spec`` names with ``args``/``kwargs``; ``context`` is passed
        only to a target that declares a ``context`` parameter. The result is checked
        against the protocol (:meth:`check`)."""
        factory = self.load(spec)
        if context is not None and _takes_context(factory):
            kwargs = {**kwargs, "context": context}
        try:
            made = factory(*args, **kwargs)
        except TypeError as exc:
            if _signature_error(factory, args, kwargs):
                raise RegistryError(
                    f"{self.kind} {spec!r} ({self.target(spec)}) does not take these "
                    f"arguments {sorted(kwargs)}: {exc}"
                ) from exc
            raise
        return self.check(made, spec)

    def check(self, obj: Any, spec: str) -> Any:
        """``obj`` if it has every attribute of the protocol, else a :class:`RegistryError`
        naming the missing ones."""
        missing = [name for name in self.required if not _has(obj, name)]
        if missing:
            entry = self._entries.get(spec)
            label = repr(spec) + (f" ({entry.target})" if entry is not None else "")
            raise RegistryError(f"{self.kind} {label} lacks {', '.join(missing)}")
        return obj


def minilm_embedder(*, precision: str | None = None, context: Any = None) -> Any:
    """The ``minilm`` embedder: :func:`creagraph.core.embeddings.default_embedder` at
    ``precision``, else the ``precision`` of ``context`` (a scorer's settings), else the
    default precision."""
    from creagraph.core.embeddings import default_embedder

    return default_embedder(precision=precision or getattr(context, "precision", None))


def _has(obj: Any, name: str) -> bool:
    """Whether ``obj`` has the attribute ``name``, without running a property (an
    embedder's ``dim`` may load its model): looked up statically, then through a
    ``__getattr__`` the class defines."""
    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return hasattr(type(obj), "__getattr__") and hasattr(obj, name)
    return True


def _takes_context(factory: Callable[..., Any]) -> bool:
    try:
        return "context" in inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def _signature_error(factory: Callable[..., Any], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> bool:
    """Whether calling ``factory`` with these arguments fails on its signature (rather
    than inside it)."""
    try:
        inspect.signature(factory).bind(*args, **kwargs)
    except TypeError:
        return True
    except ValueError:
        return False
    return False


#: Text embedders (:class:`creagraph.core.embeddings.Embedder`).
EMBEDDERS = Registry(
    "embedder",
    required=("encode", "dim", "name"),
    entries={
        "minilm": ("creagraph.core.registry:minilm_embedder",
                   "all-MiniLM-L6-v2 from the installed package, cached (the default)"),
        "hashing": ("creagraph.core.embeddings:HashingEmbedder",
                    "feature hashing, no model (fast, for tests and examples)"),
    },
)
