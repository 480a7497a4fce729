"""Atoms from an LLM or given in advance (SPEC §4.1): two of the three backends of
:class:`~creagraph.tig.atoms_base.AtomExtractor` (the offline one is in
:mod:`creagraph.tig.atoms`, which re-exports every public name of this module).

* :class:`PreExtractedAtoms` — atoms already extracted (a file or a mapping by response id);
  every atom is checked to be grounded in its idea.
* :class:`OpenAIChatExtractor` — an LLM behind an OpenAI-compatible ``/chat/completions``
  endpoint (via :class:`creagraph.core.llm.ChatClient`); the reply is parsed leniently
  (:func:`parse_json_lenient`) and ungrounded atoms are dropped.

Examples
--------
>>> atoms_from_llm_reply('[{"type": "carrier", "text": "glass whale"}]', "A glass whale")
[Atom(type='carrier', text='glass whale')]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from creagraph.core.io import InputError
from creagraph.core.jsonish import loads_lenient
from creagraph.core.llm import ChatClient
from creagraph.tig.atoms_base import MAX_ATOMS, MIN_ATOMS, atom_form, is_grounded
from creagraph.tig.schema import ATOM_TYPES, TYPE_DESCRIPTIONS, Atom, Response

__all__ = [
    "PreExtractedAtoms",
    "OpenAIChatExtractor",
    "parse_json_lenient",
    "atoms_from_llm_reply",
    "build_extraction_messages",
]


# --------------------------------------------------------------------------- pre-extracted


class PreExtractedAtoms:
    """Atoms given in advance, looked up by response id.

    Parameters
    ----------
    atoms : mapping response_id → list of Atom, or a path to an atoms file
        (see :func:`creagraph.tig.io.read_atoms`).
    require_grounded : bool
        Raise when an atom's words do not all occur in its Core Idea (default True).
    missing : {"error", "empty"}
        What to do for a response absent from ``atoms``.

    Examples
    --------
    >>> r = Response("t", "b", "m", 0, "A glass whale swallowing the moon.")
    >>> ex = PreExtractedAtoms({r.response_id: [Atom("carrier", "glass whale")]})
    >>> ex.extract([r])[0][0].text
    'glass whale'
    """

    name = "json"

    def __init__(
        self,
        atoms: Mapping[str, Sequence[Atom]] | str | os.PathLike[str],
        *,
        require_grounded: bool = True,
        missing: str = "error",
    ):
        if isinstance(atoms, str | os.PathLike):
            from creagraph.tig.io import read_atoms

            self.source = str(atoms)
            atoms = read_atoms(atoms)
        else:
            self.source = "<mapping>"
        if missing not in ("error", "empty"):
            raise ValueError("missing must be 'error' or 'empty'")
        self.atoms = {key: list(value) for key, value in atoms.items()}
        self.require_grounded = require_grounded
        self.missing = missing

    def extract(self, responses: Sequence[Response]) -> list[list[Atom]]:
        result: list[list[Atom]] = []
        for response in responses:
            found = self.atoms.get(response.response_id)
            if found is None:
                if self.missing == "error":
                    raise InputError(
                        f"{self.source}: no atoms for response {response.response_id!r}"
                    )
                found = []
            if self.require_grounded:
                for atom in found:
                    if not is_grounded(atom.text, response.core_idea):
                        raise InputError(
                            f"{self.source}: atom {atom.text!r} of response "
                            f"{response.response_id!r} does not occur in its core_idea"
                        )
            unique: dict[tuple[str, str], Atom] = {}
            for atom in found:
                unique.setdefault((atom.type, atom_form(atom.text)), atom)
            result.append(list(unique.values()))
        return result


# --------------------------------------------------------------------------- LLM backend

def parse_json_lenient(reply: str) -> Any:
    """Parse JSON from an LLM reply with the package's one lenient reader
    (:func:`creagraph.core.jsonish.loads_lenient`): ``<think>…</think>``, fences, prose
    around the JSON, comments, trailing commas, typographic quotes, truncation.

    Raises
    ------
    ValueError
        When no JSON value can be recovered (message quotes the start of the reply).

    Examples
    --------
    >>> parse_json_lenient('Sure!\\n```json\\n{"atoms": [{"type": "motif", "text": "x"},]}\\n```')
    {'atoms': [{'type': 'motif', 'text': 'x'}]}
    """
    return loads_lenient(reply)


def atoms_from_llm_reply(reply: str, idea: str) -> list[Atom]:
    """Atoms from an LLM reply: lenient JSON, valid types only, grounded in ``idea``,
    unique by (type, form), at most seven (in the order given).

    Accepts ``{"atoms": [...]}``, a bare list, or ``{type: [texts]}``.

    Examples
    --------
    >>> atoms_from_llm_reply('{"atoms":[{"type":"carrier","text":"kite"},'
    ...                      '{"type":"motif","text":"dragon"}]}', "A kite of letters")
    [Atom(type='carrier', text='kite')]
    """
    data = parse_json_lenient(reply)
    items: list[tuple[Any, Any]] = []
    if isinstance(data, dict) and isinstance(data.get("atoms"), list):
        data = data["atoms"]
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict):
                items.append((item.get("type"), item.get("text")))
    elif isinstance(data, dict):
        for kind, texts in data.items():
            for text in texts if isinstance(texts, list) else [texts]:
                items.append((kind, text))
    atoms: dict[tuple[str, str], Atom] = {}
    for kind, text in items:
        if not isinstance(kind, str) or not isinstance(text, str):
            continue
        kind = kind.strip().casefold()
        text = text.strip()
        if kind in ATOM_TYPES and text and is_grounded(text, idea):
            atoms.setdefault((kind, atom_form(text)), Atom(kind, text))
    return list(atoms.values())[:MAX_ATOMS]


def build_extraction_messages(response: Response) -> list[dict[str, str]]:
    """The chat messages asking an LLM for the typed atoms of one Core Idea."""
    types = "\n".join(f"- {kind}: {TYPE_DESCRIPTIONS[kind]}" for kind in ATOM_TYPES)
    system = (
        "You extract typed idea atoms from a short visual concept. Atom types:\n"
        f"{types}\n"
        f"Return {MIN_ATOMS} to {MAX_ATOMS} atoms. Copy each atom's text verbatim from the "
        "Core Idea (a short phrase, no paraphrase, no invented words). Do not extract "
        "lighting, colour, texture or composition unless central to the idea. Reply with "
        'JSON only: {"atoms": [{"type": "<type>", "text": "<phrase>"}]}'
    )
    user = f"Brief: {response.brief}\nCore Idea: {response.core_idea}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class OpenAIChatExtractor:
    """Atoms from an LLM behind an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    base_url, model, api_key : str, optional
        Endpoint (e.g. ``http://localhost:8000/v1``), model name and key. Defaults from
        ``CREAGRAPH_LLM_BASE_URL`` / ``OPENAI_BASE_URL``, ``CREAGRAPH_LLM_MODEL`` and
        ``CREAGRAPH_LLM_API_KEY`` / ``OPENAI_API_KEY``.
    max_retries : int
        Retries with exponential backoff on HTTP 429/5xx and connection errors.
    timeout : float
        Seconds per request.

    Raises
    ------
    ValueError
        At construction, when no endpoint or model is configured.
    """

    name = "llm"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        max_retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 1.0,
    ):
        # one rule for every LLM option (creagraph.core.llm.llm_settings)
        self.client = ChatClient.from_env(
            base_url, model, api_key, timeout=timeout, retries=max_retries, backoff=backoff
        )
        self.base_url = self.client.base_url
        self.model = self.client.model
        self.api_key = self.client.api_key

    def complete(self, messages: list[dict[str, str]]) -> str:
        """Send one chat request; return the first choice's message content."""
        return self.client.chat(messages, max_tokens=400)

    def extract(self, responses: Sequence[Response]) -> list[list[Atom]]:
        result: list[list[Atom]] = []
        for response in responses:
            reply = self.complete(build_extraction_messages(response))
            try:
                result.append(atoms_from_llm_reply(reply, response.core_idea))
            except ValueError:
                result.append([])
        return result
