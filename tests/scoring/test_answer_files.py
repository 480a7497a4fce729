"""A local scoring run reads, decodes and parses each answer once (issue 31):
:class:`AnswerFiles` keeps the rows of small inputs from the preparation pass for the
scoring pass, with their parsed answers; large inputs and FIFOs are streamed each pass;
the rows, their order and their errors are those of :func:`iter_answers` either way."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from creagraph.core.io import InputError
from creagraph.scoring.inputs import AnswerFiles, iter_answers
from creagraph.scoring.parse import parse_answer
from creagraph.scoring.prepare import run_relation_phrases


def _fields(row) -> tuple:
    return (row.source, row.line, row.model, row.query_key, row.answer, row.extra)


def test_small_inputs_are_read_once_and_replayed(sample_files, tmp_path):
    files = [tmp_path / f.name for f in sample_files]
    for src, dst in zip(sample_files, files):
        dst.write_bytes(src.read_bytes())
    expected = [_fields(r) for r in iter_answers(files)]
    source = AnswerFiles(files)
    first = list(source.read_keeping())
    assert source.kept and [_fields(r) for r in first] == expected
    parsed = [r.parsed() for r in first]
    for f in files:  # the second pass does not read the files again
        f.write_text("not json\n")
    second = list(source)
    assert [_fields(r) for r in second] == expected
    assert all(a is b for a, b in zip(first, second))
    assert all(r.parsed() is p for r, p in zip(second, parsed))  # parsed once


def test_large_inputs_are_streamed_each_pass(sample_files, tmp_path):
    answers = tmp_path / sample_files[0].name
    answers.write_bytes(sample_files[0].read_bytes())
    source = AnswerFiles([answers], keep_bytes=answers.stat().st_size - 1)
    first = list(source.read_keeping())
    assert not source.kept and len(first) == 20
    answers.write_bytes(b"".join(answers.read_bytes().splitlines(keepends=True)[:3]))
    assert len(list(source)) == 3  # read again


def test_a_failing_or_stopped_pass_keeps_nothing(sample_files, tmp_path):
    lines = sample_files[0].read_bytes().splitlines(keepends=True)
    bad = tmp_path / ("bad_" + sample_files[0].name)
    record = json.loads(lines[4])
    del record["rel_b"]
    bad.write_bytes(b"".join(lines[:4]) + json.dumps(record).encode() + b"\n")
    source = AnswerFiles([bad])
    with pytest.raises(InputError, match=r"bad_.*: row 5: field 'rel_b'"):
        list(source.read_keeping())
    assert not source.kept
    with pytest.raises(InputError, match=r"bad_.*: row 5: field 'rel_b'"):
        list(source)  # the same error on the scoring pass
    good = AnswerFiles([sample_files[0]])
    rows = good.read_keeping()
    next(rows)
    rows.close()  # stopped early
    assert not good.kept and len(list(good)) == 20


def test_fifo_is_not_kept(sample_files, tmp_path):
    fifo = tmp_path / "answers.jsonl"
    os.mkfifo(fifo)
    data = sample_files[0].read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as handle:
            handle.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    source = AnswerFiles([fifo], model="m")
    assert len(list(source.read_keeping())) == 20 and not source.kept
    writer.join(timeout=10)


def test_parsed_is_parse_answer_and_follows_a_new_answer(sample_files):
    row = next(iter_answers([sample_files[1]]))
    assert row.parsed() == parse_answer(row.answer) and row.parsed() is row.parsed()
    row.answer = '<answer>{"1": [["A", "r", "B"]]}</answer>'
    assert [p.triples for p in row.parsed().paths] == [[("A", "r", "B")]]
    phrases = list(run_relation_phrases([row]))
    assert phrases == [row.rel_b, "r"]


def test_scoring_the_kept_rows_gives_the_streamed_scores(sample_files, tmp_path):
    """The stored judge's records from a kept and a streamed source are byte-identical."""
    from creagraph.core.embeddings import HashingEmbedder
    from creagraph.scoring.api import ScorerConfig, build_scorer
    from creagraph.scoring.pipeline import score_files

    config = ScorerConfig(judge="stored", mode="paper", threads=None)
    outs = []
    for keep in (0, 1 << 30):
        source = AnswerFiles(sample_files, keep_bytes=keep)
        list(source.read_keeping())
        assert source.kept == bool(keep)
        scorer = build_scorer(config, embedder=HashingEmbedder(64))
        out = tmp_path / f"out-{keep}"
        score_files(source, scorer, out)
        outs.append(out)
    for name in ("queries.jsonl", "paths.jsonl", "summary.csv"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    assert len(Path(outs[0] / "queries.jsonl").read_text().splitlines()) == 80
