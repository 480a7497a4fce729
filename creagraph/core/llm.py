"""A minimal OpenAI-compatible chat-completions client, shared by every job that offers an
LLM option (the ``llm`` scoring judge, query rewriting, atom extraction).

A few lines of :mod:`urllib` (no SDK): JSON in, JSON out, a timeout, retries with backoff
on 429/5xx and connection errors, the API key (if any) sent as a bearer token. It talks to
any server that speaks ``POST {base_url}/chat/completions`` (vLLM, llama.cpp, OpenAI...).

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

from creagraph.core.retry import RETRY_STATUS, Retry, with_retries

__all__ = ["ChatClient", "LLMError"]


class LLMError(RuntimeError):
    """The chat endpoint failed or answered something unusable.

    ``status`` is the HTTP status when the endpoint answered with an error, and
    ``unreachable`` is true when no connection could be made (a wrong URL, a server that
    is down): callers that fail soft per request (the LLM judge) still stop on those and
    on 401/403/404, which every later request would repeat.
    """

    def __init__(self, message: str, *, status: int | None = None, unreachable: bool = False):
        super().__init__(message)
        self.status = status
        self.unreachable = unreachable


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
        headers = {"Content-Type": "application/json", "User-Agent": "creagraph"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"

        def attempt(_: int) -> str:
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                self.requests_sent += 1
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                return _content(payload, self.url)
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRY_STATUS:
                    raise LLMError(
                        f"{self.url}: HTTP {exc.code} {exc.reason}", status=exc.code
                    ) from exc
                raise Retry(exc) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                raise Retry(exc) from exc
            except json.JSONDecodeError as exc:
                raise LLMError(f"{self.url}: response is not JSON ({exc.msg})") from exc

        return with_retries(
            attempt,
            retries=self.retries,
            backoff=self.backoff,
            sleep=self._sleep,
            give_up=self._giving_up,
        )

    def _giving_up(self, last: BaseException | None) -> LLMError:
        """The error once every attempt failed: ``status`` the last HTTP status, and
        ``unreachable`` when the server could not be reached at all (not a timeout)."""
        status = last.code if isinstance(last, urllib.error.HTTPError) else None
        timed_out = isinstance(last, TimeoutError) or isinstance(
            getattr(last, "reason", None), TimeoutError
        )
        return LLMError(
            f"{self.url}: giving up after {self.retries + 1} attempts: {last}",
            status=status,
            unreachable=status is None and not timed_out,
        )


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
