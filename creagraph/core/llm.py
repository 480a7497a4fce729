"""A minimal OpenAI-compatible chat-completions client, shared by every job that offers an
LLM option (the ``llm`` scoring judge, query rewriting, atom extraction).

A few lines of :mod:`urllib` (no SDK): JSON in, JSON out, a timeout, retries with backoff
on 429/5xx and connection errors, the API key (if any) sent as a bearer token. It talks to
any server that speaks ``POST {base_url}/chat/completions`` (vLLM, llama.cpp, OpenAI...).

Configuration from the environment follows one rule everywhere (:func:`llm_settings`,
:meth:`ChatClient.from_env`): an explicit argument wins, then the ``CREAGRAPH_LLM_*``
variable, then the ``OPENAI_*`` one (``CREAGRAPH_LLM_BASE_URL`` / ``OPENAI_BASE_URL``,
``CREAGRAPH_LLM_MODEL``, ``CREAGRAPH_LLM_API_KEY`` / ``OPENAI_API_KEY``).

References
----------
.. [1] OpenAI, "Chat Completions API", https://platform.openai.com/docs/api-reference/chat
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from creagraph.core.io import InputError
from creagraph.core.retry import RETRY_STATUS, Retry, with_retries

__all__ = [
    "ChatClient",
    "LLMError",
    "LLMSettings",
    "llm_settings",
    "llm_api_key",
    "BASE_URL_ENV",
    "MODEL_ENV",
    "API_KEY_ENV",
]

#: Environment variables read, in this order, when no argument is given.
BASE_URL_ENV = ("CREAGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL")
MODEL_ENV = ("CREAGRAPH_LLM_MODEL",)
API_KEY_ENV = ("CREAGRAPH_LLM_API_KEY", "OPENAI_API_KEY")


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


def _first_set(names: Sequence[str], environ: Mapping[str, str]) -> str | None:
    return next((environ[name] for name in names if environ.get(name)), None)


def llm_api_key(
    api_key: str | None = None,
    api_key_env: str | None = None,
    *,
    option: str = "llm_api_key_env",
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The API key: ``api_key`` if given (not empty), else the variable named ``api_key_env`` (an
    error when it is unset or empty), else ``$CREAGRAPH_LLM_API_KEY``, else
    ``$OPENAI_API_KEY``, else ``None`` (no key sent).

    Parameters
    ----------
    api_key : str, optional
        The key itself.
    api_key_env : str, optional
        Name of the environment variable holding the key.
    option : str
        How the caller spells ``api_key_env`` (a config field, a CLI flag), for the error.
    environ : mapping, optional
        The environment (default :data:`os.environ`).

    Raises
    ------
    InputError
        When ``api_key_env`` names a variable that is unset or empty.

    Examples
    --------
    >>> llm_api_key(environ={"CREAGRAPH_LLM_API_KEY": "a", "OPENAI_API_KEY": "b"})
    'a'
    >>> llm_api_key(api_key_env="MINE", environ={"MINE": "c", "OPENAI_API_KEY": "b"})
    'c'
    >>> llm_api_key(api_key_env="MINE", environ={})
    Traceback (most recent call last):
    ...
    creagraph.core.io.InputError: llm_api_key_env: environment variable MINE is not set
    """
    environ = os.environ if environ is None else environ
    if api_key:
        return api_key
    if api_key_env:
        value = environ.get(api_key_env)
        if not value:
            raise InputError(f"{option}: environment variable {api_key_env} is not set")
        return value
    return _first_set(API_KEY_ENV, environ)


@dataclass(frozen=True)
class LLMSettings:
    """Where an OpenAI-compatible endpoint is and how to call it; ``base_url`` and
    ``model`` are ``None`` when neither an argument nor the environment gives them."""

    base_url: str | None
    model: str | None
    api_key: str | None


def llm_settings(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    *,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LLMSettings:
    """An endpoint's settings by the one rule: explicit argument > ``CREAGRAPH_LLM_*`` >
    ``OPENAI_*``.

    ``base_url`` falls back to ``$CREAGRAPH_LLM_BASE_URL`` then ``$OPENAI_BASE_URL``;
    ``model`` to ``$CREAGRAPH_LLM_MODEL``; the key as in :func:`llm_api_key`. Empty
    values count as unset.

    Examples
    --------
    >>> env = {"OPENAI_BASE_URL": "http://o/v1", "CREAGRAPH_LLM_MODEL": "m"}
    >>> llm_settings(environ=env)
    LLMSettings(base_url='http://o/v1', model='m', api_key=None)
    >>> llm_settings("http://x/v1", environ=env | {"CREAGRAPH_LLM_BASE_URL": "http://c/v1"})
    LLMSettings(base_url='http://x/v1', model='m', api_key=None)
    """
    environ = os.environ if environ is None else environ
    return LLMSettings(
        base_url=base_url or _first_set(BASE_URL_ENV, environ),
        model=model or _first_set(MODEL_ENV, environ),
        api_key=llm_api_key(api_key, api_key_env, environ=environ),
    )


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
        self.base_url = base_url
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.temperature = temperature
        self._sleep = sleep
        self.requests_sent = 0

    @classmethod
    def from_env(
        cls,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        api_key_env: str | None = None,
        environ: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> ChatClient:
        """A client configured by :func:`llm_settings` (explicit argument >
        ``CREAGRAPH_LLM_*`` > ``OPENAI_*``); ``kwargs`` go to the constructor.

        Raises
        ------
        InputError
            When no endpoint or no model is configured, or ``api_key_env`` is unset.
        """
        settings = llm_settings(
            base_url, model, api_key, api_key_env=api_key_env, environ=environ
        )
        if not settings.base_url:
            raise InputError(
                "no LLM endpoint: pass base_url or set CREAGRAPH_LLM_BASE_URL (or OPENAI_BASE_URL)"
            )
        if not settings.model:
            raise InputError("no LLM model: pass model or set CREAGRAPH_LLM_MODEL")
        return cls(settings.base_url, model=settings.model, api_key=settings.api_key, **kwargs)

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
