"""Bounded retries with exponential backoff, shared by every client that talks to a server
(the SPARQL backend, the LLM chat client; SPEC §2 on politeness).

One attempt is a callable that returns its result, raises :class:`Retry` when another
attempt may help (HTTP 429/5xx, a timeout, a dropped connection), or raises anything else
to stop at once. :func:`with_retries` makes at most ``retries + 1`` attempts and waits
``backoff * 2**attempt`` seconds between them — longer when the failure asks for it (a
server's ``Retry-After``) — and when attempts run out raises the error the caller builds
from the last failure, chained to it. A failure marked ``once`` (a request that ran into its
deadline: it will most likely run into it again) is retried at most once, whatever
``retries`` allows.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

__all__ = ["RETRY_STATUS", "Retry", "retry_after_seconds", "with_retries"]

T = TypeVar("T")

#: HTTP statuses worth another attempt: too many requests and transient server errors.
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP date.

    A date in the past is 0; a date without a zone is read as UTC; anything else (empty,
    negative, not finite, not a date) is None, i.e. the header is ignored.

    Examples
    --------
    >>> retry_after_seconds("7"), retry_after_seconds("2.5"), retry_after_seconds("soon")
    (7.0, 2.5, None)
    >>> retry_after_seconds("Thu, 01 Jan 1970 00:00:00 GMT"), retry_after_seconds("-3")
    (0.0, None)
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class Retry(Exception):
    """Raised by one attempt: it failed, and another attempt may succeed.

    Parameters
    ----------
    cause : BaseException
        The failure, handed to the caller's ``give_up`` when attempts run out.
    after : float, optional
        The least number of seconds to wait before the next attempt (a server's
        ``Retry-After``); the backoff is used when it is longer.
    once : bool
        A failure of this kind (a timeout) is retried at most once per call of
        :func:`with_retries`: the second one ends the attempts.
    """

    def __init__(
        self, cause: BaseException, *, after: float | None = None, once: bool = False
    ):
        super().__init__(str(cause))
        self.cause = cause
        self.after = after
        self.once = once


def with_retries(
    attempt: Callable[[int], T],
    *,
    retries: int,
    backoff: float,
    sleep: Callable[[float], None],
    give_up: Callable[[BaseException | None], BaseException],
) -> T:
    """Call ``attempt(i)`` for ``i = 0, 1, …, retries`` until one returns.

    Parameters
    ----------
    attempt : callable
        One attempt, given its number (from 0). A :class:`Retry` it raises is retried; any
        other exception propagates at once.
    retries : int
        Further attempts after the first.
    backoff : float
        Wait ``backoff * 2**i`` seconds after failed attempt ``i`` (or the failure's
        :attr:`Retry.after`, when that is longer); no wait after the last attempt.
    sleep : callable
        How to wait (``time.sleep``; tests pass a recorder).
    give_up : callable
        Builds the error raised when attempts run out, from the last failure's
        :attr:`Retry.cause` (``None`` when no attempt was made); it is raised chained to
        that cause.

    Returns
    -------
    object
        What the first successful attempt returned.

    Examples
    --------
    >>> waits, calls = [], []
    >>> def flaky(i):
    ...     calls.append(i)
    ...     if i < 2:
    ...         raise Retry(ConnectionError("refused"), after=3.0 if i == 1 else None)
    ...     return "ok"
    >>> with_retries(flaky, retries=4, backoff=1.0, sleep=waits.append, give_up=RuntimeError)
    'ok'
    >>> calls, waits
    ([0, 1, 2], [1.0, 3.0])
    >>> def down(i):
    ...     raise Retry(ConnectionError("refused"))
    >>> with_retries(down, retries=1, backoff=0.5, sleep=waits.append,
    ...              give_up=lambda last: RuntimeError(f"giving up: {last}"))
    Traceback (most recent call last):
    ...
    RuntimeError: giving up: refused
    >>> calls.clear()
    >>> def slow(i):
    ...     calls.append(i)
    ...     raise Retry(TimeoutError("no response within 60 s"), once=True)
    >>> with_retries(slow, retries=4, backoff=0.0, sleep=waits.append, give_up=RuntimeError)
    Traceback (most recent call last):
    ...
    RuntimeError: no response within 60 s
    >>> calls  # a timed-out request is retried once, not four times
    [0, 1]
    """
    last: BaseException | None = None
    once_failed = 0
    for i in range(retries + 1):
        try:
            return attempt(i)
        except Retry as failed:
            last = failed.cause
            wait = backoff * (2**i)
            if failed.after is not None:
                wait = max(wait, failed.after)
            once_failed += failed.once
        if i < retries and once_failed < 2:
            sleep(wait)
        else:
            break
    raise give_up(last) from last
