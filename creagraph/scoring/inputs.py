"""Reading model answers to CREATE queries (JSONL, JSON, CSV or Parquet rows).

Each row needs ``query``, ``entity_a``, ``entity_b``, ``rel_b`` and an answer in
``path_prediction`` (raw text, or a list whose first element is the raw text, as in the
published files; ``raw_path_prediction`` is accepted too). The model name comes from the
``--model`` flag, else a ``model``/``model_name`` column, else a published sample file
name (``<Model>_model_name_<id>….jsonl`` → ``<Model>``). All other fields are kept in
``extra`` (the ``stored`` judge reads its scores from there).

A query is identified by its :func:`query_key`: ``query_id`` when the row has one, else
its ``index``, else its normalised query text — never its row number, so two models'
files in different orders still pair each answer with the same query (scoring,
distinctiveness and the report all use this key). ``AnswerRow.index`` falls back to the
row number for display only.

A lone surrogate escape in any text (``"\\ud800"``: valid JSON, but not text that can be
written as UTF-8) is replaced by U+FFFD, and the row's query record says so in ``issues``;
the run goes on.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creagraph.core.extras import require
from creagraph.core.io import InputError, iter_records
from creagraph.core.text import normalize_loose, scrub_surrogates
from creagraph.scoring.parse import ParseResult, parse_answer

__all__ = [
    "AnswerRow",
    "read_answers",
    "iter_answers",
    "AnswerFiles",
    "count_answers",
    "answer_rows",
    "query_key",
    "record_query_key",
    "REQUIRED_FIELDS",
]

REQUIRED_FIELDS = ("query", "entity_a", "entity_b", "rel_b")
_ANSWER_FIELDS = ("path_prediction", "raw_path_prediction", "answer", "response")
_MODEL_FIELDS = ("model", "model_name", "eval_model_name")
_INTEGER = re.compile(r"-?\d{1,18}")


@dataclass
class AnswerRow:
    """One model's answer to one query."""

    source: str
    line: int
    index: Any
    model: str
    query: str
    entity_a: str
    entity_b: str
    rel_b: str
    answer: Any
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    query_key: str = ""
    #: What was wrong with the row but repaired (recorded in its query record).
    issues: list[str] = field(default_factory=list, repr=False)

    #: The answer as parsed by :meth:`parsed` (kept with the answer it was parsed from).
    _parsed: tuple[Any, ParseResult] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not self.query_key:
            self.query_key = query_key(self.extra or {"query": self.query, "index": self.index})

    def parsed(self) -> ParseResult:
        """The answer's paths (:func:`creagraph.scoring.parse.parse_answer`), parsed once
        per row: a run's preparation (:func:`creagraph.scoring.prepare.prepare_run`) and
        its scoring share the result (issue 31). A replaced ``answer`` is parsed anew."""
        if self._parsed is None or self._parsed[0] is not self.answer:
            self._parsed = (self.answer, parse_answer(self.answer))
        return self._parsed[1]

    @property
    def key(self) -> tuple[str, str]:
        """``(model, query_key)``: what makes a row unique."""
        return (self.model, self.query_key)


def query_key(record: dict[str, Any]) -> str:
    """The key that identifies a query: ``id:<query_id>``, else ``index:<index>``, else
    ``text:<normalised query text>`` (case, accents, punctuation and spacing folded).

    Examples
    --------
    >>> query_key({"query_id": "q-7", "index": 3, "query": "Q?"})
    'id:q-7'
    >>> query_key({"index": 3, "query": "Q?"})
    'index:3'
    >>> query_key({"query": "  How are A and B  connected?"})
    'text:how are a and b connected'
    """
    qid = record.get("query_id")
    if qid is not None and str(qid).strip():
        return f"id:{str(qid).strip()}"
    index = record.get("index")
    if index is not None and str(index).strip():
        return f"index:{str(index).strip()}"
    text = record.get("query")
    if isinstance(text, str) and text.strip():
        return f"text:{normalize_loose(text)}"
    raise ValueError("a query needs a query_id, an index or its text to be identified")


def record_query_key(record: dict[str, Any]) -> str:
    """The query key of a scored record (``paths.jsonl`` / ``queries.jsonl``): its
    ``query_key`` field, or ``index:<index>`` for output written before that field."""
    key = record.get("query_key")
    if isinstance(key, str) and key:
        return key
    return f"index:{record.get('index')}"


def _model_from_filename(path: Path) -> str | None:
    match = re.match(r"(.+?)_model_name_", path.name)
    return match.group(1) if match else None


def read_answers(
    paths: Sequence[str | os.PathLike[str]], model: str | None = None
) -> list[AnswerRow]:
    """Read answer rows from one or more files; errors name the file, row and field.

    All rows in a list; :func:`iter_answers` yields the same rows lazily.
    """
    return list(iter_answers(paths, model))


def count_answers(paths: Sequence[str | os.PathLike[str]]) -> int | None:
    """Number of rows in the input files, counted cheaply (non-empty lines of JSON Lines,
    Parquet metadata), or ``None`` when a file would have to be parsed to know (CSV, JSON).

    Used as the progress bar's total; nothing is validated. Non-regular files (a FIFO,
    ``/dev/stdin``) are never read here: they can be read only once.
    """
    total = 0
    for raw_path in paths:
        path = Path(raw_path)
        suffix = path.suffix.lower()
        try:
            regular = stat.S_ISREG(path.stat().st_mode)
        except OSError:
            return None
        if not regular:  # a FIFO or pipe can be read only once: by the scoring itself
            return None
        if suffix in {".jsonl", ".ndjson"}:
            with path.open("rb") as handle:
                total += sum(1 for line in handle if line.strip())
        elif suffix == ".parquet":
            pq = require("pyarrow.parquet", "parquet", "needed to read .parquet files")

            try:
                total += pq.ParquetFile(path).metadata.num_rows
            except Exception:  # counted only for the progress bar
                return None
        else:
            return None
    return total


def _json_cell(value: Any) -> Any:
    """A table cell holding a JSON list or object (how creagraph's CSV writer, and its
    Parquet writer for mixed nested values, store them), decoded; anything else as is."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if (text[:1], text[-1:]) not in (("[", "]"), ("{", "}")):
        return value
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        return value
    return decoded if isinstance(decoded, list | dict) else value


def _from_table(record: dict[str, Any], answer_field: str) -> dict[str, Any]:
    """Undo the flattening of a CSV/Parquet row: nested values come back as lists/dicts,
    an integer ``index`` as an integer. The answer is decoded only in the published
    wrapper form (a list whose first item is the answer text): raw answer text that is
    itself JSON stays text."""
    out = dict(record)
    for name, value in record.items():
        if name in REQUIRED_FIELDS:
            continue
        decoded = _json_cell(value)
        if name == answer_field:
            wrapped = isinstance(decoded, list) and decoded and isinstance(decoded[0], str)
            decoded = decoded if wrapped else value
        out[name] = decoded
    index = out.get("index")
    if isinstance(index, str) and _INTEGER.fullmatch(index.strip()):
        out["index"] = int(index)
    return out


def iter_answers(
    paths: Iterable[str | os.PathLike[str]], model: str | None = None
) -> Iterator[AnswerRow]:
    """Yield answer rows from one or more files, one at a time (bounded memory).

    Same rows, order and errors as :func:`read_answers`, but an error in a later row is
    raised only when that row is reached.

    Examples
    --------
    >>> rows = iter_answers(["answers.jsonl"], model="my-model")   # doctest: +SKIP
    >>> next(rows).key                                               # doctest: +SKIP
    ('my-model', 'index:0')
    """
    for raw_path in paths:
        path = Path(raw_path)
        yield from answer_rows(iter_records(path), model, source=str(path))


#: Inputs up to this many bytes in all are read once per run and their rows kept for the
#: second pass (:class:`AnswerFiles`); larger ones are streamed twice.
KEEP_BYTES = 32 * 2**20


class AnswerFiles:
    """The answer rows of input files, for a run that goes over them twice: a preparation
    pass (:meth:`read_keeping`), then scoring (iteration).

    When the files are regular and total at most ``keep_bytes``, the preparation pass keeps
    the rows it reads (with their parsed answers, :meth:`AnswerRow.parsed`) and the
    scoring pass replays them: each file is read, decoded and parsed once (issue 31).
    Otherwise — large inputs, a FIFO or pipe — every pass streams the files as
    :func:`iter_answers` does (bounded memory). The rows, their order and their errors are
    the same either way; a pass that stops early or fails keeps nothing.

    Parameters
    ----------
    paths : sequence of path
        The answer files, in order.
    model : str, optional
        The model name for every row (else read from each row or file name).
    keep_bytes : int
        The largest total input size whose rows are kept.
    """

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        model: str | None = None,
        *,
        keep_bytes: int = KEEP_BYTES,
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self.model = model
        self.keep_bytes = keep_bytes
        self._kept: list[AnswerRow] | None = None

    def _small(self) -> bool:
        total = 0
        for path in self.paths:
            try:
                info = path.stat()
            except OSError:
                return False  # read by iter_answers, which names the file
            if not stat.S_ISREG(info.st_mode):
                return False
            total += info.st_size
        return total <= self.keep_bytes

    def read_keeping(self) -> Iterator[AnswerRow]:
        """The rows, kept for the next iteration when the inputs are small (see above)."""
        if self._kept is not None:
            yield from self._kept
            return
        if not self._small():
            yield from iter_answers(self.paths, self.model)
            return
        kept: list[AnswerRow] = []
        for row in iter_answers(self.paths, self.model):
            kept.append(row)
            yield row
        self._kept = kept  # read to the end without an error

    def __iter__(self) -> Iterator[AnswerRow]:
        """The rows: replayed when :meth:`read_keeping` kept them, else read."""
        if self._kept is not None:
            return iter(self._kept)
        return iter_answers(self.paths, self.model)

    @property
    def kept(self) -> bool:
        """Whether the rows are held in memory for the next pass."""
        return self._kept is not None


def answer_rows(
    records: Iterable[dict[str, Any]], model: str | None = None, *, source: str = "<answers>"
) -> Iterator[AnswerRow]:
    """Answer rows from records already in memory (dicts with the fields of a file row);
    errors name ``source`` and the record's number. A ``source`` ending in ``.csv`` or
    ``.parquet`` has its nested values decoded (as creagraph's own writers store them)."""
    path = Path(source)
    tabular = path.suffix.lower() in (".csv", ".parquet")
    for number, record in enumerate(records, start=1):
        where = f"{source}: row {number}"
        if not isinstance(record, dict):
            raise InputError(f"{where}: not an object")
        record, issues = scrub_surrogates(record)  # else unwritable as UTF-8
        for required in REQUIRED_FIELDS:
            value = record.get(required)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{where}: field {required!r} is missing or empty")
        answer_field = next((f for f in _ANSWER_FIELDS if f in record), None)
        if answer_field is None:
            raise InputError(
                f"{where}: no answer field (expected one of {', '.join(_ANSWER_FIELDS)})"
            )
        if tabular:
            record = _from_table(record, answer_field)
        name = (
            model
            or next((str(record[f]) for f in _MODEL_FIELDS if record.get(f)), None)
            or _model_from_filename(path)
        )
        # "gpt-4o" and "gpt-4o " are one model, not two leaderboard rows
        name = " ".join(name.split()) if name else name
        if not name:
            raise InputError(f"{where}: no model name (give a model name or a 'model' column)")
        index = record.get("index")
        if isinstance(index, bool | list | dict) or (
            isinstance(index, float) and not math.isfinite(index)
        ):
            raise InputError(
                f"{where}: field 'index' must be a number or text naming the query, "
                f"not {json.dumps(index)}"
            )
        yield AnswerRow(
            source=source,
            line=number,
            index=index if index is not None else number - 1,
            model=name,
            query=record["query"],
            entity_a=record["entity_a"],
            entity_b=record["entity_b"],
            rel_b=record["rel_b"],
            answer=record[answer_field],
            extra=record,
            query_key=query_key(record),
            issues=issues,
        )
