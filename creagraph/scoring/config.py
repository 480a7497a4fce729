"""How a scorer is configured: :class:`ScorerConfig` and the scoring choices (SPEC §3.4–3.6, §6).

One plain, picklable record of every setting that determines a scorer, used alike by
:func:`creagraph.score`, ``creagraph score`` and the distributed workers
(:mod:`creagraph.scoring.distributed`), which build their scorer from it with
:func:`creagraph.scoring.api.build_scorer`. The choices are :class:`enum.StrEnum` s, so a
member equals its string (``JudgeKind.kg == "kg"``) and plain strings are accepted
wherever a choice is; the judges are a registry (:data:`JUDGES`), so ``judge`` may also
name a user's class as ``"module:attr"``.

Examples
--------
>>> config = ScorerConfig(judge=JudgeKind.stored, mode="published")
>>> config.validate()
>>> ScorerConfig(judge="oracle").validate()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
creagraph.core.registry.RegistryError: judge must be kg, stored, llm or hybrid, not 'oracle' ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from creagraph.core.choices import UTILITY_MODES
from creagraph.core.io import InputError
from creagraph.core.records import READINGS
from creagraph.core.registry import EMBEDDERS, Registry, is_target

__all__ = [
    "ScorerConfig",
    "JUDGES",
    "JudgeKind",
    "Mode",
    "Engine",
    "ENGINES",
    "UnknownReading",
    "plain",
]


#: CREATE formulas: the paper's (default) or the published code's (SPEC §3.6); a member
#: equals its name, derived from :data:`creagraph.core.choices.UTILITY_MODES` (declared there).
Mode = StrEnum("Mode", {name: name for name in UTILITY_MODES})  # type: ignore[misc]


#: Who judges each triple's specificity and factuality (SPEC §3.4): the built-in judges by
#: name, each a ``module:attr`` imported when used (:mod:`creagraph.core.registry`). A
#: judge is an object with ``name`` and ``judge(row, path_index, triples)``
#: (:class:`creagraph.scoring.judges.Judge`); ``ScorerConfig(judge="mypkg.mod:MyJudge",
#: judge_args={...})`` names a user's own, which the distributed workers re-create too.
JUDGES = Registry(
    "judge",
    required=("name", "judge"),
    entries={
        "kg": ("creagraph.scoring.api:kg_judge", "computed from the knowledge graph"),
        "stored": ("creagraph.scoring.judges:StoredJudge",
                   "the published judge's columns in the input"),
        "llm": ("creagraph.scoring.api:llm_judge", "an OpenAI-compatible chat model"),
        "hybrid": ("creagraph.scoring.api:hybrid_judge",
                   "kg, and the llm for triples the graph cannot verify"),
    },
)

#: The built-in judges as a choice (a member equals its name), derived from :data:`JUDGES`.
JudgeKind = StrEnum("JudgeKind", {name: name for name in JUDGES.names()})  # type: ignore[misc]


class Engine(StrEnum):
    """Where scoring runs: in this process, or on a Dask or Ray cluster (SPEC §6)."""

    local = "local"
    dask = "dask"
    ray = "ray"


#: Which reading of triples the judge leaves unknown fills ``utility`` (SPEC §3.4):
#: ``strict`` counts them as not factual, ``lenient`` as factual; derived from
#: :data:`creagraph.core.records.READINGS` (declared there).
UnknownReading = StrEnum(  # type: ignore[misc]
    "UnknownReading", {name: name for name in READINGS}
)


#: The scoring engines' names, in the order the CLI lists them.
ENGINES = tuple(e.value for e in Engine)


def plain(value: Any) -> Any:
    """An enum member's value (the CLI passes enums), else the value itself.

    Examples
    --------
    >>> plain(JudgeKind.kg), plain("kg"), plain(None)
    ('kg', 'kg', None)
    """
    return getattr(value, "value", value)


@dataclass(frozen=True)
class ScorerConfig:
    """Everything needed to build a scorer, here or in another process (plain, picklable
    values; the choices may be given as strings or as the enums of this module).

    ``threads`` is the size of the native thread pools (torch, BLAS) wherever a scorer is
    built (see :func:`creagraph.scoring.distributed.set_threads`: it makes results
    independent of the engine); ``None`` leaves the libraries' defaults.
    """

    judge: str = "kg"
    mode: str = "paper"
    store: str | None = None
    endpoint: str | None = None
    factuality_threshold: float = 1.0
    llm_base_url: str | None = None
    llm_model: str | None = None
    ceiling_k: int | None = None
    threads: int | None = 1
    llm_api_key_env: str | None = None
    max_paths: int | None = None
    unknown: str = "strict"
    negatives: str | None = None
    precision: str = "fp32"
    llm_concurrency: int = 8
    judge_args: Mapping[str, Any] | None = None
    embedder: str = "minilm"
    embedder_args: Mapping[str, Any] | None = None
    graph: str | None = None
    graph_args: Mapping[str, Any] | None = None

    def __hash__(self) -> int:
        """A hash of every field, the argument tables by their sorted JSON (the workers
        keep one scorer per config, :mod:`creagraph.scoring.distributed`)."""
        import dataclasses
        import json

        return hash(tuple(
            json.dumps(value, sort_keys=True, default=repr) if isinstance(value, Mapping)
            else value
            for value in (getattr(self, f.name) for f in dataclasses.fields(self))
        ))

    def validate(self) -> None:
        """Check the values; errors name the field (the library's parameter)."""
        judge, mode = plain(self.judge), plain(self.mode)
        if plain(self.unknown) not in tuple(UnknownReading):
            raise InputError(f"unknown must be strict or lenient, not {plain(self.unknown)!r}")
        JUDGES.check_spec(judge)
        EMBEDDERS.check_spec(plain(self.embedder))
        from creagraph.kg import GRAPH_BACKENDS

        named = [(JUDGES, judge, self.judge_args),
                 (EMBEDDERS, plain(self.embedder), self.embedder_args)]
        if self.graph is not None:
            GRAPH_BACKENDS.check_spec(self.graph)
            if self.store is not None or self.endpoint is not None:
                raise InputError(f"graph {self.graph!r} replaces store and endpoint: give one")
            named.append((GRAPH_BACKENDS, self.graph, self.graph_args))
        for registry, spec, args in named:
            if args is not None and not isinstance(args, Mapping):
                field = registry.kind.split()[0]  # "graph backend" → graph_args
                raise InputError(f"{field}_args must be a table of keyword "
                                 f"arguments, not {type(args).__name__}")
            if is_target(spec):  # a user's class: it must import here, before any work
                registry.load(spec)
        if mode not in tuple(Mode):
            raise InputError(f"mode must be paper or published, not {mode!r}")
        if not 0.0 <= self.factuality_threshold <= 1.0:
            raise InputError("factuality_threshold must be between 0 and 1")
        if self.threads is not None and self.threads < 1:
            raise InputError(f"threads must be at least 1, not {self.threads}")
        if self.llm_concurrency < 1:
            raise InputError(f"llm_concurrency must be at least 1, not {self.llm_concurrency}")
        if self.max_paths is not None and self.max_paths < 1:
            raise InputError(f"max_paths must be at least 1, not {self.max_paths}")
        from creagraph.core.embeddings import check_precision

        check_precision(self.precision)
        if self.ceiling_k is not None and self.ceiling_k < 1:
            raise InputError(f"ceiling_k must be at least 1, not {self.ceiling_k}")
        if judge in ("llm", "hybrid"):
            self._validate_llm(judge)

    def _validate_llm(self, judge: str) -> None:
        """The LLM judge's endpoint, model and key variable are given (or in the environment)."""
        from creagraph.core.llm import llm_settings

        settings = llm_settings(
            self.llm_base_url, self.llm_model, api_key_env=self.llm_api_key_env or None
        )
        if not settings.base_url or not settings.model:
            raise InputError(
                f"judge {judge!r} needs llm_base_url and llm_model (or "
                "CREAGRAPH_LLM_BASE_URL / OPENAI_BASE_URL and CREAGRAPH_LLM_MODEL)"
            )
