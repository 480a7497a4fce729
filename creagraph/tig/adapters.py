"""Adapters turning published multi-model populations into :class:`Response` lists.

Two populations in the shared folder (``../shared/external/`` beside the repository; see
each folder's PROVENANCE.md) are read at run time, never copied:

* **NoveltyBench curated** (``novelty-bench/website/eval/<date>/curated/<org>/<model>/
  scores.jsonl``): 24 models × 10 generations for each of 100 prompts. The prompt is the
  brief, its NoveltyBench category the family, the generation index the sample. The
  generation's equivalence class (NoveltyBench's own partition, computed per prompt and
  model) is kept in ``meta["partition"]`` for agreement benchmarks.
* **MCTB Alternative Uses** (``mctb-aut/responses/AUT_1.0_all_models_clean.json``): 8 models
  × 25 runs × ~20 uses for each of four objects. Each use string is one response (one idea);
  its ``sample`` is the running index over the model's runs for that object
  (``run * 1000 + position``), so it is unique, and ``meta`` keeps ``run`` and ``position``.

Core Idea for NoveltyBench (decision)
    Generations are long free text (mean ≈ 960 characters) and often open with filler
    ("Okay, here's a short story…:"). SPEC §4 judges novelty from a one-sentence Core Idea,
    so by default ``core_idea`` is :func:`first_content_sentence` of the generation: markdown
    stripped, courtesy/introduction sentences skipped, first remaining sentence, at most
    300 characters. The whole generation goes to ``visual_description``. Pass
    ``core_idea="full"`` to use the whole text (capped at 2,000 characters) instead.

Examples
--------
>>> first_content_sentence("Okay, here's one:\\n\\n**Sirius** is the brightest star. It is far.")
'Sirius is the brightest star.'
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from creagraph.core import settings as creagraph_settings
from creagraph.core.io import InputError
from creagraph.tig.config import CoreIdea
from creagraph.tig.io import check_unique_responses
from creagraph.tig.schema import Response

__all__ = [
    "default_shared_dir",
    "content_sentences",
    "first_content_sentence",
    "is_filler_sentence",
    "noveltybench_score_files",
    "load_noveltybench_curated",
    "load_aut_population",
    "noveltybench_partitions",
]

NOVELTYBENCH_EVAL = Path("external") / "novelty-bench" / "website" / "eval"
NOVELTYBENCH_PROMPTS = Path("external") / "novelty-bench" / "repo" / "data" / "curated.jsonl"
AUT_FILE = Path("external") / "mctb-aut" / "responses" / "AUT_1.0_all_models_clean.json"

#: The Core Idea modes (a :class:`~creagraph.tig.config.CoreIdea` or its string value).
CoreIdeaMode = Literal["first_sentence", "full"] | CoreIdea


def default_shared_dir() -> Path:
    """``$CREAGRAPH_SHARED_DIR``, else the ``shared`` folder beside the repository root
    (:func:`creagraph.core.settings.shared_dir`; an installed package needs one of them)."""
    return creagraph_settings.shared_dir()


def _resolve_shared(shared_dir: str | os.PathLike[str] | None) -> Path:
    path = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    if not path.is_dir():
        raise InputError(
            f"{path}: shared data folder not found (pass --shared-dir or set "
            "CREAGRAPH_SHARED_DIR)"
        )
    return path


_MARKDOWN_INLINE = re.compile(r"(\*\*|__|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w))")
_LIST_MARKER = re.compile(
    r"^\s*(?:[-*+•]\s+|\d{1,3}[.)]\s+|(?:[IVX]{1,4}|[A-Za-z])[.)]\s+|#{1,6}\s*|>\s*)"
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])[\"”')\]]*\s+(?=[\"“'(\[]?[A-Z0-9])")
_FILLER = re.compile(
    r"^(?:okay|ok|sure|certainly|absolutely|of course|alright|all right|great question|"
    r"what a|here'?s|here is|here are|let'?s|let me|i'?d be happy|i'?m happy|happy to|"
    r"i'?d love to|i can do that)\b",
    re.IGNORECASE,
)
_RULE = re.compile(r"^[-=*_~\s]{3,}$")
#: a letter, digit or pictographic symbol (emoji answer the "pick an emoji" prompts)
_CONTENT = re.compile(
    r"[^\W_]|[\u2190-\u21FF\u2300-\u23FF\u2600-\u27BF\u2B00-\u2BFF\U0001F000-\U0001FAFF]"
)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-")


def content_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that hold a letter, digit or emoji, in order, markdown
    emphasis, list markers and rules removed (what :func:`first_content_sentence` picks
    from).

    Examples
    --------
    >>> content_sentences("**Title**\\n\\n- One idea. Two ideas!\\n---")
    ['Title', 'One idea.', 'Two ideas!']
    """
    sentences: list[str] = []
    for raw_line in text.splitlines():
        line = _LIST_MARKER.sub("", _MARKDOWN_INLINE.sub("", raw_line)).strip()
        if not line or _RULE.match(line):
            continue
        sentences.extend(s.strip() for s in _SENTENCE_SPLIT.split(line) if s.strip())
    return [s for s in sentences if _CONTENT.search(s)]


def is_filler_sentence(sentence: str) -> bool:
    """A courtesy opener ("Okay", "Sure", "Here's …", "Let's …") or an introduction ending
    in a colon: a sentence that is not the answer.

    Examples
    --------
    >>> is_filler_sentence("Sure, here you go!"), is_filler_sentence("Mango is sweet.")
    (True, False)
    """
    return bool(_FILLER.match(sentence)) or sentence.endswith(":")


def first_content_sentence(text: str, *, limit: int = 300) -> str:
    """The first sentence of ``text`` that is not filler, markdown-free, ≤ ``limit`` chars.

    Lines are split into sentences; sentences without a letter, digit or emoji are dropped;
    a sentence is skipped when it is a courtesy opener ("Okay", "Sure", "Here's …",
    "Let's …") or an introduction ending in a colon — unless an answer follows the colon
    ("Here's a prime: 17." gives "17."). When every sentence is skipped the first one is
    used. List markers (``-``, ``1.``, ``IV.``, ``b)``) and markdown emphasis are removed.
    Returns ``""`` for blank text.

    Examples
    --------
    >>> first_content_sentence("Sure!  \\n\\n- **Random fruit**: Mango  \\n- Carrot")
    'Random fruit: Mango'
    >>> first_content_sentence("George Washington! He led the army.")
    'George Washington!'
    """
    sentences = content_sentences(text)
    if not sentences:
        return ""
    for sentence in sentences:
        if is_filler_sentence(sentence):
            # "Here's a prime number between 1 and 50: 17." — the answer follows the colon
            head, colon, tail = sentence.rpartition(":")
            if colon and _CONTENT.search(tail) and _FILLER.match(head):
                return _clip(tail.strip(), limit)
            continue
        return _clip(sentence, limit)
    return _clip(sentences[0].rstrip(":"), limit)


def noveltybench_score_files(shared_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """All curated ``scores.jsonl`` files (one per model), sorted by path."""
    root = _resolve_shared(shared_dir) / NOVELTYBENCH_EVAL
    files = sorted(root.glob("*/curated/*/*/scores.jsonl"))
    if not files:
        raise InputError(f"{root}: no curated scores.jsonl files found")
    return files


def _noveltybench_categories(shared: Path) -> dict[str, str]:
    path = shared / NOVELTYBENCH_PROMPTS
    if not path.exists():
        return {}
    categories: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                categories[str(row["id"])] = str(row.get("category") or "")
    return categories


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """``("path:line", row)`` of every non-blank line of a JSONL file."""
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if line.strip():
                yield f"{path}:{lineno}", json.loads(line)


def _noveltybench_idea(text: str, core_idea: CoreIdeaMode) -> str:
    """The Core Idea of one generation (see the module docstring)."""
    if core_idea == "first_sentence":
        return first_content_sentence(text)
    return _clip(text.strip(), 2000)


def load_noveltybench_curated(
    shared_dir: str | os.PathLike[str] | None = None,
    *,
    core_idea: CoreIdeaMode = "first_sentence",
    task_ids: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
) -> list[Response]:
    """NoveltyBench curated generations as responses (24 models × 10 × 100 prompts).

    Parameters
    ----------
    shared_dir : path, optional
        The shared folder (default :func:`default_shared_dir`).
    core_idea : {"first_sentence", "full"}
        How the Core Idea is taken from a generation (see the module docstring).
    task_ids, models : iterable of str, optional
        Keep only these prompt ids (``"curated-22"``) / model names.

    Returns
    -------
    list of Response
        Sorted by (task_id, model, sample); ``meta`` holds ``partition``, ``org`` and the
        source file.

    Examples
    --------
    >>> rs = load_noveltybench_curated(task_ids=["curated-1"])   # doctest: +SKIP
    >>> len(rs), len({r.model for r in rs})                       # doctest: +SKIP
    (240, 24)
    """
    if core_idea not in ("first_sentence", "full"):
        raise ValueError(f"core_idea must be 'first_sentence' or 'full', got {core_idea!r}")
    shared = _resolve_shared(shared_dir)
    categories = _noveltybench_categories(shared)
    wanted_tasks = set(task_ids) if task_ids is not None else None
    wanted_models = set(models) if models is not None else None
    responses: list[Response] = []
    for path in noveltybench_score_files(shared):
        org = path.parent.parent.name
        for where, row in _jsonl_rows(path):
            try:
                task_id, model = str(row["id"]), str(row["model"])
                prompt, generations = row["prompt"], row["generations"]
                partition = row.get("partition") or [None] * len(generations)
            except KeyError as exc:
                raise InputError(f"{where}: missing field {exc.args[0]!r}") from exc
            if wanted_tasks is not None and task_id not in wanted_tasks:
                continue
            if wanted_models is not None and model not in wanted_models:
                continue
            for sample, text in enumerate(generations):
                text = text or ""
                responses.append(Response(
                    task_id=task_id,
                    brief=prompt,
                    model=model,
                    sample=sample,
                    core_idea=_noveltybench_idea(text, core_idea),
                    visual_description=text,
                    family=categories.get(task_id) or None,
                    meta={"source": "noveltybench-curated", "org": org,
                          "partition": partition[sample]},
                ))
    responses.sort(key=lambda r: (r.task_id, r.model, r.sample))
    check_unique_responses(responses)
    return responses


def noveltybench_partitions(responses: Iterable[Response]) -> dict[str, int]:
    """``response_id → NoveltyBench equivalence class`` (classes are per prompt and model)."""
    return {
        r.response_id: int(r.meta["partition"])
        for r in responses
        if r.meta.get("partition") is not None
    }


def load_aut_population(
    shared_dir: str | os.PathLike[str] | None = None,
    *,
    objects: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
    max_runs: int | None = None,
) -> list[Response]:
    """The MCTB Alternative Uses population: one response per use string.

    Parameters
    ----------
    shared_dir : path, optional
        The shared folder (default :func:`default_shared_dir`).
    objects : iterable of str, optional
        Keep only these objects (``brick``, ``box``, ``paperclip``, ``bottle``).
    models : iterable of str, optional
        Keep only these model ids (``"gpt/gpt-5"``).
    max_runs : int, optional
        Keep only the first runs of each model (the file has 25).

    Returns
    -------
    list of Response
        task ``"aut-<object>"``, brief ``"List alternative uses for a <object>."``,
        family ``"Alternative Uses"``.
    """
    shared = _resolve_shared(shared_dir)
    path = shared / AUT_FILE
    if not path.exists():
        raise InputError(f"{path}: AUT population file not found")
    try:
        blocks = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
    if not isinstance(blocks, list):
        raise InputError(f"{path}: expected a list of per-object blocks")
    wanted_objects = set(objects) if objects is not None else None
    wanted_models = set(models) if models is not None else None
    responses: list[Response] = []
    for index, block in enumerate(blocks):
        config = block.get("config") if isinstance(block, dict) else None
        if not isinstance(config, dict) or "object_prompt" not in config:
            raise InputError(f"{path}: block {index} has no config.object_prompt")
        obj = str(config["object_prompt"])
        if wanted_objects is not None and obj not in wanted_objects:
            continue
        for model, settings in block.items():
            if model == "config" or (wanted_models is not None and model not in wanted_models):
                continue
            if not isinstance(settings, dict):
                raise InputError(f"{path}: block {index} model {model!r}: expected an object")
            for runs in settings.values():
                for run, uses in enumerate(runs[:max_runs] if max_runs else runs):
                    for position, use in enumerate(uses):
                        if not isinstance(use, str) or not use.strip():
                            continue
                        responses.append(
                            Response(
                                task_id=f"aut-{obj}",
                                brief=f"List alternative uses for a {obj}.",
                                model=model,
                                sample=run * 1000 + position,
                                core_idea=use.strip(),
                                family="Alternative Uses",
                                meta={"source": "mctb-aut", "run": run, "position": position},
                            )
                        )
    responses.sort(key=lambda r: (r.task_id, r.model, r.sample))
    check_unique_responses(responses)
    return responses
