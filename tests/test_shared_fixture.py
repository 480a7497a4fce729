"""The golden tests never pass by not running: without ../shared they fail, naming the
folder (the ``shared_dir`` fixture of tests/conftest.py), instead of being skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_missing_shared_folder_fails_the_golden_tests(tmp_path):
    missing = tmp_path / "no-shared"
    env = {**os.environ, "CREAGRAPH_SHARED_DIR": str(missing), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "llmfao_adapter",
         "tests/judgments/test_bradley_terry.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0, done.stdout
    assert f"the shared data folder is missing: {missing}" in done.stdout
    assert "skipped" not in done.stdout.splitlines()[-1]
