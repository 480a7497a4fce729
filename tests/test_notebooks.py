"""The notebooks in notebooks/ run top to bottom against the current API."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, store_dir, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_STORE", str(store_dir))
    cells = json.loads(path.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    namespace: dict = {}
    exec(compile(code, str(path), "exec"), namespace)
    assert namespace


def test_there_is_a_notebook():
    assert NOTEBOOKS
