"""A normal (non-editable) install works outside a checkout: the wheel carries the
``wikidata/`` data folder as package data, and ``creagraph queries generate`` runs from a
fresh virtual environment in an unrelated folder.

The fresh environment gets the wheel only (``--no-deps``); the third-party packages it
needs are made visible through a ``.pth`` line naming the shared environment's
site-packages (a path listed in a ``.pth`` file is added as is, so the editable
``creagraph`` finder installed there is *not* activated: ``creagraph`` comes from the
wheel). Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_subpackage_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ])  # fmt: skip
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "creagraph").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert {"creagraph.wikidata", "creagraph.wikidata.sparql"} <= listed


def _clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "CREAGRAPH_WIKIDATA_DIR", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env.update(extra)
    return env


def test_wheel_installs_and_generates_queries_outside_the_checkout(tmp_path, store_dir):
    # build from a copy of the sources, so the checkout gets no build/ or egg-info
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("creagraph", "wikidata", "docs"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(src)],
        check=True, env=_clean_env(), cwd=tmp_path, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("creagraph-*.whl")
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    for data in (ROOT / "wikidata").rglob("*"):
        if data.is_file():
            assert f"creagraph/wikidata/{data.relative_to(ROOT / 'wikidata')}" in names
    assert "creagraph/docs/spec.md" in names  # the specification "SPEC §" cites
    # the extras are in the wheel's metadata, and the core install requires none of them
    (metadata,) = (n for n in names if n.endswith(".dist-info/METADATA"))
    lines = zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
    extra = "Provides-Extra:"
    provided = {line.removeprefix(extra).strip() for line in lines if line.startswith(extra)}
    assert {"embed", "distributed", "report", "parquet", "all", "dev"} <= provided
    core = [line for line in lines if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert core and not any(
        heavy in line.lower()
        for line in core
        for heavy in ("torch", "sentence-transformers", "faiss", "ray", "dask", "matplotlib",
                      "pyarrow", "jinja2")
    ), core  # fmt: skip

    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "-q", str(wheel)],
        check=True, env=_clean_env(), timeout=300,
    )  # fmt: skip
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True, env=_clean_env(),
        ).stdout.strip()
    )  # fmt: skip
    shared = sysconfig.get_paths()["purelib"]  # the test environment's third-party packages
    (site / "zz_shared_packages.pth").write_text(shared + "\n")

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = _clean_env(CREAGRAPH_PROGRESS="0", CREAGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    where = subprocess.run(
        [str(python), "-c",
         "import creagraph, creagraph.core.paths as p; print(creagraph.__file__); "
         "print(p.wikidata_dir()); print(p.spec_path())"],
        check=True, capture_output=True, text=True, env=env, cwd=work,
    ).stdout.split()  # fmt: skip
    assert where[0].startswith(str(site)), where  # the installed copy, not the checkout
    assert where[1] == str(site / "creagraph" / "wikidata"), where
    assert where[2] == str(site / "creagraph" / "docs" / "spec.md"), where

    out = work / "queries.jsonl"
    done = subprocess.run(
        [str(venv / "bin" / "creagraph"), "queries", "generate", "--store", str(store_dir),
         "--out", str(out), "--n", "5", "--seed", "1"],
        capture_output=True, text=True, env=env, cwd=work, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    queries = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(queries) == 5 and all(q["query"] for q in queries)


@pytest.mark.parametrize("override", [True, False])
def test_wikidata_dir_override_and_checkout(tmp_path, monkeypatch, override):
    from creagraph.core.paths import wikidata_dir

    if override:
        monkeypatch.setenv("CREAGRAPH_WIKIDATA_DIR", str(tmp_path))
        assert wikidata_dir() == tmp_path
    else:
        monkeypatch.delenv("CREAGRAPH_WIKIDATA_DIR", raising=False)
        assert wikidata_dir() == ROOT / "wikidata"  # the checkout's folder
