"""Optional LLM rewrite of templated queries through an OpenAI-compatible chat endpoint.

Off by default: :mod:`creagraph.querygen.phrasing` writes every query without an LLM.
A user who wants more varied wording points :class:`ChatClient` at any server that speaks
the OpenAI chat-completions protocol (``POST {base_url}/chat/completions``), e.g. a local
vLLM or llama.cpp server. :func:`rewrite_query` asks for a fluent rewrite and keeps it only
when (:func:`rewrite_rejection`) it is one question, still names the start entity and the
target exactly, does not name the bridge entity (the other member of the category, which
would give the answer away), and its relation phrase before the target still maps back to
the target property through the relation linker
(:class:`creagraph.core.relations.RelationLinker`, the one the scoring job grounds paths
with) or the property's own phrasing template. Otherwise the template sentence stays and
the reason is recorded in ``rewrite_rejected``. The template sentence is kept in
``query_template``.

The client is :class:`creagraph.core.llm.ChatClient`, shared with the other LLM options
and configured by the same rule (:meth:`~creagraph.core.llm.ChatClient.from_env`).

Examples
--------
>>> client = ChatClient.from_env("http://localhost:8000/v1", "my-model")   # doctest: +SKIP
>>> rewrite_with_graph(kg, [record], client)[0]["query"]                    # doctest: +SKIP
'How could Robbie Vinton, an American actor, be linked to someone who is a painter?'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from creagraph.core.graph import KnowledgeGraph
from creagraph.core.llm import ChatClient, LLMError
from creagraph.core.relations import RelationLinker
from creagraph.core.text import normalize_loose
from creagraph.querygen.catalogue import Phrasing, load_phrasing

__all__ = [
    "ChatClient",
    "LLMError",
    "rewrite_query",
    "rewrite_queries",
    "rewrite_with_graph",
    "rewrite_summary",
    "rewrite_rejection",
    "relation_windows",
    "REWRITE_PROMPT",
    "REJECTION_REASONS",
]

REWRITE_PROMPT = (
    "Rewrite the question below so that it reads naturally, as one question in English. "
    "Keep its meaning. Keep the names {a!r} and {b!r} exactly as written. "
    "Answer with the rewritten question only.\n\nQuestion: {query}"
)

REJECTION_REASONS = (
    "not_one_question",
    "missing_start",
    "missing_target",
    "names_bridge",
    "relation_changed",
)

_BOUNDARY = frozenset(
    ("who", "whom", "that", "which", "whose", "someone", "something", "somebody", "anyone")
    + ("and", "or", ",", "?", "what", "how")
)
_ARTICLES = frozenset(("a", "an", "the"))
_LINK_SCORE = 0.8  # exact links score 1.0; embedding links must be near-synonyms


def _contains(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, flags=re.IGNORECASE) is not None


def relation_windows(text: str, target: str, max_words: int = 8) -> list[str]:
    """Candidate relation phrases just before the last mention of ``target`` in ``text``.

    The words between the holder ("someone who", "a film that", …) and the target, and
    every shorter suffix of them, trailing articles dropped, longest first.

    Examples
    --------
    >>> relation_windows("How is Ann linked to someone who received the Nobel Prize?",
    ...                  "Nobel Prize")
    ['received']
    >>> relation_windows("…and someone who is a citizen of France?", "France")
    ['is a citizen of', 'a citizen of', 'citizen of', 'of']
    """
    matches = list(re.finditer(rf"(?<!\w){re.escape(target)}(?!\w)", text, flags=re.IGNORECASE))
    if not matches:
        return []
    before = text[: matches[-1].start()]
    words = re.findall(r"[\w'’-]+|[,?]", before)
    window: list[str] = []
    for word in reversed(words):
        if word.lower() in _BOUNDARY or len(window) >= max_words:
            break
        window.insert(0, word)
    while window and window[-1].lower() in _ARTICLES:
        window.pop()
    out = []
    for i in range(len(window)):
        phrase = " ".join(window[i:])
        if phrase and phrase.lower() not in _ARTICLES:
            out.append(phrase)
    return out


def _template_phrase(template: str) -> str:
    text = re.sub(r"\{[^{}]*\}", " ", template)
    words = [w for w in text.split() if w.lower() not in _ARTICLES and w.lower() != "whose"]
    return normalize_loose(" ".join(words))


def _after_target(text: str, target: str) -> str:
    matches = list(re.finditer(rf"(?<!\w){re.escape(target)}(?!\w)", text, flags=re.IGNORECASE))
    if not matches:
        return ""
    rest = text[matches[-1].end() :].split("?")[0]
    return " ".join(w for w in rest.split() if w.lower() not in _ARTICLES)


def _maps_back(
    windows: Sequence[str],
    pid: str,
    linker: RelationLinker,
    phrasing: Mapping[str, Phrasing],
    after: str = "",
) -> bool:
    entry = phrasing.get(pid)
    own = _template_phrase(entry.active) if entry is not None else None
    for phrase in windows:
        if own and _template_phrase(f"{phrase} {after}") == own:
            return True
        for link in linker.link(phrase):
            if link.pid == pid and link.direction == "forward" and link.score >= _LINK_SCORE:
                return True
    return False


def rewrite_rejection(
    text: str,
    record: Mapping[str, Any],
    linker: RelationLinker,
    phrasing: Mapping[str, Phrasing] | None = None,
) -> str | None:
    """Why a rewrite of ``record``'s query cannot be kept, or ``None`` when it can.

    Reasons, in order: ``not_one_question`` (several lines, no single final question
    mark), ``missing_start`` / ``missing_target`` (``entity_a`` / ``entity_b`` not
    verbatim), ``names_bridge`` (the bridge entity, the category member the answer runs
    through, is named), ``relation_changed`` (no phrase just before the target links to
    ``rel_b_id`` in the forward direction, by the relation linker with score ≥ 0.8 or by
    the property's phrasing template).
    """
    if not text or "\n" in text or not text.endswith("?") or text.count("?") != 1:
        return "not_one_question"
    a, b = str(record["entity_a"]), str(record["entity_b"])
    if a not in text:
        return "missing_start"
    if b not in text:
        return "missing_target"
    bridge = record.get("bridge") or {}
    bridge_label = bridge.get("label") if isinstance(bridge, Mapping) else None
    if bridge_label:
        rest = text.replace(a, " ").replace(b, " ")
        if _contains(rest, str(bridge_label)):
            return "names_bridge"
    pid = str(record["rel_b_id"])
    phrasing = phrasing if phrasing is not None else load_phrasing()
    if not _maps_back(relation_windows(text, b), pid, linker, phrasing, _after_target(text, b)):
        return "relation_changed"
    return None


def rewrite_query(
    record: Mapping[str, Any],
    client: ChatClient,
    *,
    linker: RelationLinker | Callable[[], RelationLinker],
    phrasing: Mapping[str, Phrasing] | None = None,
) -> dict[str, Any]:
    """A copy of ``record`` whose ``query`` is the LLM's rewrite, when the rewrite is usable.

    Adds ``query_template`` (the templated sentence), ``query_rewritten`` (True when the
    rewrite was kept) and ``rewrite_rejected`` (the reason from :func:`rewrite_rejection`
    when it was not, else None). ``linker`` may be a function returning the linker, called
    only once an answer has come back (so a failing endpoint loads no embedding model).
    """
    for name in ("query", "entity_a", "entity_b", "rel_b_id"):
        if not record.get(name):
            raise ValueError(f"query record {record.get('query_id')!r} has no {name!r}")
    template = str(record.get("query_template") or record["query"])
    prompt = REWRITE_PROMPT.format(a=record["entity_a"], b=record["entity_b"], query=template)
    answer = client.chat([{"role": "user", "content": prompt}])
    raw = answer.strip().strip('"').strip()
    text = raw if "\n" in raw else " ".join(raw.split())
    if not isinstance(linker, RelationLinker):
        linker = linker()
    reason = rewrite_rejection(text, record, linker, phrasing)
    out = dict(record)
    out["query_template"] = template
    out["query"] = text if reason is None else template
    out["query_rewritten"] = reason is None
    out["rewrite_rejected"] = reason
    return out


def rewrite_queries(
    records: Iterable[Mapping[str, Any]],
    client: ChatClient,
    *,
    linker: RelationLinker | Callable[[], RelationLinker],
    phrasing: Mapping[str, Phrasing] | None = None,
) -> list[dict[str, Any]]:
    """:func:`rewrite_query` over many records, in order."""
    phrasing = phrasing if phrasing is not None else load_phrasing()
    return [rewrite_query(r, client, linker=linker, phrasing=phrasing) for r in records]


def rewrite_with_graph(
    kg: KnowledgeGraph,
    records: Sequence[Mapping[str, Any]],
    client: ChatClient,
    *,
    show_progress: bool = False,
) -> list[dict[str, Any]]:
    """:func:`rewrite_query` over many records, checked against ``kg``'s relations.

    The :class:`~creagraph.core.relations.RelationLinker` over ``kg`` (and its embedding
    model) is built once, on the first answer, so an endpoint that fails at once loads no
    model. This is what ``creagraph queries generate --llm-base-url …`` runs.
    """
    from creagraph.core.embeddings import default_embedder
    from creagraph.core.progress import progress

    made: list[RelationLinker] = []

    def linker() -> RelationLinker:  # built on the first answer, once
        if not made:
            made.append(RelationLinker(kg, default_embedder()))
        return made[0]

    rows = progress(records, desc="rewrite", unit=" queries") if show_progress else records
    return rewrite_queries(rows, client, linker=linker)  # the phrasing catalogue read once


def rewrite_summary(records: Sequence[Mapping[str, Any]]) -> str:
    """One line: rewrites kept out of all, and why the others kept their template.

    Examples
    --------
    >>> rewrite_summary([{"query_rewritten": True, "rewrite_rejected": None},
    ...                  {"query_rewritten": False, "rewrite_rejected": "names_bridge"}])
    'LLM rewrites kept: 1/2 (template kept: names_bridge 1)'
    """
    kept = sum(1 for r in records if r["query_rewritten"])
    reasons = Counter(r["rewrite_rejected"] for r in records if r["rewrite_rejected"])
    detail = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
    return f"LLM rewrites kept: {kept}/{len(records)}" + (
        f" (template kept: {detail})" if detail else ""
    )
