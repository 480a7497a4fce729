"""Who names a checklist anchor (SPEC §4.7 items 7 and 9, §4.11): the offline rules, or a
chat model that vets and names each candidate cluster.

:func:`creagraph.tig.anchors.anchors_for_population` walks the clusters in ClichéScore rank
order and, for each cluster its offline rules let through, asks an :class:`AnchorWriter`
whether to keep it and how to name it (:class:`AnchorCandidate` → :class:`AnchorDecision`):

* :class:`OfflineWriter` (``offline``, the default) keeps every candidate with the labels
  the offline rules chose: the anchors are exactly those of the rules alone.
* :class:`LLMAnchorWriter` (``llm``) sends the brief, the task kind, the cluster's top
  labels, short excerpts of a few member answers and the anchors already kept for the
  comparison to an OpenAI-compatible chat model (:class:`creagraph.core.llm.ChatClient`:
  retries, the shared reply cache), and asks for strict JSON
  ``{"keep": true|false, "label": "...", "reason": "..."}`` under the rules of SPEC §4.7
  item 9. A kept label is worded by :func:`~creagraph.tig.anchors.anchor_text` like any
  other; a refused or failed cluster gives its rank to the next one.

``MODULE:ATTR`` names a user's writer (``name``, ``model`` and ``write(candidate)``) through
:data:`ANCHOR_WRITERS`, as ``--extractor`` does for atoms.

Examples
--------
>>> decision_from_reply('{"keep": true, "label": "doorstop", "reason": "common use"}')
AnchorDecision(status='kept', label='doorstop', reason='common use', detail='')
>>> decision_from_reply('{"keep": false, "label": "", "reason": "restates the brief"}').status
'refused'
>>> decision_from_reply('I would rather not.').status
'failed'
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from creagraph.core.registry import Registry

if TYPE_CHECKING:
    from creagraph.core.llm import ChatClient

__all__ = [
    "ANCHOR_WRITERS",
    "AnchorCandidate",
    "AnchorDecision",
    "AnchorWriter",
    "WriterCounts",
    "OfflineWriter",
    "LLMAnchorWriter",
    "WriterContext",
    "make_anchor_writer",
    "write_steps",
    "build_writer_messages",
    "decision_from_reply",
    "check_failed_share",
    "CANDIDATE_FACTOR",
    "MAX_EXCERPTS",
    "EXCERPT_CHARS",
    "MAX_LABEL_WORDS",
    "DEFAULT_MAX_FAILED_SHARE",
]

#: A comparison asks its writer about at most this many clusters per anchor wanted
#: (``CANDIDATE_FACTOR × top_k``): refusals hand their rank on, but not for ever.
CANDIDATE_FACTOR = 3
#: Member answers quoted to the model per cluster, and the characters kept of each.
MAX_EXCERPTS = 5
EXCERPT_CHARS = 160
#: A kept label longer than this many words is not a short noun phrase: the cluster fails.
MAX_LABEL_WORDS = 8
#: The writer's run is refused (no anchors written) when more than this share of the
#: clusters asked got no usable reply.
DEFAULT_MAX_FAILED_SHARE = 0.1

#: What each task kind asks for, in the writer's prompt (SPEC §4.10, §4.11).
KIND_DESCRIPTIONS = {
    "visual": "a visual concept brief; answers propose images (carriers, motifs, mechanisms)",
    "use": "an alternative-uses task; answers are uses or functions of the object",
    "consequence": "a consequences task; answers are outcomes of the scenario",
    "instance": "an instances task; answers are examples of the asked category",
    "open": "an open prompt; answers are free responses",
}


@dataclass(frozen=True)
class AnchorCandidate:
    """One cluster the offline rules let through, as a writer sees it.

    ``labels`` are the labels the offline rules would name (the first leads);
    ``cluster_labels`` the cluster's most frequent canonical labels; ``excerpts`` short
    excerpts of member answers; ``kept`` the labels of the anchors already kept for this
    comparison (higher ranks).
    """

    task_id: str
    comparison_key: str
    brief: str
    kind: str
    atom_type: str
    labels: tuple[str, ...]
    cluster_labels: tuple[str, ...]
    excerpts: tuple[str, ...]
    kept: tuple[str, ...]


@dataclass(frozen=True)
class AnchorDecision:
    """A writer's answer for one candidate: ``status`` is ``kept``, ``refused`` or
    ``failed`` (no usable reply); ``label`` names a kept cluster (empty: the offline
    labels); ``detail`` says why a reply failed."""

    status: str
    label: str = ""
    reason: str = ""
    detail: str = ""

    @property
    def keep(self) -> bool:
        return self.status == "kept"


@dataclass
class WriterCounts:
    """Clusters asked, kept, refused and failed over a writer's run (failures by cause);
    ``overruled``: kept by the writer under a label the offline rules refuse (it restates
    the brief or names nothing), so the cluster gave its rank to the next."""

    asked: int = 0
    kept: int = 0
    refused: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    overruled: int = 0

    def add(self, decision: AnchorDecision) -> None:
        self.asked += 1
        if decision.status == "kept":
            self.kept += 1
        elif decision.status == "refused":
            self.refused += 1
        else:
            self.failed += 1
            cause = decision.detail.split(":", 1)[0] or "failed"
            self.failures[cause] = self.failures.get(cause, 0) + 1

    @property
    def failed_share(self) -> float:
        return self.failed / self.asked if self.asked else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"asked": self.asked, "kept": self.kept, "refused": self.refused,
                "failed": self.failed, "failures": dict(sorted(self.failures.items())),
                "overruled": self.overruled}

    def line(self) -> str:
        """``asked 12, kept 8, refused 3, failed 1 (not_json 1)``."""
        text = (f"asked {self.asked}, kept {self.kept}, refused {self.refused}, "
                f"failed {self.failed}")
        if self.failures:
            text += " (" + ", ".join(f"{k} {n}" for k, n in sorted(self.failures.items())) + ")"
        if self.overruled:
            text += f"; {self.overruled} kept label(s) overruled by the rules"
        return text


class AnchorWriter(Protocol):
    """What names anchors: ``name`` (recorded in each anchor it names, empty fields for
    ``offline``), ``model`` (the model's name, or ``""``), ``counts`` and
    ``write(candidate)``; a writer may also have ``write_many(candidates)`` (the
    decisions in order) to answer many comparisons' candidates at once."""

    name: str
    model: str
    counts: WriterCounts

    def write(self, candidate: AnchorCandidate) -> AnchorDecision: ...


class OfflineWriter:
    """Keeps every candidate with the offline rules' labels (today's anchors, unchanged)."""

    name = "offline"
    model = ""

    def __init__(self) -> None:
        self.counts = WriterCounts()

    def write(self, candidate: AnchorCandidate) -> AnchorDecision:
        decision = AnchorDecision("kept")
        self.counts.add(decision)
        return decision


# --------------------------------------------------------------------------- the LLM writer

SYSTEM_PROMPT = (
    "You vet and name novelty checklist anchors for a creativity benchmark. Many language "
    "models answered the same prompt; their answers were grouped into clusters of one "
    "shared idea, and the most common clusters become checklist items asking whether a "
    "new answer avoids that common idea. You see one candidate cluster. Decide whether it "
    "names a genuine common idea worth an item, and name that idea.\n"
    "Refuse the cluster (keep false) when its shared idea is:\n"
    "1. what the prompt itself asks for: the prompt's own concept, object, required "
    "sources or instruction words (such as 'invent', 'interesting', 'surprising', 'use'), "
    "or a synonym or restatement of them; these are expected in every answer;\n"
    "2. a filler or role word that names no idea ('use', 'put', 'get', 'thing', "
    "'experience', 'choice', 'person');\n"
    "3. a hedge rather than an answer ('it depends', 'personal preference');\n"
    "4. a detail, part, paraphrase or repetition of an anchor already kept;\n"
    "5. not shared: the answers quoted have no idea in common.\n"
    "Otherwise keep it, with a label: a short noun phrase (at most "
    f"{MAX_LABEL_WORDS} words) naming the idea the answers share, in their own terms, "
    "not a whole sentence and not the cluster's first label when that label is vague.\n"
    'Reply with JSON only: {"keep": true or false, "label": "<short noun phrase naming the '
    'shared idea>", "reason": "<one short sentence>"}'
)


def build_writer_messages(candidate: AnchorCandidate) -> list[dict[str, str]]:
    """The chat messages asking a model to vet and name one candidate cluster (the
    excerpts are already bounded: :data:`MAX_EXCERPTS` of :data:`EXCERPT_CHARS`)."""
    kept = "\n".join(f"- {label}" for label in candidate.kept) or "(none yet)"
    answers = "\n".join(f"- {text}" for text in candidate.excerpts) or "(none available)"
    user = (
        f"Prompt: {candidate.brief}\n"
        f"Task kind: {candidate.kind} ({KIND_DESCRIPTIONS.get(candidate.kind, candidate.kind)})\n"
        f"Cluster labels, most frequent first: {'; '.join(candidate.cluster_labels)}\n"
        f"Answers in the cluster (excerpts):\n{answers}\n"
        f"Anchors already kept for this comparison:\n{kept}"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters, then
    an ellipsis marking the cut.

    Examples
    --------
    >>> excerpt("use it as a doorstop when the wind blows hard", 20)
    'use it as a doorstop…'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit + 1]  # a word ending at the limit is kept whole
    cut = head.rsplit(" ", 1)[0] if " " in head else flat[:limit]
    return cut.rstrip(" ,;:.") + "…"


_TRUE = frozenset({"true", "yes"})
_FALSE = frozenset({"false", "no"})


def decision_from_reply(reply: str) -> AnchorDecision:
    """Read a writer reply: JSON repaired leniently once
    (:func:`creagraph.tig.atoms_llm.parse_json_lenient`), an object with a boolean ``keep``
    (``"true"``/``"false"`` accepted) and, when kept, a non-empty ``label`` of at most
    :data:`MAX_LABEL_WORDS` words. Anything else is ``failed`` with its cause in
    ``detail`` (``not_json``, ``bad_reply``, ``no_label``, ``long_label``)."""
    from creagraph.tig.atoms_llm import parse_json_lenient

    try:
        data = parse_json_lenient(reply)
    except ValueError as exc:
        return AnchorDecision("failed", detail=f"not_json: {exc}")
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        return AnchorDecision("failed", detail=f"bad_reply: not an object: {reply[:80]!r}")
    keep = data.get("keep")
    if isinstance(keep, str) and keep.strip().casefold() in _TRUE | _FALSE:
        keep = keep.strip().casefold() in _TRUE
    if not isinstance(keep, bool):
        return AnchorDecision("failed", detail=f"bad_reply: 'keep' is {keep!r}, not a boolean")
    label = data.get("label")
    label = " ".join(label.split()).strip(" .\"'") if isinstance(label, str) else ""
    reason = data.get("reason")
    reason = " ".join(reason.split()) if isinstance(reason, str) else ""
    if not keep:
        return AnchorDecision("refused", label=label, reason=reason)
    if not label:
        return AnchorDecision("failed", reason=reason, detail="no_label: kept without a label")
    if len(label.split()) > MAX_LABEL_WORDS:
        return AnchorDecision("failed", label=label, reason=reason,
                              detail=f"long_label: {len(label.split())} words")
    return AnchorDecision("kept", label=label, reason=reason)


class LLMAnchorWriter:
    """Vets and names each candidate cluster with a chat model (see the module notes).

    Parameters
    ----------
    client : ChatClient
        The endpoint (retries with backoff on 429/5xx, the reply cache if it has one).
    max_tokens : int
        Tokens allowed for each reply.
    concurrency : int
        Requests in flight at once (:meth:`write_many`).
    show_progress : bool
        The client's progress bar over each round of :meth:`write_many`.

    Notes
    -----
    A request that fails after the client's retries, or a reply that cannot be read
    (:func:`decision_from_reply`), counts as ``failed``; the candidate gives its rank to
    the next. An unreachable endpoint, a redirect or HTTP 401/403/404 stops the run
    (:class:`creagraph.core.llm.LLMError`): every later request would fail the same way.
    Within a comparison the requests go one after another (each lists the anchors the
    comparison already kept, which depend on the replies before it);
    :meth:`write_many` sends one request per comparison at once, ``concurrency`` in flight
    (:meth:`creagraph.core.llm.ChatClient.map`, with its progress bar).
    """

    name = "llm"

    def __init__(self, client: ChatClient, *, max_tokens: int = 200, concurrency: int = 4,
                 show_progress: bool = True):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.client = client
        self.model = client.model
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self.show_progress = show_progress
        self.counts = WriterCounts()
        self.sent = 0
        self.cached = 0

    def write_many(self, candidates: Sequence[AnchorCandidate]) -> list[AnchorDecision]:
        """The decisions for ``candidates`` (of different comparisons), asked at once."""
        from dataclasses import replace

        from creagraph.core.llm import ChatRequest

        sampling = self.client.sampling
        if sampling.max_tokens is None:
            sampling = replace(sampling, max_tokens=self.max_tokens)
        result = self.client.map(
            [ChatRequest(build_writer_messages(c), sampling=sampling) for c in candidates],
            concurrency=self.concurrency, desc="anchor writer",
            show_progress=self.show_progress and len(candidates) > 1)
        self.cached += result.cached
        self.sent += len(candidates) - result.cached
        decisions = [AnchorDecision("failed", detail=f"{r.error_kind}: {r.error}")
                     if r.error is not None else decision_from_reply(r.content)
                     if r.content else AnchorDecision("failed", detail="empty: no message text")
                     for r in result.replies]
        for decision in decisions:
            self.counts.add(decision)
        return decisions

    def write(self, candidate: AnchorCandidate) -> AnchorDecision:
        """The decision for one candidate (:meth:`write_many` of one)."""
        return self.write_many([candidate])[0]


def write_steps(steps: Sequence[Generator[Any, Any, Any]], writer: AnchorWriter) -> list[Any]:
    """Drive the anchor steps of many comparisons
    (:func:`creagraph.tig.anchors.anchor_steps`) in lock step: each round asks the writer
    about every comparison's next candidate at once (``write_many`` when it has one, else
    ``write`` one by one) and sends each decision back. Returns each comparison's anchors,
    in the order of ``steps``; the same anchors as driving each comparison alone."""
    done: list[Any] = [None] * len(steps)
    waiting: dict[int, AnchorCandidate] = {}

    def advance(i: int, decision: AnchorDecision | None) -> None:
        try:
            waiting[i] = next(steps[i]) if decision is None else steps[i].send(decision)
        except StopIteration as stop:
            done[i] = stop.value

    for i in range(len(steps)):
        advance(i, None)
    while waiting:
        order = sorted(waiting)
        candidates = [waiting.pop(i) for i in order]
        many = getattr(writer, "write_many", None)
        decisions = many(candidates) if many is not None else [
            writer.write(c) for c in candidates]
        for i, decision in zip(order, decisions, strict=True):
            advance(i, decision)
    return done


def check_failed_share(counts: WriterCounts, max_share: float = DEFAULT_MAX_FAILED_SHARE,
                       *, writer: str = "llm") -> None:
    """Refuse a writer's run whose failed share exceeds ``max_share``.

    Raises
    ------
    LLMError
        ``kind="failed_share"``, naming the counts and the causes of failure.
    """
    from creagraph.core.llm import LLMError

    if counts.failed_share > max_share + 1e-12:
        raise LLMError(
            f"anchor writer {writer!r}: {counts.failed} of {counts.asked} clusters got no "
            f"usable reply ({counts.failed_share:.0%} > the allowed {max_share:.0%}; "
            f"{counts.line()}): no anchors written", kind="failed_share")


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class WriterContext:
    """What an anchor writer of :data:`ANCHOR_WRITERS` is given: the LLM endpoint
    settings and whether to use the shared reply cache."""

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    cache: bool = True


def offline_writer() -> OfflineWriter:
    """The ``offline`` writer."""
    return OfflineWriter()


def llm_writer(*, context: WriterContext, max_tokens: int = 200, retries: int = 3,
               timeout: float = 60.0, concurrency: int = 4) -> LLMAnchorWriter:
    """The ``llm`` writer: a chat model at ``--llm-base-url`` / ``--llm-model`` with the
    shared reply cache (:func:`creagraph.core.llm.default_reply_cache_path`);
    ``concurrency`` requests in flight (one per comparison)."""
    from creagraph.core.llm import ChatClient, ReplyCache, default_reply_cache_path

    client = ChatClient.from_env(
        context.llm_base_url, context.llm_model, context.llm_api_key, retries=retries,
        timeout=timeout,
        cache=ReplyCache(default_reply_cache_path()) if context.cache else None)
    return LLMAnchorWriter(client, max_tokens=max_tokens, concurrency=concurrency)


#: Anchor writers by name; ``module:attr`` names a user's writer (``name``, ``model``,
#: ``counts`` and ``write(candidate)``; a ``context`` parameter receives
#: :class:`WriterContext`).
ANCHOR_WRITERS = Registry(
    "anchor writer",
    required=("name", "model", "counts", "write"),
    entries={
        "offline": ("creagraph.tig.anchor_writer:offline_writer",
                    "the offline label rules (default)"),
        "llm": ("creagraph.tig.anchor_writer:llm_writer",
                "a chat model vets and names each cluster"),
    },
)


def make_anchor_writer(writer: str = "offline", *, context: WriterContext | None = None,
                       writer_args: Mapping[str, Any] | None = None) -> AnchorWriter:
    """The anchor writer named ``writer`` (a name of :data:`ANCHOR_WRITERS` or
    ``module:attr``), made with ``writer_args``."""
    made: AnchorWriter = ANCHOR_WRITERS.create(writer, context=context or WriterContext(),
                                               **dict(writer_args or {}))
    return made


def candidate_excerpts(texts: Sequence[str]) -> tuple[str, ...]:
    """At most :data:`MAX_EXCERPTS` distinct excerpts (:func:`excerpt`) of ``texts``."""
    return tuple(dict.fromkeys(excerpt(t) for t in texts if t.strip()))[:MAX_EXCERPTS]
