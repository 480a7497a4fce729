"""Every ``CREAGRAPH_*`` environment variable, its default and its meaning, in one place.

creagraph reads its environment only through this module: :data:`VARIABLES` declares each
variable (README "Settings" shows the same table; ``tests/core/test_settings.py`` checks
that no other module names an undeclared one), :func:`value` reads one, and the folder
helpers (:func:`shared_dir`, :func:`cache_dir`, …) apply the defaults.

Options given on the command line are passed as arguments, never by writing
:data:`os.environ`: the global options of ``creagraph`` (``--sparql-timeout``,
``--sparql-max-mb``) hold for one run through :func:`overridden`, which every read
through :func:`value` sees first; :func:`worker_environment` hands the same settings to
the Ray/Dask worker processes.

Values: an unset or blank variable counts as unset; a switch (:func:`enabled`) is off for
``0``, ``false``, ``no`` or ``off`` (any case).

Examples
--------
>>> with overridden(CREAGRAPH_SPARQL_TIMEOUT=5):
...     value("CREAGRAPH_SPARQL_TIMEOUT")
'5'
>>> value("CREAGRAPH_NO_SUCH_SETTING")
Traceback (most recent call last):
...
KeyError: 'CREAGRAPH_NO_SUCH_SETTING is not a creagraph setting (see creagraph.core.settings.VARIABLES)'
"""  # noqa: E501

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from creagraph.core.io import InputError

__all__ = [
    "Variable",
    "VARIABLES",
    "value",
    "enabled",
    "overridden",
    "worker_environment",
    "checkout_root",
    "shared_dir",
    "cache_dir",
    "store_dir",
    "slice_path",
]


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, its default (as said to users) and meaning."""

    name: str
    default: str
    meaning: str


#: Every environment variable creagraph reads (the LLM ones through
#: :func:`creagraph.core.llm.llm_settings`, which also falls back to ``OPENAI_*``).
VARIABLES: tuple[Variable, ...] = (
    Variable("CREAGRAPH_SHARED_DIR",
             "`../shared` beside a checkout; none for an installed package",
             "the shared data folder (`data/wikidata-slice/`, `external/`): `demo`, "
             "`tig --source`, `run briefs --source`, the llmfao test vectors"),
    Variable("CREAGRAPH_SLICE", "`$CREAGRAPH_SHARED_DIR/data/wikidata-slice/slice.nt.gz`",
             "the Wikidata slice `demo` imports"),
    Variable("CREAGRAPH_LLMFAO",
             "`$CREAGRAPH_SHARED_DIR/external/stats-testvectors/evalica/llmfao.csv`",
             "the LLMFAO comparisons `read_llmfao()` reads"),
    Variable("CREAGRAPH_CACHE_DIR", "`~/.cache/creagraph`",
             "caches: embeddings, grounding verdicts, SPARQL responses, LLM replies"),
    Variable("CREAGRAPH_STORE", "`$CREAGRAPH_CACHE_DIR/store`", "the default embedded store"),
    Variable("CREAGRAPH_LABEL_INDEX", "`$CREAGRAPH_CACHE_DIR/labels.sqlite`",
             "the local label index of `kg import --labels-only` (`--label-index`)"),
    Variable("CREAGRAPH_WIKIDATA_DIR", "the packaged `creagraph/wikidata`",
             "a replacement for the `wikidata/` data folder"),
    Variable("CREAGRAPH_SPARQL_TIMEOUT", "60",
             "seconds one SPARQL request may take in all (`--sparql-timeout`)"),
    Variable("CREAGRAPH_SPARQL_MAX_MB", "256",
             "largest SPARQL response accepted, in MB (`--sparql-max-mb`)"),
    Variable("CREAGRAPH_SPARQL_CACHE_TTL", "86400",
             "seconds a cached SPARQL answer is reused from an endpoint that names no "
             "dataset (0: never)"),
    Variable("CREAGRAPH_SPARQL_SEARCH", "auto",
             "how a SPARQL endpoint searches names: `auto`, `entitysearch`, `prefix`, `scan`"),
    Variable("CREAGRAPH_PRECISION", "fp32", "arithmetic of the default embedder (`bf16`)"),
    Variable("CREAGRAPH_PROPERTY_VECTORS", "1",
             "property-name vectors saved in the store by the first run that needs them; "
             "`import`: by `kg import`; `0`: never saved"),
    Variable("CREAGRAPH_GROUNDING_CACHE", "1", "`0`: scoring keeps no grounding-verdict cache"),
    Variable("CREAGRAPH_PROGRESS", "1", "`0`: no progress bars"),
    Variable("CREAGRAPH_DEBUG", "0", "`1`: an error also prints its traceback (`--debug`)"),
    Variable("CREAGRAPH_LLM_BASE_URL", "`$OPENAI_BASE_URL`",
             "OpenAI-compatible endpoint (`--llm-base-url`)"),
    Variable("CREAGRAPH_LLM_MODEL", "none", "model name at that endpoint (`--llm-model`)"),
    Variable("CREAGRAPH_LLM_API_KEY", "`$OPENAI_API_KEY`",
             "the endpoint's key (`--llm-api-key-env VAR` names another variable)"),
)
_DECLARED = {v.name: v for v in VARIABLES}
_OFF = ("0", "false", "no", "off")
#: Settings given for this run (command-line options), seen before the environment by every
#: thread of the process (a worker thread opening a SPARQL client sees them too).
_overrides: dict[str, str] = {}


def _declared(name: str) -> str:
    if name not in _DECLARED:
        raise KeyError(
            f"{name} is not a creagraph setting (see creagraph.core.settings.VARIABLES)"
        )
    return name


def value(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The setting ``name``: what :func:`overridden` gives for this run, else the
    environment variable (stripped; blank counts as unset), else ``None``.

    Raises
    ------
    KeyError
        When ``name`` is not declared in :data:`VARIABLES`.
    """
    _declared(name)
    given = _overrides.get(name)
    if given is not None:
        return given
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    return raw or None


def enabled(name: str, default: bool = True) -> bool:
    """A switch: off for ``0``/``false``/``no``/``off``, on for any other value,
    ``default`` when unset.

    Examples
    --------
    >>> with overridden(CREAGRAPH_PROGRESS="False"):
    ...     enabled("CREAGRAPH_PROGRESS")
    False
    """
    raw = value(name)
    return default if raw is None else raw.lower() not in _OFF


@contextmanager
def overridden(**settings: str | float | None) -> Iterator[None]:
    """Within the block, :func:`value` answers ``settings`` (``None``: left as is) before the
    environment; the environment itself is never written. Nested blocks add to the outer.
    """
    global _overrides
    given = {_declared(k): str(v) for k, v in settings.items() if v is not None}
    saved = _overrides
    _overrides = {**saved, **given}
    try:
        yield
    finally:
        _overrides = saved


def worker_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a worker process (Ray, Dask) needs to see the same settings: every
    ``CREAGRAPH_*`` and ``HF_*`` variable, with this run's :func:`overridden` settings.

    Examples
    --------
    >>> with overridden(CREAGRAPH_SPARQL_MAX_MB=8):
    ...     worker_environment({"CREAGRAPH_PROGRESS": "0", "HOME": "/h"})
    {'CREAGRAPH_PROGRESS': '0', 'CREAGRAPH_SPARQL_MAX_MB': '8'}
    """
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if k.startswith(("CREAGRAPH_", "HF_"))}
    return {**env, **_overrides}


def checkout_root() -> Path | None:
    """The repository root when creagraph runs from a checkout (or an editable install),
    ``None`` for an installed package (whose folder sits in ``site-packages``)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "creagraph").is_dir() else None


def shared_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The shared data folder: ``explicit`` (``--shared-dir``), else
    ``$CREAGRAPH_SHARED_DIR``, else ``shared`` beside the checkout's root.

    Raises
    ------
    InputError
        For an installed package given neither (there is no folder "beside" it).
    """
    if explicit is not None:
        return Path(explicit)
    env = value("CREAGRAPH_SHARED_DIR")
    if env:
        return Path(env)
    root = checkout_root()
    if root is None:
        raise InputError(
            "no shared data folder: pass --shared-dir DIR or set CREAGRAPH_SHARED_DIR (the "
            "folder holding data/wikidata-slice/ and external/)"
        )
    return root.parent / "shared"


def cache_dir() -> Path:
    """``$CREAGRAPH_CACHE_DIR`` or ``~/.cache/creagraph``."""
    env = value("CREAGRAPH_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "creagraph"


def store_dir() -> Path:
    """The default embedded store: ``$CREAGRAPH_STORE`` or ``<cache_dir>/store``."""
    env = value("CREAGRAPH_STORE")
    return Path(env) if env else cache_dir() / "store"


def slice_path(shared: str | os.PathLike[str] | None = None) -> Path:
    """The Wikidata slice: ``$CREAGRAPH_SLICE``, else ``data/wikidata-slice/slice.nt.gz`` in
    :func:`shared_dir` (``shared`` given: in that folder, whatever the environment says)."""
    env = value("CREAGRAPH_SLICE") if shared is None else None
    if env:
        return Path(env)
    return shared_dir(shared) / "data" / "wikidata-slice" / "slice.nt.gz"
