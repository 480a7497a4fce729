"""Model-runner benchmark: the shared chat client against local fixed-latency servers.

Run: ``.venv/bin/python benchmarks/runner.py [--latency 0.3] [--judge-latency 0.05]``.
Prints:

1. requests/s of :meth:`creagraph.core.llm.ChatClient.map` against an OpenAI-protocol
   server that answers every request after a fixed latency (default 0.3 s), at concurrency
   K = 1, 4, 16, with the ratio against the ideal K / latency (want ≥ 0.8);
2. the LLM judge's wall time over the 80 published sample answers (every parsed path asked,
   as ``creagraph score --judge llm`` asks them: ``prefetch`` then ``judge`` per path)
   against a scripted judge server with a fixed latency, at concurrency 1 and 8, and the
   ratio (issue 31: want ≥ 6×);
3. the hybrid judge (kg first, the LLM judge for the triples the graph leaves unknown) over
   the first ``--hybrid-answers`` published answers (default 12) on the slice's store:
   one path at a time (``judge`` per path, the behaviour before issue 24's fan-out: the
   baseline) vs ``prefetch`` then ``judge`` (the unknown triples of an answer asked
   together, concurrency 8), at ``--hybrid-latency`` (default 0.3 s). The grounding cache
   is warmed first, so both runs ground from it. No reply cache in any part.

Run: ``.venv/bin/python benchmarks/runner.py [--store DIR] [--skip-judge]``.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.chatserver

from _common import parser_with_store, sample_outputs, slice_store  # noqa: E402

from creagraph.core.llm import ChatClient, ChatRequest  # noqa: E402
from creagraph.scoring.inputs import read_answers  # noqa: E402
from creagraph.scoring.judges import LlmJudge  # noqa: E402
from creagraph.scoring.parse import parse_answer  # noqa: E402
from tests.chatserver import Act, ChatServer, prompt_of  # noqa: E402


def _serve(kind: str, latency: float, ports) -> None:
    script = verdicts(latency) if kind == "judge" else (
        lambda b, n: Act(content="ok", delay=latency)
    )
    server = ChatServer(script)
    ports.put(server.port)
    server.thread.join()


@contextlib.contextmanager
def server_process(kind: str, latency: float) -> Iterator[str]:
    """The scripted server in its own process (as a real endpoint is: it does not share
    the client's interpreter lock); yields its URL."""
    ports: multiprocessing.Queue = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_serve, args=(kind, latency, ports), daemon=True)
    proc.start()
    try:
        yield f"http://127.0.0.1:{ports.get(timeout=30)}/v1"
    finally:
        proc.terminate()
        proc.join()


def throughput(latency: float, k: int, rounds: int = 6) -> float:
    """Requests per second at concurrency ``k`` (``rounds × k`` requests)."""
    with server_process("plain", latency) as url:
        client = ChatClient(url, model="m", timeout=30)
        requests = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(k * rounds)]
        client.map(requests[:k], concurrency=k, show_progress=False)  # open the connections
        start = time.perf_counter()
        result = client.map(requests, concurrency=k, show_progress=False)
        wall = time.perf_counter() - start
        assert not result.failures, result.failures
        client.close()
    return len(requests) / wall


def verdicts(latency: float):
    def script(body, n):
        k = len(re.findall(r"^\d+\. \[", prompt_of(body), flags=re.M))
        items = [{"explanation": "e", "class_a": 3, "class_b": 2,
                  "judgment": "not hallucinated"} for _ in range(k)]
        return Act(content=json.dumps({"triples": items}), delay=latency)

    return script


def judge_wall(rows, latency: float, concurrency: int) -> tuple[float, int]:
    with server_process("judge", latency) as url:
        judge = LlmJudge(url, "judge", concurrency=concurrency, cache=False)
        start = time.perf_counter()
        for row in rows:
            paths = parse_answer(row.answer).paths
            judge.prefetch(row, [p.triples for p in paths])
            for i, p in enumerate(paths):
                if p.triples:
                    judge.judge(row, i, p.triples)
        wall = time.perf_counter() - start
        sent = judge.client.requests_sent
        judge.client.close()
    return wall, sent


def hybrid_wall(rows, store: Path, latency: float, fan_out: bool) -> tuple[float, int]:
    """Wall time and requests of the hybrid judge over ``rows`` (``fan_out``: prefetch)."""
    from creagraph.scoring.api import build_scorer
    from creagraph.scoring.config import ScorerConfig
    from creagraph.scoring.judges import HybridJudge

    with server_process("judge", latency) as url:
        config = ScorerConfig(judge="hybrid", mode="paper", threads=None, llm_base_url=url,
                              llm_model="judge", llm_concurrency=8)
        scorer = build_scorer(config, kg=slice_store(store))
        hybrid = scorer.judge
        assert isinstance(hybrid, HybridJudge)
        hybrid.fallback = LlmJudge(url, "judge", concurrency=8, cache=False)
        work = [(row, parse_answer(row.answer).paths) for row in rows]
        for row, paths in work:  # warm the grounding cache: both runs ground from it
            for i, p in enumerate(paths):
                if p.triples:
                    hybrid.kg_judge.judge(row, i, p.triples)
        start = time.perf_counter()
        for row, paths in work:
            if fan_out:
                hybrid.prefetch(row, [p.triples for p in paths])
            for i, p in enumerate(paths):
                if p.triples:
                    hybrid.judge(row, i, p.triples)
        wall = time.perf_counter() - start
        sent = hybrid.fallback.client.requests_sent
        hybrid.fallback.client.close()
    return wall, sent


def main() -> None:
    parser = parser_with_store(__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--judge-latency", type=float, default=0.05)
    parser.add_argument("--hybrid-latency", type=float, default=0.3)
    parser.add_argument("--hybrid-answers", type=int, default=12)
    parser.add_argument("--skip-judge", action="store_true", help="Skip part 2 (minutes).")
    args = parser.parse_args()
    print(f"1. requests/s at a fixed {args.latency:g} s latency (ideal K / latency):")
    for k in (1, 4, 16):
        rate = throughput(args.latency, k)
        ideal = k / args.latency
        verdict = "ok" if rate >= 0.8 * ideal else "BELOW 0.8"
        print(f"   K={k:>2}: {rate:6.2f} req/s, ideal {ideal:6.2f} → {rate / ideal:.2f} "
              f"({verdict})")
    rows = read_answers(sample_outputs())
    if not args.skip_judge:
        print(f"2. LLM judge over the {len(rows)} published sample answers, judge latency "
              f"{args.judge_latency:g} s:")
        serial, sent1 = judge_wall(rows, args.judge_latency, 1)
        parallel, sent8 = judge_wall(rows, args.judge_latency, 8)
        print(f"   concurrency 1: {serial:.2f} s ({sent1} requests); concurrency 8: "
              f"{parallel:.2f} s ({sent8} requests) → ×{serial / parallel:.2f} (want ≥ 6)")
    by_model: dict[str, list] = {}
    for row in rows:
        by_model.setdefault(row.model, []).append(row)
    per = max(1, args.hybrid_answers // len(by_model))
    subset = [row for model_rows in by_model.values() for row in model_rows[:per]]
    print(f"3. hybrid judge over {len(subset)} published answers ({per} per model), LLM "
          f"latency {args.hybrid_latency:g} s, grounding cache warm:")
    one, sent_one = hybrid_wall(subset, args.store, args.hybrid_latency, fan_out=False)
    fanned, sent_fan = hybrid_wall(subset, args.store, args.hybrid_latency, fan_out=True)
    print(f"   one path at a time: {one:.2f} s ({sent_one} requests); fanned out (8 in "
          f"flight): {fanned:.2f} s ({sent_fan} requests) → ×{one / fanned:.2f}")


if __name__ == "__main__":
    main()
