"""Optional LLM rewrite of templated queries through an OpenAI-compatible chat endpoint.

Off by default: :mod:`creagraph.querygen.phrasing` writes every query without an LLM.
A user who wants more varied wording points :class:`ChatClient` at any server that speaks
the OpenAI chat-completions protocol (``POST {base_url}/chat/completions``), e.g. a local
vLLM or llama.cpp server. :func:`rewrite_query` asks for a fluent rewrite and keeps it only
when it still names the start entity and the target exactly and is one question; otherwise
the template sentence stays. The template sentence is kept in ``query_template``.

The client is a few lines of :mod:`urllib` (no SDK): JSON in, JSON out, a timeout, retries
with backoff on 429/5xx and connection errors, the API key (if any) sent as a bearer token.

Examples
--------
>>> client = ChatClient("http://localhost:8000/v1", model="my-model")      # doctest: +SKIP
>>> rewrite_query(record, client)["query"]                                  # doctest: +SKIP
'How could Robbie Vinton, an American actor, be linked to someone who is a painter?'

References
----------
.. [1] OpenAI, "Chat Completions API", https://platform.openai.com/docs/api-reference/chat
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creagraph.core.llm import ChatClient, LLMError

__all__ = ["ChatClient", "LLMError", "rewrite_query", "rewrite_queries", "REWRITE_PROMPT"]

REWRITE_PROMPT = (
    "Rewrite the question below so that it reads naturally, as one question in English. "
    "Keep its meaning. Keep the names {a!r} and {b!r} exactly as written. "
    "Answer with the rewritten question only.\n\nQuestion: {query}"
)



def _acceptable(text: str, record: Mapping[str, Any]) -> bool:
    if not text or "\n" in text or not text.endswith("?") or text.count("?") != 1:
        return False
    return str(record["entity_a"]) in text and str(record["entity_b"]) in text


def rewrite_query(record: Mapping[str, Any], client: ChatClient) -> dict[str, Any]:
    """A copy of ``record`` whose ``query`` is the LLM's rewrite, when the rewrite is usable.

    Adds ``query_template`` (the templated sentence) and ``query_rewritten`` (True when
    the rewrite was kept). A rewrite is kept only when it is a single line ending in
    one question mark and contains ``entity_a`` and ``entity_b`` verbatim.
    """
    for name in ("query", "entity_a", "entity_b"):
        if not record.get(name):
            raise ValueError(f"query record {record.get('query_id')!r} has no {name!r}")
    template = str(record.get("query_template") or record["query"])
    prompt = REWRITE_PROMPT.format(a=record["entity_a"], b=record["entity_b"], query=template)
    answer = client.chat([{"role": "user", "content": prompt}])
    raw = answer.strip().strip('"').strip()
    text = " ".join(raw.split())
    out = dict(record)
    out["query_template"] = template
    if "\n" not in raw and _acceptable(text, record):
        out["query"] = text
        out["query_rewritten"] = True
    else:
        out["query"] = template
        out["query_rewritten"] = False
    return out


def rewrite_queries(
    records: Sequence[Mapping[str, Any]], client: ChatClient
) -> list[dict[str, Any]]:
    """:func:`rewrite_query` over many records, in order."""
    return [rewrite_query(r, client) for r in records]
