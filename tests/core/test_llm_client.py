"""The chat client against a real scripted OpenAI-protocol server on 127.0.0.1."""

import threading
import time

import pytest

from creagraph.core.llm import ChatClient, ChatRequest, LLMError, ReplyCache, Sampling
from tests.chatserver import Act, ChatServer, prompt_of

MSG = [{"role": "user", "content": "hi"}]


def test_a_redirect_to_another_host_is_never_followed_nor_its_reply_taken():
    with ChatServer(lambda b, n: Act("ok", content="evil verdicts")) as other:
        target = other.url + "/chat/completions"
        with ChatServer(lambda b, n: Act("redirect", location=target)) as s:
            client = ChatClient(s.url, model="m", api_key="secret-key", sleep=lambda _: None)
            with pytest.raises(LLMError, match="redirect to http://127.0.0.1:.* refused") as e:
                client.chat(MSG)
            assert e.value.fatal and e.value.kind == "redirect"
            assert len(s.requests) == 1 and s.requests[0]["headers"]["Authorization"] == (
                "Bearer secret-key"
            )
        assert other.requests == []  # the key never reached the other host


def test_the_total_deadline_cuts_a_trickling_reply_and_is_retried_once():
    with ChatServer(lambda b, n: Act("trickle", delay=0.1)) as s:
        client = ChatClient(s.url, model="m", timeout=5.0, deadline=0.6, retries=5,
                            sleep=lambda _: None)
        start = time.monotonic()
        with pytest.raises(LLMError, match="deadline") as e:
            client.chat(MSG)
        took = time.monotonic() - start
        assert e.value.kind == "deadline" and not e.value.fatal
        assert len(s.requests) == 2  # retried once, not five times
        assert took < 3.0, took  # two deadlines, not the 5 s per-read timeout


def test_a_huge_reply_is_refused_without_being_read_whole():
    with ChatServer(lambda b, n: Act("huge", size=1 << 30)) as s:
        client = ChatClient(s.url, model="m", max_reply_bytes=1 << 20, sleep=lambda _: None)
        with pytest.raises(LLMError, match="cap") as e:
            client.chat(MSG)
        assert e.value.kind == "too_large" and len(s.requests) == 1


def test_a_huge_reply_without_length_is_cut_at_the_cap():
    with ChatServer(lambda b, n: Act("trickle", delay=0.0)) as s:  # endless 1-byte writes
        client = ChatClient(s.url, model="m", max_reply_bytes=50_000, deadline=20,
                            sleep=lambda _: None)
        with pytest.raises(LLMError, match="cap"):
            client.chat(MSG)


def test_429_retry_after_is_honoured_then_the_reply_is_taken():
    script = {0: Act("status", code=429, headers={"Retry-After": "7"}),
              1: Act("status", code=500)}
    with ChatServer(lambda b, n: script.get(n, Act(content="fine"))) as s:
        waits = []
        client = ChatClient(s.url, model="m", retries=3, backoff=0.5, sleep=waits.append)
        reply = client.complete(MSG, sampling=Sampling(temperature=0.3, top_p=0.9, seed=5),
                                sample=2)
        assert reply.content == "fine" and reply.finish_reason == "stop"
        assert waits == [7.0, 1.0] and client.requests_sent == 3
        body = s.requests[-1]["body"]
        assert (body["temperature"], body["top_p"], body["seed"]) == (0.3, 0.9, 7)
        assert reply.usage["total_tokens"] == 11 and reply.tokens == 11


@pytest.mark.parametrize(
    ("act", "kind"),
    [(Act("malformed"), "not_json"), (Act("status", code=400), "http_400")],
)
def test_unusable_replies_are_errors_of_their_kind(act, kind):
    with ChatServer(lambda b, n: act) as s:
        with pytest.raises(LLMError) as e:
            ChatClient(s.url, model="m", sleep=lambda _: None).chat(MSG)
        assert e.value.kind == kind and not e.value.fatal


def test_empty_and_cut_off_replies_are_records_not_errors():
    def script(b, n):
        return Act(content="abc", finish="length") if n == 1 else Act("null")

    with ChatServer(script) as s:
        client = ChatClient(s.url, model="m", sleep=lambda _: None)
        empty = client.complete(MSG)
        assert empty.content is None and empty.empty and empty.ok
        cut = client.complete(MSG, sample=1)
        assert cut.truncated and cut.content == "abc"
        with pytest.raises(LLMError, match="not text"):  # chat() wants text
            client.chat(MSG)


def test_the_reply_cache_answers_repeats_and_keys_by_sample(tmp_path):
    with ChatServer(lambda b, n: Act(content=f"reply {n}")) as s:
        cache = ReplyCache(tmp_path / "c.sqlite")
        client = ChatClient(s.url, model="m", cache=cache, sleep=lambda _: None)
        first = client.complete(MSG, sample=0)
        again = ChatClient(s.url, model="m", cache=tmp_path / "c.sqlite").complete(MSG, sample=0)
        assert (first.content, again.content, again.cached) == ("reply 0", "reply 0", True)
        assert client.complete(MSG, sample=1).content == "reply 1"  # another sample: asked
        other = ChatClient(s.url, model="m2", cache=cache).complete(MSG, sample=0)
        assert other.content == "reply 2"  # another model: asked
        assert len(s.requests) == 3 and len(cache) == 3


def test_map_keeps_k_in_flight_and_summarises_failures(tmp_path):
    def script(body, n):
        text = prompt_of(body)
        if text == "q3":
            return Act("status", code=500)
        return Act(content=text.upper(), delay=0.2)

    with ChatServer(script) as s:
        client = ChatClient(s.url, model="m", retries=1, backoff=0.0, sleep=lambda _: None,
                            cache=tmp_path / "c.sqlite")
        requests = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(12)]
        seen = []
        result = client.map(requests, concurrency=4, on_reply=lambda i, r: seen.append(i))
        assert s.max_in_flight == 4
        assert [r.content for r in result.replies][:3] == ["Q0", "Q1", "Q2"]
        assert result.replies[3].error_kind == "http_500" and result.replies[3].content is None
        assert result.failures == {"http_500": 1} and sorted(seen) == list(range(12))
        assert result.failure_line() == "1 of 12 requests failed: http_500 1"
        assert result.summary()["tokens"]["total_tokens"] == 11 * 11
        again = client.map(requests, concurrency=4)
        assert again.cached == 11 and again.sent == 2  # only the failed one, twice


def test_map_stops_on_a_fatal_status():
    with ChatServer(lambda b, n: Act("status", code=401)) as s:
        client = ChatClient(s.url, model="m", sleep=lambda _: None)
        requests = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(50)]
        with pytest.raises(LLMError, match="HTTP 401") as e:
            client.map(requests, concurrency=2)
        assert e.value.fatal and len(s.requests) < 10


def test_an_unreachable_endpoint_is_fatal():
    client = ChatClient("http://127.0.0.1:9/v1", model="m", retries=1, sleep=lambda _: None)
    with pytest.raises(LLMError) as e:
        client.map([ChatRequest(MSG)])
    assert e.value.unreachable and e.value.fatal


def test_requests_per_minute_spreads_starts():
    with ChatServer() as s:
        client = ChatClient(s.url, model="m", requests_per_minute=600)  # one per 0.1 s
        requests = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(6)]
        start = time.monotonic()
        client.map(requests, concurrency=6)
        assert time.monotonic() - start >= 0.5  # starts at 0, 0.1, …, 0.5 s
        assert len(s.requests) == 6


def test_client_is_thread_safe_for_plain_chat():
    with ChatServer(lambda b, n: Act(content=prompt_of(b))) as s:
        client = ChatClient(s.url, model="m")
        out = {}

        def ask(i):
            out[i] = client.chat([{"role": "user", "content": str(i)}])

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == {i: str(i) for i in range(8)} and client.requests_sent == 8


def test_a_dropped_connection_is_retried_and_counted_not_fatal():
    def script(body, n):
        return Act("drop") if prompt_of(body) == "q0" else Act(content="ok")

    with ChatServer(script) as s:
        client = ChatClient(s.url, model="m", retries=2, sleep=lambda _: None)
        requests = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(3)]
        result = client.map(requests, concurrency=2)
        assert result.failures == {"connection": 1}
        assert [r.content for r in result.replies] == [None, "ok", "ok"]
        assert len(s.requests) == 5  # q0 three times
