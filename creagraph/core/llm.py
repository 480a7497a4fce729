"""The OpenAI-compatible chat-completions client shared by every job that talks to a model
(the ``run`` job, the ``llm`` scoring judge, query rewriting, atom extraction).

Built on :mod:`httpx`. It talks to any server that speaks ``POST {base_url}/chat/completions``
(vLLM, Ollama, llama.cpp server, hosted APIs) and does what a careful harness does:

- **A total deadline per request** (``deadline`` seconds, connection to last byte): a server
  trickling one byte at a time is cut off when the deadline passes, and a request that hit
  its deadline is retried at most once (it would most likely time out again).
- **A reply-size cap** (``max_reply_bytes``, default 16 MiB): the reply is streamed and
  refused as soon as it grows past the cap; it is never read whole.
- **Retries with backoff** on 429, 5xx and dropped connections (``backoff * 2**i``, or the
  server's ``Retry-After`` when that is longer).
- **No redirect is ever followed** — a 3xx is an error naming where it pointed, so the API
  key never travels to another host and no other host's reply is taken for the model's.
- **An on-disk reply cache** (:class:`ReplyCache`, SQLite) keyed by (base URL, model, the
  full request body, sample index): a re-run, a resumed run or a re-scoring into a new
  folder sends no request already answered.
- **Bounded concurrency** (:meth:`ChatClient.map`): ``K`` requests in flight on threads, an
  optional requests-per-minute limit, a progress bar (done/total, rate, ETA, tokens) and a
  summary of failures by kind (:class:`MapResult`). Requests that fail are returned as
  failed :class:`ChatReply` records (``error_kind``), never dropped; an unreachable endpoint,
  a redirect or HTTP 401/403/404 stops the whole map with one :class:`LLMError`, since
  every later request would fail the same way.

Two levels of API:

>>> client = ChatClient("http://localhost:8000/v1", model="m")          # doctest: +SKIP
>>> client.chat([{"role": "user", "content": "Hi"}], max_tokens=50)    # doctest: +SKIP
'Hello!'
>>> reply = client.complete([{"role": "user", "content": "Hi"}],
...                         sampling=Sampling(temperature=0.7, max_tokens=50), sample=2)
...                                                                     # doctest: +SKIP
>>> reply.content, reply.finish_reason, reply.usage                     # doctest: +SKIP
('Hello!', 'stop', {'prompt_tokens': 9, 'completion_tokens': 3, 'total_tokens': 12})
>>> requests = [ChatRequest([{"role": "user", "content": q}]) for q in questions]
...                                                                     # doctest: +SKIP
>>> result = client.map(requests, concurrency=8, desc="judge")          # doctest: +SKIP
>>> result.replies[0].content, result.failures, result.tokens           # doctest: +SKIP

:meth:`~ChatClient.chat` returns the first choice's text (an :class:`LLMError` when the
request failed or the message is empty); :meth:`~ChatClient.complete` returns the whole
:class:`ChatReply` record (an empty or cut-off reply is a reply, ``finish_reason`` says
which) and raises only when no reply came; :meth:`~ChatClient.map` never raises for one
request's failure.

Configuration from the environment follows one rule everywhere (:func:`llm_settings`,
:meth:`ChatClient.from_env`): an explicit argument wins, then the ``CREAGRAPH_LLM_*``
variable, then the ``OPENAI_*`` one (``CREAGRAPH_LLM_BASE_URL`` / ``OPENAI_BASE_URL``,
``CREAGRAPH_LLM_MODEL``, ``CREAGRAPH_LLM_API_KEY`` / ``OPENAI_API_KEY``).

References
----------
.. [1] OpenAI, "Chat Completions API", https://platform.openai.com/docs/api-reference/chat
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import socket
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from creagraph.core import settings
from creagraph.core.io import InputError
from creagraph.core.retry import RETRY_STATUS, Retry, retry_after_seconds, with_retries
from creagraph.core.sqlitecache import cache_error, open_cache_tables

if TYPE_CHECKING:  # httpx is imported on the first request (the CLI starts without it)
    import httpx

__all__ = [
    "ChatClient",
    "ChatReply",
    "ChatRequest",
    "MapResult",
    "Prices",
    "cost_estimate",
    "cost_line",
    "sent_tokens",
    "ReplyCache",
    "Sampling",
    "LLMError",
    "LLMSettings",
    "llm_settings",
    "llm_api_key",
    "default_reply_cache_path",
    "BASE_URL_ENV",
    "MODEL_ENV",
    "API_KEY_ENV",
    "FATAL_STATUS",
    "DEFAULT_MAX_REPLY_BYTES",
]

#: Environment variables read, in this order, when no argument is given.
BASE_URL_ENV = ("CREAGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL")
MODEL_ENV = ("CREAGRAPH_LLM_MODEL",)
API_KEY_ENV = ("CREAGRAPH_LLM_API_KEY", "OPENAI_API_KEY")

#: HTTP statuses that every later request would repeat: stop the run.
FATAL_STATUS = frozenset({401, 403, 404})
#: Largest reply read (bytes) unless the caller sets another cap.
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024
_CHUNK = 64 * 1024


class LLMError(RuntimeError):
    """The chat endpoint failed or answered something unusable.

    ``status`` is the HTTP status when the endpoint answered with an error, ``unreachable``
    is true when no connection could be made (a wrong URL, a server that is down), and
    ``kind`` names the failure for summaries (``http_500``, ``timeout``, ``deadline``,
    ``too_large``, ``redirect``, ``not_json``, ``bad_reply``, ``unreachable``, ``empty``).
    :attr:`fatal` is true for failures every later request would repeat (unreachable,
    redirect, 401/403/404): callers that fail soft per request stop on those.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        unreachable: bool = False,
        kind: str | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.unreachable = unreachable
        self.kind = kind or (
            "unreachable" if unreachable else f"http_{status}" if status else "error"
        )

    @property
    def fatal(self) -> bool:
        return self.unreachable or self.kind == "redirect" or self.status in FATAL_STATUS


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


@dataclass(frozen=True)
class Sampling:
    """Sampling settings sent with a request; ``None`` fields are not sent (the server's
    default applies).

    ``seed`` is sent as ``seed + sample`` so that the samples of one prompt differ while a
    re-run reproduces them (where the server honours ``seed``).

    Examples
    --------
    >>> Sampling(temperature=0.7, max_tokens=100).body(sample=0)
    {'temperature': 0.7, 'max_tokens': 100}
    >>> Sampling(seed=10).body(sample=3)
    {'temperature': 0.0, 'seed': 13}
    """

    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def body(self, sample: int = 0) -> dict[str, Any]:
        """The request-body fields for sample number ``sample``."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed + sample
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class ChatRequest:
    """One request for :meth:`ChatClient.map`: the messages, the sampling settings (the
    client's when ``None``) and the sample index (part of the cache key)."""

    messages: Sequence[Mapping[str, str]]
    sampling: Sampling | None = None
    sample: int = 0


@dataclass
class ChatReply:
    """What came back for one request.

    Attributes
    ----------
    content : str or None
        The first choice's message text (``None`` when the message had none, or the
        request failed).
    finish_reason : str or None
        ``"stop"``, ``"length"`` (cut off at ``max_tokens``), … as the server said.
    usage : dict
        The server's token counts (``prompt_tokens``, ``completion_tokens``,
        ``total_tokens``), empty when it sent none.
    raw : dict or None
        The whole decoded reply.
    cached : bool
        Whether it came from the reply cache (no request sent).
    error, error_kind : str or None
        For a failed request (:meth:`ChatClient.map` only): the one-line message and its
        kind (see :class:`LLMError`).
    """

    content: str | None
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] | None = None
    cached: bool = False
    error: str | None = None
    error_kind: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def empty(self) -> bool:
        """A reply came, but with no text."""
        return self.error is None and not (self.content or "").strip()

    @property
    def truncated(self) -> bool:
        """The reply was cut off at the token limit."""
        return self.finish_reason == "length"

    @property
    def tokens(self) -> int:
        total = self.usage.get("total_tokens")
        if isinstance(total, int) and not isinstance(total, bool):
            return total
        return sum(
            v
            for k in ("prompt_tokens", "completion_tokens")
            if isinstance(v := self.usage.get(k), int) and not isinstance(v, bool)
        )

    @classmethod
    def from_payload(cls, payload: Any, url: str, *, cached: bool = False) -> ChatReply:
        """Read a chat-completions reply; :class:`LLMError` (``bad_reply``) when it is not
        one."""
        try:
            choice = payload["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"{url}: not a chat-completions response (no choices[0].message)",
                kind="bad_reply",
            ) from exc
        content = message.get("content") if isinstance(message, dict) else None
        if content is not None and not isinstance(content, str):
            raise LLMError(f"{url}: message content is not text", kind="bad_reply")
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        usage = payload.get("usage") if isinstance(payload, dict) else None
        return cls(
            content=content,
            finish_reason=finish if isinstance(finish, str) else None,
            usage=dict(usage) if isinstance(usage, dict) else {},
            raw=payload if isinstance(payload, dict) else None,
            cached=cached,
        )


@dataclass
class MapResult:
    """What :meth:`ChatClient.map` returns: one :class:`ChatReply` per request, in the
    requests' order, and the run's accounting."""

    replies: list[ChatReply]
    sent: int
    cached: int
    tokens: dict[str, int]
    failures: dict[str, int]
    seconds: float
    #: tokens of the replies this run sent for (not from the cache), and ``no_usage``:
    #: how many of those replies reported no token counts
    sent_tokens: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Plain counts for a run's summary: requests, sent, cached, failed by kind, empty,
        cut off, tokens, seconds."""
        return {
            "requests": len(self.replies),
            "sent": self.sent,
            "cached": self.cached,
            "failed": sum(self.failures.values()),
            "failures": dict(sorted(self.failures.items())),
            "empty": sum(1 for r in self.replies if r.empty),
            "cut_off": sum(1 for r in self.replies if r.ok and r.truncated),
            "tokens": dict(self.tokens),
            "sent_tokens": dict(self.sent_tokens),
            "seconds": round(self.seconds, 3),
        }

    def failure_line(self) -> str | None:
        """``3 of 40 requests failed: http_500 2, deadline 1`` (``None`` when none did)."""
        if not self.failures:
            return None
        parts = ", ".join(f"{k} {n}" for k, n in sorted(self.failures.items()))
        return f"{sum(self.failures.values())} of {len(self.replies)} requests failed: {parts}"


def default_reply_cache_path() -> Path:
    """``$CREAGRAPH_CACHE_DIR/llm-replies.sqlite`` (else ``~/.cache/creagraph/…``)."""
    return settings.cache_dir() / "llm-replies.sqlite"


class ReplyCache:
    """Replies on disk, keyed by (base URL, model, full request body, sample index).

    Only replies that came back (HTTP 200 and a chat-completions body, empty or cut off
    included) are stored; failures are asked again. Every reply is committed as soon as it
    arrives, so a run killed at any point keeps what it had received. Safe to share between
    threads and processes (SQLite in WAL mode).

    Parameters
    ----------
    path : path
        The SQLite file (created with its folder when missing).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            # workers opening a new cache at once retry a lock (it is not damage)
            open_cache_tables(
                self._db,
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)",
            )
        except sqlite3.DatabaseError as exc:
            raise cache_error(self.path, exc, "LLM reply cache",
                              "replies that can be asked again") from exc

    @staticmethod
    def key(base_url: str, model: str, body: Mapping[str, Any], sample: int) -> str:
        """SHA-256 of the canonical JSON of the four parts."""
        text = json.dumps(
            [base_url.rstrip("/"), model, body, int(sample)],
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except json.JSONDecodeError:
            return None  # a damaged entry is asked again, then overwritten
        return value if isinstance(value, dict) else None

    def put(self, key: str, payload: Mapping[str, Any]) -> None:
        text = json.dumps(payload, ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, text))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


#: The longest a server's ``Retry-After`` is waited for (longer is read as this).
MAX_RETRY_AFTER = 3600.0


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (:func:`~creagraph.core.retry.retry_after_seconds`),
    at most :data:`MAX_RETRY_AFTER`."""
    seconds = retry_after_seconds(value)
    return None if seconds is None else min(seconds, MAX_RETRY_AFTER)


class _Deadline(Exception):
    pass


class _RateLimit:
    """At most ``per_minute`` request starts per minute, evenly spaced."""

    def __init__(self, per_minute: float | None):
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


class ChatClient:
    """An OpenAI-compatible chat-completions client (see the module docstring).

    Parameters
    ----------
    base_url : str
        API root, e.g. ``http://localhost:8000/v1`` (``/chat/completions`` is appended).
    model : str
        Model name sent with every request.
    api_key : str, optional
        Sent as ``Authorization: Bearer …`` when given (never after a redirect: none is
        followed).
    timeout : float
        Seconds to wait for the connection and between bytes of the reply.
    deadline : float, optional
        Seconds one request may take in all, connection to last byte (default
        ``timeout``); a request that hit it is retried at most once.
    retries : int
        Further attempts after a 429/5xx or connection error, waiting ``backoff * 2**i``
        (or the server's ``Retry-After`` when longer).
    temperature : float
        Sampling temperature when no :class:`Sampling` is given (default 0).
    sampling : Sampling, optional
        Default sampling settings (``temperature`` is ignored when this is given).
    max_reply_bytes : int
        Largest reply read; a larger one is refused (``too_large``) without being read
        whole.
    cache : ReplyCache or path, optional
        The on-disk reply cache (``None``: none).
    requests_per_minute : float, optional
        Spread request starts to at most this rate (all threads together).
    sleep : callable
        How to wait between attempts (tests pass a recorder).
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        deadline: float | None = None,
        retries: int = 2,
        backoff: float = 1.0,
        temperature: float = 0.0,
        sampling: Sampling | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        cache: ReplyCache | str | os.PathLike[str] | None = None,
        requests_per_minute: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"LLM endpoint must be an http(s) URL, not {base_url!r}")
        if not model:
            raise ValueError("an LLM model name is required")
        if timeout <= 0 or (deadline is not None and deadline <= 0):
            raise ValueError("LLM timeout and deadline must be positive")
        self.base_url = base_url
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.deadline = float(deadline if deadline is not None else timeout)
        self.retries = retries
        self.backoff = backoff
        self.temperature = temperature
        self.sampling = sampling if sampling is not None else Sampling(temperature=temperature)
        self.max_reply_bytes = int(max_reply_bytes)
        self.cache = cache if isinstance(cache, ReplyCache) or cache is None else ReplyCache(cache)
        self._rate = _RateLimit(requests_per_minute)
        self._sleep = sleep
        self._count_lock = threading.Lock()
        self.requests_sent = 0
        self._http: httpx.Client | None = None
        self._http_lock = threading.Lock()

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

    # -- one request -------------------------------------------------------------------

    def body(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        sampling: Sampling | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> dict[str, Any]:
        """The JSON body sent for these messages (what the cache key is built from)."""
        settings = self.sampling if sampling is None else sampling
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        body.update(settings.body(sample))
        if max_tokens is not None and settings.max_tokens is None:
            body["max_tokens"] = max_tokens
        return body

    def chat(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 200) -> str:
        """Send a chat and return the first choice's message content.

        Raises
        ------
        LLMError
            When no reply came, or the reply has no message text (``kind="empty"``).
        """
        reply = self.complete(messages, max_tokens=max_tokens)
        if reply.content is None:
            raise LLMError(f"{self.url}: message content is not text", kind="empty")
        return reply.content

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        sampling: Sampling | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> ChatReply:
        """Send one request (or answer it from the cache) and return the whole reply.

        Parameters
        ----------
        messages : sequence of mapping
            ``[{"role": "user", "content": …}, …]``.
        sampling : Sampling, optional
            The client's :attr:`sampling` when ``None``.
        max_tokens : int, optional
            Used when ``sampling`` sets no ``max_tokens``.
        sample : int
            The sample index (several samples of one prompt are cached apart).

        Raises
        ------
        LLMError
            When no usable reply came after the retries.
        """
        body = self.body(messages, sampling=sampling, max_tokens=max_tokens, sample=sample)
        key = ReplyCache.key(self.base_url, self.model, body, sample)
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                try:
                    return ChatReply.from_payload(stored, self.url, cached=True)
                except LLMError:
                    pass  # not a reply after all: ask again
        payload = self._post(body)
        reply = ChatReply.from_payload(payload, self.url)
        if self.cache is not None:
            self.cache.put(key, payload)
        return reply

    def _client(self) -> httpx.Client:
        import httpx

        with self._http_lock:
            if self._http is None:
                self._http = httpx.Client(
                    follow_redirects=False,
                    trust_env=False,
                    limits=httpx.Limits(max_connections=256, max_keepalive_connections=64),
                )
            return self._http

    def close(self) -> None:
        """Close the connection pool (and the cache)."""
        with self._http_lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _post(self, body: Mapping[str, Any]) -> Any:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "creagraph",
            "Accept-Encoding": "identity",
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        deadlines = [0]
        import httpx

        def attempt(_: int) -> Any:
            self._rate.wait()
            with self._count_lock:
                self.requests_sent += 1
            try:
                status, head, content = self._send(data, headers)
            except _Deadline as exc:
                deadlines[0] += 1
                if deadlines[0] > 1:  # it timed out twice: it will time out again
                    raise LLMError(
                        f"{self.url}: no complete reply within the {self.deadline:g} s "
                        "deadline (twice)",
                        kind="deadline",
                    ) from None
                raise Retry(exc) from None
            except httpx.ConnectTimeout as exc:  # no connection at all: like a refusal
                raise Retry(exc) from None
            except httpx.TimeoutException as exc:
                deadlines[0] += 1
                if deadlines[0] > 1:
                    raise LLMError(
                        f"{self.url}: timed out twice ({type(exc).__name__})", kind="timeout"
                    ) from None
                raise Retry(exc) from None
            except (httpx.TransportError, OSError) as exc:
                raise Retry(exc) from None
            if 300 <= status < 400:
                where = head.get("location") or "(no Location)"
                raise LLMError(
                    f"{self.url}: HTTP {status} redirect to {where} refused (creagraph never "
                    "follows a redirect: set the final URL as the endpoint)",
                    status=status,
                    kind="redirect",
                )
            if status in RETRY_STATUS:
                raise Retry(
                    _HTTPStatus(status, content), after=_retry_after(head.get("retry-after"))
                )
            if status != 200:
                raise LLMError(
                    f"{self.url}: HTTP {status}{_detail(content)}", status=status
                )
            try:
                return json.loads(content.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                msg = getattr(exc, "msg", None) or str(exc)
                raise LLMError(
                    f"{self.url}: response is not JSON ({msg})", kind="not_json"
                ) from None

        return with_retries(
            attempt,
            retries=self.retries,
            backoff=self.backoff,
            sleep=self._sleep,
            give_up=self._giving_up,
        )

    def _send(self, data: bytes, headers: dict[str, str]) -> tuple[int, httpx.Headers, bytes]:
        """One HTTP exchange within the deadline; the body read at most up to the cap."""
        import httpx

        start = time.monotonic()
        per_read = min(self.timeout, self.deadline)
        timeout = httpx.Timeout(per_read, connect=min(per_read, 30.0))
        timer: threading.Timer | None = None
        expired = threading.Event()
        with self._client().stream(
            "POST", self.url, content=data, headers=headers, timeout=timeout
        ) as response:
            try:
                sock = _socket_of(response)
                left = self.deadline - (time.monotonic() - start)
                if left <= 0:
                    raise _Deadline("deadline passed before the reply began")

                def cut() -> None:  # wakes a read blocked on a trickling server
                    expired.set()
                    if sock is not None:
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)

                timer = threading.Timer(left, cut)
                timer.daemon = True
                timer.start()
                length = response.headers.get("content-length")
                if length and length.isdigit() and int(length) > self.max_reply_bytes:
                    raise LLMError(
                        f"{self.url}: reply of {int(length)} bytes is over the "
                        f"{self.max_reply_bytes} byte cap",
                        kind="too_large",
                    )
                chunks: list[bytes] = []
                size = 0
                try:
                    for chunk in response.iter_raw(_CHUNK):
                        size += len(chunk)
                        if size > self.max_reply_bytes:
                            raise LLMError(
                                f"{self.url}: reply over the {self.max_reply_bytes} byte cap",
                                kind="too_large",
                            )
                        chunks.append(chunk)
                        if expired.is_set() or time.monotonic() - start > self.deadline:
                            raise _Deadline("deadline passed while reading the reply")
                except (httpx.TransportError, OSError) as exc:
                    if expired.is_set():
                        raise _Deadline("deadline passed while reading the reply") from exc
                    raise
                raw = b"".join(chunks)
                encoding = response.headers.get("content-encoding", "identity").lower()
                if encoding not in ("", "identity"):
                    raw = _decode_body(raw, encoding, self.max_reply_bytes, self.url)
                return response.status_code, response.headers, raw
            finally:
                if timer is not None:
                    timer.cancel()

    def _giving_up(self, last: BaseException | None) -> LLMError:
        """The error once every attempt failed: ``status`` the last HTTP status, and
        ``unreachable`` when the server could not be reached at all (not a timeout)."""
        import httpx

        status = last.status if isinstance(last, _HTTPStatus) else None
        unreachable = isinstance(last, httpx.ConnectError | httpx.ConnectTimeout | OSError)
        kind = (
            f"http_{status}" if status else "deadline" if isinstance(last, _Deadline)
            else "unreachable" if unreachable
            else "timeout" if isinstance(last, httpx.TimeoutException) else "connection"
        )
        return LLMError(
            f"{self.url}: giving up after {self.retries + 1} attempts: {last}",
            status=status,
            unreachable=unreachable,
            kind=kind,
        )

    # -- many requests ------------------------------------------------------------------

    def map(
        self,
        requests: Sequence[ChatRequest],
        *,
        concurrency: int = 4,
        desc: str = "requests",
        on_reply: Callable[[int, ChatReply], None] | None = None,
        show_progress: bool = True,
    ) -> MapResult:
        """Send many requests, at most ``concurrency`` in flight, and collect the replies.

        Cached requests are answered at once (no request sent). A request that fails after
        its retries becomes a :class:`ChatReply` with ``error``/``error_kind`` set; the
        others go on. An unreachable endpoint, a redirect or HTTP 401/403/404 stops the
        map: requests not yet started are dropped and the :class:`LLMError` is raised
        (replies received so far are already in the cache).

        Parameters
        ----------
        requests : sequence of ChatRequest
            What to send.
        concurrency : int
            Requests in flight at once (threads).
        desc : str
            The progress bar's label.
        on_reply : callable, optional
            Called as ``on_reply(i, reply)`` in the calling thread as each reply comes
            (e.g. to append it to an output file).
        show_progress : bool
            Show the progress bar (done/total, rate, ETA, tokens) on stderr.

        Returns
        -------
        MapResult
            The replies in the requests' order, with counts of requests sent and cached,
            tokens (prompt/completion/total) and failures by kind.
        """
        from creagraph.core.progress import progress_bar

        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        start = time.monotonic()
        sent_before = self.requests_sent
        replies: list[ChatReply | None] = [None] * len(requests)
        tokens: Counter[str] = Counter()
        paid: Counter[str] = Counter()  # the replies sent for in this run
        failures: Counter[str] = Counter()
        cached = 0

        def one(request: ChatRequest) -> ChatReply:
            try:
                return self.complete(
                    request.messages, sampling=request.sampling, sample=request.sample
                )
            except LLMError as exc:
                if exc.fatal:
                    raise
                return ChatReply(content=None, error=str(exc), error_kind=exc.kind)

        bar = progress_bar(total=len(requests), desc=desc, unit="req", disable=not show_progress)
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="creagraph-llm")
        pending: dict[Future[ChatReply], int] = {}
        todo = iter(enumerate(requests))
        try:
            def fill() -> None:
                while len(pending) < concurrency:
                    item = next(todo, None)
                    if item is None:
                        return
                    pending[pool.submit(one, item[1])] = item[0]

            fill()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    i = pending.pop(future)
                    reply = future.result()  # a fatal LLMError propagates here
                    replies[i] = reply
                    if reply.cached:
                        cached += 1
                    if reply.error_kind:
                        failures[reply.error_kind] += 1
                    for name in ("prompt_tokens", "completion_tokens"):
                        value = reply.usage.get(name)
                        if isinstance(value, int) and not isinstance(value, bool):
                            tokens[name] += value
                    tokens["total_tokens"] += reply.tokens
                    if not reply.cached and reply.error is None:
                        paid.update(sent_tokens([reply]))
                    if on_reply is not None:
                        on_reply(i, reply)
                    bar.update(1)
                    bar.set_postfix(tokens=tokens["total_tokens"], failed=sum(failures.values()),
                                    refresh=False)
                fill()
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            bar.close()
        return MapResult(
            replies=[r for r in replies if r is not None],
            sent=self.requests_sent - sent_before,
            cached=cached,
            tokens={k: tokens.get(k, 0) for k in ("prompt_tokens", "completion_tokens",
                                                   "total_tokens")},
            failures=dict(failures),
            seconds=time.monotonic() - start,
            sent_tokens={k: paid.get(k, 0) for k in ("prompt_tokens", "completion_tokens",
                                                     "no_usage")},
        )


def sent_tokens(replies: Iterable[ChatReply]) -> dict[str, int]:
    """Prompt and completion tokens of ``replies`` as their servers reported them, and
    ``no_usage``: how many reported neither (their cost cannot be estimated).

    Examples
    --------
    >>> sent_tokens([ChatReply(content="x", usage={"prompt_tokens": 5, "completion_tokens": 2}),
    ...              ChatReply(content="y")])
    {'prompt_tokens': 5, 'completion_tokens': 2, 'no_usage': 1}
    """
    out = {"prompt_tokens": 0, "completion_tokens": 0, "no_usage": 0}
    for reply in replies:
        counted = False
        for name in ("prompt_tokens", "completion_tokens"):
            value = reply.usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                out[name] += value
                counted = True
        out["no_usage"] += not counted
    return out


@dataclass(frozen=True)
class Prices:
    """What the user pays per million prompt (``input``) and completion (``output``)
    tokens, in the user's own currency. creagraph ships no price list: a cost is estimated
    only from prices the user gives (``--price-input`` / ``--price-output``).

    Examples
    --------
    >>> Prices(input=0.5, output=1.5).cost({"prompt_tokens": 2_000_000,
    ...                                     "completion_tokens": 1_000_000})
    2.5
    """

    input: float
    output: float

    def __post_init__(self) -> None:
        for name in ("input", "output"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise InputError(f"--price-{name}: must be a number ≥ 0, not {value!r}")

    @classmethod
    def from_options(cls, price_input: float | None, price_output: float | None
                     ) -> Prices | None:
        """The prices of ``--price-input`` / ``--price-output`` (``None`` when neither is
        given; both or neither)."""
        if price_input is None and price_output is None:
            return None
        if price_input is None or price_output is None:
            raise InputError("--price-input and --price-output: give both (per 1M tokens), "
                             "or neither")
        return cls(float(price_input), float(price_output))

    def cost(self, tokens: Mapping[str, Any]) -> float:
        """The cost of ``tokens`` (``prompt_tokens``, ``completion_tokens``)."""
        return (int(tokens.get("prompt_tokens") or 0) * self.input
                + int(tokens.get("completion_tokens") or 0) * self.output) / 1_000_000


def cost_estimate(tokens: Mapping[str, Any], prices: Prices | None) -> dict[str, Any]:
    """The cost record of a run (for ``run.json`` and the printed summary): ``cost`` of
    the tokens sent for (``None`` without prices), the ``prices`` per 1M tokens used, the
    tokens priced and ``no_usage`` (replies that reported no tokens: the cost is a lower
    bound then).

    Examples
    --------
    >>> cost_estimate({"prompt_tokens": 10, "completion_tokens": 0}, None)["cost"] is None
    True
    """
    priced = {k: int(tokens.get(k) or 0) for k in ("prompt_tokens", "completion_tokens")}
    return {
        "cost": round(prices.cost(priced), 6) if prices is not None else None,
        "prices_per_million_tokens": (
            {"input": prices.input, "output": prices.output} if prices is not None else None
        ),
        "tokens_priced": priced,
        "no_usage": int(tokens.get("no_usage") or 0),
    }


def cost_line(estimate: Mapping[str, Any]) -> str:
    """One line for a run's summary.

    Examples
    --------
    >>> cost_line(cost_estimate({"prompt_tokens": 2_000_000, "completion_tokens": 10},
    ...                         Prices(1.0, 2.0)))
    'cost: 2.00002 (2000000 input tokens at 1 + 10 output tokens at 2 per 1M)'
    >>> cost_line(cost_estimate({}, None))
    'cost: not computed (no prices given: --price-input/--price-output)'
    """
    prices = estimate.get("prices_per_million_tokens")
    if estimate.get("cost") is None or not prices:
        return "cost: not computed (no prices given: --price-input/--price-output)"
    tokens = estimate["tokens_priced"]
    line = (f"cost: {estimate['cost']:.6g} ({tokens['prompt_tokens']} input tokens at "
            f"{prices['input']:g} + {tokens['completion_tokens']} output tokens at "
            f"{prices['output']:g} per 1M)")
    if estimate.get("no_usage"):
        line += (f"; at least: {estimate['no_usage']} replies reported no token counts")
    return line


class _HTTPStatus(Exception):
    def __init__(self, status: int, content: bytes):
        super().__init__(f"HTTP {status}{_detail(content)}")
        self.status = status


def _detail(content: bytes) -> str:
    """A short, one-line excerpt of an error body (``: {"error": …}``)."""
    text = content[:200].decode("utf-8", "replace").strip()
    text = " ".join(text.split())
    return f": {text}" if text else ""


def _socket_of(response: httpx.Response) -> socket.socket | None:
    stream = response.extensions.get("network_stream")
    if stream is None:
        return None
    try:
        sock = stream.get_extra_info("socket")
    except Exception:  # noqa: BLE001 - a transport without one: the per-read timeout holds
        return None
    return sock if isinstance(sock, socket.socket) else None


def _decode_body(raw: bytes, encoding: str, cap: int, url: str) -> bytes:
    """Decompress a gzip/deflate body, never past ``cap`` bytes (a zip bomb is refused)."""
    import zlib

    if encoding not in ("gzip", "deflate"):
        raise LLMError(f"{url}: unsupported Content-Encoding {encoding!r}", kind="bad_reply")
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    decoder = zlib.decompressobj(wbits)
    try:
        out = decoder.decompress(raw, cap + 1)
    except zlib.error as exc:
        raise LLMError(f"{url}: damaged {encoding} body ({exc})", kind="bad_reply") from None
    if len(out) > cap:
        raise LLMError(f"{url}: reply over the {cap} byte cap once decompressed", kind="too_large")
    return out
