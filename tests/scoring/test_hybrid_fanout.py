"""The hybrid judge's fallback requests go out together (issue 24): ``prefetch`` grounds
an answer's paths and asks the LLM judge about all their unknown triples at once, against
a real scripted OpenAI-protocol server."""

from __future__ import annotations

import json
import re

import pytest

from creagraph.core.embeddings import default_embedder
from creagraph.scoring.grounding import EntityLinker, Grounder, RelationLinker
from creagraph.scoring.judges import HybridJudge, KgJudge, LlmJudge
from tests.chatserver import Act, ChatServer, prompt_of


@pytest.fixture(scope="module")
def grounder(kg):
    return Grounder(kg, EntityLinker(kg), RelationLinker(kg, default_embedder()))


def _verdicts(body, n):
    k = len(re.findall(r"^\d+\. \[", prompt_of(body), flags=re.M))
    items = [{"explanation": "e", "class_a": 3, "class_b": 2,
              "judgment": "not hallucinated"} for _ in range(k)]
    return Act(content=json.dumps({"triples": items}), delay=0.3)


def test_hybrid_prefetch_asks_the_unknown_triples_of_every_path_at_once(grounder, tmp_path):
    known = ("Kareem Abdul-Jabbar", "educated at", "University of California, Los Angeles")
    paths = [[known, (f"Zzyzx {i}", "frobnicated", f"Nowhere {i}")] for i in range(6)]
    paths.append([("Minnesota", "shares border with", "Iowa")])  # decided by the graph
    with ChatServer(_verdicts) as server:
        llm = LlmJudge(server.url, "judge", concurrency=4, cache=False)
        hybrid = HybridJudge(KgJudge(grounder), llm)
        hybrid.prefetch(None, paths)
        assert len(server.requests) == 6 and server.max_in_flight == 4  # fanned out
        out = [hybrid.judge(None, i, p) for i, p in enumerate(paths)]
        assert len(server.requests) == 6  # judge() took the prefetched replies
        llm.client.close()
    for i in range(6):
        assert [j.status for j in out[i]] == ["verified", "llm"]
        assert out[i][1].evidence["graph_status"] == "unknown"
    assert [j.status for j in out[6]] == ["verified"]
    asked = [prompt_of(b) for b in server.bodies()]
    assert all("Kareem" not in p and "Zzyzx" in p for p in asked)  # only the unknown triple
    # without prefetch (one path at a time) the answers are the same
    with ChatServer(_verdicts) as server:
        llm = LlmJudge(server.url, "judge", concurrency=4, cache=False)
        serial = [HybridJudge(KgJudge(grounder), llm).judge(None, i, p)
                  for i, p in enumerate(paths)]
        assert server.max_in_flight == 1
        llm.client.close()
    assert [[j.as_dict() for j in p] for p in serial] == [[j.as_dict() for j in p] for p in out]
