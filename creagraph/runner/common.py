"""What ``run create`` and ``run briefs`` share: the client from CLI-style settings, the
request map with its summary, and the manifest."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, atomic_write, dumps
from creagraph.core.llm import (
    ChatClient,
    ChatRequest,
    LLMError,
    MapResult,
    Prices,
    ReplyCache,
    Sampling,
    cost_estimate,
    default_reply_cache_path,
    llm_settings,
)
from creagraph.core.manifest import run_manifest, write_manifest

__all__ = ["Endpoint", "make_client", "run_fingerprint", "send_all", "write_run_outputs"]


@dataclass(frozen=True)
class Endpoint:
    """Where the model is and how hard to press it.

    ``deadline`` is the total seconds one request may take (long generations are
    legitimate: default 600); ``cache`` is the reply cache file (``None``: the default
    ``$CREAGRAPH_CACHE_DIR/llm-replies.sqlite``; ``False``: no cache).
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    concurrency: int = 4
    requests_per_minute: float | None = None
    deadline: float = 600.0
    timeout: float = 120.0
    retries: int = 4
    cache: str | os.PathLike[str] | bool | None = None


def make_client(endpoint: Endpoint, sampling: Sampling) -> ChatClient:
    """A :class:`ChatClient` for the endpoint (the one configuration rule of
    :func:`creagraph.core.llm.llm_settings`)."""
    settings = llm_settings(
        endpoint.base_url, endpoint.model, endpoint.api_key, api_key_env=endpoint.api_key_env
    )
    if not settings.base_url:
        raise InputError(
            "--llm-base-url: no endpoint (or set CREAGRAPH_LLM_BASE_URL / OPENAI_BASE_URL)"
        )
    if not settings.model:
        raise InputError("--llm-model: no model name (or set CREAGRAPH_LLM_MODEL)")
    if endpoint.concurrency < 1:
        raise InputError("--concurrency: must be at least 1")
    if endpoint.requests_per_minute is not None and endpoint.requests_per_minute <= 0:
        raise InputError("--requests-per-minute: must be positive")
    cache: ReplyCache | None = None
    if endpoint.cache is not False:
        where = endpoint.cache if endpoint.cache not in (None, True) else None
        cache = ReplyCache(where if where is not None else default_reply_cache_path())  # type: ignore[arg-type]
    return ChatClient(
        settings.base_url,
        model=settings.model,
        api_key=settings.api_key,
        timeout=min(endpoint.timeout, endpoint.deadline),
        deadline=endpoint.deadline,
        retries=endpoint.retries,
        sampling=sampling,
        cache=cache,
        requests_per_minute=endpoint.requests_per_minute,
    )


def run_fingerprint(
    client: ChatClient, model_name: str, sampling: Sampling, samples: int
) -> dict[str, Any]:
    """The settings every model run's fingerprint starts with, in this order (endpoint,
    model, the name its replies are filed under, sampling, samples); each run adds its
    own inputs after them."""
    return {
        "base_url": client.base_url.rstrip("/"),
        "model": client.model,
        "model_name": model_name,
        "sampling": sampling.as_dict(),
        "samples": samples,
    }


def send_all(
    client: ChatClient, requests: Sequence[ChatRequest], *, concurrency: int, desc: str
) -> MapResult:
    """Map the requests; an unreachable endpoint, a redirect or 401/403/404 is one
    :class:`LLMError` line (replies received before it are kept in the cache)."""
    try:
        return client.map(requests, concurrency=concurrency, desc=desc)
    except LLMError as exc:
        raise LLMError(
            f"{exc} (stopped: every later request would fail the same way; replies already "
            "received are cached and will not be asked again)",
            status=exc.status,
            unreachable=exc.unreachable,
            kind=exc.kind,
        ) from exc


def write_run_outputs(
    out: Path,
    *,
    command: str,
    rows_name: str,
    rows: Sequence[Mapping[str, Any]],
    failed: Sequence[Mapping[str, Any]],
    result: MapResult,
    started: float,
    settings: Mapping[str, Any],
    client: ChatClient,
    sampling: Sampling,
    prices: Prices | None = None,
) -> dict[str, Any]:
    """Write the rows file, ``failures.jsonl`` (requests that got no reply: re-run to ask
    them again), ``summary.json`` and the manifest ``run.json``; returns the summary, with
    the ``cost`` estimate of the requests sent in this run (``None`` without ``prices``:
    creagraph ships no price list)."""
    with atomic_write(out / rows_name) as handle:
        for row in rows:
            handle.write(dumps(row) + "\n")
    failures_path = out / "failures.jsonl"
    if failed:
        with atomic_write(failures_path) as handle:
            for row in failed:
                handle.write(dumps(row) + "\n")
    elif failures_path.exists():
        failures_path.unlink()
    summary = {"rows": len(rows), **result.summary(),
               "cost": cost_estimate(result.sent_tokens, prices)}
    with atomic_write(out / "summary.json") as handle:
        handle.write(dumps(summary) + "\n")
    write_manifest(
        out,
        run_manifest(
            command,
            started=started,
            ended=time.time(),
            settings=settings,
            endpoint={"base_url": client.base_url, "model": client.model},
            endpoint_model=client.model,
            sampling=sampling.as_dict(),
            requests=summary,
            cost=summary["cost"],
        ),
    )
    return summary
