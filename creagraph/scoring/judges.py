"""Judge backends: who says how specific and how factual each triple is (SPEC §3.4).

All judges implement :class:`Judge`: ``judge(row, path_index, triples)`` returns one
:class:`TripleJudgment` per triple, each with its evidence.

- :class:`KgJudge` — grounded in the knowledge graph (exact class sizes, existence).
- :class:`StoredJudge` — scores already in the input (the published judge's columns
  ``raw_salience_scores_0`` and ``parsed_scores_factuality_0``).
- :class:`LlmJudge` — any OpenAI-compatible chat endpoint the user configures, asked for
  the same quantities (class-size estimates for C_A and C_B, and factuality).
- :class:`HybridJudge` — the KG where a triple is verified, another judge otherwise.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from creagraph.core.io import InputError
from creagraph.core.metrics import specificity
from creagraph.scoring.grounding import Grounder
from creagraph.scoring.inputs import AnswerRow

__all__ = [
    "TripleJudgment",
    "Judge",
    "KgJudge",
    "StoredJudge",
    "LlmJudge",
    "HybridJudge",
    "LLM_PROMPT",
]


@dataclass
class TripleJudgment:
    """Specificity σ (1–5 or None when unknown), factuality (0/1 or None) and evidence."""

    specificity: int | None
    factual: float | None
    status: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "specificity": self.specificity,
            "factual": self.factual,
            "status": self.status,
            **self.evidence,
        }


class Judge(Protocol):
    name: str

    def judge(
        self, row: AnswerRow, path_index: int, triples: Sequence[Sequence[str]]
    ) -> list[TripleJudgment]:
        """One judgment per triple of the path."""
        ...


class KgJudge:
    """Specificity and factuality computed from the knowledge graph."""

    name = "kg"

    def __init__(self, grounder: Grounder):
        self.grounder = grounder

    def judge(self, row, path_index, triples):
        out = []
        for t in triples:
            if len(t) != 3:
                out.append(TripleJudgment(None, None, "malformed", {"backend": "kg"}))
                continue
            g = self.grounder.ground(*t)
            out.append(TripleJudgment(g.specificity, g.factual, g.status, g.as_dict()))
        return out


class StoredJudge:
    """Judgments stored in the input rows (the published judge's outputs).

    Reads, per path, ``raw_salience_scores_0`` (σ per triple, a whole number from 1 to 5)
    and ``parsed_scores_factuality_0`` (per triple, from 0 to 1). A value out of range,
    non-finite or not a number is an :class:`InputError` naming the file, row and field.
    """

    @staticmethod
    def _stored(
        row: AnswerRow, path_index: int, i: int, values: list, name: str, low: int, high: int
    ) -> float | None:
        if i >= len(values) or values[i] is None:
            return None
        value = values[i]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and low <= value <= high
        if ok and low == 1:  # σ: a whole number
            ok = float(value).is_integer()
        if not ok:
            kind = "a whole number from 1 to 5" if low == 1 else "a number from 0 to 1"
            raise InputError(
                f"{row.source}: row {row.line}: field {name!r}, path {path_index}, "
                f"triple {i}: {value!r} is not {kind}"
            )
        return float(value)

    name = "stored"

    def __init__(
        self,
        specificity_field: str = "raw_salience_scores_0",
        factuality_field: str = "parsed_scores_factuality_0",
    ):
        self.specificity_field = specificity_field
        self.factuality_field = factuality_field

    def judge(self, row, path_index, triples):
        def per_path(field_name: str) -> list:
            values = row.extra.get(field_name)
            if isinstance(values, str):
                try:
                    values = json.loads(values)
                except (ValueError, RecursionError):
                    values = None  # reported just below, naming the row and field
            if not isinstance(values, list):
                raise InputError(
                    f"{row.source}: row {row.line}: the stored judge needs field "
                    f"{field_name!r} (a list per path)"
                )
            if path_index >= len(values):
                raise InputError(
                    f"{row.source}: row {row.line}: field {field_name!r} has {len(values)} "
                    f"paths, path {path_index} was parsed"
                )
            return values[path_index] or []

        sal, fact = per_path(self.specificity_field), per_path(self.factuality_field)
        out = []
        for i in range(len(triples)):
            s = self._stored(row, path_index, i, sal, self.specificity_field, 1, 5)
            f = self._stored(row, path_index, i, fact, self.factuality_field, 0, 1)
            s = int(s) if s is not None else None
            evidence = {
                "backend": "stored",
                "fields": [self.specificity_field, self.factuality_field],
            }
            out.append(TripleJudgment(s, f, "stored", evidence))
        return out


LLM_PROMPT = """You judge knowledge-graph triples written by another model.
For each triple (head, relation, tail) below, estimate:
- class_a: how many entities x satisfy (x, relation, tail) in the real world (an integer);
- class_b: how many entities y satisfy (head, relation, y) (an integer);
- factual: 1 if the triple is true, 0 if false or unverifiable.
Answer with JSON only: {"triples": [{"class_a": int, "class_b": int, "factual": 0 or 1}, ...]}
with exactly one object per triple, in order.

Triples:
{triples}
"""


class LlmJudge:
    """A judge that asks an OpenAI-compatible chat-completions endpoint (SPEC §3.4).

    It asks for the same quantities the knowledge graph gives: class-size estimates of
    C_A and C_B per triple (mapped to σ with the published mapping) and factuality.

    Parameters
    ----------
    base_url : str
        e.g. ``http://localhost:8000/v1`` (``$CREAGRAPH_LLM_BASE_URL``).
    model : str
        Model name sent in the request (``$CREAGRAPH_LLM_MODEL``).
    api_key : str, optional
        Bearer token (``$CREAGRAPH_LLM_API_KEY`` or ``$OPENAI_API_KEY``).
    """

    name = "llm"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        retries: int = 3,
    ):
        from creagraph.core.llm import ChatClient

        base_url = base_url or os.environ.get("CREAGRAPH_LLM_BASE_URL")
        model = model or os.environ.get("CREAGRAPH_LLM_MODEL")
        if not base_url or not model:
            raise InputError(
                "the llm judge needs an OpenAI-compatible endpoint: --llm-base-url and "
                "--llm-model (or CREAGRAPH_LLM_BASE_URL / CREAGRAPH_LLM_MODEL)"
            )
        self.model = model
        self.client = ChatClient(
            base_url,
            model=model,
            api_key=api_key
            or os.environ.get("CREAGRAPH_LLM_API_KEY")
            or os.environ.get("OPENAI_API_KEY"),
            timeout=timeout,
            retries=retries,
        )

    def judge(self, row, path_index, triples):
        from creagraph.scoring.parse import _load

        listing = "\n".join(
            f"{i + 1}. {json.dumps(list(t), ensure_ascii=False)}" for i, t in enumerate(triples)
        )
        content = self.client.chat(
            [{"role": "user", "content": LLM_PROMPT.replace("{triples}", listing)}],
            max_tokens=64 * len(triples) + 64,
        )
        try:
            start, end = content.find("{"), content.rfind("}")
            items = _load(content[start : end + 1], [])["triples"]
        except (ValueError, KeyError, TypeError):
            items = []
        out = []
        for i in range(len(triples)):
            item = items[i] if i < len(items) and isinstance(items[i], dict) else None
            evidence = {"backend": f"llm:{self.model}"}
            try:
                size = max(int(item.get("class_a", 0)), int(item.get("class_b", 0)))
                factual = float(item.get("factual", 0))
            except (AttributeError, TypeError, ValueError):
                out.append(
                    TripleJudgment(None, None, "unparsed", {**evidence, "raw": content[:500]})
                )
                continue
            out.append(
                TripleJudgment(specificity(size), factual, "llm", {**evidence, "class_size": size})
            )
        return out


class HybridJudge:
    """The KG judge where a triple is verified; ``fallback`` for absent/unlinked triples."""

    name = "hybrid"

    def __init__(self, kg_judge: KgJudge, fallback: Judge):
        self.kg_judge = kg_judge
        self.fallback = fallback

    def judge(self, row, path_index, triples):
        grounded = self.kg_judge.judge(row, path_index, triples)
        if all(j.status == "verified" for j in grounded):
            return grounded
        other = self.fallback.judge(row, path_index, triples)
        return [g if g.status == "verified" else o for g, o in zip(grounded, other)]
