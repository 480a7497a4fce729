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

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

__all__ = ["ChatClient", "LLMError", "rewrite_query", "rewrite_queries", "REWRITE_PROMPT"]

REWRITE_PROMPT = (
    "Rewrite the question below so that it reads naturally, as one question in English. "
    "Keep its meaning. Keep the names {a!r} and {b!r} exactly as written. "
    "Answer with the rewritten question only.\n\nQuestion: {query}"
)

_RETRY_STATUS = {429, 500, 502, 503, 504}


class LLMError(RuntimeError):
    """The chat endpoint failed or answered something unusable."""


class ChatClient:
    """A minimal OpenAI-compatible chat-completions client.

    Parameters
    ----------
    base_url : str
        API root, e.g. ``http://localhost:8000/v1`` (``/chat/completions`` is appended).
    model : str
        Model name sent with every request.
    api_key : str, optional
        Sent as ``Authorization: Bearer …`` when given.
    timeout : float
        Seconds per request.
    retries : int
        Further attempts after a 429/5xx or connection error, waiting ``backoff * 2**i``.
    temperature : float
        Sampling temperature (default 0, as reproducible as the server allows).
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 1.0,
        temperature: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"LLM endpoint must be an http(s) URL, not {base_url!r}")
        if not model:
            raise ValueError("an LLM model name is required")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.temperature = temperature
        self._sleep = sleep
        self.requests_sent = 0

    def chat(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 200) -> str:
        """Send a chat and return the first choice's message content."""
        body = json.dumps(
            {
                "model": self.model,
                "messages": [dict(m) for m in messages],
                "temperature": self.temperature,
                "max_tokens": max_tokens,
            }
        ).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "creagraph-querygen"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                self.requests_sent += 1
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                return _content(payload, self.url)
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRY_STATUS:
                    raise LLMError(f"{self.url}: HTTP {exc.code} {exc.reason}") from exc
                last = exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = exc
            except json.JSONDecodeError as exc:
                raise LLMError(f"{self.url}: response is not JSON ({exc.msg})") from exc
            if attempt < self.retries:
                self._sleep(self.backoff * (2**attempt))
        raise LLMError(f"{self.url}: giving up after {self.retries + 1} attempts: {last}") from last


def _content(payload: Any, url: str) -> str:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError(
            f"{url}: not a chat-completions response (no choices[0].message.content)"
        ) from exc
    if not isinstance(content, str):
        raise LLMError(f"{url}: message content is not text")
    return content


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
