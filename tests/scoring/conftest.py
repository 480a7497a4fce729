import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def sample_files(shared_dir) -> list[Path]:
    files = sorted(
        (shared_dir / "external" / "create-leaderboard" / "sample_outputs").glob("*.jsonl")
    )
    assert len(files) == 4
    return files


@pytest.fixture(scope="session")
def sample_rows(sample_files):
    return [(f, json.loads(line)) for f in sample_files for line in f.open()]
