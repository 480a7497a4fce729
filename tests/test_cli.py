"""Issue 12, item 14: every user-facing failure of `creagraph …` is one line `error: …`
naming the file, line, field or endpoint, with exit status 2; `--debug` (or
CREAGRAPH_DEBUG=1) also shows the traceback. Real failures only: a loopback server answering
403, a real read-only and a real full file system (tmpfs in a private mount namespace), a
corrupt cache file, ids too large for 64 bits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from creagraph.cli import describe_error
from tests.clirun import run
from tests.faultserver import fault_server

ROOT = Path(__file__).resolve().parents[1]
WD = "http://www.wikidata.org/entity/"
TINY = (
    f"<{WD}Q1> <http://www.wikidata.org/prop/direct/P31> <{WD}Q5> .\n"
    f'<{WD}Q1> <http://www.w3.org/2000/01/rdf-schema#label> "one"@en .\n'
)
HUGE = "Q" + "9" * 25


def one_line_error(err: str) -> str:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err.strip()


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CREAGRAPH_DEBUG", raising=False)


def cli(*args, env_extra=None, cwd=None) -> subprocess.CompletedProcess:
    """The real console entry point in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "creagraph.cli", *map(str, args)],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["nosuchcommand"], "error: creagraph: No such command 'nosuchcommand'"),
        (["tig", "nosuch"], "error: creagraph tig: No such command 'nosuch'"),
        (["kg", "entity", "Q1", "--bogus"], "error: creagraph kg entity: No such option: --bogus"),
    ],
)
def test_mistyped_commands_are_one_line(args, expected):
    done = cli(*args)
    assert done.returncode == 2
    assert one_line_error(done.stderr).startswith(expected), done.stderr


def test_endpoint_403_is_one_line_naming_it(capsys):
    with fault_server("forbidden") as srv:
        code, _, err = run(capsys, "kg", "info", "--endpoint", srv.url)
    assert code == 2 and len(srv.requests) == 1  # not retried
    assert one_line_error(err) == f"error: {srv.url}: HTTP 403 Forbidden (access denied)"


def test_llm_error_is_one_line_naming_the_endpoint(capsys, store_dir, tmp_path):
    with fault_server("forbidden") as srv:
        base = srv.url.rsplit("/", 1)[0] + "/v1"
        code, _, err = run(
            capsys, "queries", "generate", "--store", store_dir, "--n", "2",
            "--out", tmp_path / "q.jsonl", "--llm-base-url", base, "--llm-model", "m",
        )  # fmt: skip
    assert code == 2
    assert one_line_error(err).startswith(f"error: {base}/chat/completions: HTTP 403"), err
    assert not (tmp_path / "q.jsonl").exists()


def test_ids_too_large_for_64_bits(capsys, store_dir, tmp_path):
    for args in (["entity", HUGE], ["neighbors", HUGE]):
        code, _, err = run(capsys, "kg", *args, "--store", store_dir)
        assert code == 2 and one_line_error(err) == f"error: unknown id: {HUGE} is not in the graph"
    code, out, _ = run(capsys, "kg", "class-size", "P31", "--object", HUGE, "--store", store_dir)
    assert code == 0 and out.strip().endswith("= 0")
    dump = tmp_path / "huge.nt"
    dump.write_text(
        TINY + f"<{WD}Q2> <http://www.wikidata.org/prop/direct/P31> <{WD}{HUGE}> .\n"
        f'<{WD}{HUGE}> <http://www.w3.org/2000/01/rdf-schema#label> "big"@en .\n'
    )
    code, out, err = run(capsys, "kg", "import", dump, "--store", tmp_path / "s")
    assert code == 0, err
    assert "statements: 1" in out and "2\tid too large (more than 18 digits)" in out


def test_paths_through_files_and_directories(capsys, store_dir, tmp_path):
    tiny = tmp_path / "tiny.nt"
    tiny.write_text(TINY)
    code, _, err = run(capsys, "kg", "import", tiny, "--store", tiny / "store")
    assert code == 2
    assert one_line_error(err) == f"error: {tiny}: not a directory, cannot hold the store " \
        f"{tiny / 'store'}"  # fmt: skip
    common = ("queries", "generate", "--store", store_dir, "--n", "2", "--out")
    code, _, err = run(capsys, *common, tiny / "q.jsonl")
    assert code == 2 and one_line_error(err).startswith(f"error: {tiny}: "), err
    code, _, err = run(capsys, *common, tmp_path)
    assert code == 2
    assert one_line_error(err) == f"error: {tmp_path}: is a directory, expected a file"


def test_corrupt_sparql_cache_named(capsys, sparql_endpoint, tmp_path):
    cache = tmp_path / "cache" / "sparql.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"this is not a database, it was overwritten by something\n" * 100)
    code, _, err = run(capsys, "kg", "info", "--endpoint", sparql_endpoint)
    assert code == 2
    line = one_line_error(err)
    assert line.startswith(f"error: {cache}: not a usable SPARQL response cache"), line
    assert "delete it" in line


def test_corrupt_embedding_cache_named(capsys, tmp_path):
    cache = tmp_path / "cache" / "embeddings.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"garbage " * 1000)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"a": [["A", "r", "B"]], "b": [["C", "s", "D"]]}) + "\n")
    code, _, err = run(capsys, "distance", pairs)
    assert code == 2
    assert one_line_error(err).startswith(f"error: {cache}: not a usable embedding cache"), err


def test_debug_shows_the_traceback(capsys, store_dir):
    for args, env in (
        (["--debug", "kg", "entity", "Kareem", "--store", store_dir], None),
        (["kg", "entity", "Kareem", "--store", store_dir, "--debug"], None),
        (["kg", "entity", "Kareem", "--store", store_dir], {"CREAGRAPH_DEBUG": "1"}),
    ):
        done = cli(*args, env_extra=env)
        assert done.returncode == 2
        assert "Traceback (most recent call last)" in done.stderr, done.stderr
        assert done.stderr.strip().splitlines()[-1] == (
            "error: not a Wikidata id: 'Kareem' (expected Q… or P…)"
        )
    done = cli("kg", "entity", "Kareem", "--store", store_dir)
    assert done.returncode == 2 and one_line_error(done.stderr)


def test_unexpected_errors_are_one_line_too():
    assert describe_error(KeyError("model")) == (
        "internal error: KeyError: 'model' (please report it; run with --debug to see the "
        "traceback)"
    )
    assert describe_error(OverflowError("int too big to convert")) == (
        "a number is too large (int too big to convert)"
    )
    assert describe_error(PermissionError(13, "Permission denied", "/x/y")) == (
        "/x/y: Permission denied (no permission)"
    )


def _sample_rows(shared_dir: Path, n: int) -> list[dict]:
    folder = shared_dir / "external" / "create-leaderboard" / "sample_outputs"
    path = sorted(folder.glob("*.jsonl"))[0]
    return [json.loads(line) for line in path.read_text().splitlines()[:n]]


def test_score_errors_name_file_record_and_row(capsys, shared_dir, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in _sample_rows(shared_dir, 2)))
    out = tmp_path / "out"
    args = ("score", answers, "--model", "m", "--judge", "stored", "--mode", "published")
    assert run(capsys, *args, "--out", out)[0] == 0
    # a record without `model` in the output folder used to end as "error: model"
    with (out / "queries.jsonl").open("a") as handle:
        handle.write(json.dumps({"index": 5, "n_paths": 0}) + "\n")
    code, _, err = run(capsys, *args, "--out", out)
    assert code == 2
    assert one_line_error(err).startswith(
        f"error: {out / 'queries.jsonl'}: record 3: field 'model' is missing"
    ), err
    # the stored judge names the row number, not the row's `index` value
    row = _sample_rows(shared_dir, 1)[0]
    row["index"] = {"a": 1}
    row.pop("raw_salience_scores_0", None)
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps(row) + "\n")
    code, _, err = run(capsys, "score", odd, "--model", "m", "--judge", "stored", "--mode",
                       "published", "--out", tmp_path / "out2")  # fmt: skip
    assert code == 2
    line = one_line_error(err)
    assert line.startswith(f"error: {odd}: row 1: ") and "{'a'" not in line, line


# -- a real read-only and a real full file system ------------------------------------------

def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


needs_mount = pytest.mark.skipif(
    not _can_mount(), reason="needs `unshare -rm` to mount a private tmpfs"
)


def _in_namespace(tmp_path: Path, mount_opts: str, script: str) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) with a fresh tmpfs mounted at $D, in a private mount namespace."""
    point = tmp_path / "mnt"
    point.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CREAGRAPH_PROGRESS": "0", "D": str(point),
           "PY": sys.executable}  # fmt: skip
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o {mount_opts} tmpfs "$D" && {script}'],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip


@needs_mount
def test_read_only_file_system(tmp_path, store_dir):
    tiny = tmp_path / "tiny.nt"
    tiny.write_text(TINY)
    done = _in_namespace(
        tmp_path,
        "ro",
        f'$PY -m creagraph.cli kg import {tiny} --store "$D/store"; echo "rc=$?"; '
        f'$PY -m creagraph.cli queries generate --store {store_dir} --n 2 --out "$D/q.jsonl"; '
        'echo "rc=$?"',
    )
    lines = done.stderr.strip().splitlines()
    assert done.stdout.split() == ["rc=2", "rc=2"], (done.stdout, done.stderr)
    assert len(lines) == 2 and "Traceback" not in done.stderr, done.stderr
    point = tmp_path / "mnt"
    assert lines[0].startswith(f"error: {point}/.store.") and "Read-only file system" in lines[0]
    assert lines[1].startswith(f"error: {point}/") and "Read-only file system" in lines[1]


@needs_mount
def test_full_disk(tmp_path, store_dir, slice_path):
    done = _in_namespace(
        tmp_path,
        "size=1m",
        f'$PY -m creagraph.cli kg import {slice_path} --store "$D/store"; echo "rc=$?"; '
        'ls -a "$D"; '
        'head -c 1048576 /dev/zero > "$D/filler" 2>/dev/null; '
        f'$PY -m creagraph.cli queries generate --store {store_dir} --n 5 --out "$D/q.jsonl"; '
        'echo "rc=$?"; ls -a "$D"',
    )
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(lines) == 2, done.stderr
    assert done.stdout.count("rc=2") == 2, done.stdout
    point = tmp_path / "mnt"
    assert lines[0].startswith(f"error: {point / 'store'}: ") and "disk" in lines[0], lines[0]
    assert lines[1] == (
        f"error: {point / 'q.jsonl'}: No space left on device (the disk is full: free some "
        "space or choose another folder)"
    ), lines[1]
    # nothing half-written is left behind: no store, no build folder, no temporary file
    listing = done.stdout.split()
    assert not any(name.startswith((".store", "store", ".q.jsonl")) for name in listing), listing


def test_python_dash_m_runs_the_command_line():
    """`python -m creagraph` is the console script: same help, same exit status on a
    mistyped command."""
    ok = subprocess.run([sys.executable, "-m", "creagraph", "--help"], capture_output=True,
                        text=True, cwd=ROOT, timeout=120)
    assert ok.returncode == 0 and "tig" in ok.stdout and "score" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "creagraph", "scroe"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error:")
