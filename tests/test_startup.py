"""Start-up cost: `creagraph --help` imports no numerical library, and a scoring run whose
vectors are all cached never imports torch or sentence-transformers (issue 19, item 6)."""

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "scipy", "torch", "sentence_transformers", "igraph", "pandas", "pyarrow")


def _run(code: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env(tmp_path: Path) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "CREAGRAPH_CACHE_DIR": str(tmp_path / "cache"),
        "CREAGRAPH_PROGRESS": "0",
    }


def test_help_imports_no_numerical_library(tmp_path):
    code = (
        "import io, contextlib, json, sys\n"
        "from creagraph.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    rc = main(['--help'])\n"
        "print(json.dumps({'rc': rc, 'help': out.getvalue(),\n"
        f"    'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))\n"
    )
    got = _run(code, _env(tmp_path))
    assert got["rc"] == 0
    assert "score" in got["help"] and "tig" in got["help"]
    assert got["heavy"] == []


def test_cached_scoring_run_does_not_load_the_model(shared_dir, tmp_path):
    samples = sorted((shared_dir / "external/create-leaderboard/sample_outputs").glob("*.jsonl"))
    rows = samples[0].read_text().splitlines()[:2]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(rows) + "\n")
    env = _env(tmp_path)

    def score(out: str) -> dict:
        code = (
            "import json, sys\n"
            "from creagraph.cli import main\n"
            f"rc = main(['score', {str(answers)!r}, '--judge', 'stored', '--model', 'm',\n"
            f"    '--out', {out!r}])\n"
            "print(json.dumps({'rc': rc, 'st': 'sentence_transformers' in sys.modules,\n"
            "    'torch': 'torch' in sys.modules}))\n"
        )
        return _run(code, env)

    cold = score(str(tmp_path / "cold"))
    assert cold == {"rc": 0, "st": True, "torch": True}  # vectors computed: model loaded
    warm = score(str(tmp_path / "warm"))
    assert warm == {"rc": 0, "st": False, "torch": False}  # all cached: neither imported
    assert (tmp_path / "warm" / "queries.jsonl").read_text() == (
        tmp_path / "cold" / "queries.jsonl"
    ).read_text()
