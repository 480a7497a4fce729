"""One retry-with-backoff loop for every client (core/retry.py, issue 18)."""

import email.utils
import time

import pytest

from creagraph.core.retry import RETRY_STATUS, Retry, retry_after_seconds, with_retries


class GaveUp(RuntimeError):
    pass


def _run(outcomes, *, retries, backoff=1.0):
    """Run with_retries over a script of outcomes: an exception to raise, else a value."""
    waits, calls = [], []

    def attempt(i):
        calls.append(i)
        outcome = outcomes[i]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def give_up(last):
        return GaveUp(f"giving up after {retries + 1} attempts: {last}")

    try:
        result = with_retries(
            attempt, retries=retries, backoff=backoff, sleep=waits.append, give_up=give_up
        )
    except Exception as exc:  # noqa: BLE001 - returned for the test to inspect
        result = exc
    return result, calls, waits


def test_backoff_doubles_and_no_wait_after_the_last_attempt():
    down = [Retry(ConnectionError(f"refused {i}")) for i in range(4)]
    result, calls, waits = _run(down, retries=3, backoff=0.5)
    assert calls == [0, 1, 2, 3] and waits == [0.5, 1.0, 2.0]
    assert isinstance(result, GaveUp) and str(result).endswith("4 attempts: refused 3")
    assert result.__cause__ is down[3].cause


def test_retry_after_lengthens_a_wait_but_never_shortens_it():
    script = [Retry(OSError("busy"), after=5.0), Retry(OSError("busy"), after=0.1), "ok"]
    result, calls, waits = _run(script, retries=4)
    assert result == "ok" and calls == [0, 1, 2] and waits == [5.0, 2.0]


def test_other_errors_stop_at_once():
    result, calls, waits = _run([ValueError("bad request"), "never"], retries=5)
    assert isinstance(result, ValueError) and calls == [0] and waits == []


def test_no_retries_means_one_attempt():
    result, calls, waits = _run([Retry(TimeoutError("slow"))], retries=0)
    assert isinstance(result, GaveUp) and calls == [0] and waits == []


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_transient_statuses(status):
    assert status in RETRY_STATUS and 404 not in RETRY_STATUS


@pytest.mark.parametrize("header, expected", [
    ("7", 7.0), (" 12 ", 12.0), ("2.5", 2.5), ("0", 0.0),
    ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
    (None, None), ("", None), ("soon", None), ("-3", None), ("nan", None), ("inf", None),
])
def test_retry_after_header_values(header, expected):
    """One reading of Retry-After for the SPARQL and LLM clients: seconds or an HTTP date;
    what is not a usable wait is ignored (None), never a negative or endless sleep."""
    assert retry_after_seconds(header) == expected


def test_retry_after_future_http_date_is_the_time_left():
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 110 <= retry_after_seconds(when) <= 120
