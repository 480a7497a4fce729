"""The walk-through notebooks in notebooks/ run top to bottom against the current API.

Each notebook is executed with nbclient in a fresh ipykernel started from this
interpreter (the project's virtualenv), with ``notebooks/`` as the working directory and a
per-cell timeout; a failing cell fails the test with that cell's source and traceback.
The embedded store built by the ``store_dir`` fixture is shared with the notebooks through
``CREAGRAPH_STORE``, so the Wikidata slice is imported once per session, not per notebook.
The committed outputs are not compared (they are what ``notebooks/execute.py`` wrote);
the committed files are checked to hold no error outputs and only outputs of executed
cells.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

NOTEBOOK_DIR = Path(__file__).parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 420


def _kernel_manager(tmp_path: Path):
    """A kernel manager whose kernel is ipykernel under ``sys.executable`` (never a
    ``python3`` kernelspec that happens to be installed elsewhere on the machine)."""
    import json

    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec_dir = tmp_path / "kernels" / "creagraph-venv"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "creagraph (test venv)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")], ensure_native_kernel=False)
    return KernelManager(kernel_name="creagraph-venv", kernel_spec_manager=specs)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, store_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_STORE", str(store_dir))
    monkeypatch.setenv("CREAGRAPH_PROGRESS", "0")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        km=_kernel_manager(tmp_path),
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:
        message = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the kernel's traceback colours
        pytest.fail(f"{path.name}: a cell failed\n{message}", pytrace=False)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cells"
    assert all(c.get("execution_count") for c in code), f"{path.name}: a cell did not run"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_outputs_are_clean(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", (
                f"{path.name}: cell {number} was committed with an error output"
            )
            assert output.get("name") != "stderr", (
                f"{path.name}: cell {number} was committed with stderr output"
            )
        if cell.get("outputs"):
            assert cell.get("execution_count"), (
                f"{path.name}: cell {number} has outputs but was never executed"
            )


def test_there_are_walkthroughs():
    names = {p.name for p in NOTEBOOKS}
    for job in ("knowledge_graph", "query_generation", "create_scoring", "tig", "judgments"):
        assert any(job in n for n in names), f"no notebook for {job} in {sorted(names)}"
