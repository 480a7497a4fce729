"""The Ekphrasis measurement: checklist-assisted pairwise judging with active sampling and one
Bradley–Terry leaderboard per dimension (SPEC §4.12, §5).

A *comparison* shows a judge one brief (context only), one response of each of two models
``a ≠ b`` on that task in a randomised order (anonymised as A and B), and the checklist of
the dimension (:mod:`creagraph.tig.checklist`; for Novelty its first slot is the pair's
leave-two-models-out anchors). The judge answers A, B or tie.

Judges
    ``llm`` — an OpenAI-compatible chat model (:class:`creagraph.core.llm.ChatClient`), asked
    for ``{"winner": "A" | "B" | "tie"}``; a reply that is not strict JSON is repaired
    (:func:`creagraph.core.jsonish.loads_lenient`) and flagged, one that cannot be read is
    counted as a parse failure and left out of the fit. Requests go through
    :meth:`ChatClient.map <creagraph.core.llm.ChatClient.map>` (``concurrency`` in flight,
    answered from the client's reply cache when already asked); one that gets no reply is
    recorded with its ``error_kind`` and counted in the diagnostics, and a fatal failure
    (unreachable, redirect, 401/403/404) stops the run.
    ``novelty-score`` — offline: the response with the higher ``tig score`` novelty
    (:func:`creagraph.tig.score.score_tables`) against the *pair's* L2MO population wins;
    a difference within ``margin`` is a tie.
    ``human`` — labels imported from an annotation file (:mod:`creagraph.tig.judge_export`).

Empty responses: non-empty beats empty, two empties tie, and the judge is not asked.

Schedule (reproducible from ``seed``): a warm start first compares every model on every
task at least once (the models of a task shuffled and paired off), then batches of the
most informative model pairs under the current fit (:func:`creagraph.judgments.next_pairs`:
every pair once, then uncertainty × information), each on the task that pair has been
compared on least. A share ``swap_share`` of the comparisons is asked again with the order
swapped (for the order-swap consistency). The budget counts every comparison, re-asks
included. Batch ``k`` is planned only from the comparisons before it, with a generator
seeded by ``(seed, k)``, so an interrupted run that is resumed continues the same schedule
and never asks a finished comparison again (each is appended to ``comparisons.jsonl`` as
soon as it is answered).

Ties are kept for diagnostics and left out of the BT likelihood (``ties="exclude"``).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from creagraph.tig.checklist import DIMENSIONS, ChecklistItem, build_checklist, checklist_text
from creagraph.tig.schema import Response

__all__ = [
    "JUDGES",
    "OUTPUTS",
    "JudgeSettings",
    "PairContext",
    "judge_prompt",
    "parse_verdict",
    "novelty_verdict",
    "SCHEDULES",
    "response_text",
    "run_judging",
    "fit_leaderboard",
    "diagnostics",
    "read_comparisons",
    "write_outputs",
]

JUDGES = ("llm", "novelty-score", "human")
#: ``active``: warm start, then :func:`~creagraph.judgments.next_pairs`; ``uniform``:
#: uniformly random model pairs (the baseline active sampling is measured against).
SCHEDULES = ("active", "uniform")
OUTPUTS = ("comparisons.jsonl", "leaderboard.csv", "diagnostics.json")

#: Pilot gates of the Ekphrasis design (SPEC §4.12).
GATE_PARSE = 0.95
GATE_PROFILE = 0.95
GATE_REPAIR = 0.02
GATE_TIE_MAX = 0.5
GATE_POSITION = 0.1

#: Ridge of the leaderboard when the maximum-likelihood estimate does not exist (a model
#: that never lost or never won), stated in ``diagnostics.json``'s ``fit_note``.
FALLBACK_ALPHA = 0.01


@dataclass(frozen=True)
class JudgeSettings:
    """Every setting that decides a run's comparisons (the output folder's fingerprint)."""

    dimension: str = "novelty"
    judge: str = "novelty-score"
    budget: int = 300
    seed: int = 0
    swap_share: float = 0.1
    margin: float = 0.01
    batch: int = 8
    top_k: int = 5
    n_anchors: int = 2
    min_models: int = 2
    max_tokens: int = 200
    concurrency: int = 4
    n_bootstrap: int = 200
    schedule: str = "active"

    def __post_init__(self) -> None:
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"dimension must be one of {', '.join(DIMENSIONS)}, "
                             f"not {self.dimension!r}")
        if self.judge not in JUDGES:
            raise ValueError(f"judge must be one of {', '.join(JUDGES)}, not {self.judge!r}")
        if self.judge == "novelty-score" and self.dimension != "novelty":
            raise ValueError("the novelty-score judge measures novelty only: use "
                             "--dimension novelty (or --judge llm)")
        if self.budget < 1:
            raise ValueError("budget must be at least 1")
        if not 0.0 <= self.swap_share <= 1.0:
            raise ValueError("swap_share must lie in [0, 1]")
        if self.margin < 0:
            raise ValueError("margin must be non-negative")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, "
                             f"not {self.schedule!r}")
        if self.batch < 1 or self.concurrency < 1:
            raise ValueError("batch and concurrency must be at least 1")

    def fingerprint(self) -> dict[str, Any]:
        """The settings that shape the schedule and verdicts (not concurrency)."""
        record = asdict(self)
        for name in ("concurrency", "budget", "n_bootstrap"):
            del record[name]  # a larger budget continues the same schedule
        return record


def response_text(response: Response) -> str:
    """What the judge reads of a response: the Core Idea, and the Visual Description when
    there is one."""
    idea = response.core_idea.strip()
    visual = response.visual_description.strip()
    if not visual:
        return idea
    return f"Core idea: {idea}\nVisual description: {visual}"


_DIMENSION_QUESTION = {
    "usefulness": "Which response is more USEFUL: fits the brief, completes what it asks "
                  "and works within its constraints and context?",
    "expressiveness": "Which response is more EXPRESSIVE: grounded in visible things, "
                      "clearly organised in space and specific in appearance?",
    "novelty": "Which response is more NOVEL: further from the ideas most answers to this "
               "brief fall back on, drawing on a different domain or perspective?",
}


def judge_prompt(dimension: str, brief: str, text_a: str, text_b: str,
                 checklist: Sequence[ChecklistItem]) -> list[dict[str, str]]:
    """The chat messages of one comparison (one prompt per dimension).

    The brief is context only; the checklist items are cues to consider, not a rubric to
    count.
    """
    system = ("You compare two anonymised responses to a creative brief on one dimension. "
              "Answer with JSON only: {\"winner\": \"A\"} or {\"winner\": \"B\"} or "
              "{\"winner\": \"tie\"}.")
    user = (
        f"Brief (context only; do not judge the brief): {brief.strip()}\n\n"
        f"Response A:\n{text_a}\n\nResponse B:\n{text_b}\n\n"
        f"Dimension: {dimension}. {_DIMENSION_QUESTION[dimension]}\n"
        "Checklist (cues to consider, not a rubric to count; weigh them as they matter "
        f"here):\n{checklist_text(checklist)}\n\n"
        "Say tie only when neither response is better on this dimension. "
        "Reply with JSON: {\"winner\": \"A\" | \"B\" | \"tie\"}."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_verdict(reply: str) -> tuple[str | None, bool]:
    """``(verdict, repaired)`` of a judge reply: ``"A"``, ``"B"``, ``"tie"`` or ``None``
    when nothing can be read; ``repaired`` when the reply was not strict JSON.

    Examples
    --------
    >>> parse_verdict('{"winner": "B"}')
    ('B', False)
    >>> parse_verdict('Sure! ```json\\n{"winner": "tie",}\\n```')
    ('tie', True)
    >>> parse_verdict('I like both.')
    (None, False)
    """
    from creagraph.core.jsonish import loads_lenient

    repaired = False
    try:
        value = json.loads(reply)
    except (ValueError, TypeError):
        try:
            value = loads_lenient(reply)
        except ValueError:
            return None, False
        repaired = True
    if not isinstance(value, dict):
        return None, repaired
    winner = value.get("winner", value.get("verdict"))
    if not isinstance(winner, str):
        return None, repaired
    word = winner.strip().strip(".").lower()
    if word in ("a", "response a"):
        return "A", repaired
    if word in ("b", "response b"):
        return "B", repaired
    if word in ("tie", "draw", "equal", "neither"):
        return "tie", repaired
    return None, repaired


def novelty_verdict(novelty_a: float, novelty_b: float, margin: float) -> str:
    """The ``novelty-score`` judge: ``"a"`` or ``"b"`` for the more novel response, ``"tie"``
    when the two novelties differ by at most ``margin``.

    Examples
    --------
    >>> novelty_verdict(0.40, 0.30, 0.01), novelty_verdict(0.300, 0.305, 0.01)
    ('a', 'tie')
    """
    if abs(novelty_a - novelty_b) <= margin:
        return "tie"
    return "a" if novelty_a > novelty_b else "b"


# pair context: L2MO anchors and novelty ---------------------------------------------------
class PairContext:
    """The L2MO evidence of a pair on a task, computed once and kept.

    ``profile(task, a, b)`` is the :class:`~creagraph.tig.l2mo.L2MOResult` of the
    reference population without ``a`` and ``b`` (public :func:`~creagraph.tig.l2mo.
    l2mo_results`); ``novelty(task, a, b)`` the ``tig score`` novelty of every response of
    ``a`` against that same population: :func:`~creagraph.tig.score.score_tables` on the
    task's table without ``b`` scores each model against all others but itself and ``b``,
    i.e. exactly against the L2MO population of the pair (one table per left-out model,
    which gives the novelty of every model's responses for its pairs with that model).
    """

    def __init__(self, tables: Mapping[str, Any], config: Any = None, *, top_k: int = 5,
                 min_models: int = 2, embedder: Any = None, score_config: Any = None):
        self.tables = dict(tables)
        self.config = config
        self.top_k = top_k
        self.min_models = min_models
        self.embedder = embedder
        self.score_config = score_config
        self._profiles: dict[tuple[str, str, str], Any] = {}
        self._without: dict[tuple[str, str], dict[str, float]] = {}

    def profile(self, task_id: str, a: str, b: str) -> Any:
        from creagraph.tig.l2mo import l2mo_results

        first, second = sorted((a, b))
        key = (task_id, first, second)
        found = self._profiles.get(key)
        if found is None:
            table = self.tables[task_id]
            results = list(l2mo_results({task_id: table}, self.config, pairs=[(a, b)],
                                        top_k=self.top_k, min_models=self.min_models,
                                        show_progress=False))
            found = results[0] if results else None
            self._profiles[key] = found
        return found

    def novelty(self, task_id: str, model: str, left_out: str) -> dict[str, float]:
        """Novelty of ``model``'s responses on ``task_id`` against the L2MO population of
        ``(model, left_out)`` (response id → novelty)."""
        key = (task_id, left_out)
        scores = self._without.get(key)
        if scores is None:
            from creagraph.tig.score import score_tables

            sub = _table_without(self.tables[task_id], left_out)
            run = score_tables({task_id: sub}, self.embedder, self.config, self.score_config,
                               show_progress=False)
            scores = {s.response_id: s.novelty for s in run.scores}
            self._without[key] = scores
        prefix_model = {r.response_id for r in self.tables[task_id].responses
                        if r.model == model}
        return {rid: v for rid, v in scores.items() if rid in prefix_model}


def _table_without(table: Any, model: str) -> Any:
    """The task's atom table with ``model``'s responses left out (same atoms, types and
    vectors; nothing re-extracted)."""
    from creagraph.tig.population import build_atom_table
    from creagraph.tig.schema import ATOM_TYPES, Atom

    keep = [k for k, r in enumerate(table.responses) if r.model != model]
    atoms: dict[int, list[Atom]] = {k: [] for k in keep}
    for a in range(table.n_atoms):
        r = int(table.atom_response[a])
        if r in atoms:
            kind = ATOM_TYPES[int(table.form_type[table.atom_form[a]])]
            atoms[r].append(Atom(kind, table.atom_text[a]))
    vectors = {table.form_text[f]: table.form_vectors[f] for f in range(len(table.form_text))}
    return build_atom_table(table.task_id, [table.responses[k] for k in keep],
                            [atoms[k] for k in keep], vectors)


# schedule -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Planned:
    index: int
    task_id: str
    model_a: str
    model_b: str
    response_a: str
    response_b: str
    a_first: bool
    swap_of: int | None = None


def _warm_start(tasks: Mapping[str, Sequence[str]], seed: int) -> list[tuple[str, str, str]]:
    """Every model of every task in at least one pair: each task's models shuffled and
    paired off (an odd one out paired with a random other)."""
    rng = np.random.default_rng([seed, 0x57A7])
    pairs: list[tuple[str, str, str]] = []
    for task_id in sorted(tasks):
        models = list(tasks[task_id])
        order = [models[i] for i in rng.permutation(len(models))]
        for k in range(0, len(order) - 1, 2):
            pairs.append((task_id, order[k], order[k + 1]))
        if len(order) % 2 == 1 and len(order) > 1:
            other = order[int(rng.integers(0, len(order) - 1))]
            pairs.append((task_id, order[-1], other))
    return pairs


class _Scheduler:
    """Plans batch after batch from the comparisons made so far (see module docstring)."""

    def __init__(self, by_task: Mapping[str, Mapping[str, Sequence[Response]]],
                 settings: JudgeSettings):
        self.by_task = by_task
        self.settings = settings
        self.models = sorted({m for per in by_task.values() for m in per})
        self.index = {m: k for k, m in enumerate(self.models)}
        tasks = {t: sorted(per) for t, per in by_task.items()}
        self.warm = _warm_start(tasks, settings.seed)

    def _swap_due(self, ordinal: int) -> bool:
        """Whether the ``ordinal``-th primary comparison (1-based) is re-asked swapped:
        one in every ``1/swap_share``, so ``floor(n·share)`` of the first ``n`` are."""
        s = self.settings.swap_share
        return math.floor(ordinal * s + 1e-9) > math.floor((ordinal - 1) * s + 1e-9)

    @staticmethod
    def _swap_of(p: _Planned, index: int) -> _Planned:
        return _Planned(index, p.task_id, p.model_a, p.model_b, p.response_a, p.response_b,
                        not p.a_first, swap_of=p.index)

    def _pick(self, rng: np.random.Generator, task_id: str, a: str, b: str,
              index: int) -> _Planned:
        ra = self.by_task[task_id][a]
        rb = self.by_task[task_id][b]
        return _Planned(index, task_id, a, b, ra[int(rng.integers(len(ra)))].response_id,
                        rb[int(rng.integers(len(rb)))].response_id, bool(rng.integers(2)))

    def _active_pairs(self, done: Sequence[Mapping[str, Any]], k: int
                      ) -> list[tuple[str, str]]:
        from creagraph.judgments import next_pairs

        n = len(self.models)
        counts = np.zeros((n, n))
        for rec in done:
            i, j = self.index[rec["model_a"]], self.index[rec["model_b"]]
            counts[i, j] += 1
            counts[j, i] += 1
        theta, cov = np.zeros(n), np.eye(n)
        # the small ridge keeps the fit (and its uncertainty) defined while some model has
        # never lost or never won; without it every such step would fall back to the same
        # index-ordered pairs
        try:
            fit = fit_leaderboard(done, self.models, n_bootstrap=0, alpha=FALLBACK_ALPHA)
            if fit is not None:
                theta, cov = fit.theta, fit.covariance
        except ValueError:  # comparisons not connected yet: warm-start order stands
            pass
        return [(self.models[i], self.models[j])
                for i, j in next_pairs(theta, cov, counts, k=k, warm_start=1)]

    def _task_for(self, a: str, b: str, done: Sequence[Mapping[str, Any]],
                  rng: np.random.Generator) -> str | None:
        tasks = [t for t, per in self.by_task.items() if a in per and b in per]
        if not tasks:
            return None
        used = {t: 0 for t in tasks}
        for rec in done:
            if {rec["model_a"], rec["model_b"]} == {a, b} and rec["task_id"] in used:
                used[rec["task_id"]] += 1
        least = min(used.values())
        options = sorted(t for t, c in used.items() if c == least)
        return options[int(rng.integers(len(options)))]

    def plan(self, done: Sequence[Mapping[str, Any]], start: int) -> list[_Planned]:
        """The batch that starts at comparison ``start`` given the comparisons ``done``."""
        settings = self.settings
        # separate streams for tasks and responses: a smaller batch (the last one of a
        # smaller budget) plans a prefix of what a larger one plans
        rng = np.random.default_rng([settings.seed, start, 1])
        pick_rng = np.random.default_rng([settings.seed, start, 2])
        room = min(settings.batch, settings.budget - start)
        batch: list[_Planned] = []
        primaries = [rec for rec in done if rec.get("swap_of") is None]
        swapped = {rec["swap_of"] for rec in done if rec.get("swap_of") is not None}
        # swaps due for earlier primaries that found no room in their batch come first
        for ordinal, rec in enumerate(primaries, start=1):
            if len(batch) < room and self._swap_due(ordinal) and rec["index"] not in swapped:
                origin = _Planned(rec["index"], rec["task_id"], rec["model_a"], rec["model_b"],
                                  rec["response_a"], rec["response_b"],
                                  rec["shown"][0] == rec["response_a"])
                batch.append(self._swap_of(origin, start + len(batch)))
        n_primary = len(primaries)
        pairs: list[tuple[str, str, str]] = []
        if settings.schedule == "uniform":
            all_pairs = [(a, b) for k, a in enumerate(self.models) for b in self.models[k + 1:]]
            while len(pairs) < room - len(batch):
                a, b = all_pairs[int(rng.integers(len(all_pairs)))]
                tasks = [t for t, per in self.by_task.items() if a in per and b in per]
                if tasks:
                    pairs.append((tasks[int(rng.integers(len(tasks)))], a, b))
        warm_left = self.warm[n_primary:] if n_primary < len(self.warm) else []
        if settings.schedule == "active":
            pairs = list(warm_left[: room - len(batch)])
        if len(pairs) < room - len(batch):
            for a, b in self._active_pairs(done, room - len(batch) - len(pairs)):
                task = self._task_for(a, b, done, rng)
                if task is not None:
                    pairs.append((task, a, b))
        for task, a, b in pairs:
            if len(batch) >= room:
                break
            planned = self._pick(pick_rng, task, a, b, start + len(batch))
            batch.append(planned)
            n_primary += 1
            if self._swap_due(n_primary) and len(batch) < room:
                batch.append(self._swap_of(planned, start + len(batch)))
        return batch


# judging ----------------------------------------------------------------------------------
def _ask_all(client: Any, prompts: Sequence[Sequence[Mapping[str, str]]], concurrency: int,
             max_tokens: int, on_reply: Callable[[int, Any], None] | None = None, *,
             samples: Sequence[int] | None = None) -> Any:
    """Send every prompt through :meth:`ChatClient.map <creagraph.core.llm.ChatClient.map>`
    (at most ``concurrency`` in flight; the client's :class:`~creagraph.core.llm.ReplyCache`
    answers any request already answered, so nothing is sent twice) and return its
    :class:`~creagraph.core.llm.MapResult`. ``on_reply(i, reply)`` is called with each
    :class:`~creagraph.core.llm.ChatReply` as it arrives, so it is recorded before the
    others finish; a failed request is a reply with ``error_kind`` set. An unreachable
    endpoint, a redirect or HTTP 401/403/404 stops the map with one
    :class:`~creagraph.core.llm.LLMError` (replies received before it were handed to
    ``on_reply`` and are in the cache). ``samples`` are the requests' sample indices (part
    of the cache key): the judge passes each comparison's index, so two comparisons that
    happen to show the same prompt are asked apart, while a re-run of the same schedule
    is served from the cache."""
    from dataclasses import replace

    from creagraph.core.llm import ChatRequest

    sampling = client.sampling
    if sampling.max_tokens is None:  # the body ChatClient.chat(..., max_tokens=) sends
        sampling = replace(sampling, max_tokens=max_tokens)
    if samples is None:
        samples = [0] * len(prompts)
    requests = [ChatRequest(list(messages), sampling, int(sample))
                for messages, sample in zip(prompts, samples, strict=True)]
    return client.map(requests, concurrency=concurrency, desc="judge requests",
                      on_reply=on_reply, show_progress=False)


def _count_requests(run: JudgeRun, result: Any) -> None:
    requests = run.requests
    requests["sent"] += result.sent
    requests["cached"] += result.cached
    for kind, n in result.failures.items():
        requests["failed"] += n
        requests["failures"][kind] = requests["failures"].get(kind, 0) + n


@dataclass
class JudgeRun:
    """What :func:`run_judging` did: the records, how many were asked now, the fit."""

    comparisons: list[dict[str, Any]] = field(default_factory=list)
    asked_now: int = 0
    resumed: int = 0
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    #: LLM requests of this invocation: sent, answered from the reply cache, failed (and
    #: failures by kind, e.g. ``http_500``, ``deadline``).
    requests: dict[str, Any] = field(default_factory=lambda: {
        "sent": 0, "cached": 0, "failed": 0, "failures": {}})


def _responses_by_task(population: Iterable[Response]
                       ) -> dict[str, dict[str, list[Response]]]:
    by_task: dict[str, dict[str, list[Response]]] = {}
    for r in sorted(population, key=lambda r: r.response_id):
        by_task.setdefault(r.task_id, {}).setdefault(r.model, []).append(r)
    return {t: per for t, per in sorted(by_task.items()) if len(per) >= 2}


def _base_record(p: _Planned, settings: JudgeSettings, responses: Mapping[str, Response],
                 context: PairContext | None) -> tuple[dict[str, Any], list[ChecklistItem]]:
    ra, rb = responses[p.response_a], responses[p.response_b]
    shown = (p.response_a, p.response_b) if p.a_first else (p.response_b, p.response_a)
    anchors: list[Any] = []
    reference: list[str] = []
    n_reference = 0
    if context is not None and settings.dimension == "novelty":
        profile = context.profile(p.task_id, p.model_a, p.model_b)
        if profile is not None:
            anchors = list(profile.anchors)
            reference = list(profile.reference_models)
            n_reference = profile.n_reference_responses
    checklist = build_checklist(settings.dimension, anchors, n_anchors=settings.n_anchors)
    record: dict[str, Any] = {
        "index": p.index,
        "task_id": p.task_id,
        "brief": ra.brief,
        "dimension": settings.dimension,
        "judge": settings.judge,
        "model_a": p.model_a,
        "model_b": p.model_b,
        "response_a": p.response_a,
        "response_b": p.response_b,
        "shown": list(shown),
        "swap_of": p.swap_of,
        "length_a": len(response_text(ra)),
        "length_b": len(response_text(rb)),
        "checklist": [item.to_dict() for item in checklist],
        "anchors": [{"text": item.text, "cluster_id": item.cluster_id,
                     "anchor_id": item.anchor_id} for item in checklist if item.cluster_id],
        "anchor_provenance": [
            {"anchor_id": a.item_id, "cluster_id": a.cluster_id, "labels": list(a.labels),
             "cliche_score": a.cliche_score, "response_ids": list(a.response_ids)[:20],
             "n_responses": len(a.response_ids)}
            for a in anchors[: settings.n_anchors]
        ],
        "reference_models": reference,
        "n_reference_responses": n_reference,
    }
    return record, checklist


def _finish(record: dict[str, Any], position: str | None) -> dict[str, Any]:
    """Turn the verdict position (A, B, tie) into the winning model."""
    shown = record["shown"]
    model_of = {record["response_a"]: record["model_a"], record["response_b"]: record["model_b"]}
    record["verdict_position"] = position
    if position == "A":
        record["winner"] = model_of[shown[0]]
    elif position == "B":
        record["winner"] = model_of[shown[1]]
    elif position == "tie":
        record["winner"] = "tie"
    else:
        record["winner"] = None
    return record


def _judge_batch(batch: Sequence[_Planned], settings: JudgeSettings,
                 responses: Mapping[str, Response], context: PairContext | None,
                 client: Any, emit: Callable[[dict[str, Any]], None]) -> Any:
    """Judge ``batch``, handing each finished record to ``emit`` as soon as it is done;
    the :class:`~creagraph.core.llm.MapResult` of the LLM requests (``None`` when none
    was asked)."""
    asks: list[tuple[dict[str, Any], list[dict[str, str]]]] = []
    for p in batch:
        record, checklist = _base_record(p, settings, responses, context)
        ra, rb = responses[p.response_a], responses[p.response_b]
        ea, eb = not response_text(ra), not response_text(rb)
        record.update(raw_reply=None, parsed=None, repaired=False, empty_rule=ea or eb)
        if ea or eb:
            a_side = "A" if p.a_first else "B"
            b_side = "B" if p.a_first else "A"
            emit(_finish(record, "tie" if ea and eb else (b_side if ea else a_side)))
        elif settings.judge == "novelty-score":
            assert context is not None
            na = context.novelty(p.task_id, p.model_a, p.model_b)[p.response_a]
            nb = context.novelty(p.task_id, p.model_b, p.model_a)[p.response_b]
            record.update(novelty_a=na, novelty_b=nb, parsed=True)
            verdict = novelty_verdict(na, nb, settings.margin)
            if verdict == "tie":
                emit(_finish(record, "tie"))
            else:
                emit(_finish(record, "A" if (verdict == "a") == p.a_first else "B"))
        else:
            first, second = (ra, rb) if p.a_first else (rb, ra)
            asks.append((record, judge_prompt(settings.dimension, ra.brief,
                                              response_text(first), response_text(second),
                                              checklist)))
    if not asks:
        return None

    def on_reply(i: int, reply: Any) -> None:
        record = asks[i][0]
        if reply.error is not None:  # failed after its retries: recorded and counted
            record.update(error=reply.error, error_kind=reply.error_kind or "error",
                          parsed=False)
            emit(_finish(record, None))
            return
        text = reply.content or ""
        verdict, repaired = parse_verdict(text)
        record.update(raw_reply=text, parsed=verdict is not None, repaired=repaired)
        emit(_finish(record, verdict))

    # a fatal LLMError (unreachable, redirect, 401/403/404) propagates: the comparisons
    # not answered are not recorded and are asked on resume
    return _ask_all(client, [m for _, m in asks], settings.concurrency, settings.max_tokens,
                    on_reply, samples=[int(r["index"]) for r, _ in asks])


def read_comparisons(path: str | Path) -> list[dict[str, Any]]:
    """The comparisons of a ``comparisons.jsonl`` in schedule order (by ``index``; a cut
    last line, left by a crash, is dropped)."""
    from creagraph.core.io import iter_jsonl, truncate_partial_line

    p = Path(path)
    if not p.exists():
        return []
    truncate_partial_line(p)
    return sorted(iter_jsonl(p), key=lambda r: int(r.get("index", -1)))


def run_judging(
    population: Sequence[Response],
    settings: JudgeSettings,
    out: str | Path,
    *,
    tables: Mapping[str, Any] | None = None,
    config: Any = None,
    embedder: Any = None,
    client: Any = None,
    context: PairContext | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> JudgeRun:
    """Run (or resume) the judging schedule into the folder ``out`` and fit the leaderboard.

    Parameters
    ----------
    population : sequence of Response
        The responses (tasks with a single model are left out).
    settings : JudgeSettings
    out : path
        Folder already claimed by the caller (``comparisons.jsonl`` is appended there).
    tables : dict task_id → AtomTable, optional
        Needed for novelty (anchors and the ``novelty-score`` judge).
    config : TigConfig, optional
    embedder : Embedder, optional
    client : ChatClient, optional
        Needed for ``judge="llm"``: a :class:`~creagraph.core.llm.ChatClient` (or anything
        with its ``sampling`` and ``map``); its reply cache, when it has one, answers every
        request already answered (``tig judge`` gives it the shared default cache).
    context : PairContext, optional
        Reuse the L2MO evidence computed by an earlier run on the same tables.
    on_batch : callable, optional
        Called with the number of comparisons done after each batch (progress).
    """
    from creagraph.core.io import InputError, JsonlAppender

    if settings.judge == "human":
        raise ValueError("human labels are not scheduled: read them with "
                         "judge_export.import_labels (`tig judge --judge human`)")
    if settings.judge == "llm" and client is None:
        raise ValueError("the llm judge needs a chat client")
    by_task = _responses_by_task(population)
    if not by_task:
        raise InputError("no task has responses from two models: nothing to compare")
    responses = {r.response_id: r for per in by_task.values() for rs in per.values()
                 for r in rs}
    if context is None and (settings.dimension == "novelty"
                            or settings.judge == "novelty-score"):
        if tables is None:
            raise ValueError("novelty needs the atom tables")
        context = PairContext({t: tables[t] for t in by_task}, config, top_k=settings.top_k,
                              min_models=settings.min_models, embedder=embedder)
    out = Path(out)
    path = out / "comparisons.jsonl"
    recorded = {int(rec["index"]): rec for rec in read_comparisons(path)}
    run = JudgeRun(resumed=len(recorded))
    scheduler = _Scheduler(by_task, settings)
    lock = threading.Lock()
    from creagraph.core.progress import progress_bar

    with JsonlAppender(path) as sink, progress_bar(total=settings.budget, desc="judge",
                                                   unit="cmp") as bar:
        bar.update(len(recorded))

        def emit(record: dict[str, Any]) -> None:
            with lock:
                sink.write(record)
                recorded[int(record["index"])] = record
                run.asked_now += 1
                bar.update(1)

        start = 0
        while start < settings.budget:
            before = [recorded[k] for k in range(start)]
            planned = scheduler.plan(before, start)
            if not planned:
                break
            for p in planned:
                rec = recorded.get(p.index)
                if rec is not None and (rec["task_id"], rec["response_a"],
                                        rec["response_b"]) != (p.task_id, p.response_a,
                                                               p.response_b):
                    raise InputError(f"{path}: comparison {p.index} does not follow this "
                                     "run's schedule (other settings or population); start "
                                     "with a new --out")
            missing = [p for p in planned if p.index not in recorded]
            if missing:
                try:
                    result = _judge_batch(missing, settings, responses, context, client,
                                          emit)
                finally:
                    sink.sync()
                if result is not None:
                    _count_requests(run, result)
                if on_batch is not None:
                    on_batch(len(recorded))
            start += len(planned)
    extra = sorted(k for k in recorded if k >= start)
    if extra:
        raise InputError(f"{path}: holds {len(recorded)} comparisons, more than --budget "
                         f"{settings.budget}; give at least that budget to resume, or a new "
                         "--out")
    done = [recorded[k] for k in range(start)]
    from creagraph.core.io import iter_jsonl

    if [int(r["index"]) for r in iter_jsonl(path)] != list(range(len(done))):
        # concurrent replies were appended as they came: store them in schedule order
        # (atomically, so a crash here leaves the appended file, which resumes the same)
        from creagraph.core.io import write_jsonl

        write_jsonl(path, done)
    run.comparisons = done
    run.leaderboard, run.diagnostics = write_outputs(out, done, settings, scheduler.models)
    return run


# leaderboard and diagnostics --------------------------------------------------------------
def write_outputs(out: str | Path, records: Sequence[Mapping[str, Any]],
                  settings: JudgeSettings, models: Sequence[str]
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Fit and write ``leaderboard.csv`` and ``diagnostics.json`` (atomically); returns
    ``(leaderboard rows, diagnostics)``."""
    from creagraph.core.io import atomic_write, write_csv
    from creagraph.judgments import DisconnectedComparisonsError, NotIdentifiableError

    out = Path(out)
    note = ""
    try:
        fit = fit_leaderboard(records, models, n_bootstrap=settings.n_bootstrap,
                              seed=settings.seed)
    except NotIdentifiableError as exc:
        # too few comparisons for a maximum-likelihood estimate: a small ridge, said so
        note = f"regularised fit (alpha={FALLBACK_ALPHA}): {exc}"
        fit = fit_leaderboard(records, models, n_bootstrap=settings.n_bootstrap,
                              seed=settings.seed, alpha=FALLBACK_ALPHA)
    except DisconnectedComparisonsError as exc:
        note = f"no leaderboard: {exc}"
        fit = None
    rows = leaderboard_rows(fit, records) if fit is not None else []
    diag = diagnostics(records, settings)
    diag["fit_note"] = note
    write_csv(out / "leaderboard.csv", rows, LEADERBOARD_COLUMNS)
    with atomic_write(out / "diagnostics.json") as handle:
        json.dump(diag, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    return rows, diag


LEADERBOARD_COLUMNS = ("rank", "model", "score", "ci_low", "ci_high", "rank_low", "rank_high",
                       "wins", "losses", "ties", "comparisons", "elo")


def _decisive_view(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in records if r.get("winner") is not None]


def fit_leaderboard(records: Sequence[Mapping[str, Any]], models: Sequence[str], *,
                    n_bootstrap: int = 200, seed: int = 0, alpha: float = 0.0) -> Any:
    """The Bradley–Terry fit (:func:`creagraph.judgments.bradley_terry`, ties excluded) of
    the comparisons with a verdict; ``None`` when there is none.

    Raises
    ------
    ValueError
        When the comparisons do not connect every model or no model is ranked (a
        :class:`~creagraph.judgments.DisconnectedComparisonsError` or
        :class:`~creagraph.judgments.NotIdentifiableError`).
    """
    from creagraph.judgments import bradley_terry, make_comparisons

    rows = _decisive_view(records)
    if not rows:
        return None
    left = [r["model_a"] for r in rows]
    right = [r["model_b"] for r in rows]
    winner = ["tie" if r["winner"] == "tie" else r["winner"] for r in rows]
    comparisons = make_comparisons(left, right, winner, items=list(models),
                                   prompts=[r["task_id"] for r in rows])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bradley_terry(comparisons, ties="exclude", n_bootstrap=n_bootstrap, seed=seed,
                             alpha=alpha)


def _rank_range(probabilities: np.ndarray, level: float = 0.95) -> tuple[int, int]:
    cum = np.cumsum(probabilities)
    tail = (1.0 - level) / 2
    low = int(np.searchsorted(cum, tail - 1e-12, side="right")) + 1
    high = int(np.searchsorted(cum, 1.0 - tail - 1e-12, side="left")) + 1
    return low, min(high, len(probabilities))


def leaderboard_rows(fit: Any, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per model, best first: BT score (log-strength), 95 % interval, rank range,
    wins / losses / ties and comparisons."""
    rows = []
    for k in fit.order():
        low, high = _rank_range(fit.rank_probabilities[k])
        rows.append({
            "rank": int(fit.rank[k]),
            "model": fit.items[k],
            "score": round(float(fit.theta[k]), 6),
            "ci_low": round(float(fit.ci_low[k]), 6),
            "ci_high": round(float(fit.ci_high[k]), 6),
            "rank_low": low,
            "rank_high": high,
            "wins": int(fit.n_wins[k]),
            "losses": int(fit.n_losses[k]),
            "ties": int(fit.n_ties[k]),
            "comparisons": int(fit.n_comparisons[k]),
            "elo": round(float(fit.elo[k]), 1),
        })
    return rows


def _gate(value: float | None, ok: bool | None, rule: str) -> dict[str, Any]:
    return {"value": value, "pass": ok, "rule": rule}


def diagnostics(records: Sequence[Mapping[str, Any]], settings: JudgeSettings
                ) -> dict[str, Any]:
    """Reliability of a run (SPEC §4.12): parse and repair rates, judge requests that got no
    reply (by kind; also counted as parse failures), tie rate, order-swap consistency,
    position bias, length correlation, L2MO profile share and pilot gates."""
    from creagraph.judgments import LEFT, RIGHT, TIE, order_swap_consistency

    n = len(records)
    asked = [r for r in records if not r.get("empty_rule")]
    parsed = [r for r in asked if r.get("parsed")]
    failed = [r for r in asked if r.get("error") is not None]  # no reply after the retries
    failures: dict[str, int] = {}
    for r in failed:
        kind = str(r.get("error_kind") or "error")
        failures[kind] = failures.get(kind, 0) + 1
    repaired = [r for r in asked if r.get("repaired")]
    verdicts = [r for r in records if r.get("winner") is not None]
    ties = [r for r in verdicts if r["winner"] == "tie"]
    decisive = [r for r in verdicts if r["winner"] != "tie" and not r.get("empty_rule")]
    a_wins = sum(1 for r in decisive if r["verdict_position"] == "A")
    parse_rate = len(parsed) / len(asked) if asked else None
    repair_rate = len(repaired) / len(asked) if asked else None
    tie_rate = len(ties) / len(verdicts) if verdicts else None
    position = a_wins / len(decisive) if decisive else None
    # order swaps: outcome as seen from model_a (LEFT = a wins)
    by_index = {r["index"]: r for r in records}

    def side(r: Mapping[str, Any]) -> int:
        return TIE if r["winner"] == "tie" else (LEFT if r["winner"] == r["model_a"]
                                                 else RIGHT)

    firsts, seconds = [], []
    for r in records:
        origin = by_index.get(r.get("swap_of")) if r.get("swap_of") is not None else None
        if origin is not None and origin.get("winner") is not None and r.get("winner"):
            firsts.append(side(origin))
            seconds.append(-side(r))  # swapped order: the same verdict reads as its mirror
    swap = order_swap_consistency(firsts, seconds) if firsts else None
    length_rho = None
    if len(decisive) >= 3:
        from scipy.stats import spearmanr

        diff = [r["length_a"] - r["length_b"] for r in decisive]
        won = [1 if r["winner"] == r["model_a"] else -1 for r in decisive]
        if len(set(diff)) > 1 and len(set(won)) > 1:
            length_rho = float(spearmanr(diff, won).statistic)
    novelty = settings.dimension == "novelty"
    profiled = sum(1 for r in records if r.get("anchors"))
    profile_share = profiled / n if n and novelty else None
    gates = {
        "parsing": _gate(parse_rate, None if parse_rate is None else parse_rate > GATE_PARSE,
                         f"> {GATE_PARSE:.0%} of judge replies parsed"),
        "l2mo_profile": _gate(profile_share, None if profile_share is None
                              else profile_share >= GATE_PROFILE,
                              f">= {GATE_PROFILE:.0%} of comparisons with L2MO anchors "
                              "(novelty only)"),
        "repair": _gate(repair_rate, None if repair_rate is None
                        else repair_rate < GATE_REPAIR, f"< {GATE_REPAIR:.0%} repaired"),
        "ties": _gate(tie_rate, None if tie_rate is None
                      else 0.0 < tie_rate < GATE_TIE_MAX,
                      f"tie rate neither 0 nor >= {GATE_TIE_MAX:.0%}"),
        "position": _gate(position, None if position is None
                          else abs(position - 0.5) <= GATE_POSITION,
                          f"share of A wins within 0.5 ± {GATE_POSITION}"),
    }
    return {
        "dimension": settings.dimension,
        "judge": settings.judge,
        "n_comparisons": n,
        "n_swaps": sum(1 for r in records if r.get("swap_of") is not None),
        "n_empty_rule": sum(1 for r in records if r.get("empty_rule")),
        "n_judge_calls": len(asked),
        "n_parse_failures": len(asked) - len(parsed),
        "n_request_failures": len(failed),
        "request_failures": dict(sorted(failures.items())),
        "parse_rate": parse_rate,
        "repair_rate": repair_rate,
        "tie_rate": tie_rate,
        "position_a_share": position,
        "order_swap_consistency": swap.consistency if swap else None,
        "order_swap_pairs": swap.n_pairs if swap else 0,
        "length_spearman": length_rho,
        "l2mo_profile_share": profile_share,
        "gates": gates,
        "all_gates_pass": all(g["pass"] is not False for g in gates.values()),
    }
