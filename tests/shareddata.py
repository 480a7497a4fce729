"""Reading the shared data folder in tests (the ``shared_dir`` fixture of tests/conftest.py
resolves it and fails loudly when it is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest


def shared_file(shared_dir: Path, *parts: str) -> Path:
    """``shared_dir/parts…``; a missing file or folder fails the test loudly (never a skip:
    the golden tests must not pass by not running)."""
    path = shared_dir.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"shared data missing: {path}", pytrace=False)
    return path
