"""Fixtures of the report tests: real scoring, distinctiveness and TIG outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from creagraph.core.io import read_jsonl, write_records
from tests.report.browser import start_chromium
from tests.scoring.conftest import sample_files  # noqa: F401


@pytest.fixture(scope="session")
def chrome():
    driver = start_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def scored(tmp_path_factory, sample_files, store_dir) -> dict[str, Path]:  # noqa: F811
    """The published sample outputs scored with the stored judge (all queries) and the kg
    judge (the first query of each model), and their distinctiveness."""
    from creagraph import score
    from creagraph.core.embeddings import default_embedder
    from creagraph.kg import EmbeddedKG
    from creagraph.scoring.distinct import distinctiveness
    from creagraph.scoring.inputs import read_answers

    root = tmp_path_factory.mktemp("scored")
    embedder = default_embedder()
    sample_rows = read_answers(sample_files)
    score(sample_rows, judge="stored", mode="published", embedder=embedder, out=root / "score")
    kg = EmbeddedKG(store_dir)
    first = {}
    for row in sample_rows:
        first.setdefault(row.model, row)
    score(list(first.values()), judge="kg", mode="published", kg=kg, embedder=embedder,
          out=root / "score-kg")
    paths, summary = distinctiveness(read_jsonl(root / "score" / "paths.jsonl"), embedder)
    write_records(root / "distinct" / "distinct_paths.jsonl", paths)
    write_records(root / "distinct" / "distinct_summary.csv", summary)
    return {"score": root / "score", "score-kg": root / "score-kg",
            "distinct": root / "distinct"}


@pytest.fixture(scope="session")
def tig_dir(tmp_path_factory) -> Path:
    """`creagraph tig clusters` and `tig anchors` output (written by the CLI) for two AUT
    objects, the first run of each of the eight models."""
    from creagraph.cli import main
    from creagraph.tig import load_aut_population
    from creagraph.tig.io import write_responses

    root = tmp_path_factory.mktemp("tig")
    responses = root / "responses.jsonl"
    write_responses(responses, load_aut_population(objects=["paperclip", "brick"], max_runs=1))
    assert main(["tig", "clusters", str(responses), "--out", str(root / "clusters.jsonl")]) == 0
    pair = "claude/claude-sonnet-4-20250514,gpt/gpt-5"
    out = str(root / "anchors.jsonl")
    assert main(["tig", "anchors", str(responses), "--top-k", "3", "--pair", pair,
                 "--out", out]) == 0
    return root
