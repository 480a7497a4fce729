"""What `tig anchors --writer llm` costs, without a model (issue 27, session 9).

No chat model runs here, so this measures no anchor quality. It measures what a researcher
with an endpoint needs to budget, on the shared NoveltyBench population (whole population,
one comparison per prompt, the offline extractor's atoms built once):

* the baseline: the offline rules alone (``writer=None``);
* the rules driven through the writer's lock-step loop (:class:`OfflineWriter`, every
  candidate kept): the loop's CPU overhead, and that its anchors equal the baseline's;
* the ``llm`` writer against the suite's scripted OpenAI-compatible server
  (``tests/chatserver.py``), which keeps every cluster under its first label and, with
  ``--refuse-every N``, refuses about one cluster in N (by a hash of its first
  label, so the same clusters every run): requests per comparison, rounds (each
  round asks every comparison's next cluster at once), prompt characters, and the CPU
  seconds of this process (process_time: the server's threads included).

Usage::

    python benchmarks/anchor_writer.py [--tasks 16] [--top-k 5] [--refuse-every 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.chatserver

from creagraph.core.llm import ChatClient  # noqa: E402
from creagraph.tig.adapters import load_noveltybench_curated  # noqa: E402
from creagraph.tig.anchor_writer import (  # noqa: E402
    LLMAnchorWriter,
    OfflineWriter,
    write_steps,
)
from creagraph.tig.anchors import anchor_steps, core_ideas, next_anchors  # noqa: E402
from creagraph.tig.api import atom_tables  # noqa: E402
from creagraph.tig.brief import brief_concept, brief_terms, task_kind  # noqa: E402
from creagraph.tig.population import build_population  # noqa: E402
from tests.chatserver import Act, ChatServer, prompt_of  # noqa: E402


def steps_for(tables, top_k, writer):
    steps = []
    for table in tables.values():
        first = table.responses[0]
        kind = task_kind(first.brief, first.family, first.kind)
        steps.append(anchor_steps(
            build_population(table), top_k=top_k, concept=brief_concept(first.brief, None, kind),
            kind=kind, brief_terms=brief_terms(first.brief, None, instructions=True),
            brief=first.brief, response_texts=core_ideas(table.responses), writer=writer))
    return steps


def first_label(body) -> str:
    line = next(x for x in prompt_of(body).splitlines() if x.startswith("Cluster labels"))
    return line.split(": ", 1)[1].split("; ")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--refuse-every", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    responses = load_noveltybench_curated()
    tasks = sorted({r.task_id for r in responses})[: args.tasks]
    tables = atom_tables([r for r in responses if r.task_id in set(tasks)])

    # a first, untimed pass loads MiniLM and embeds the label words (cached after)
    [next_anchors(s) for s in steps_for(tables, 3 * args.top_k, None)]
    base_times, loop_times = [], []
    for _ in range(args.repeats):  # alternated; the least CPU of each is reported
        t0 = time.process_time()
        base = [next_anchors(s) for s in steps_for(tables, args.top_k, None)]
        base_times.append(time.process_time() - t0)
        t0 = time.process_time()
        offline = write_steps(steps_for(tables, args.top_k, OfflineWriter()), OfflineWriter())
        loop_times.append(time.process_time() - t0)
        assert offline == base, "the offline writer changed the anchors"
    t_base, t_offline = min(base_times), min(loop_times)

    def script(body, n):
        # refused by content, not arrival order: the same clusters every run
        if args.refuse_every and zlib.crc32(first_label(body).encode()) % args.refuse_every == 0:
            return Act("ok", content=json.dumps({"keep": False, "label": "", "reason": "r"}))
        return Act("ok", content=json.dumps({"keep": True, "label": first_label(body),
                                             "reason": "r"}))

    rounds = 0
    with ChatServer(script) as server:
        writer = LLMAnchorWriter(ChatClient(server.url, model="scripted"), concurrency=4,
                                 show_progress=False)
        many = writer.write_many

        def counted(candidates):
            nonlocal rounds
            rounds += 1
            return many(candidates)

        writer.write_many = counted  # type: ignore[method-assign]
        t0 = time.process_time()
        llm = write_steps(steps_for(tables, args.top_k, writer), writer)
        t_llm = time.process_time() - t0
        prompts = [sum(len(m["content"]) for m in b["messages"]) for b in server.bodies()]
        in_flight = server.max_in_flight

    n = len(tables)
    print(f"NoveltyBench whole population: {n} prompts, top-k {args.top_k}, "
          f"{sum(map(len, base))} anchors by the rules")
    print(f"CPU s (least of {args.repeats})  rules alone (baseline) {t_base:.2f} | "
          f"through the writer loop {t_offline:.2f} (ratio {t_offline / t_base:.2f}, "
          f"same anchors) | llm writer vs scripted server {t_llm:.2f} (ratio {t_llm / t_base:.2f})")
    print(f"llm writer: {writer.counts.line()}; {len(prompts)} requests "
          f"({len(prompts) / n:.1f} per comparison, at most {in_flight} in flight) in "
          f"{rounds} rounds; {sum(map(len, llm))} anchors")
    print(f"prompt characters per request: mean {statistics.mean(prompts):.0f}, "
          f"max {max(prompts)}")


if __name__ == "__main__":
    main()
