from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.shareddata import shared_file


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    """No progress bars in the judgments tests (the CLI shows them by default)."""
    monkeypatch.setenv("CREAGRAPH_PROGRESS", "0")


@pytest.fixture(scope="session")
def stats_dir(shared_dir: Path) -> Path:
    """The published reference vectors (fails, never skips, when ../shared lacks them)."""
    return shared_file(shared_dir, "external", "stats-testvectors")


@pytest.fixture(scope="session")
def transcribed(stats_dir: Path) -> dict:
    return json.loads((stats_dir / "transcribed_reference_values.json").read_text())


@pytest.fixture(scope="session")
def evalica_case(stats_dir: Path):
    """``evalica_case(name)`` -> (rows of name.csv, {algorithm: {item: score}})."""

    def load(name: str) -> tuple[list[dict[str, str]], dict[str, dict[str, float]]]:
        with (stats_dir / "evalica" / f"{name}.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        golden: dict[str, dict[str, float]] = {}
        with (stats_dir / "evalica" / f"{name}-golden.csv").open(newline="") as handle:
            for row in csv.DictReader(handle):
                golden.setdefault(row["algorithm"], {})[row["item"]] = float(row["score"])
        return rows, golden

    return load
