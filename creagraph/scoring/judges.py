"""Judge backends: who says how specific and how factual each triple is (SPEC §3.4).

All judges implement :class:`Judge`: ``judge(row, path_index, triples)`` returns one
:class:`TripleJudgment` per triple, each with its evidence.

- :class:`KgJudge` — grounded in the knowledge graph (exact class sizes, existence).
- :class:`StoredJudge` — scores already in the input (the published judge's columns
  ``raw_salience_scores_0`` and ``parsed_scores_factuality_0``).
- :class:`LlmJudge` — any OpenAI-compatible chat endpoint the user configures, asked for
  the same quantities (class-size estimates for C_A and C_B, and factuality).
- :class:`HybridJudge` — the KG where it decides a triple, another judge for the unknown ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from creagraph.core.io import InputError
from creagraph.core.metrics import specificity
from creagraph.scoring.grounding import Grounder, query_context
from creagraph.scoring.inputs import AnswerRow

__all__ = [
    "TripleJudgment",
    "Judge",
    "KgJudge",
    "StoredJudge",
    "LlmJudge",
    "HybridJudge",
    "LLM_PROMPT",
    "judge_errors",
]


@dataclass
class TripleJudgment:
    """Specificity σ (1–5 or None when unknown), factuality (0/1 or None) and evidence."""

    specificity: int | None
    factual: float | None
    status: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "specificity": self.specificity,
            "factual": self.factual,
            "status": self.status,
            **self.evidence,
        }


class Judge(Protocol):
    name: str

    def judge(
        self, row: AnswerRow, path_index: int, triples: Sequence[Sequence[str]]
    ) -> list[TripleJudgment]:
        """One judgment per triple of the path."""
        ...


class KgJudge:
    """Specificity and factuality computed from the knowledge graph."""

    name = "kg"

    def __init__(self, grounder: Grounder):
        self.grounder = grounder
        self._row: Any = None  # the row whose query context is kept in _context
        self._context: dict[str, str] = {}

    def _query_context(self, row: AnswerRow) -> dict[str, str]:
        """``row``'s :func:`query_context`, computed once per row (the scorer judges a
        row's paths one after another)."""
        if row is None:
            return {}
        if row is not self._row:
            self._row, self._context = row, query_context(row.extra, row.entity_a, row.entity_b)
        return self._context

    def prefetch(self, row: AnswerRow, paths: Sequence[Sequence[Any]]) -> None:
        """Read the cached verdicts of all the answer's triples at once
        (:meth:`Grounder.prefetch`), before :meth:`judge` grounds them path by path."""
        triples = (t for path in paths for t in path)
        self.grounder.prefetch(triples, context=self._query_context(row))

    def flush(self) -> None:
        """Write the verdicts and links kept since the last call to the grounding cache
        (:meth:`~creagraph.scoring.groundcache.GroundingCache.flush`): the scorer calls
        this after each answer."""
        if self.grounder.cache is not None:
            self.grounder.cache.flush()

    def judge(
        self, row: AnswerRow, path_index: int, triples: Sequence[Sequence[str]]
    ) -> list[TripleJudgment]:
        context = self._query_context(row)
        out = []
        for t in triples:
            if len(t) != 3 or not all(t):  # named in the path's parse_issues
                out.append(TripleJudgment(None, None, "malformed", {"backend": "kg"}))
                continue
            head, relation, tail = t
            g = self.grounder.ground(head, relation, tail, context=context)
            out.append(TripleJudgment(g.specificity, g.factual, g.status, g.as_dict()))
        return out


def _stored_list(row: AnswerRow, path_index: int, field_name: str) -> list[Any]:
    values = row.extra.get(field_name)
    if isinstance(values, str):
        try:
            values = json.loads(values)
        except (ValueError, RecursionError):
            values = None  # reported just below, naming the row and field
    if not isinstance(values, list):
        raise InputError(
            f"{row.source}: row {row.line}: the stored judge needs field "
            f"{field_name!r} (a list per path)"
        )
    if path_index >= len(values):
        raise InputError(
            f"{row.source}: row {row.line}: field {field_name!r} has {len(values)} "
            f"paths, path {path_index} was parsed"
        )
    value = values[path_index] or []
    if not isinstance(value, list):
        raise InputError(
            f"{row.source}: row {row.line}: field {field_name!r}, path {path_index}: "
            "not a list of per-triple values"
        )
    return value


class StoredJudge:
    """Judgments stored in the input rows (the published judge's outputs).

    Reads, per path, ``raw_salience_scores_0`` (σ per triple, a whole number from 1 to 5)
    and ``parsed_scores_factuality_0`` (per triple, from 0 to 1). A value out of range,
    non-finite or not a number is an :class:`InputError` naming the file, row and field.
    """

    @staticmethod
    def _stored(
        row: AnswerRow, path_index: int, i: int, values: list, name: str, low: int, high: int
    ) -> float | None:
        if i >= len(values) or values[i] is None:
            return None
        value = values[i]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and low <= value <= high
        if ok and low == 1:  # σ: a whole number
            ok = float(value).is_integer()
        if not ok:
            kind = "a whole number from 1 to 5" if low == 1 else "a number from 0 to 1"
            raise InputError(
                f"{row.source}: row {row.line}: field {name!r}, path {path_index}, "
                f"triple {i}: {value!r} is not {kind}"
            )
        return float(value)

    name = "stored"

    def __init__(
        self,
        specificity_field: str = "raw_salience_scores_0",
        factuality_field: str = "parsed_scores_factuality_0",
    ):
        self.specificity_field = specificity_field
        self.factuality_field = factuality_field

    def stored_lists(self, row: AnswerRow, path_index: int) -> tuple[list[Any], list[Any]]:
        """The stored per-triple σ and factuality lists of one path, as stored (their
        length may differ from the path's: published mode averages what is there)."""
        return (
            _stored_list(row, path_index, self.specificity_field),
            _stored_list(row, path_index, self.factuality_field),
        )

    def judge(
        self, row: AnswerRow, path_index: int, triples: Sequence[Sequence[str]]
    ) -> list[TripleJudgment]:
        sal, fact = self.stored_lists(row, path_index)
        out = []
        for i in range(len(triples)):
            s = self._stored(row, path_index, i, sal, self.specificity_field, 1, 5)
            f = self._stored(row, path_index, i, fact, self.factuality_field, 0, 1)
            s = int(s) if s is not None else None
            evidence = {
                "backend": "stored",
                "fields": [self.specificity_field, self.factuality_field],
            }
            out.append(TripleJudgment(s, f, "stored", evidence))
        return out


LLM_PROMPT = """You are checking a knowledge path that another model wrote to answer a query.

Query: {query}
The path must connect "{entity_a}" to something with relation "{rel_b}" to "{entity_b}".
Path (triples in order, as [head, relation, tail]):
{triples}

For EACH triple, first write a short explanation of your reasoning, then give:
- class_a: about how many entities x satisfy (x, relation, tail) in the real world (an integer);
- class_b: about how many entities y satisfy (head, relation, y) in the real world (an integer);
- judgment: "not hallucinated" if the triple is a true fact, "hallucinated" if it is false
  or made up.
Answer with JSON only, one object per triple, in the order given:
{"triples": [{"explanation": "...", "class_a": 120, "class_b": 3, "judgment": "not hallucinated"}]}
"""

REPAIR_PROMPT = """Your reply could not be read: {problem}.
Reply again with JSON only, with exactly {n} objects in "triples", in this form:
{"triples": [{"explanation": "...", "class_a": 120, "class_b": 3, "judgment": "not hallucinated"}]}
"""

#: HTTP statuses that stop a run (wrong key, no access, wrong URL or model): every path
#: would fail the same way. Other errors (400, 413, 5xx after retries, an empty message)
#: are recorded for the path and the run goes on.
_FATAL_STATUS = {401, 403, 404}

#: Longest raw reply kept in a judgment's evidence when it could not be read.
RAW_REPLY_CHARS = 20_000


def _read_items(content: str | None, n: int) -> tuple[list[dict[str, Any] | None], str | None]:
    """Per-triple readings of a judge reply: ``{"class_size", "factual"}`` or ``None`` per
    triple, and what went wrong (``None`` when every triple was read)."""
    from creagraph.core.jsonish import lenient_bool, lenient_number, loads_lenient

    empty: list[dict[str, Any] | None] = [None] * n
    if not content or not content.strip():
        return empty, "the reply is empty"
    try:
        data = loads_lenient(content)
    except ValueError:
        return empty, "no JSON could be read from the reply"
    if isinstance(data, dict):
        found = next(
            (data[k] for k in ("triples", "judgments", "results", "items") if k in data), None
        )
        data = found if isinstance(found, list) else [data] if n == 1 else data
    if not isinstance(data, list):
        return empty, 'the reply has no "triples" list'
    out: list[dict[str, Any] | None] = []
    for i in range(n):
        item = data[i] if i < len(data) else None
        if not isinstance(item, dict):
            out.append(None)
            continue
        lowered = {str(k).casefold(): v for k, v in item.items()}
        found = [lenient_number(lowered.get(k)) for k in ("class_a", "class_b")]
        sizes = [x for x in found if x is not None]
        if not sizes:
            for k in ("class_size", "size", "larger_class"):
                x = lenient_number(lowered.get(k))
                if x is not None:
                    sizes = [x]
                    break
        verdict = None
        for k in ("judgment", "factual", "factuality", "verdict", "true"):
            if k in lowered:
                verdict = lenient_bool(lowered[k])
                if verdict is not None:
                    break
        if not sizes and verdict is None:
            out.append(None)
            continue
        size = max(sizes) if sizes else None
        out.append(
            {
                "class_size": int(max(size, 0)) if size is not None else None,
                "factual": verdict,
            }
        )
    missing = sum(1 for x in out if x is None)
    if missing:
        return out, f"{missing} of {n} triples have no readable class size or judgment"
    return out, None


class LlmJudge:
    """A judge that asks an OpenAI-compatible chat-completions endpoint (SPEC §3.4).

    It sends what the published judge saw — the query, its start and target, and the whole
    path — and asks, per triple, for an explanation *before* the verdicts: class-size
    estimates of C_A and C_B (the larger mapped to σ with the published mapping) and
    "hallucinated" / "not hallucinated".

    It fails soft: replies are read leniently (:mod:`creagraph.core.jsonish`: reasoning
    blocks, prose, numbers as text, yes/no verdicts, truncation); a reply that still
    cannot be read is asked again once with a repair prompt, and what remains unreadable
    is recorded with status ``unknown`` (``error: "unparsed"``, the raw reply kept). An
    HTTP error (400, 413, 5xx after retries, a timeout) or an empty (``null``) message on
    one path records that path's triples as ``unknown`` (``error: "failed"``) and the run
    goes on; an unreachable endpoint and HTTP 401/403/404 stop the run with one line, as
    every later request would fail the same way.

    Parameters
    ----------
    base_url : str
        e.g. ``http://localhost:8000/v1`` (``$CREAGRAPH_LLM_BASE_URL``, else
        ``$OPENAI_BASE_URL``).
    model : str
        Model name sent in the request (``$CREAGRAPH_LLM_MODEL``).
    api_key : str, optional
        Bearer token; else read from ``api_key_env``, else ``$CREAGRAPH_LLM_API_KEY`` or
        ``$OPENAI_API_KEY``.
    api_key_env : str, optional
        Name of the environment variable holding the key (an error when it is unset).
    timeout : float
        Total seconds one request may take (the client's deadline; default 90).
    concurrency : int
        Requests in flight at once: :meth:`prefetch` asks all the paths of one answer
        together (the scoring pipeline calls it before judging the paths).
    cache : ReplyCache, path or False, optional
        The reply cache (default ``$CREAGRAPH_CACHE_DIR/llm-replies.sqlite``; ``False``:
        none), so re-scoring into a new folder sends no request already answered.

    :attr:`usage` counts requests (sent, cached, failed) and tokens (all replies, and
    ``sent_*``: those sent for in this run, what a cost estimate prices); ``creagraph
    score`` prints it and writes it to ``run.json``.
    """

    name = "llm"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        api_key_env: str | None = None,
        timeout: float = 90.0,
        retries: int = 3,
        backoff: float = 1.0,
        concurrency: int = 8,
        cache: Any = None,
    ):
        from creagraph.core.llm import (
            ChatClient,
            ReplyCache,
            default_reply_cache_path,
            llm_settings,
        )

        # one rule for every LLM option (creagraph.core.llm.llm_settings)
        settings = llm_settings(base_url, model, api_key, api_key_env=api_key_env)
        if not settings.base_url or not settings.model:
            raise InputError(
                "the llm judge needs an OpenAI-compatible endpoint: llm_base_url and "
                "llm_model (or CREAGRAPH_LLM_BASE_URL / CREAGRAPH_LLM_MODEL)"
            )
        if concurrency < 1:
            raise InputError(f"llm_concurrency must be at least 1, not {concurrency}")
        self.model = settings.model
        self.concurrency = concurrency
        if cache is None:
            cache = ReplyCache(default_reply_cache_path())
        self.client = ChatClient(
            settings.base_url,
            model=settings.model,
            api_key=settings.api_key,
            timeout=timeout,
            deadline=timeout,  # the judge's total per request (issue 23: at most 90 s)
            retries=retries,
            backoff=backoff,
            cache=None if cache is False else cache,
        )
        self._ready: dict[str, Any] = {}
        self.usage: dict[str, int] = {
            "requests": 0, "sent": 0, "cached": 0, "failed": 0,
            "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
            # the replies sent for in this run (not from the cache): what it cost
            "sent_prompt_tokens": 0, "sent_completion_tokens": 0, "sent_no_usage": 0,
        }  # fmt: skip

    def _prompt(
        self, row: AnswerRow, triples: Sequence[Sequence[str]]
    ) -> list[dict[str, str]]:
        listing = "\n".join(
            f"{i + 1}. {json.dumps(list(t), ensure_ascii=False)}" for i, t in enumerate(triples)
        )
        prompt = LLM_PROMPT
        for key, value in (
            ("{query}", getattr(row, "query", None) or "(not given)"),
            ("{entity_a}", getattr(row, "entity_a", None) or "?"),
            ("{entity_b}", getattr(row, "entity_b", None) or "?"),
            ("{rel_b}", getattr(row, "rel_b", None) or "?"),
            ("{triples}", listing),
        ):
            prompt = prompt.replace(key, str(value))
        return [{"role": "user", "content": prompt}]

    def _count(self, reply: Any) -> None:
        self.usage["requests"] += 1
        self.usage["cached" if reply.cached else "sent"] += 1
        if reply.error is not None:
            self.usage["failed"] += 1
        for name in ("prompt_tokens", "completion_tokens"):
            value = reply.usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[name] += value
        self.usage["total_tokens"] += reply.tokens
        if not reply.cached and reply.error is None:
            from creagraph.core.llm import sent_tokens

            for name, value in sent_tokens([reply]).items():
                self.usage[f"sent_{name}"] += value

    def prefetch(self, row: AnswerRow, paths: Sequence[Sequence[Any]]) -> None:
        """Ask the first question of every path of one answer at once (``concurrency``
        requests in flight); :meth:`judge` then takes the replies from memory. Fatal
        failures (unreachable, redirect, 401/403/404) stop the run here."""
        from creagraph.core.llm import ChatRequest, Sampling

        self._ready.clear()  # what the previous answer left unasked
        requests, keys = [], []
        for triples in paths:
            if not triples:
                continue
            messages = self._prompt(row, triples)
            key = json.dumps(messages, ensure_ascii=False)
            if key in keys:
                continue
            keys.append(key)
            sampling = Sampling(temperature=0.0, max_tokens=256 * len(triples) + 256)
            requests.append(ChatRequest(messages, sampling))
        if len(requests) < 2:
            return  # nothing to overlap: judge() asks it
        result = self.client.map(requests, concurrency=self.concurrency, show_progress=False)
        for key, reply in zip(keys, result.replies):
            self._ready[key] = reply

    def _ask(self, messages: list[dict[str, str]], n: int) -> tuple[str | None, str | None]:
        from creagraph.core.llm import ChatReply, LLMError, Sampling

        reply = self._ready.pop(json.dumps(messages, ensure_ascii=False), None)
        if reply is None:
            try:
                reply = self.client.complete(
                    messages, sampling=Sampling(temperature=0.0, max_tokens=256 * n + 256)
                )
            except LLMError as exc:
                if exc.fatal or exc.status in _FATAL_STATUS:
                    raise  # every later request would fail the same way: stop the run
                reply = ChatReply(content=None, error=str(exc), error_kind=exc.kind)
        self._count(reply)
        if reply.error is not None:
            return None, reply.error
        if reply.content is None:
            return None, f"{self.client.url}: message content is not text"
        return reply.content, None

    def judge(
        self, row: AnswerRow, path_index: int, triples: Sequence[Sequence[str]]
    ) -> list[TripleJudgment]:
        n = len(triples)
        backend = {"backend": f"llm:{self.model}"}
        messages = self._prompt(row, triples)
        content, error = self._ask(messages, n)
        if error is not None:
            failed = {**backend, "error": "failed", "detail": error}
            return [TripleJudgment(None, None, "unknown", dict(failed)) for _ in triples]
        items, problem = _read_items(content, n)
        raws = [content]
        if problem is not None:
            repair = REPAIR_PROMPT.replace("{problem}", problem).replace("{n}", str(n))
            retry, error = self._ask(
                [
                    *messages,
                    {"role": "assistant", "content": content or ""},
                    {"role": "user", "content": repair},
                ],
                n,
            )
            if error is None:
                raws.append(retry)
                again, _ = _read_items(retry, n)
                items = [a if a is not None else b for a, b in zip(items, again)]
        out = []
        for item in items:
            if item is None:
                raw = "\n---\n".join(r or "" for r in raws)[:RAW_REPLY_CHARS]
                evidence = {**backend, "error": "unparsed", "raw": raw, "repair_asked": True}
                out.append(TripleJudgment(None, None, "unknown", evidence))
                continue
            size, verdict = item["class_size"], item["factual"]
            out.append(
                TripleJudgment(
                    specificity(size) if size is not None else None,
                    None if verdict is None else float(verdict),
                    "llm",
                    {**backend, "class_size": size},
                )
            )
        return out


def judge_errors(judgments: Sequence[TripleJudgment]) -> dict[str, int]:
    """Counts of triples whose judge reply could not be read (``unparsed``) or whose
    request failed (``failed``)."""
    counts = {"unparsed": 0, "failed": 0}
    for j in judgments:
        kind = j.evidence.get("error")
        if kind in counts:
            counts[kind] += 1
    return counts


class HybridJudge:
    """The KG judge first; only the triples it leaves ``unknown`` go to ``fallback``
    (SPEC §3.4). A second judge's verdict fills σ and factuality of such a triple; the
    graph's evidence stays beside it (``graph_status``, ``graph`` and ``second_judge``).

    :meth:`prefetch` grounds every path of an answer, then hands the fallback all the
    answer's unknown triples at once (an :class:`LlmJudge` asks them ``concurrency`` at a
    time), so the second judge's requests go out together, not one path at a time."""

    name = "hybrid"

    def __init__(self, kg_judge: KgJudge, fallback: Judge):
        self.kg_judge = kg_judge
        self.fallback = fallback
        self._grounded: dict[tuple[int, str], list[TripleJudgment]] = {}

    @staticmethod
    def _key(path_index: int, triples: Sequence[Any]) -> tuple[int, str]:
        return path_index, json.dumps([list(t) for t in triples], ensure_ascii=False,
                                      default=str)

    @staticmethod
    def _unknown(grounded: Sequence[TripleJudgment]) -> list[int]:
        return [k for k, g in enumerate(grounded) if g.status not in ("verified", "refuted")]

    def prefetch(self, row: AnswerRow, paths: Sequence[Sequence[Any]]) -> None:
        """Ground the paths of one answer (kept for :meth:`judge`) and let the fallback
        prefetch the unknown triples of all of them at once."""
        self._grounded.clear()  # what the previous answer left
        self.kg_judge.prefetch(row, paths)
        asks = []
        for i, triples in enumerate(paths):
            if not triples:
                continue
            grounded = self.kg_judge.judge(row, i, triples)
            self._grounded[self._key(i, triples)] = grounded
            unknown = self._unknown(grounded)
            if unknown:
                asks.append([triples[k] for k in unknown])
        prefetch = getattr(self.fallback, "prefetch", None)
        if prefetch is not None and asks:
            prefetch(row, asks)

    def flush(self) -> None:
        """:meth:`KgJudge.flush` of the graph judge."""
        self.kg_judge.flush()

    def judge(
        self, row: AnswerRow, path_index: int, triples: Sequence[Sequence[str]]
    ) -> list[TripleJudgment]:
        grounded = self._grounded.pop(self._key(path_index, triples), None)
        if grounded is None:
            grounded = self.kg_judge.judge(row, path_index, triples)
        ask = self._unknown(grounded)
        if not ask:
            return grounded
        other = self.fallback.judge(row, path_index, [triples[k] for k in ask])
        out = list(grounded)
        for k, o in zip(ask, other):
            g = grounded[k]
            out[k] = TripleJudgment(
                o.specificity,
                o.factual,
                o.status,
                {
                    **{
                        key: v
                        for key, v in g.evidence.items()
                        if key not in ("status", "specificity", "factual")
                    },
                    "graph_status": g.status,
                    "graph": {"specificity": g.specificity, "factual": g.factual},
                    "second_judge": {"status": o.status, **o.evidence},
                },
            )
        return out
