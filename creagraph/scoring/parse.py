"""Parsing model answers into knowledge paths (SPEC §3.2).

Models answer with a JSON object of numbered paths, usually inside ``<answer>…</answer>``,
sometimes after a ``</think>`` reasoning block, fenced as a json code block, with comments,
trailing commas, Python tuples instead of lists, triples written as strings
``"(a, r, b)"``, flat lists of 3k strings, or ``{"path": [...], "path_probability": p}``
wrappers. :func:`parse_answer` reads all of these, repairs what it can, never raises, and
reports a reason for everything it could not read.

Every step is linear in the answer's length (no backtracking regular expressions over
the whole text), answers longer than :data:`MAX_ANSWER_CHARS` are refused with a reason,
and deep nesting is reported as a failure, so hostile input can neither crash nor stall
a scoring run (``tests/scoring/test_parse_fuzz.py``, ``benchmarks/fuzz.py``).

Counting follows the published parser: a path counts when it has at least one element,
even if an element is not a well-formed triple (structural validity rejects those later).
Such an element (not three parts, an empty part, nested values) is kept as read and named
in its path's ``issues`` with the reason; every consumer of ``triples`` must expect it
(issue 28: a four-part triple used to abort the whole run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from creagraph.core.jsonish import _literal_eval, code_fences, load_repaired
from creagraph.core.jsonish import outermost_span as _candidate
from creagraph.core.jsonish import strip_comments as _strip_comments
from creagraph.core.text import scrub_surrogates

__all__ = ["ParsedPath", "ParseResult", "parse_answer", "answer_text", "MAX_ANSWER_CHARS"]

#: Longer answers are not parsed (a real answer is a few kilobytes; parsing is linear, about
#: half a second per million characters, so this bounds the time one answer can take).
MAX_ANSWER_CHARS = 1_000_000
_FENCE_LANGS = ("json", "python", "JSON")
_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_TRIPLE_KEYS = (
    ("head", "relation", "tail"),
    ("subject", "predicate", "object"),
    ("subject", "relation", "object"),
    ("source", "relation", "target"),
    ("h", "r", "t"),
    ("s", "p", "o"),
)


@dataclass
class ParsedPath:
    """One path as the model wrote it.

    ``triples`` holds each element as a tuple of strings (normally three); ``issues``
    lists elements that could not be read as triples, with reasons.
    """

    key: str
    triples: list[tuple[str, ...]]
    issues: list[str] = field(default_factory=list)
    probability: float | None = None

    def as_lists(self) -> list[list[str]]:
        return [list(t) for t in self.triples]


@dataclass
class ParseResult:
    """All paths of one answer, plus reasons for what was dropped."""

    paths: list[ParsedPath]
    failures: list[str]
    repairs: list[str]

    @property
    def ok(self) -> bool:
        return bool(self.paths)


def answer_text(raw: Any) -> str | None:
    """The answer text of a raw prediction: a string, or a list whose first item is one."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list | tuple) and raw:
        return answer_text(raw[0])
    if hasattr(raw, "tolist"):
        return answer_text(raw.tolist())
    return None


def _load(text: str, repairs: list[str]) -> Any:
    """The core lenient reader's repairs (:func:`creagraph.core.jsonish.load_repaired`),
    without dropping truncated elements (the published parser keeps what it can close)."""
    try:
        return load_repaired(text, repairs, drop_truncated=False)
    except ValueError as exc:
        if "nested too deeply" in str(exc):
            raise ValueError("the answer is nested too deeply to read") from None
        raise


def _answer_spans(text: str) -> list[str]:
    """The contents of ``<answer>…</answer>`` pairs (case-insensitive), in one linear scan.

    Same result as ``re.findall(r"<answer>(.*?)</answer>", text, re.S | re.I)``, without
    its quadratic time on many unclosed ``<answer>`` tags.
    """
    spans: list[str] = []
    pos = 0
    while True:
        opening = _OPEN.search(text, pos)
        if opening is None:
            break
        closing = _CLOSE.search(text, opening.end())
        if closing is None:
            break
        spans.append(text[opening.end() : closing.start()])
        pos = closing.end()
    return spans


def _split_triple_string(text: str) -> tuple[str, ...] | None:
    s = text.strip().strip("'\"").strip()
    if s.startswith("(") and s.endswith(")") or s.startswith("[") and s.endswith("]"):
        inner = s[1:-1]
        try:
            value = _literal_eval(s)
            if isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
                return tuple(v.strip() for v in value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        s = inner
    for sep in (" -> ", " → ", " | ", ","):
        parts = [p.strip().strip("'\"").strip() for p in s.split(sep)]
        if len(parts) == 3:
            return tuple(parts)
    return None


def _triple(item: Any) -> tuple[tuple[str, ...] | None, str | None]:
    if isinstance(item, list | tuple):
        if all(isinstance(x, str | int | float) for x in item):
            return tuple(str(x).strip() for x in item), None
        return None, "triple has nested values"
    if isinstance(item, dict):
        lowered = {str(k).lower(): v for k, v in item.items()}
        for keys in _TRIPLE_KEYS:
            if all(k in lowered for k in keys):
                return tuple(str(lowered[k]).strip() for k in keys), None
        values = list(item.values())
        if len(values) == 3 and all(isinstance(v, str) for v in values):
            return tuple(v.strip() for v in values), None
        return None, "triple object without head/relation/tail fields"
    if isinstance(item, str):
        parsed = _split_triple_string(item)
        if parsed is None:
            return None, f"cannot split {item[:60]!r} into three parts"
        return parsed, None
    return None, f"triple of type {type(item).__name__}"


def _malformed(triple: tuple[str, ...]) -> str | None:
    """Why a read element is not a well-formed triple (``None`` when it is one)."""
    if len(triple) != 3:
        return f"{len(triple)} parts, not three"
    empty = [name for name, part in zip(("head", "relation", "tail"), triple) if not part]
    if empty:
        return f"empty {' and '.join(empty)}"
    return None


def _path(key: str, value: Any) -> tuple[ParsedPath | None, str | None]:
    probability = None
    if isinstance(value, dict):
        if "path" in value:
            probability = value.get("path_probability", value.get("probability"))
            value = value["path"]
        elif any(k in {str(x).lower() for x in value} for k in ("head", "subject", "h", "s")):
            value = [value]
        else:
            return None, f"path {key}: an object without a 'path' field"
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or len(value) == 0:
        return None, f"path {key}: empty or not a list"
    triples: list[tuple[str, ...]] = []
    issues: list[str] = []
    if all(isinstance(x, str) for x in value) and not any("(" in x or "," in x for x in value[:1]):
        # a flat list of 3k strings
        if len(value) % 3:
            issues.append(f"flat list of {len(value)} strings is not a multiple of three")
        for i in range(0, len(value) - len(value) % 3, 3):
            flat = tuple(str(x).strip() for x in value[i : i + 3])
            problem = _malformed(flat)
            if problem is not None:
                issues.append(f"element {i // 3}: {problem}")
            triples.append(flat)
    else:
        for i, item in enumerate(value):
            triple, problem = _triple(item)
            if triple is None:
                issues.append(f"element {i}: {problem}")
                triples.append(())
            else:
                problem = _malformed(triple)
                if problem is not None:
                    issues.append(f"element {i}: {problem}")
                triples.append(triple)
    try:
        prob = float(probability) if probability is not None else None
    except (TypeError, ValueError, OverflowError):
        prob = None
    return ParsedPath(key, triples, issues, prob), None


def parse_answer(raw: Any) -> ParseResult:
    """Parse one model answer into paths; never raises.

    Parameters
    ----------
    raw : str or list
        The raw answer text, or a list whose first element is the text (the published
        ``path_prediction`` format).

    Returns
    -------
    ParseResult
        ``paths`` in the order the model numbered them, ``failures`` (reasons for the
        answer or for paths that could not be read) and ``repairs`` applied.

    Examples
    --------
    >>> r = parse_answer('<answer>{"1": [["A", "r", "B"], ["B", "s", "C"],],}</answer>')
    >>> [p.triples for p in r.paths], r.repairs
    ([[('A', 'r', 'B'), ('B', 's', 'C')]], ['as written (Python literal)'])
    >>> parse_answer("no paths here").failures
    ['no JSON object or list could be read']
    """
    try:
        text = answer_text(raw)
    except RecursionError:
        text = None
    if text is None:
        return ParseResult([], ["no answer text"], [])
    if len(text) > MAX_ANSWER_CHARS:
        return ParseResult(
            [], [f"the answer is {len(text):,} characters long (limit {MAX_ANSWER_CHARS:,})"], []
        )
    try:
        return _parse_text(text)
    except (RecursionError, MemoryError):
        return ParseResult([], ["the answer is nested too deeply to read"], [])
    except Exception as exc:  # a bug: report it as this answer's failure, never crash a run
        return ParseResult([], [f"internal parser error ({type(exc).__name__}: {exc})"], [])


def _parse_text(text: str) -> ParseResult:
    failures: list[str] = []
    repairs: list[str] = []
    for marker in ("</think>", "</reason>"):
        if marker in text:
            after = text.split(marker)[-1]
            if after.strip():
                text = after
            break
    answers = _answer_spans(text)
    if answers:
        text = answers[-1]
    elif "<answer>" in text.lower():
        text = re.split(r"<answer>", text, flags=re.IGNORECASE)[-1]
    text = re.sub(r"</?answer>", "", text, flags=re.IGNORECASE)
    fences = code_fences(text, _FENCE_LANGS)
    if fences:
        text = max(fences, key=len)
    text = _candidate(_strip_comments(text).strip())
    if not text.strip() or text.strip() in ("{}", "[]"):
        return ParseResult([], ["the answer holds no paths"], repairs)
    try:
        data = _load(text, repairs)
    except ValueError as exc:
        return ParseResult([], [str(exc)], repairs)
    # "\ud800" inside the answer's own JSON decodes to a lone surrogate, which no UTF-8
    # output can hold: replaced by U+FFFD, and said so
    data, scrubbed = scrub_surrogates(data)
    if scrubbed:
        repairs.extend(f"answer JSON {reason}" for reason in scrubbed)
    if isinstance(data, dict):
        items = [(str(k), v) for k, v in data.items()]
        if "paths" in data and len(data) <= 2 and isinstance(data["paths"], list | dict):
            inner = data["paths"]
            items = (
                [(str(k), v) for k, v in inner.items()]
                if isinstance(inner, dict)
                else [(str(i + 1), v) for i, v in enumerate(inner)]
            )
    elif isinstance(data, list):
        if data and all(isinstance(x, str) for x in data) and len(data) % 3 == 0:
            items = [("1", data)]
        else:
            items = [(str(i + 1), v) for i, v in enumerate(data)]
    else:
        return ParseResult([], [f"the answer is a {type(data).__name__}, not paths"], repairs)
    paths: list[ParsedPath] = []
    for key, value in items:
        if isinstance(value, int | float | bool) or value is None:
            failures.append(f"path {key}: not a list of triples")
            continue
        path, problem = _path(key, value)
        if path is None:
            failures.append(problem or f"path {key}: unreadable")
        else:
            paths.append(path)
    if not paths and not failures:  # e.g. "{" balanced to "{}"
        failures.append("the answer holds no paths")
    return ParseResult(paths, failures, repairs)


def lower_paths(paths: Sequence[ParsedPath]) -> list[list[list[str]]]:
    """Lower-cased triples, the form the published ``paths_0`` column stores."""
    return [[[x.lower() for x in t] for t in p.triples] for p in paths]
