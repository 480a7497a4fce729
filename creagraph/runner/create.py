"""``creagraph run create``: send the CREATE queries to a model and write its answers in the
form ``creagraph score`` reads (SPEC §3.1 for the answer format).

One request per query × sample. Each ``answers.jsonl`` row keeps the query's own fields
(``query_id``/``index``, ``query``, ``entity_a``, ``entity_b``, ``rel_b`` and the rest of a
``queries generate`` record) — but never a published file's answers or scores — and adds
``model``, ``path_prediction`` (the reply text), ``prompt`` (exactly what was sent),
``finish_reason``, ``usage``, ``sampling``, ``sample`` and ``query_set`` /
``query_set_size`` (the identity of the whole QUERIES file, so ``score`` compares the model
on the set it was asked: :mod:`creagraph.core.manifest`). An empty or cut-off reply is a
row like any other (``finish_reason`` says ``length``); a request that got no reply after
its retries is listed in ``failures.jsonl`` instead and asked again by a re-run.

With ``samples > 1`` every sample is its own model row (``model`` = ``NAME#s<i>``, the base
name in ``model_base``), since ``score`` pairs one answer per (model, query).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, iter_records
from creagraph.core.llm import ChatRequest, Prices, Sampling
from creagraph.core.manifest import query_set_identity
from creagraph.core.outdir import claim_output_dir, file_identity
from creagraph.runner.common import (
    Endpoint,
    make_client,
    run_fingerprint,
    send_all,
    write_run_outputs,
)
from creagraph.runner.prompts import DEFAULT_CREATE_TEMPLATE, check_placeholders, digest, render

__all__ = ["run_create", "read_queries", "query_fields", "CREATE_OUTPUTS"]

CREATE_OUTPUTS = ("answers.jsonl", "failures.jsonl", "summary.json", "run.json")
_REQUIRED = ("query", "entity_a", "entity_b", "rel_b")
#: Fields of a published answer file that are one model's answer or its scores, not the query.
_NOT_QUERY = frozenset(
    {
        "path_prediction", "raw_path_prediction", "answer", "response", "prompt",
        "prompt_for_path", "parsed_paths", "reasoning_paths", "model", "model_name",
        "eval_model_name", "finish_reason", "usage", "sampling", "sample", "model_base",
        "query_set", "query_set_size",
    }
)  # fmt: skip
_SCORE_FIELD = re.compile(r".*_\d+$")  # paths_0, factuality_scores_0, …


def query_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The query part of a record (its answer and any stored scores left out).

    Examples
    --------
    >>> query_fields({"query": "Q?", "index": "3", "paths_0": "[]", "path_prediction": "x"})
    {'query': 'Q?', 'index': '3'}
    """
    return {
        k: v for k, v in record.items() if k not in _NOT_QUERY and not _SCORE_FIELD.match(k)
    }


def read_queries(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> list[dict[str, Any]]:
    """Query records from one or more files with ``query, entity_a, entity_b, rel_b`` (a
    ``queries generate`` file, published answer files, an export of the query set); a
    query found again (same text, loosely normalised, in any of the files) is kept once,
    the first time; an error names the file, row and field."""
    from creagraph.core.text import normalize_loose

    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in _as_paths(paths):
        for number, record in enumerate(iter_records(path), start=1):
            where = f"{path}: row {number}"
            if not isinstance(record, dict):
                raise InputError(f"{where}: not an object")
            for name in _REQUIRED:
                value = record.get(name)
                if not isinstance(value, str) or not value.strip():
                    raise InputError(f"{where}: field {name!r} is missing or empty")
            text = normalize_loose(record["query"])
            if text not in seen:
                seen.add(text)
                out.append(query_fields(record))
    if not out:
        raise InputError(f"{', '.join(map(str, _as_paths(paths)))}: no queries")
    return out


def _as_paths(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> list[str | os.PathLike[str]]:
    return [paths] if isinstance(paths, str | os.PathLike) else list(paths)


def run_create(
    queries_path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    endpoint: Endpoint,
    *,
    sampling: Sampling | None = None,
    samples: int = 1,
    template: str | None = None,
    template_path: str | os.PathLike[str] | None = None,
    system_prompt: str | None = None,
    model_name: str | None = None,
    fresh: bool = False,
    prices: Prices | None = None,
) -> dict[str, Any]:
    """Send every query × sample to the endpoint and write ``out/answers.jsonl``.

    Parameters
    ----------
    queries_path : path or sequence of paths
        Queries (JSONL, JSON, CSV or Parquet) with ``query, entity_a, entity_b, rel_b``;
        several files are one query set (a query in several is asked once).
    out : path
        Output folder (claimed with :func:`creagraph.core.outdir.claim_output_dir`).
    endpoint : Endpoint
        The model's endpoint and the request policy (concurrency, rate, deadline, cache).
    sampling : Sampling, optional
        Temperature, top-p, max tokens, seed (default: temperature 0, server's limits).
    samples : int
        Samples per query (cached apart by sample index; ``seed`` becomes ``seed + i``).
    template, template_path : str or path, optional
        The prompt template (text, or a file holding it); creagraph's own
        :data:`~creagraph.runner.prompts.DEFAULT_CREATE_TEMPLATE` by default.
    system_prompt : str, optional
        Sent as a system message before the prompt.
    model_name : str, optional
        The ``model`` written in the answers (default: the endpoint's model name).
    fresh : bool
        Replace a previous run's outputs in ``out``.
    prices : Prices, optional
        Per 1M input / output tokens: the summary and ``run.json`` then hold the
        estimated cost of the requests sent (none is shipped or guessed).

    Returns
    -------
    dict
        The run summary (rows written, requests sent/cached/failed by kind, tokens).
    """
    started = time.time()
    sampling = sampling or Sampling()
    if samples < 1:
        raise InputError("--samples: must be at least 1")
    files = _as_paths(queries_path)
    inputs: list[str | os.PathLike[str]] = list(files)
    if template_path is not None:
        inputs.append(template_path)
        try:
            template = Path(template_path).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{template_path}: not UTF-8 text ({exc.reason})") from exc
    template = DEFAULT_CREATE_TEMPLATE if template is None else template
    check_placeholders(template, where=str(template_path or "template"))
    queries = read_queries(queries_path)
    query_set, query_set_size = query_set_identity(q["query"] for q in queries)
    client = make_client(endpoint, sampling)
    name = (model_name or client.model).strip()
    fingerprint = {
        **run_fingerprint(client, name, sampling, samples),
        "template": digest(template),
        "system_prompt": digest(system_prompt) if system_prompt else None,
        "queries": (file_identity(files[0]) if len(files) == 1
                    else [file_identity(p) for p in files]),
    }
    with claim_output_dir(
        out, "run create", CREATE_OUTPUTS, inputs=inputs, fingerprint=fingerprint, fresh=fresh
    ) as folder:
        requests: list[ChatRequest] = []
        prompts: list[str] = []
        for record in queries:
            prompt = render(template, record)
            messages = [{"role": "user", "content": prompt}]
            if system_prompt:
                messages.insert(0, {"role": "system", "content": system_prompt})
            for sample in range(samples):
                requests.append(ChatRequest(messages, sampling, sample))
                prompts.append(prompt)
        try:
            result = send_all(client, requests, concurrency=endpoint.concurrency, desc="run")
        finally:
            client.close()
        rows, failed = [], []
        for n, (request, reply) in enumerate(zip(requests, result.replies)):
            record = queries[n // samples]
            row = dict(record)
            row["model"] = name if samples == 1 else f"{name}#s{request.sample}"
            if samples > 1:
                row["model_base"] = name
            row["sample"] = request.sample
            row["query_set"], row["query_set_size"] = query_set, query_set_size
            if not reply.ok:
                failed.append({**row, "error": reply.error, "error_kind": reply.error_kind})
                continue
            row.update(
                path_prediction=reply.content or "",
                prompt=prompts[n],
                finish_reason=reply.finish_reason,
                usage=reply.usage,
                sampling=sampling.body(request.sample),
            )
            rows.append(row)
        return write_run_outputs(
            folder,
            command="run create",
            rows_name="answers.jsonl",
            rows=rows,
            failed=failed,
            result=result,
            started=started,
            settings={**fingerprint, "concurrency": endpoint.concurrency,
                      "requests_per_minute": endpoint.requests_per_minute,
                      "deadline": endpoint.deadline, "query_set": query_set,
                      "query_set_size": query_set_size},
            client=client,
            sampling=sampling,
            prices=prices,
        )
