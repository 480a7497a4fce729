"""Execute the walk-through notebooks and save them with their outputs.

Usage (from the repository root, with the project's virtualenv)::

    .venv/bin/python notebooks/execute.py                  # every notebook
    .venv/bin/python notebooks/execute.py notebooks/03_create_scoring.ipynb

Each notebook runs top to bottom in a fresh ipykernel from this interpreter, with
``notebooks/`` as the working directory, and is written back only when every cell
succeeded, so the committed outputs always come from a real, complete execution.
Progress bars are switched off (``CREAGRAPH_PROGRESS=0``, ``HF_HUB_DISABLE_PROGRESS_BARS=1``)
to keep the outputs readable; set ``CREAGRAPH_STORE`` to reuse an existing embedded store.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
CELL_TIMEOUT_S = 600


def execute(path: Path) -> float:
    """Run ``path`` in place; returns the seconds taken. Raises on a failing cell."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(HERE)}},
        record_timing=False,
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    tmp = path.with_suffix(".ipynb.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)
    return seconds


def main(argv: list[str]) -> int:
    os.environ.setdefault("CREAGRAPH_PROGRESS", "0")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    paths = [Path(a) for a in argv] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        try:
            seconds = execute(path)
        except CellExecutionError as error:
            print(f"{path.name}: FAILED\n{error}", file=sys.stderr)
            return 1
        print(f"{path.name}: {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
