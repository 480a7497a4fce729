"""CREATE scoring in one call: :func:`score` (SPEC §3.2–3.8, §6 "Python API first").

One answer of two paths, judged by the scores stored beside it (``judge="kg"`` grounds them
in a graph instead), its path strings embedded with the hashing embedder (the default is
all-MiniLM-L6-v2):

>>> import creagraph
>>> from creagraph.core.embeddings import HashingEmbedder
>>> answer = {
...     "query": "What are different ways of connecting Ada and someone who is a poet?",
...     "entity_a": "Ada", "entity_b": "poet", "rel_b": "occupation", "model": "demo",
...     "path_prediction": '<answer>{"1": [["Ada", "spouse", "Cy"], ["Cy", "occupation", '
...     '"poet"]], "2": [["Ada", "award received", "Prize"], ["Prize", "awarded to", "Bea"], '
...     '["Bea", "occupation", "poet"]]}</answer>',
...     "raw_salience_scores_0": [[5, 5], [4, 5, 5]],
...     "parsed_scores_factuality_0": [[1, 1], [1, 1, 1]],
... }
>>> tables = creagraph.score([answer], judge="stored", embedder=HashingEmbedder(64))
>>> [(p["valid"], p["quality"]) for p in tables.paths]
[(True, 5.0), (True, 4.0)]
>>> tables.queries[0]["utility"]
{'0.7': 7.8, '0.9': 8.6}
>>> tables.summary[0]["model"], tables.summary[0]["s_0.9_mean"]
('demo', 8.6)

:func:`score` reads answers (files, or records as dicts), builds the scorer the way
``creagraph score`` does (:func:`build_scorer`, from a :class:`ScorerConfig` with named
fields), scores through :func:`creagraph.scoring.pipeline.score_files` and returns the
per-query, per-path and per-model tables. :func:`score_to_dir` is ``creagraph score``
itself: answer files scored into a resumable output folder, on the chosen engine. The
command line, the demo and the benchmarks call these functions, so a Python run and a
CLI run give the same numbers.

Errors name the parameters of this API (``judge``, ``llm_base_url`` …), not CLI flags.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Mapping, Sized
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from creagraph.core.io import InputError, iter_jsonl, read_jsonl
from creagraph.scoring.config import ENGINES, ScorerConfig, plain
from creagraph.scoring.distributed import judge_usage, set_threads
from creagraph.scoring.inputs import AnswerRow, answer_rows, iter_answers

if TYPE_CHECKING:
    from creagraph.core.embeddings import Embedder
    from creagraph.core.graph import KnowledgeGraph
    from creagraph.scoring.pipeline import CeilingHook, Scorer

__all__ = [
    "score",
    "ScoreTables",
    "JudgeContext",
    "ScorerConfig",
    "build_scorer",
    "ceiling_hook",
    "score_to_dir",
    "score_fingerprint",
    "SCORE_OUTPUTS",
]


@dataclass
class ScoreTables:
    """What :func:`score` returns: plain records, one list per table.

    Attributes
    ----------
    queries : list of dict
        One record per (model, query): utilities, curve, counts, judge statuses.
    paths : list of dict
        One record per parsed path: triples, validity, judgments, quality, kept.
    summary : list of dict
        One row per model: mean (sd) over queries (the ``summary.csv`` table).
    out : Path or None
        The output directory when one was given (else nothing was written).
    """

    queries: list[dict[str, Any]]
    paths: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    out: Path | None = None
    counts: dict[str, int] = field(default_factory=dict)

    def frames(self) -> tuple[Any, Any, Any]:
        """The three tables as pandas DataFrames ``(queries, paths, summary)``."""
        import pandas as pd

        return pd.DataFrame(self.queries), pd.DataFrame(self.paths), pd.DataFrame(self.summary)


def build_scorer(
    config: ScorerConfig,
    *,
    kg: KnowledgeGraph | None = None,
    embedder: Embedder | None = None,
) -> Scorer:
    """Wire a :class:`~creagraph.scoring.pipeline.Scorer` from a :class:`ScorerConfig`.

    With ``config.ceiling_k``, the query generator's oracle (SPEC §3.8) supplies the
    graph's ceiling for each query. ``kg`` (an opened graph) and ``embedder`` are used
    when given instead of opening ``config.store`` / ``config.endpoint`` and loading the
    default embedder. Called once per process, also on distributed workers; it limits
    torch's and the BLAS thread pools to ``config.threads`` there, so every process
    computes the same numbers.
    """
    from creagraph.core.registry import EMBEDDERS
    from creagraph.scoring.config import JUDGES
    from creagraph.scoring.pipeline import Scorer

    config.validate()
    judge, mode = plain(config.judge), plain(config.mode)
    set_threads(config.threads)
    if embedder is None:
        embedder = EMBEDDERS.create(plain(config.embedder), context=config,
                                    **dict(config.embedder_args or {}))
    entity_linker = relation_linker = None
    needs_graph = (
        judge in ("kg", "hybrid")
        or config.store is not None
        or config.endpoint is not None
        or config.graph is not None
        or config.ceiling_k
        or kg is not None
    )
    if needs_graph:
        from creagraph.scoring.grounding import EntityLinker, RelationLinker

        if kg is None:
            from creagraph.kg import open_graph

            kg = open_graph(Path(config.store) if config.store else None, config.endpoint,
                            backend=config.graph, backend_args=dict(config.graph_args or {}))
        entity_linker = EntityLinker(kg)
        relation_linker = RelationLinker(kg, embedder)
    context = JudgeContext(config, embedder, kg, entity_linker, relation_linker)
    the_judge = JUDGES.create(judge, context=context, **dict(config.judge_args or {}))
    optional: dict[str, Any] = {}
    if config.max_paths is not None:
        optional["max_paths"] = config.max_paths
    return Scorer(
        the_judge,
        embedder,
        mode,
        config.factuality_threshold,
        entity_linker,
        relation_linker,
        kg,
        ceiling=(
            ceiling_hook(kg, embedder, mode, config.ceiling_k)
            if config.ceiling_k and kg is not None
            else None
        ),
        unknown=plain(config.unknown),
        **optional,
    )


@dataclass(frozen=True)
class JudgeContext:
    """What a judge may need, handed to a judge factory that declares a ``context``
    parameter (:data:`creagraph.scoring.config.JUDGES`): the scorer's settings, its
    embedder, and the graph with its linkers (``None`` when the run opens no graph)."""

    config: ScorerConfig
    embedder: Embedder
    kg: KnowledgeGraph | None = None
    entity_linker: Any = None
    relation_linker: Any = None


def llm_judge(*, context: JudgeContext) -> Any:
    """The built-in ``llm`` judge: :class:`~creagraph.scoring.judges.LlmJudge` on the
    endpoint, model, key variable and concurrency of ``context.config``."""
    from creagraph.scoring.judges import LlmJudge

    config = context.config
    return LlmJudge(
        config.llm_base_url,
        config.llm_model,
        api_key_env=config.llm_api_key_env,
        concurrency=config.llm_concurrency,
    )


def kg_judge(*, context: JudgeContext) -> Any:
    """The built-in ``kg`` judge: :class:`~creagraph.scoring.judges.KgJudge` over a
    grounder of ``context``'s graph, with the configured negatives and the grounding cache
    kept beside the embedder's (issue 19)."""
    from creagraph.scoring.groundcache import default_grounding_cache
    from creagraph.scoring.grounding import Grounder, load_negatives
    from creagraph.scoring.judges import KgJudge

    config = context.config
    if context.kg is None or context.entity_linker is None or context.relation_linker is None:
        raise InputError(f"judge {plain(config.judge)!r} needs a graph (store or endpoint)")
    negatives = load_negatives(config.negatives) if config.negatives else ()
    cache = default_grounding_cache(getattr(context.embedder, "cache_path", None))
    grounder = Grounder(context.kg, context.entity_linker, context.relation_linker,
                        negatives=negatives, cache=cache)
    return KgJudge(grounder)


def hybrid_judge(*, context: JudgeContext) -> Any:
    """The built-in ``hybrid`` judge: the ``kg`` judge, and the ``llm`` judge for the
    triples the graph cannot verify."""
    from creagraph.scoring.judges import HybridJudge

    return HybridJudge(kg_judge(context=context), llm_judge(context=context))


#: Oracle results a ceiling hook keeps (most recently used first out last): one per query,
#: so that every model's answer to a query reuses it (issue 31).
_CEILING_MEMO = 4096


def ceiling_hook(kg: KnowledgeGraph, embedder: Embedder, mode: str, k: int) -> CeilingHook:
    """The scorer's ceiling hook: the graph's oracle paths of a query (SPEC §3.8), their
    utility, the model's fraction of it and its recall of the graph's strong paths.

    The oracle runs once per query in a scoring run, not once per answer: its result
    depends only on the query's ids and source path, so the answers of every model to one
    query share it (issue 31). The phrasing table and the graph cache are read once per hook.
    """
    return _CeilingHook(kg, embedder, mode, k)


class _CeilingHook:
    """:func:`ceiling_hook`'s callable; ``runs`` counts the oracle runs it made."""

    #: Oracle results kept (least recently used dropped first): one per query.
    MEMO = 4096

    def __init__(self, kg: KnowledgeGraph, embedder: Embedder, mode: str, k: int):
        from collections import OrderedDict

        from creagraph.querygen.catalogue import load_phrasing
        from creagraph.querygen.oracle import GraphCache

        self.kg, self.embedder, self.mode, self.k = kg, embedder, mode, k
        self.phrasing = load_phrasing()
        self.cache = GraphCache(kg)
        self.memo: OrderedDict[str, Any] = OrderedDict()
        self.runs = 0

    def oracle(self, ids: dict) -> Any:
        """The oracle result of the query ``ids`` (computed on first use)."""
        from creagraph.querygen import oracle_paths_many

        key = json.dumps(
            [ids.get(name) for name in ("entity_a_id", "rel_b_id", "entity_b_id", "source_path")],
            sort_keys=True,
            default=str,
        )
        found = self.memo.get(key)
        if found is not None:
            self.memo.move_to_end(key)
            return found
        (found,) = oracle_paths_many(
            self.kg,
            [ids],
            k=self.k,
            embedder=self.embedder,
            mode=self.mode,
            phrasing=self.phrasing,
            cache=self.cache,
        )
        self.runs += 1
        self.memo[key] = found
        if len(self.memo) > self.MEMO:
            self.memo.popitem(last=False)
        return found

    def __call__(self, ids: dict, utility: dict[str, float], grounded: list) -> dict:
        from creagraph.querygen import ceiling_fraction, graph_path_recall
        from creagraph.scoring.pipeline import gamma_key

        def clean(x: float | None) -> float | None:
            return None if x is None or math.isnan(x) else x

        oracle = self.oracle(ids)
        return {
            "k": self.k,
            "n_paths": oracle.n_paths,
            "n_strong": oracle.n_strong,
            "truncated": oracle.truncated,
            "source_path_found": oracle.source_path_found,
            "utility": {gamma_key(g): v for g, v in oracle.ceiling.items()},
            "fraction": {
                gamma_key(g): clean(ceiling_fraction(utility[gamma_key(g)], oracle, g))
                for g in oracle.ceiling
            },
            "graph_path_recall": clean(graph_path_recall(grounded, oracle)),
        }


def _rows(answers: Any, model: str | None) -> Iterable[AnswerRow]:
    if isinstance(answers, str | os.PathLike):
        return iter_answers([answers], model)
    items = list(answers)
    if all(isinstance(a, AnswerRow) for a in items):
        return items
    if all(isinstance(a, str | os.PathLike) for a in items):
        return iter_answers(items, model)
    if all(isinstance(a, Mapping) for a in items):
        return answer_rows(items, model, source="<answers>")
    raise InputError(
        "answers must be a file path, a list of file paths, a list of answer records "
        "(dicts) or a list of AnswerRow"
    )


# Long only for its keyword parameters and their documentation; the body is short.
def score(
    answers: Any,
    *,
    judge: str = "kg",
    mode: str = "paper",
    store: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    kg: KnowledgeGraph | None = None,
    embedder: Embedder | str | None = None,
    model: str | None = None,
    factuality_threshold: float = 1.0,
    judge_args: Mapping[str, Any] | None = None,
    embedder_args: Mapping[str, Any] | None = None,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_api_key_env: str | None = None,
    ceiling_k: int | None = None,
    threads: int | None = 1,
    out: str | os.PathLike[str] | None = None,
    config: ScorerConfig | None = None,
) -> ScoreTables:
    """Score CREATE answers in one call and return the per-query, per-path and per-model
    tables (SPEC §3.2–3.8).

    Parameters
    ----------
    answers : path, list of paths, list of dicts or list of AnswerRow
        Answer files (.jsonl/.json/.csv/.parquet) or records with ``query``,
        ``entity_a``, ``entity_b``, ``rel_b`` and an answer (``path_prediction``).
    judge : {"kg", "stored", "llm", "hybrid"} or "module:attr"
        ``kg`` grounds triples in the graph (``store``/``endpoint``/``kg``); ``stored``
        reads the published judge's columns; ``llm`` asks ``llm_base_url``/``llm_model``;
        ``hybrid`` is kg with the llm for what the graph cannot verify. A
        ``"module:attr"`` path names your own judge class or factory
        (:data:`creagraph.scoring.config.JUDGES`), called with ``judge_args``.
    mode : {"paper", "published"}
        The paper's formulas, or the published code's behaviour (SPEC §3.6).
    store, endpoint : optional
        Embedded store directory or SPARQL endpoint (``kg``: an already opened graph).
    embedder : Embedder, str or None
        Path-string embedder object, or the name of one (``"minilm"``, the default
        all-MiniLM-L6-v2; ``"hashing"``; or ``"module:attr"``,
        :data:`creagraph.core.registry.EMBEDDERS`), made with ``embedder_args``.
    model : str, optional
        Model name for every row (else from a column or the file name).
    factuality_threshold : float
        Minimum fraction of factual triples for a path to be kept.
    llm_base_url, llm_model, llm_api_key_env : optional
        The OpenAI-compatible endpoint of the ``llm``/``hybrid`` judge and the name of the
        environment variable holding its key.
    ceiling_k : int, optional
        Also compute the graph's oracle ceiling with paths up to this many triples.
    threads : int or None
        Torch/BLAS threads (1 keeps results identical across machines and engines).
    judge_args, embedder_args : mapping, optional
        Keyword arguments of the named judge / embedder (plain values).
    out : path, optional
        Keep the output files here (resumable, as ``creagraph score --out``); by default
        nothing is written and the records are returned from memory.
    config : ScorerConfig, optional
        All of the above at once. A keyword argument set to something other than its
        default and other than the config's value is an error (which one holds?).

    Returns
    -------
    ScoreTables
    """
    named = embedder if isinstance(embedder, str) else None
    if config is None:
        config = ScorerConfig(
            judge=plain(judge),
            mode=plain(mode),
            store=str(Path(store).resolve()) if store is not None else None,
            endpoint=endpoint,
            factuality_threshold=factuality_threshold,
            llm_base_url=llm_base_url,
            llm_model=llm_model,
            ceiling_k=ceiling_k,
            threads=threads,
            llm_api_key_env=llm_api_key_env,
            judge_args=judge_args,
            embedder=named or "minilm",
            embedder_args=embedder_args,
        )
    else:
        _check_keywords_agree(config, {**locals(), "embedder": named})
        config = replace(config, judge=plain(config.judge), mode=plain(config.mode))
    config.validate()
    scorer = build_scorer(config, kg=kg, embedder=None if named else embedder)  # type: ignore[arg-type]
    rows = _rows(answers, model)
    if out is not None:
        from creagraph.scoring.pipeline import score_files

        return _collect(Path(out), score_files(rows, scorer, out))
    return _score_in_memory(rows, scorer)


def _score_in_memory(rows: Iterable[AnswerRow], scorer: Scorer) -> ScoreTables:
    """Score ``rows`` and keep the records (no file is written): the records are the
    plain JSON values :func:`~creagraph.scoring.pipeline.score_files` would write, a
    repeated (model, query) is the same error, and the counts are the same."""
    from creagraph.core.io import dumps
    from creagraph.core.progress import progress_bar
    from creagraph.scoring.pipeline import _rows_to_score, summarize

    queries: list[dict[str, Any]] = []
    paths: list[dict[str, Any]] = []
    counts = {"scored": 0, "skipped": 0}
    bar = progress_bar(total=len(rows) if isinstance(rows, Sized) else None, desc="score",
                       unit="query")
    try:
        for row in _rows_to_score(rows, set(), counts, bar):
            result = scorer.score(row)
            # as written and read back: numpy values and tuples become plain JSON values
            paths.extend(json.loads(dumps(record)) for record in result.paths)
            queries.append(json.loads(dumps(result.query)))
            counts["scored"] += 1
            bar.update(1)
    finally:
        bar.close()
    return ScoreTables(queries, paths, summarize(queries), None, {**counts,
                                                                  "queries": len(queries)})


def _check_keywords_agree(config: ScorerConfig, given: Mapping[str, Any]) -> None:
    """Refuse a keyword of :func:`score` that was changed from its default and says
    something else than ``config`` (a silently ignored keyword would mislead)."""
    import inspect

    defaults = inspect.signature(score).parameters
    for name in ("judge", "mode", "store", "endpoint", "factuality_threshold", "llm_base_url",
                 "llm_model", "llm_api_key_env", "ceiling_k", "threads", "judge_args",
                 "embedder", "embedder_args"):  # fmt: skip
        value, held = given[name], getattr(config, name)
        if value == defaults[name].default:
            continue
        if name == "store" and held is not None:
            value, held = Path(value).resolve(), Path(held).resolve()
        if plain(value) != plain(held):
            raise ValueError(
                f"score(): {name}={given[name]!r} conflicts with config.{name}="
                f"{getattr(config, name)!r}; give it in one place"
            )


def _collect(out: Path, counts: dict[str, int]) -> ScoreTables:
    from creagraph.scoring.pipeline import summarize

    queries = read_jsonl(out / "queries.jsonl")
    paths = list(iter_jsonl(out / "paths.jsonl"))
    return ScoreTables(queries, paths, summarize(queries), out, counts)



#: The files :func:`score_to_dir` (``creagraph score``) writes in its output folder (the
#: only ones ``fresh`` deletes).
SCORE_OUTPUTS = (
    "paths.jsonl",
    "queries.jsonl",
    "summary.csv",
    "README.txt",
    "paths.parquet",
    "queries.parquet",
    "summary.parquet",
    "run.json",
)
#: Settings that do not change any number (results are identical by design).
_NOT_FINGERPRINTED = {"threads", "llm_concurrency"}  # neither changes the numbers
#: Settings fingerprinted only when they differ from their default.
_NAMED_PARTS = {"judge_args", "embedder", "embedder_args", "graph", "graph_args"}


def score_fingerprint(config: ScorerConfig, inputs: list[Path], model: str | None) -> dict:
    """Everything that determines `creagraph score`'s numbers, as plain JSON values: every
    :class:`ScorerConfig` setting but the thread count, ``--model``, the graph store's
    identity (its path and the SHA-256 of its ``meta.json``, which holds every store
    file's checksum) and each input file's identity (path, size, SHA-256)."""
    import dataclasses

    from creagraph.core.outdir import file_identity
    from creagraph.scoring.groundcache import store_digest

    fp: dict = {}
    for f in dataclasses.fields(config):
        if f.name in _NOT_FINGERPRINTED:
            continue
        value = getattr(config, f.name)
        if f.name in _NAMED_PARTS and value == f.default:
            continue  # the built-in default: folders made before these settings existed resume
        if f.name == "store" and value is not None:
            value = {"path": str(Path(value).resolve()), "sha256": store_digest(value)}
        fp["--" + f.name.replace("_", "-")] = value
    fp["--model"] = model
    fp["inputs"] = [file_identity(p) for p in inputs]
    return fp


def score_to_dir(
    inputs: list[Path],
    out: Path,
    config: ScorerConfig,
    *,
    model: str | None = None,
    engine: str = "local",
    workers: int = 0,
    address: str | None = None,
    parquet: bool = False,
    fresh: bool = False,
    run_settings: Mapping[str, Any] | None = None,
    query_set: Path | None = None,
    prices: Any = None,
) -> dict[str, Any]:
    """Score answer files into the output folder ``out``, as ``creagraph score`` does
    (SPEC §3.2–3.8, §6).

    The inputs are streamed; ``out`` must be new, empty or made by this function (it is
    claimed for the run, see :func:`creagraph.core.outdir.claim_output_dir`); a re-run with
    the same settings and inputs resumes, ``fresh`` deletes the previous results first.
    ``engine`` is ``local``, ``dask`` or ``ray`` (``workers``/``address``: the cluster, see
    :mod:`creagraph.scoring.distributed`); ``parquet`` also writes the three tables as
    Parquet; ``run_settings`` (``eval create``: the settings of the run that made the
    answers) join the fingerprint; ``query_set`` names the file of the benchmark's queries
    the answers were drawn from (every answered query must be in it; its digest is each
    model's ``query_set``, :mod:`creagraph.core.manifest`); ``prices``
    (:class:`creagraph.core.llm.Prices`) price the LLM judge's tokens. ``config`` is
    validated by the caller. Returns the counts of
    :func:`creagraph.scoring.pipeline.score_files`.
    """
    from creagraph.core.outdir import claim_output_dir
    from creagraph.scoring.inputs import AnswerFiles, count_answers

    if engine not in ENGINES:
        raise InputError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    # streamed (memory does not grow with the input), or read once and kept for both
    # passes of a local run when small (issue 31)
    files = AnswerFiles(inputs, model)
    rows: Iterable[AnswerRow] = files
    total = count_answers(inputs)
    named: dict[str, Any] = {}
    if query_set is not None:  # the set every model is compared on (issue 24)
        from creagraph.core.manifest import named_query_set
        from creagraph.core.outdir import file_identity

        named = {"--query-set": file_identity(query_set)}
        rows = named_query_set(rows, query_set)
    settings = score_fingerprint(config, inputs, model)  # hashed once: claim and run.json
    claim = claim_output_dir(
        out,
        "score",
        SCORE_OUTPUTS,
        inputs=[*inputs, *([query_set] if query_set is not None else [])],
        fingerprint={
            **settings,
            **({"run": dict(run_settings)} if run_settings is not None else {}),
            **named,
        },
        fresh=fresh,
    )
    started = time.time()
    with claim:
        counts = _run_engine(
            rows, config, out, engine, workers, address, total, again=files
        )
        if isinstance(counts.get("llm_judge"), dict):  # its cost, from the user's prices
            from creagraph.core.llm import cost_estimate

            usage = counts["llm_judge"]
            usage["cost"] = cost_estimate(
                {k: usage.get(f"sent_{k}", 0) for k in
                 ("prompt_tokens", "completion_tokens", "no_usage")}, prices)
        if parquet:
            _write_parquet(out)
        _write_score_manifest(out, config, settings, engine, started, counts)
    return counts


def _write_score_manifest(
    out: Path,
    config: ScorerConfig,
    settings: dict,
    engine: str,
    started: float,
    counts: dict[str, Any],
) -> None:
    """``run.json`` beside the scores (:mod:`creagraph.core.manifest`): versions, embedder,
    judge and its prompt digest, the LLM judge's requests and tokens (local and Dask
    engines)."""
    from creagraph.core.embeddings import DEFAULT_MODEL_NAME
    from creagraph.core.manifest import run_manifest, write_manifest
    from creagraph.core.manifest import text_digest as digest
    from creagraph.scoring.judges import LLM_PROMPT

    judge = plain(config.judge)
    uses_llm = judge in ("llm", "hybrid")
    write_manifest(
        out,
        run_manifest(
            "score",
            started=started,
            settings=settings,  # score_fingerprint, as claimed at the start of the run
            engine=engine,
            embedder={"model": DEFAULT_MODEL_NAME, "precision": config.precision}
            if plain(config.embedder) == "minilm" and not config.embedder_args
            else {"name": plain(config.embedder), "args": dict(config.embedder_args or {})},
            judge=judge,
            mode=plain(config.mode),
            judge_prompt_digest=digest(LLM_PROMPT) if uses_llm else None,
            endpoint_model=config.llm_model if uses_llm else None,
            llm_judge=counts.get("llm_judge"),
            counts={k: v for k, v in counts.items() if k != "llm_judge"},
        ),
    )


def _run_engine(rows: Iterable[AnswerRow], config: ScorerConfig, out: Path, engine: str,
                workers: int, address: str | None, total: int | None, *,
                again: Iterable[AnswerRow] | None = None) -> dict[str, Any]:
    """Score ``rows`` into ``out`` with the chosen engine (the directory is claimed).

    ``again`` (local engine): the same rows once more (an
    :class:`~creagraph.scoring.inputs.AnswerFiles`, which keeps small inputs' rows for the
    scoring pass), read first to embed every relation phrase of the run in batches
    (:func:`creagraph.scoring.prepare.prepare_run`).
    """
    from creagraph.scoring.pipeline import score_files

    if engine == "local":
        scorer = build_scorer(config)
        if again is not None:
            from creagraph.scoring.prepare import prepare_run

            prepare_run(scorer, again)
        counts = score_files(rows, scorer, out, total=total)
        usage = judge_usage(scorer)
        if usage is not None:
            counts["llm_judge"] = usage
        return counts
    if engine == "dask":
        from creagraph.scoring.distributed import (
            dask_client,
            dask_runner,
            usage_since,
            worker_usage,
        )

        with dask_client(address, workers) as client:
            runner = dask_runner(client, config, build_scorer)
            before = client.run(worker_usage, build_scorer, config)
            counts = score_files(rows, None, out, run=runner, total=total)
            usage = usage_since(before, client.run(worker_usage, build_scorer, config))
            if usage is not None:  # the workers' LLM judges, as the local engine reports
                counts["llm_judge"] = usage
            return counts
    from creagraph.scoring.distributed import ray_cluster, ray_runner

    with ray_cluster(address, workers):
        reported: list[dict[str, int] | None] = []
        runner = ray_runner(config, build_scorer, workers, report_usage=reported.append)
        counts = score_files(rows, None, out, run=runner, total=total)
        if reported and reported[0] is not None:
            counts["llm_judge"] = reported[0]
        return counts


def _write_parquet(out: Path) -> None:
    """The three tables of a scored folder, also as Parquet."""
    from creagraph.core.io import write_records
    from creagraph.scoring.pipeline import summarize

    queries = read_jsonl(out / "queries.jsonl")
    write_records(out / "queries.parquet", queries)
    write_records(out / "paths.parquet", read_jsonl(out / "paths.jsonl"))
    write_records(out / "summary.parquet", summarize(queries))
