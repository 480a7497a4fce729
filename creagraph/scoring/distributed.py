"""Scoring on a Dask cluster when one machine is not enough (SPEC §6).

Rows are sent in batches to worker processes; each worker builds its scorer once from a
:class:`ScorerConfig` (judge, mode, graph, …) and returns the same :class:`ScoreResult`
records the local loop produces. The driver consumes the batches in input order, so the
output files are written exactly as a local run writes them (resume included).

Connect to an existing scheduler (``creagraph score --scheduler tcp://host:8786``) or let
creagraph start a local cluster of processes (``--workers N``). Workers need the same
installation and the same access to the graph (store path or endpoint) as the driver.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from creagraph.core.io import InputError

__all__ = ["ScorerConfig", "score_batch", "dask_runner", "dask_client"]

_SCORERS: dict[Any, Any] = {}


@dataclass(frozen=True)
class ScorerConfig:
    """Everything needed to build a scorer in another process (plain, picklable values)."""

    judge: str = "kg"
    mode: str = "paper"
    store: str | None = None
    endpoint: str | None = None
    factuality_threshold: float = 1.0
    llm_base_url: str | None = None
    llm_model: str | None = None
    ceiling_k: int | None = None

    def validate(self) -> None:
        if self.judge not in ("kg", "stored", "llm", "hybrid"):
            raise InputError(f"--judge must be kg, stored, llm or hybrid, not {self.judge!r}")
        if self.mode not in ("paper", "published"):
            raise InputError(f"--mode must be paper or published, not {self.mode!r}")
        if not 0.0 <= self.factuality_threshold <= 1.0:
            raise InputError("--factuality-threshold must be between 0 and 1")


def score_batch(build: Callable[[ScorerConfig], Any], config: ScorerConfig, rows: list) -> list:
    """Score rows in this process, building (once) the scorer for ``config``."""
    key = (build, config)
    if key not in _SCORERS:
        _SCORERS[key] = build(config)
    scorer = _SCORERS[key]
    return [scorer.score(row) for row in rows]


def dask_runner(
    client,
    config: ScorerConfig,
    build: Callable[[ScorerConfig], Any],
    batch_size: int = 4,
    max_pending: int = 64,
) -> Callable[[Iterable], Iterator[Any]]:
    """An executor for :func:`creagraph.scoring.pipeline.score_files` on a Dask client.

    Rows (any iterable, read lazily) are submitted in batches, at most ``max_pending``
    batches at a time; results are yielded in input order.
    """

    def run(rows: Iterable) -> Iterator[Any]:
        it = iter(rows)
        pending: collections.deque = collections.deque()
        while True:
            while len(pending) < max_pending:
                batch = list(itertools.islice(it, batch_size))
                if not batch:
                    break
                pending.append(client.submit(score_batch, build, config, batch, pure=False))
            if not pending:
                return
            yield from pending.popleft().result()

    return run


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int = 0):
    """A Dask client: connected to ``scheduler``, or over a new local cluster of processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise InputError("distributed scoring needs dask[distributed] installed") from exc
    if scheduler:
        client = Client(scheduler)
        try:
            yield client
        finally:
            client.close()
        return
    cluster = LocalCluster(
        n_workers=max(1, workers), threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
