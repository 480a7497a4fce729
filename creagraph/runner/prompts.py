"""Prompts for the ``run`` job: creagraph's own CREATE prompt, user templates, and templates
derived from a published answer file.

A template is plain text with up to four placeholders, ``{query}``, ``{entity_a}``,
``{entity_b}`` and ``{rel_b}``, each replaced by that field of the query record (one pass:
text inside a field is never read as a placeholder). Any other brace is literal, so a
template may show JSON.

A published answer file stores the exact prompt each row was sent (``prompt``).
:func:`derive_template` turns one row's prompt back into a template by replacing that row's
field values by their placeholders, and :func:`check_template` renders it for every row and
compares with the stored prompt byte for byte — so a user reproduces the published setting
without creagraph shipping anyone's prompt text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from creagraph.core.io import InputError
from creagraph.core.manifest import text_digest as digest

__all__ = [
    "PLACEHOLDERS",
    "DEFAULT_CREATE_TEMPLATE",
    "render",
    "check_placeholders",
    "derive_template",
    "check_template",
    "TemplateCheck",
    "derive_checked_template",
    "digest",
]

PLACEHOLDERS = ("query", "entity_a", "entity_b", "rel_b")
_SLOT = re.compile(r"\{(query|entity_a|entity_b|rel_b)\}")

#: creagraph's own CREATE prompt (its own words), asking for the numbered-paths JSON that
#: :func:`creagraph.scoring.parse.parse_answer` reads.
DEFAULT_CREATE_TEMPLATE = """\
{query}

Find as many different chains of real, verifiable facts as you can that lead from \
"{entity_a}" to something whose "{rel_b}" is "{entity_b}".

Each chain is a list of triples [subject, relation, object]:
- the first triple's subject is "{entity_a}";
- each next triple starts from an entity named in the triple before it;
- the last triple has the relation "{rel_b}" and the object "{entity_b}".

Prefer specific links that few other entities share (a spouse, a founder, an author) over \
broad ones (a country of citizenship, a genre), and make the chains differ from one another: \
other intermediate entities, other relations, other areas of the entity's life or work. \
Use canonical names of real entities only, and do not repeat a chain.

Answer with one JSON object only, numbering the chains, between <answer> and </answer>:
<answer>{"1": [["subject", "relation", "object"], ["subject", "relation", "object"]], \
"2": [["subject", "relation", "object"]]}</answer>
"""


def check_placeholders(template: str, *, where: str = "template") -> None:
    """Refuse a template that names none of the query fields (it would send one prompt for
    every query).

    Raises
    ------
    InputError
        When ``{query}`` and ``{entity_a}`` are both missing.
    """
    found = set(_SLOT.findall(template))
    if not found & {"query", "entity_a"}:
        raise InputError(
            f"{where}: no {{query}} or {{entity_a}} placeholder (the template must name the "
            "query; placeholders: {query}, {entity_a}, {entity_b}, {rel_b})"
        )


def render(template: str, record: Mapping[str, Any]) -> str:
    """The template with its placeholders replaced by the record's fields (one pass).

    Examples
    --------
    >>> render("Q: {query} ({entity_a}) {x}", {"query": "{entity_a}?", "entity_a": "A"})
    'Q: {entity_a}? (A) {x}'
    """
    return _SLOT.sub(lambda m: str(record.get(m.group(1), "")), template)


def derive_template(record: Mapping[str, Any], prompt_field: str = "prompt") -> str:
    """A template from one row of a published answer file: its stored prompt with the row's
    ``query``, ``entity_a``, ``entity_b`` and ``rel_b`` replaced by placeholders (longest
    value first, so a name inside the query text is part of the query).

    Raises
    ------
    InputError
        When the row has no prompt, or its prompt contains none of its field values.

    Examples
    --------
    >>> row = {"query": "How is A tied to B?", "entity_a": "A", "entity_b": "B",
    ...        "rel_b": "linked",
    ...        "prompt": "Query: How is A tied to B?\\nStart at A, end at B (linked)."}
    >>> derive_template(row)
    'Query: {query}\\nStart at {entity_a}, end at {entity_b} ({rel_b}).'
    """
    prompt = record.get(prompt_field)
    if not isinstance(prompt, str) or not prompt:
        raise InputError(f"field {prompt_field!r} is missing or empty (no stored prompt)")
    values = {
        name: str(record[name]) for name in PLACEHOLDERS if isinstance(record.get(name), str)
    }
    values = {k: v for k, v in values.items() if v}
    if not values:
        raise InputError("the row has none of the fields query, entity_a, entity_b, rel_b")
    by_length = sorted(values.items(), key=lambda kv: -len(kv[1]))
    pattern = re.compile("|".join(re.escape(v) for _, v in by_length))
    names = {v: k for k, v in reversed(by_length)}
    template = pattern.sub(lambda m: "{" + names[m.group(0)] + "}", prompt)
    check_placeholders(template, where="the derived template")
    return template


@dataclass(frozen=True)
class TemplateCheck:
    """The result of :func:`check_template`: rows compared, rows reproduced exactly, and
    the first mismatch (row number, character offset) when any."""

    rows: int
    matched: int
    first_mismatch: tuple[int, int] | None

    @property
    def ok(self) -> bool:
        return self.rows > 0 and self.matched == self.rows


def check_template(
    template: str, records: Iterable[Mapping[str, Any]], prompt_field: str = "prompt"
) -> TemplateCheck:
    """Render ``template`` for every record and compare with its stored prompt byte for
    byte; rows without a stored prompt are not counted."""
    rows = matched = 0
    first: tuple[int, int] | None = None
    for number, record in enumerate(records, start=1):
        stored = record.get(prompt_field)
        if not isinstance(stored, str):
            continue
        rows += 1
        made = render(template, record)
        if made == stored:
            matched += 1
        elif first is None:
            offset = next(
                (i for i, (a, b) in enumerate(zip(made, stored)) if a != b),
                min(len(made), len(stored)),
            )
            first = (number, offset)
    return TemplateCheck(rows, matched, first)


def derive_checked_template(
    records: Sequence[Mapping[str, Any]], row: int | None = None, prompt_field: str = "prompt"
) -> tuple[str, int, TemplateCheck]:
    """A template that rebuilds every record's stored prompt, derived from record ``row``
    (1-based) or, by default, from the first record whose template does (a row whose field
    value also occurs in the instructions — ``rel_b`` "spouse" in a prompt that mentions
    spouses — gives a template that does not, so the next row is tried).

    Returns
    -------
    tuple
        The template, the row it came from and its :class:`TemplateCheck` (``ok`` false
        when no row gives a template that rebuilds them all: the best check is returned).
    """
    candidates = [row] if row is not None else list(range(1, len(records) + 1))
    best: tuple[str, int, TemplateCheck] | None = None
    for number in candidates:
        try:
            template = derive_template(records[number - 1], prompt_field)
        except InputError:
            if row is not None:
                raise
            continue
        check = check_template(template, records, prompt_field)
        if check.ok:
            return template, number, check
        if best is None or check.matched > best[2].matched:
            best = (template, number, check)
    if best is None:
        raise InputError(f"no row has a usable stored {prompt_field!r}")
    return best
