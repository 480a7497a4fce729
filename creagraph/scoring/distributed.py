"""Scoring on a Ray or Dask cluster when one machine is not enough (SPEC §6).

Work is split by query: answer rows are cut into small batches (a few queries each) and
sent to worker processes. Each worker builds its scorer (one embedding model, one graph
connection, one judge) once from a :class:`ScorerConfig` and keeps it for its life; it
returns the same :class:`~creagraph.scoring.pipeline.ScoreResult` records the local loop
produces. The driver reads the input lazily, keeps only a bounded number of batches in
flight, and yields results in input order, so the output files are written exactly as a
local run writes them (resume included).

Engines
-------
``creagraph score --engine ray``
    Ray actors, one per worker, each holding one scorer (:func:`ray_runner`). Without
    ``--address`` creagraph starts a private local Ray cluster of ``--workers`` processes
    (default: the number of CPUs) and shuts it down when the run ends or is interrupted.
    Needs ``pip install 'ray>=2.40'``.
``creagraph score --engine dask``
    The same over Dask (:func:`dask_runner`): a local cluster of ``--workers`` processes, or
    an existing scheduler with ``--address tcp://host:8786`` (``--scheduler`` is the old
    spelling of that option).
``creagraph score`` (``--engine local``)
    The in-process loop.

Identical results
-----------------
A distributed run gives the same records as a local run: every per-query utility equal to
1e-9 and everything else equal. Two things make that so:

- Batches never mix queries: a query's kept paths are embedded in one call, in the same
  process, exactly as in the local loop.
- The embedding model's arithmetic depends on torch's intra-op thread count (vectors
  differ by ~1e-7 between 1 and 2 threads, which moves utilities by up to ~1e-6). Ray and
  Dask start workers with ``OMP_NUM_THREADS=1`` while a plain process uses every core, so
  wherever a scorer is built (driver or worker) :func:`set_threads` sets torch's and the
  BLAS thread pools to :attr:`ScorerConfig.threads` (``--threads``, default 1, which is
  also the fastest for the small per-query work). The results are then independent of the
  engine and of the number of cores. Machines with different CPU instruction sets
  (AVX-512 vs AVX2) may still differ in the last bits; the embedding cache
  (``$CREAGRAPH_CACHE_DIR/embeddings.sqlite``), shared by all workers of one machine, pins
  vectors once computed.

Running on a real cluster
-------------------------
Every worker needs the same installation (``pip install creagraph ray``) and the same
access to the graph as the driver: the same ``--store`` directory at the same path (a
shared file system, or a copy on each node), or an ``--endpoint`` reachable from every
node. Then, for Ray::

    ray start --head --port 6379                    # on the head node
    ray start --address HEAD:6379                   # on every other node
    creagraph score answers/*.jsonl --engine ray --address HEAD:6379 \\
        --store /shared/kg --out results/           # on the head node

(``--address auto`` finds a cluster started on this machine; ``ray://HEAD:10001`` uses Ray
Client from outside the cluster. ``--workers`` caps the number of actors; by default one
per CPU of the cluster.) For Dask::

    dask scheduler &  dask worker tcp://HEAD:8786 --nthreads 1   # one thread per process
    creagraph score answers/*.jsonl --engine dask --address tcp://HEAD:8786 --out results/

Full Wikidata
-------------
Point the graph at a SPARQL endpoint holding all of Wikidata instead of a local slice:

- QLever: ``--endpoint https://qlever.cs.uni-freiburg.de/api/wikidata``. A URL naming
  qlever gets the ``prefix`` entity search (labels and aliases starting with the
  mention's first word in a few capitalisations, a ``STRSTARTS`` filter QLever answers
  from its sorted vocabulary, then exact and fuzzy matching here); another endpoint gets
  the ``scan`` search (a case- and accent-insensitive ``REGEX`` over English labels,
  fine on a local slice, too slow over all of Wikidata). Set
  ``CREAGRAPH_SPARQL_SEARCH=prefix`` for a self-hosted QLever under another name
  (README: "All of Wikidata"). Its speed over all of Wikidata is not measured here.
- WDQS: ``--endpoint https://query.wikidata.org/sparql``. The public service allows about
  five parallel queries and 60 s of query time per minute per client, so keep
  ``--workers`` at 5 or fewer; creagraph sends a descriptive User-Agent, retries 429/5xx
  answers with exponential backoff (honouring ``Retry-After``) and gives up with a clear
  :class:`~creagraph.kg.sparql.SparqlError` after the retries. Entity search on WDQS asks
  its own search service (``search_mode="entitysearch"``: the ``mwapi`` EntitySearch
  service, chosen automatically for query.wikidata.org) and reads the labels and aliases
  of the items it returns, because a ``CONTAINS`` scan over all labels times out there;
  ``CREAGRAPH_SPARQL_SEARCH=exact`` looks up exact labels only.

Every SPARQL answer is cached on disk (``$CREAGRAPH_CACHE_DIR/sparql.sqlite``, keyed by
endpoint and query text), one cache per machine shared by its workers, so a re-run or a
resumed run asks the endpoint only for what it has not seen.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import Any

from creagraph.core import settings
from creagraph.core.extras import MissingExtraError, install_hint
from creagraph.core.io import InputError
from creagraph.scoring.config import ENGINES, ScorerConfig  # re-exported: older imports

__all__ = [
    "ENGINES",
    "ScorerConfig",
    "set_threads",
    "score_batch",
    "batches",
    "ordered_results",
    "dask_runner",
    "dask_client",
    "ray_runner",
    "ray_cluster",
]

_SCORERS: dict[Any, Any] = {}


def set_threads(n: int | None) -> None:
    """Limit this process's native thread pools to ``n`` threads (``None``: leave them).

    Sets torch's intra-op thread count and, through ``threadpoolctl``, the BLAS and OpenMP
    pools (NumPy's OpenBLAS, torch's OpenMP). Called wherever a scorer is built, so the
    driver and every worker run the embedding model and the distance matrices with the
    same arithmetic; one thread is also the fastest setting for the small per-query work
    and avoids oversubscribing cores shared by several processes.
    """
    if n is None:
        return
    from threadpoolctl import threadpool_limits

    from creagraph.core.embeddings import set_torch_threads

    set_torch_threads(n)  # now if torch is loaded, else when the model loads (not at all
    threadpool_limits(limits=n)  # when every vector is cached)


def score_batch(build: Callable[[ScorerConfig], Any], config: ScorerConfig, rows: list) -> list:
    """Score rows in this process, building (once per process) the scorer for ``config``."""
    key = (build, config)
    if key not in _SCORERS:
        _SCORERS[key] = build(config)
    scorer = _SCORERS[key]
    return [scorer.score(row) for row in rows]


def judge_usage(scorer: Any) -> dict[str, int] | None:
    """The request and token counters of ``scorer``'s LLM judge (a hybrid judge's LLM
    fallback), or ``None`` for a judge that asks no LLM."""
    if scorer is None:
        return None
    judge = getattr(scorer.judge, "fallback", scorer.judge)
    usage = getattr(judge, "usage", None)
    return dict(usage) if isinstance(usage, dict) else None


def worker_usage(build: Callable[[ScorerConfig], Any], config: ScorerConfig
                 ) -> dict[str, int] | None:
    """:func:`judge_usage` of this worker process's scorer for ``config`` (run on every
    Dask worker by :func:`usage_since`)."""
    return judge_usage(_SCORERS.get((build, config)))


def usage_since(before: dict[str, dict[str, int] | None],
                after: dict[str, dict[str, int] | None]) -> dict[str, int] | None:
    """The LLM judge's counters summed over the workers, less what each worker had
    counted ``before`` the run (a long-lived cluster keeps its scorers); ``None`` when no
    worker has an LLM judge.

    Examples
    --------
    >>> usage_since({"w1": {"sent": 2}}, {"w1": {"sent": 5}, "w2": {"sent": 1}})
    {'sent': 4}
    >>> usage_since({}, {"w1": None}) is None
    True
    """
    total: dict[str, int] | None = None
    for worker, counters in after.items():
        if counters is None:
            continue
        total = total if total is not None else {}
        earlier = before.get(worker) or {}
        for key, value in counters.items():
            total[key] = total.get(key, 0) + value - earlier.get(key, 0)
    return total


def batches(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Cut any iterable into lists of ``size`` items, lazily (the input is read as needed).

    Examples
    --------
    >>> list(batches(iter(range(5)), 2))
    [[0, 1], [2, 3], [4]]
    """
    if size < 1:
        raise ValueError(f"batch size must be at least 1, not {size}")
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def ordered_results(
    chunks: Iterable[list[Any]],
    submit: Callable[[list[Any]], Any],
    collect: Callable[[Any], list[Any]],
    max_in_flight: int,
) -> Iterator[Any]:
    """Submit chunks with at most ``max_in_flight`` outstanding; yield results in order.

    ``submit(chunk)`` starts the work and returns a handle; ``collect(handle)`` waits for
    it and returns the chunk's results. The input is consumed only as handles complete.

    Examples
    --------
    >>> list(ordered_results([[1, 2], [3]], lambda c: [x * 10 for x in c], lambda h: h, 1))
    [10, 20, 30]
    """
    if max_in_flight < 1:
        raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}")
    pending: deque[Any] = deque()
    for chunk in chunks:
        pending.append(submit(chunk))
        while len(pending) >= max_in_flight:
            yield from collect(pending.popleft())
    while pending:
        yield from collect(pending.popleft())


# -- Dask -------------------------------------------------------------------------------


def dask_runner(
    client: Any,
    config: ScorerConfig,
    build: Callable[[ScorerConfig], Any],
    batch_size: int = 4,
    max_in_flight: int | None = None,
) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """An executor for :func:`creagraph.scoring.pipeline.score_files` on a Dask client.

    Rows are read lazily in batches of ``batch_size`` queries; at most ``max_in_flight``
    batches (default: twice the number of worker threads) are submitted at a time; results
    are yielded in input order. Each worker process builds its scorer once, all of them in
    parallel before the first batch is sent.
    """

    def run(rows: Iterable[Any]) -> Iterator[Any]:
        chunks = batches(rows, batch_size)
        first = next(chunks, None)
        if first is None:  # nothing to score: build no scorers
            return
        chunks = chain([first], chunks)
        limit = max_in_flight or 2 * max(1, sum(client.nthreads().values()))
        client.run(score_batch, build, config, [])  # every worker builds its scorer, now
        outstanding: dict[str, Any] = {}

        def submit(chunk: list[Any]) -> Any:
            future = client.submit(score_batch, build, config, chunk, pure=False)
            outstanding[future.key] = future
            return future

        def collect(future: Any) -> list[Any]:
            result = future.result()
            del outstanding[future.key]
            return result

        try:
            yield from ordered_results(chunks, submit, collect, limit)
        finally:
            if outstanding:
                client.cancel(list(outstanding.values()))

    return run


@contextlib.contextmanager
def dask_client(address: str | None = None, workers: int = 0) -> Iterator[Any]:
    """A Dask client: connected to ``address``, or over a new local cluster of processes.

    The local cluster has ``workers`` single-threaded processes (default: the number of
    CPUs) and is closed when the block ends.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise MissingExtraError(
            f"--engine dask needs dask[distributed] installed: {install_hint('distributed')}"
        ) from exc
    if address:
        try:
            client = Client(address, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot connect to the Dask scheduler at {address}: {exc}") from exc
        try:
            yield client
        finally:
            client.close()
        return
    cluster = LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


# -- Ray --------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError(
            f"--engine ray needs Ray installed: {install_hint('distributed')} "
            "(or use --engine dask, or the local engine)"
        ) from exc
    return ray


class _ScorerActor:
    """One Ray worker: builds its scorer once (in :meth:`setup`) and scores batches."""

    def __init__(self, build: Callable[[ScorerConfig], Any], config: ScorerConfig):
        self._build = build
        self._config = config
        self._scorer: Any = None

    def setup(self) -> int:
        # Built here rather than in __init__ so a failure (a missing store, say) reaches
        # the driver as the original exception, not as a dead actor.
        if self._scorer is None:
            self._scorer = self._build(self._config)
        return os.getpid()

    def score(self, rows: list) -> list:
        return [self._scorer.score(row) for row in rows]

    def usage(self) -> dict[str, int] | None:
        return judge_usage(self._scorer)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast, with a clear message, when a ``host:port`` address does not answer."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise InputError(f"--address must be host:port, ray://host:port or auto, not {address!r}")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address}: {exc}") from exc


@contextlib.contextmanager
def ray_cluster(address: str | None = None, workers: int = 0, object_store_mb: int = 256
                ) -> Iterator[Any]:
    """Connect to the Ray cluster at ``address``, or start a private local one.

    The local cluster has ``workers`` CPUs (default: the number of CPUs of this machine),
    no dashboard and a small object store, and is shut down when the block ends (also on
    an error or Ctrl-C). When Ray is already initialised in this process, that session is
    used and left running. Yields the ``ray`` module.

    Raises
    ------
    InputError
        Ray is not installed, or ``address`` cannot be reached.
    """
    ray = _import_ray()
    if ray.is_initialized():
        yield ray
        return
    options: dict[str, Any] = {
        "log_to_driver": False,
        "configure_logging": True,
        "logging_level": logging.ERROR,
    }
    if address:
        _check_reachable(address)
        try:
            ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InputError(f"cannot connect to the Ray cluster at {address}: {exc}") from exc
    else:
        env = settings.worker_environment()
        ray.init(
            num_cpus=workers or os.cpu_count() or 1,
            include_dashboard=False,
            object_store_memory=object_store_mb * 1024 * 1024,
            runtime_env={"env_vars": env} if env else None,
            **options,
        )
    try:
        yield ray
    finally:
        ray.shutdown()


def _ray_get(ray: Any, refs: Any) -> Any:
    """``ray.get(refs)``; a task's failure is raised as the worker's own exception (an
    InputError naming a file, say), with the remote traceback kept as its cause."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, Exception):
            raise cause from exc
        raise


def _least_busy(ray: Any, owner: dict[Any, int], n: int) -> int:
    """The actor (of ``n``) with the fewest unfinished batches; ``owner`` maps each
    outstanding batch's reference to its actor."""
    unfinished = [0] * n
    if owner:
        refs = list(owner)
        _, busy = ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in busy:
            unfinished[owner[ref]] += 1
    return min(range(n), key=unfinished.__getitem__)


def ray_runner(
    config: ScorerConfig,
    build: Callable[[ScorerConfig], Any],
    workers: int = 0,
    batch_size: int = 4,
    max_in_flight: int | None = None,
    report_usage: Callable[[dict[str, int] | None], None] | None = None,
) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """An executor for :func:`creagraph.scoring.pipeline.score_files` on Ray actors.

    Needs an initialised Ray session (see :func:`ray_cluster`). Starts ``workers`` actors
    (default: one per CPU of the cluster), each of which builds one scorer with
    ``build(config)`` and keeps it; rows are read lazily in batches of ``batch_size``
    queries, each batch goes to the actor with the fewest unfinished batches, at most
    ``max_in_flight`` batches (default: twice the number of actors) are outstanding, and
    results are yielded in input order. The actors are killed when the iteration ends,
    fails or is abandoned; when it ends, ``report_usage`` (if given) is first called with
    the actors' LLM-judge counters summed (:func:`usage_since`; ``None`` when the judge
    asks no LLM), as the local and Dask engines report them.

    Examples
    --------
    >>> from creagraph.scoring.api import build_scorer                   # doctest: +SKIP
    >>> with ray_cluster(workers=2):                                     # doctest: +SKIP
    ...     run = ray_runner(ScorerConfig(judge="stored"), build_scorer, workers=2)
    ...     results = list(run(rows))
    """
    ray = _import_ray()

    def run(rows: Iterable[Any]) -> Iterator[Any]:
        if not ray.is_initialized():
            raise RuntimeError("ray_runner needs ray.init() first (see ray_cluster)")
        chunks = batches(rows, batch_size)
        first = next(chunks, None)
        if first is None:  # nothing to score (all done already, say): start no workers
            return
        chunks = chain([first], chunks)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        n = workers or max(1, cpus)
        if n > cpus:  # actors needing a CPU each would wait for ever
            raise InputError(f"--workers {n}, but the Ray cluster has only {cpus} CPUs")
        limit = max_in_flight or 2 * n
        remote = ray.remote(num_cpus=1, max_restarts=0)(_ScorerActor)
        actors = [remote.remote(build, config) for _ in range(n)]
        owner: dict[Any, int] = {}

        try:
            _ray_get(ray, [actor.setup.remote() for actor in actors])

            def submit(chunk: list[Any]) -> Any:
                i = _least_busy(ray, owner, n)
                ref = actors[i].score.remote(chunk)
                owner[ref] = i
                return ref

            def collect(ref: Any) -> list[Any]:
                result = _ray_get(ray, ref)
                del owner[ref]
                return result

            yield from ordered_results(chunks, submit, collect, limit)
            if report_usage is not None:  # each actor's scorer is new: nothing to subtract
                counters = _ray_get(ray, [actor.usage.remote() for actor in actors])
                report_usage(usage_since({}, {str(i): c for i, c in enumerate(counters)}))
        finally:
            for actor in actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor)

    return run
