"""Reading and writing response populations and extracted atoms (JSON Lines).

Response rows follow SPEC §4: ``{task_id, brief, family?, model, sample, core_idea,
visual_description}`` plus an optional ``response_id``. Every bad row raises
:class:`creagraph.core.io.InputError` naming the file, the line and the field.

Atom files (the *pre-extracted* backend's input, and what ``creagraph tig build`` writes)
hold one row per response: ``{"response_id": ..., "atoms": [{"type": ..., "text": ...}]}``.

Examples
--------
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
>>> _ = path.write_text('{"task_id": "t", "brief": "b", "model": "m", "sample": 0, '
...                     '"core_idea": "A kite made of letters.", "visual_description": ""}\\n')
>>> [r.response_id for r in read_responses(path)]
['t|m|0']
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, iter_jsonl, write_jsonl
from creagraph.core.text import scrub_surrogates
from creagraph.tig.schema import ATOM_TYPES, Atom, Response

__all__ = [
    "response_from_record",
    "read_responses",
    "write_responses",
    "check_unique_responses",
    "atoms_from_record",
    "read_atoms",
    "write_atoms",
]

_REQUIRED_TEXT = ("task_id", "brief", "model", "core_idea")


def _text_field(record: Mapping[str, Any], name: str, where: str, *, allow_empty: bool) -> str:
    if name not in record or record[name] is None:
        raise InputError(f"{where}: missing field {name!r}")
    value = record[name]
    if not isinstance(value, str):
        raise InputError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InputError(f"{where}: field {name!r} is empty")
    return value


def _sample_field(record: Mapping[str, Any], where: str) -> int:
    if "sample" not in record or record["sample"] is None:
        raise InputError(f"{where}: missing field 'sample'")
    value = record["sample"]
    if isinstance(value, bool):
        raise InputError(f"{where}: field 'sample' must be a non-negative integer, got {value!r}")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0:
        raise InputError(f"{where}: field 'sample' must be a non-negative integer, got {value!r}")
    return value


def response_from_record(record: Mapping[str, Any], where: str = "<record>") -> Response:
    """Validate one raw record and return a :class:`Response`.

    Parameters
    ----------
    record : mapping
        The row as read from JSON.
    where : str
        Location for error messages, e.g. ``"responses.jsonl:12"``.

    Raises
    ------
    InputError
        When a required field is missing, empty or of the wrong type.

    Examples
    --------
    >>> response_from_record({"task_id": "t", "brief": "b", "model": "m", "sample": "2",
    ...                       "core_idea": "x", "visual_description": ""}).sample
    2
    """
    if not isinstance(record, Mapping):
        raise InputError(f"{where}: expected a JSON object")
    values = {name: _text_field(record, name, where, allow_empty=False) for name in _REQUIRED_TEXT}
    visual = _text_field(record, "visual_description", where, allow_empty=True)
    family = record.get("family")
    if family is not None and not isinstance(family, str):
        raise InputError(f"{where}: field 'family' must be a string or null")
    kind = record.get("kind")
    if kind is not None:
        from creagraph.tig.brief import TASK_KINDS

        if not isinstance(kind, str) or kind.strip().casefold() not in TASK_KINDS:
            raise InputError(f"{where}: field 'kind' must be one of {', '.join(TASK_KINDS)} "
                             f"or null, got {kind!r}")
        kind = kind.strip().casefold()
    response_id = record.get("response_id") or ""
    if not isinstance(response_id, str):
        raise InputError(f"{where}: field 'response_id' must be a string")
    return Response(
        task_id=values["task_id"].strip(),
        brief=values["brief"],
        model=values["model"].strip(),
        sample=_sample_field(record, where),
        core_idea=values["core_idea"].strip(),
        visual_description=visual,
        family=family or None,
        response_id=response_id,
        kind=kind,
    )


def check_unique_responses(
    responses: Sequence[Response], where: Sequence[str] | None = None
) -> None:
    """Raise :class:`InputError` when two responses share a ``response_id``.

    ``where`` gives each response's location (same order) for the message.
    """
    seen: dict[str, int] = {}
    for index, response in enumerate(responses):
        previous = seen.setdefault(response.response_id, index)
        if previous != index:
            here = where[index] if where else f"response {index}"
            there = where[previous] if where else f"response {previous}"
            raise InputError(
                f"{here}: duplicate response {response.response_id!r} "
                f"(task_id, model, sample already used at {there})"
            )


def read_responses(path: str | os.PathLike[str]) -> list[Response]:
    """Read and validate a JSON Lines file of responses.

    Raises
    ------
    InputError
        Naming the file and line of a malformed row, a missing/empty/mistyped field, or a
        duplicate ``(task_id, model, sample)``.

    A lone surrogate escape (``"\\ud800"``, valid JSON but not writable as UTF-8) is
    replaced by U+FFFD with a warning naming the file, line and field.
    """
    p = Path(path)
    responses: list[Response] = []
    where: list[str] = []
    line = 0
    for line, record in _numbered(iter_jsonl(p), p):
        loc = f"{p}:{line}"
        responses.append(response_from_record(_scrubbed(record, loc), loc))
        where.append(loc)
    if not responses:
        raise InputError(f"{p}: no responses")
    check_unique_responses(responses, where)
    return responses


def _scrubbed(record: Any, where: str) -> Any:
    """``record`` with lone surrogates (valid JSON, not writable as UTF-8) replaced by
    U+FFFD, each replacement reported on stderr with the file, line and field."""
    clean, issues = scrub_surrogates(record)
    for issue in issues:
        print(f"warning: {where}: {issue}", file=sys.stderr)
    return clean


def _numbered(records: Iterable[dict[str, Any]], path: Path) -> Iterable[tuple[int, dict]]:
    # iter_jsonl skips blank lines; recover the physical line numbers for messages.
    if not path.exists():
        raise InputError(f"{path}: file not found")
    with path.open("rb") as handle:  # lines as iter_jsonl counts them (split on \n only)
        numbers = [i for i, text in enumerate(handle, start=1) if text.strip()]
    yield from zip(numbers, records, strict=True)


def write_responses(path: str | os.PathLike[str], responses: Iterable[Response]) -> int:
    """Atomically write responses as JSON Lines; returns the number written."""
    return write_jsonl(path, (r.to_dict() for r in responses))


def atoms_from_record(record: Mapping[str, Any], where: str) -> tuple[str, list[Atom]]:
    """Validate one pre-extracted atoms row ``{"response_id", "atoms": [...]}``."""
    response_id = record.get("response_id")
    if not isinstance(response_id, str) or not response_id:
        raise InputError(f"{where}: missing field 'response_id'")
    raw = record.get("atoms")
    if not isinstance(raw, list):
        raise InputError(f"{where}: field 'atoms' must be a list of {{type, text}} objects")
    atoms: list[Atom] = []
    for k, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: atoms[{k}] must be an object with 'type' and 'text'")
        kind, text = item.get("type"), item.get("text")
        if kind not in ATOM_TYPES:
            raise InputError(
                f"{where}: atoms[{k}].type {kind!r} is not one of {', '.join(ATOM_TYPES)}"
            )
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: atoms[{k}].text must be a non-empty string")
        atoms.append(Atom(kind, text.strip()))
    return response_id, atoms


def read_atoms(path: str | os.PathLike[str]) -> dict[str, list[Atom]]:
    """Read a pre-extracted atoms file (JSON Lines, or a JSON object keyed by response id).

    Raises
    ------
    InputError
        Naming the file/line (or key) of a malformed row or atom, or a duplicate id.
    """
    p = Path(path)
    result: dict[str, list[Atom]] = {}
    if p.suffix.lower() == ".json":
        import json

        if not p.exists():
            raise InputError(f"{p}: file not found")
        try:
            data = json.loads(p.read_bytes().decode("utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not UTF-8 text (invalid byte at offset {exc.start})") from None
        except (RecursionError, ValueError) as exc:
            raise InputError(f"{p}: malformed JSON ({exc})") from None
        if not isinstance(data, dict):
            raise InputError(f"{p}: expected an object mapping response_id to a list of atoms")
        data = _scrubbed(data, str(p))
        for response_id, atoms in data.items():
            _, parsed = atoms_from_record(
                {"response_id": response_id, "atoms": atoms}, f"{p}[{response_id!r}]"
            )
            result[response_id] = parsed
        return result
    for line, record in _numbered(iter_jsonl(p), p):
        response_id, atoms = atoms_from_record(_scrubbed(record, f"{p}:{line}"), f"{p}:{line}")
        if response_id in result:
            raise InputError(f"{p}:{line}: duplicate response_id {response_id!r}")
        result[response_id] = atoms
    return result


def write_atoms(
    path: str | os.PathLike[str],
    responses: Sequence[Response],
    atoms: Sequence[Sequence[Atom]],
    from_brief: Sequence[Sequence[bool]] | None = None,
) -> int:
    """Write per-response atoms in the pre-extracted format (with task/model context).

    ``from_brief`` (parallel to ``atoms``) adds ``"from_brief": true`` to atoms that
    restate the brief (SPEC §4.9); readers ignore the flag and recompute it.
    """
    if len(responses) != len(atoms):
        raise ValueError("responses and atoms must have the same length")
    flags = from_brief if from_brief is not None else [[False] * len(a) for a in atoms]

    def atom_dicts(found: Sequence[Atom], marks: Sequence[bool]) -> list[dict[str, Any]]:
        return [{**a.to_dict(), "from_brief": True} if mark else a.to_dict()
                for a, mark in zip(found, marks, strict=True)]

    rows = (
        {
            "response_id": r.response_id,
            "task_id": r.task_id,
            "model": r.model,
            "sample": r.sample,
            "core_idea": r.core_idea,
            "atoms": atom_dicts(found, marks),
        }
        for r, found, marks in zip(responses, atoms, flags, strict=True)
    )
    return write_jsonl(path, rows)
