"""``creagraph run briefs``: send creative briefs to a model and write its responses in the
form ``tig build`` / ``tig score`` read (:func:`creagraph.tig.io.read_responses`).

A brief is ``task_id``, ``brief`` and optionally ``family`` and ``kind``. How a reply
becomes responses depends on the brief:

- **Alternative Uses** (``family`` "Alternative Uses", or a ``task_id`` starting with
  ``aut-``): one use per line (numbering and bullets removed), each its own response
  (``sample = run * 1000 + position``, as the shared MCTB population is numbered);
- **visual** (``kind`` "visual"): the model is asked for ``{"core_idea": …,
  "visual_description": …}``; a reply that is not such an object keeps its whole text as
  ``core_idea`` (``meta.parsed = false``);
- anything else: the whole reply text is the ``core_idea``.

Briefs come from a JSONL file or from a shared population (``aut``: MCTB Alternative Uses;
``noveltybench``: the NoveltyBench curated prompts), the same prompts that population
answered, so the new model can be scored against it at once.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from creagraph.core.io import InputError, iter_records
from creagraph.core.llm import ChatReply, ChatRequest, Prices, Sampling
from creagraph.core.outdir import claim_output_dir, file_identity
from creagraph.runner.common import (
    Endpoint,
    make_client,
    run_fingerprint,
    send_all,
    write_run_outputs,
)
from creagraph.runner.prompts import digest

__all__ = ["Brief", "read_briefs", "shared_briefs", "run_briefs", "responses_from_reply",
           "BRIEF_SOURCES", "BRIEFS_OUTPUTS", "VISUAL_INSTRUCTION"]

BRIEF_SOURCES = ("aut", "noveltybench")
BRIEFS_OUTPUTS = ("responses.jsonl", "failures.jsonl", "summary.json", "run.json")
AUT_FAMILY = "Alternative Uses"
#: Appended to a visual brief: the two fields tig reads.
VISUAL_INSTRUCTION = (
    "\n\nAnswer with one JSON object only: "
    '{"core_idea": "<the idea in one or two sentences>", '
    '"visual_description": "<what the image shows>"}'
)
_BULLET = re.compile(r"^\s*(?:[-*•]+|\(?\d{1,3}[.):]|[a-zA-Z][.)])\s*")


@dataclass(frozen=True)
class Brief:
    """One creative brief."""

    task_id: str
    brief: str
    family: str | None = None
    kind: str | None = None

    @property
    def is_aut(self) -> bool:
        return self.family == AUT_FAMILY or self.task_id.startswith("aut-")

    @property
    def is_visual(self) -> bool:
        return (self.kind or "").lower() == "visual"


def read_briefs(path: str | os.PathLike[str]) -> list[Brief]:
    """Briefs from a file (``task_id``, ``brief``, optional ``family``/``kind``); an error
    names the file, row and field, and a repeated ``task_id``."""
    out: list[Brief] = []
    seen: set[str] = set()
    for number, record in enumerate(iter_records(path), start=1):
        where = f"{path}: row {number}"
        if not isinstance(record, dict):
            raise InputError(f"{where}: not an object")
        for name in ("task_id", "brief"):
            if not isinstance(record.get(name), str) or not record[name].strip():
                raise InputError(f"{where}: field {name!r} is missing or empty")
        for name in ("family", "kind"):
            if record.get(name) is not None and not isinstance(record[name], str):
                raise InputError(f"{where}: field {name!r} must be text")
        if record["task_id"] in seen:
            raise InputError(f"{where}: task_id {record['task_id']!r} appears twice")
        seen.add(record["task_id"])
        out.append(Brief(record["task_id"], record["brief"], record.get("family"),
                         record.get("kind")))
    if not out:
        raise InputError(f"{path}: no briefs")
    return out


def shared_briefs(source: str, shared_dir: str | os.PathLike[str] | None = None) -> list[Brief]:
    """The briefs a shared population answered (one per task), in task order."""
    from creagraph.tig.adapters import load_aut_population, load_noveltybench_curated

    if source == "aut":
        population = load_aut_population(shared_dir, max_runs=1)
    elif source == "noveltybench":
        population = load_noveltybench_curated(shared_dir)
    else:
        raise InputError(f"--source: {source!r} is not one of {', '.join(BRIEF_SOURCES)}")
    briefs: dict[str, Brief] = {}
    for r in population:
        briefs.setdefault(r.task_id, Brief(r.task_id, r.brief, r.family))
    return [briefs[k] for k in sorted(briefs)]


def _uses(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        use = _BULLET.sub("", line).strip()
        if use:
            out.append(use)
    return out


def _visual(text: str) -> tuple[str, str] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    idea, visual = value.get("core_idea"), value.get("visual_description")
    if not isinstance(idea, str) or not idea.strip():
        return None
    return idea.strip(), visual.strip() if isinstance(visual, str) else ""


def responses_from_reply(
    brief: Brief, model: str, sample: int, reply: ChatReply
) -> list[dict[str, Any]]:
    """The response records for one reply (see the module docstring). ``tig`` refuses an
    empty idea, so an empty reply gives none; it is counted in the run summary
    (``empty``)."""
    text = reply.content or ""
    meta: dict[str, Any] = {"finish_reason": reply.finish_reason, "usage": reply.usage,
                            "source": "creagraph run briefs"}
    base = {"task_id": brief.task_id, "brief": brief.brief, "model": model,
            "family": brief.family}
    if brief.is_aut:
        return [
            {**base, "sample": sample * 1000 + i, "core_idea": use, "visual_description": "",
             "meta": {**meta, "run": sample, "position": i}}
            for i, use in enumerate(_uses(text))
        ]
    if not text.strip():
        return []
    visual = _visual(text) if brief.is_visual else None
    if brief.is_visual:
        meta["parsed"] = visual is not None
    idea, description = visual if visual is not None else (text.strip(), "")
    return [{**base, "sample": sample, "core_idea": idea, "visual_description": description,
             "meta": meta}]


def run_briefs(
    briefs: Iterable[Brief],
    out: str | os.PathLike[str],
    endpoint: Endpoint,
    *,
    sampling: Sampling | None = None,
    samples: int = 1,
    system_prompt: str | None = None,
    model_name: str | None = None,
    source: str | None = None,
    briefs_path: str | os.PathLike[str] | None = None,
    fresh: bool = False,
    prices: Prices | None = None,
) -> dict[str, Any]:
    """Send every brief × sample and write ``out/responses.jsonl`` (see the module
    docstring); returns the run summary (as :func:`creagraph.runner.create.run_create`)."""
    started = time.time()
    sampling = sampling or Sampling()
    if samples < 1:
        raise InputError("--samples: must be at least 1")
    todo = list(briefs)
    client = make_client(endpoint, sampling)
    name = (model_name or client.model).strip()
    fingerprint = {
        **run_fingerprint(client, name, sampling, samples),
        "system_prompt": digest(system_prompt) if system_prompt else None,
        "briefs": file_identity(briefs_path) if briefs_path is not None else f"source:{source}",
        "visual_instruction": digest(VISUAL_INSTRUCTION),
    }
    inputs = [briefs_path] if briefs_path is not None else []
    with claim_output_dir(
        out, "run briefs", BRIEFS_OUTPUTS, inputs=inputs, fingerprint=fingerprint, fresh=fresh
    ) as folder:
        requests: list[ChatRequest] = []
        for brief in todo:
            text = brief.brief + (VISUAL_INSTRUCTION if brief.is_visual else "")
            messages = [{"role": "user", "content": text}]
            if system_prompt:
                messages.insert(0, {"role": "system", "content": system_prompt})
            requests.extend(ChatRequest(messages, sampling, s) for s in range(samples))
        try:
            result = send_all(client, requests, concurrency=endpoint.concurrency, desc="run")
        finally:
            client.close()
        rows: list[dict[str, Any]] = []
        failed = []
        for n, (request, reply) in enumerate(zip(requests, result.replies)):
            brief = todo[n // samples]
            if not reply.ok:
                failed.append({"task_id": brief.task_id, "sample": request.sample,
                               "error": reply.error, "error_kind": reply.error_kind})
                continue
            rows.extend(responses_from_reply(brief, name, request.sample, reply))
        return write_run_outputs(
            folder,
            command="run briefs",
            rows_name="responses.jsonl",
            rows=rows,
            failed=failed,
            result=result,
            started=started,
            settings={**fingerprint, "concurrency": endpoint.concurrency},
            client=client,
            sampling=sampling,
            prices=prices,
        )
