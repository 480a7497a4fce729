"""One lenient reader for JSON written by language models, used by every job that reads
model output (answer parsing, the LLM judge, atom extraction).

Models wrap JSON in ``<think>…</think>`` reasoning, code fences and prose; write comments,
trailing commas, typographic quotes, Python literals (single quotes, tuples, ``True``);
stop mid-object when they run out of tokens; and follow the JSON with explanations.
:func:`loads_lenient` recovers the value from all of these, or raises :class:`ValueError`
with a short reason. Every step is linear in the text's length (no backtracking regular
expressions over the whole text), so hostile input cannot stall a run.

:func:`lenient_number` and :func:`lenient_bool` read the values inside: numbers written as
text ("about 7", "1,200", "~40", "5k") and verdicts written as words ("yes",
"not hallucinated").
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from typing import Any

__all__ = [
    "loads_lenient",
    "load_repaired",
    "strip_comments",
    "balance_brackets",
    "lenient_number",
    "lenient_bool",
    "strip_reasoning",
    "outermost_span",
    "code_fences",
]

#: Python-literal parsing is tried only up to this length (``compile`` is slow on huge text).
LITERAL_EVAL_MAX = 100_000
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_TYPOGRAPHIC = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})
_FENCE_LANGS = ("json", "JSON", "python", "js", "javascript")
_THINK_CLOSE = ("</think>", "</reason>", "</reasoning>")
_PLAIN_STOP = re.compile(r"[\"'/#\n]")
_QUOTE_STOP = {q: re.compile(r"[\\\n" + q + "]") for q in "\"'"}


def strip_comments(text: str) -> str:
    """Remove ``//`` line comments, ``/* */`` blocks and ``#`` line comments outside strings.

    A string runs from a quote to the same quote or the end of the line; an apostrophe
    after a letter or digit ("Ann's") opens no string. Linear time.

    Examples
    --------
    >>> strip_comments('{"a": 1, // one\\n "b": "x//y"}')
    '{"a": 1, \\n "b": "x//y"}'
    """
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    at_line_start = True
    while i < n:
        if quote:
            match = _QUOTE_STOP[quote].search(text, i)
            if match is None:
                out.append(text[i:])
                break
            j = match.start()
            ch = text[j]
            if ch == "\\" and j + 1 < n:
                out.append(text[i : j + 2])
                i = j + 2
                continue
            out.append(text[i : j + 1])
            i = j + 1
            if ch != "\\":
                quote = None
            continue
        match = _PLAIN_STOP.search(text, i)
        j = n if match is None else match.start()
        if j > i:
            chunk = text[i:j]
            out.append(chunk)
            if at_line_start and chunk.strip():
                at_line_start = False
        if j >= n:
            break
        ch = text[j]
        if ch in "\"'":
            out.append(ch)
            i = j + 1
            # An apostrophe inside a word ("Ann's") is not a quote.
            if not (ch == "'" and j > 0 and text[j - 1].isalnum()):
                quote = ch
                at_line_start = False
            continue
        if text.startswith("//", j):
            k = text.find("\n", j)
            i = n if k < 0 else k
            continue
        if text.startswith("/*", j):
            k = text.find("*/", j + 2)
            i = n if k < 0 else k + 2
            continue
        if ch == "#" and at_line_start:
            k = text.find("\n", j)
            i = n if k < 0 else k
            continue
        at_line_start = ch == "\n"
        out.append(ch)
        i = j + 1
    return "".join(out)


def outermost_span(text: str) -> str:
    """From the first ``{`` or ``[`` to the last ``}`` or ``]`` (to the end when none closes).

    Examples
    --------
    >>> outermost_span('Sure: {"a": [1]} done')
    '{"a": [1]}'
    """
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return text
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]


def tuples_to_lists(text: str) -> str:
    """``("a", "b")`` written as a Python tuple becomes ``["a", "b"]``."""
    text = re.sub(r"\(\s*([\"'])", r"[\1", text)
    return re.sub(r"([\"'])\s*\)", r"\1]", text)


def balance_brackets(text: str) -> str:
    """Close brackets a truncated text left open, and fix ``}`` written for ``]``.

    Examples
    --------
    >>> balance_brackets('{"a": [1, 2')
    '{"a": [1, 2]}'
    """
    stack: list[str] = []
    out: list[str] = []
    quote = False
    escaped = False
    for ch in text:
        if quote:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack:
                continue
            ch = stack.pop()
        out.append(ch)
    if quote:
        out.append('"')
    out.extend(reversed(stack))
    return "".join(out)


def _literal_eval(text: str) -> Any:
    """``ast.literal_eval`` without the SyntaxWarnings model text triggers ("1st", "\\d")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.literal_eval(text)


def _drop_dangling(text: str) -> str:
    """Cut a truncated tail back to the last complete value: a dangling key, a half-
    written string or a trailing comma (used only after plain balancing failed)."""
    cut = max(text.rfind(","), text.rfind("{"), text.rfind("["))
    if cut < 0:
        return text
    if text[cut] in "{[" and cut > 0:  # an element cut right after it opened: drop it
        return text[:cut].rstrip().removesuffix(",")
    return text[: cut + 1] if text[cut] in "{[" else text[:cut]


def _has_set(value: Any) -> bool:
    stack, seen = [value], 0
    while stack and seen < 1_000_000:
        item = stack.pop()
        seen += 1
        if isinstance(item, set | frozenset):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def load_repaired(
    text: str, repairs: list[str] | None = None, *, drop_truncated: bool = True
) -> Any:
    """Parse ``text`` as JSON, repairing step by step; append the repair used to ``repairs``.

    Tried in order: as written; trailing commas removed; tuples read as lists; brackets
    balanced (a truncated text); with ``drop_truncated``, the last incomplete element
    dropped, then balanced. Each JSON attempt that fails is retried as a Python literal
    (single quotes, ``True``).

    Raises
    ------
    ValueError
        When no repair yields a value (also for text nested too deeply).
    """
    repairs = repairs if repairs is not None else []
    no_commas = _TRAILING_COMMA.sub(r"\1", text)
    lists = _TRAILING_COMMA.sub(r"\1", tuples_to_lists(text))
    attempts = [
        ("as written", lambda: text),
        ("removed trailing commas", lambda: no_commas),
        ("tuples read as lists", lambda: lists),
        ("balanced brackets", lambda: balance_brackets(lists)),
    ]
    if drop_truncated:
        attempts.append(
            (
                "dropped a truncated element",
                lambda: balance_brackets(_TRAILING_COMMA.sub(r"\1", _drop_dangling(lists))),
            )
        )
    tried: set[str] = set()
    for name, fix in attempts:
        fixed = fix()
        if fixed in tried:  # this repair changed nothing
            continue
        tried.add(fixed)
        try:
            value = json.loads(fixed)
        except RecursionError:
            raise ValueError("the text is nested too deeply to read") from None
        except ValueError:  # includes json.JSONDecodeError
            if len(fixed) > LITERAL_EVAL_MAX:
                continue
            try:
                value = _literal_eval(fixed)
                name += " (Python literal)"
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if _has_set(value):  # '{"x"}' is a cut-off object, not a set
                continue
        if name != "as written":
            repairs.append(name)
        return value
    raise ValueError("no JSON object or list could be read")


def strip_reasoning(text: str) -> str:
    """The text after a closing reasoning tag (``</think>``…), or without a closed
    ``<think>…</think>`` block; an unclosed ``<think>`` (reasoning cut off) leaves only
    what precedes it."""
    lowered = text.lower()
    for marker in _THINK_CLOSE:
        k = lowered.rfind(marker)
        if k >= 0:
            after = text[k + len(marker) :]
            if after.strip():
                return after
            return text[: lowered.find("<think>")] if "<think>" in lowered else text
    if "<think>" in lowered:  # reasoning cut off before any answer
        return text[: lowered.find("<think>")]
    return text


def code_fences(text: str, langs: tuple[str, ...] = _FENCE_LANGS) -> list[str]:
    """The contents of closed ````` code fences, a leading language tag from ``langs``
    and leading whitespace removed.

    Examples
    --------
    >>> code_fences('see ```json {"a": 1} ``` and ```[2]```')
    ['{"a": 1} ', '[2]']
    """
    parts = text.split("```")
    out = []
    for i in range(1, len(parts) - 1, 2):
        body = parts[i]
        for lang in langs:
            if body.startswith(lang):
                body = body[len(lang) :]
                break
        out.append(body.lstrip())
    return out


def _first_value(text: str) -> Any:
    """The first complete JSON value at the first ``{``/``[`` (prose after it ignored)."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON value")
    value, _ = json.JSONDecoder().raw_decode(text, min(starts))
    return value


def _as_json(value: Any, depth: int = 0) -> Any:
    """Python-literal results as JSON values: tuples and sets become lists."""
    if depth > 500:
        raise ValueError("the text is nested too deeply to read")
    if isinstance(value, dict):
        return {k: _as_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(v, depth + 1) for v in value]
    return value


def loads_lenient(reply: str, repairs: list[str] | None = None) -> Any:
    """Recover the JSON value in a language model's reply.

    Handles reasoning blocks (``<think>…</think>``), code fences, prose before and after
    the JSON, comments, trailing commas, typographic quotes, Python literals and truncated
    replies (open brackets closed, a half-written last element dropped).

    Raises
    ------
    ValueError
        When no value can be recovered; the message quotes the start of the reply.

    Examples
    --------
    >>> loads_lenient('<think>hmm {"no": 1}</think> Here: {"a": [1, 2,]} — hope it helps')
    {'a': [1, 2]}
    >>> loads_lenient('{"a": 1}\\nThe triple is true because {it is}.')
    {'a': 1}
    >>> loads_lenient('```json\\n{"items": [{"x": 1}, {"x": 2')
    {'items': [{'x': 1}, {'x': 2}]}
    """
    if not isinstance(reply, str):
        raise ValueError(f"the reply is {type(reply).__name__}, not text")
    text = strip_reasoning(reply).translate(_TYPOGRAPHIC).strip()
    fences = [body.rstrip() for body in code_fences(text)]
    if fences:
        text = max(fences, key=len)
    elif text.count("```") == 1:  # an unclosed fence (truncated reply)
        text = text.split("```", 1)[1]
        for lang in _FENCE_LANGS:
            if text.startswith(lang):
                text = text[len(lang) :]
                break
    try:
        return _first_value(text)
    except (ValueError, RecursionError):
        pass
    cleaned = strip_comments(text).strip()
    starts = [i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0]
    tail = cleaned[min(starts) :] if starts else cleaned
    # a reply cut off mid-value keeps everything up to the cut; otherwise drop the prose
    # after the outermost brackets
    candidate = tail if len(balance_brackets(tail)) > len(tail) else outermost_span(cleaned)
    try:
        return _as_json(load_repaired(candidate, repairs))
    except ValueError as exc:
        head = reply[:120]
        raise ValueError(f"no JSON could be recovered from the reply {head!r} ({exc})") from None


_NUMBER = re.compile(
    r"(?P<num>[-+]?(?:\d{1,3}(?:[,_ ]\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"(?:(?P<times>\s*[x×*]\s*10)?(?:\s*(?:\^|\*\*)\s*(?P<pow>[-+]?\d{1,3})"
    r"|(?P<sup>[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}))"
    r"|\s*(?P<word>(?i:thousand|million|billion|trillion|bn|mn)|[kKmMbB])\b)?"
)
_SCALE_WORDS = {
    "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6,
    "b": 1e9, "bn": 1e9, "billion": 1e9, "trillion": 1e12,
}  # fmt: skip
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_WORDS_TRUE = {"yes", "true", "1", "factual", "correct", "not hallucinated", "true fact", "y"}
_WORDS_FALSE = {"no", "false", "0", "hallucinated", "not factual", "incorrect", "n"}


def lenient_number(value: Any) -> float | None:
    """A number from a model's value: ``7``, ``"7"``, ``"about 7"``, ``"1,200"``,
    ``"~40 people"``, ``"5k"``, with its scale kept (``"2 billion"``, ``"1.2M"``, ``"10^6"``,
    ``"10⁶"``, ``"3 × 10^5"``; issue 28: "2 billion" read as 2 turned a class of 2·10⁹ into
    σ 5); ``None`` when there is none (ranges give their first bound).

    Examples
    --------
    >>> [lenient_number(v) for v in (7, "about 7", "1,200", "~40 people", "5k", "none")]
    [7.0, 7.0, 1200.0, 40.0, 5000.0, None]
    >>> lenient_number("7, 8 or 9"), lenient_number("12 men")
    (7.0, 12.0)
    >>> [lenient_number(v) for v in ("2 billion", "1.2M", "10^6", "10⁶", "3 × 10^5")]
    [2000000000.0, 1200000.0, 1000000.0, 1000000.0, 300000.0]
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    match = _NUMBER.search(value)
    if match is None:
        return None
    try:
        number = float(re.sub(r"[,_ ]", "", match.group("num")))
        word, power = match.group("word"), match.group("pow") or match.group("sup")
        if word:
            number *= _SCALE_WORDS[word.lower()]
        elif power:
            exponent = int(power.translate(_SUPERSCRIPT))
            # "2 × 10^9" scales 2; a bare "10^6" or "10⁶" is the power itself
            number = number * 10.0**exponent if match.group("times") else number**exponent
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def lenient_bool(value: Any) -> bool | None:
    """A verdict from a model's value: booleans, 0/1, "yes"/"no", "true"/"false",
    "not hallucinated"/"hallucinated"; ``None`` when it says neither.

    Examples
    --------
    >>> [lenient_bool(v) for v in (1, "Yes", "not hallucinated", "Hallucinated", "maybe")]
    [True, True, True, False, None]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return True if value == 1 else False if value == 0 else None
    if not isinstance(value, str):
        return None
    word = " ".join(re.sub(r"[^\w\s]", " ", value.casefold()).split())
    if word in _WORDS_TRUE:
        return True
    if word in _WORDS_FALSE:
        return False
    return None
