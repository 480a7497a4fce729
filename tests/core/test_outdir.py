"""Output-directory safety (creagraph.core.outdir): marker, lock, fingerprint, inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from creagraph.core.io import InputError
from creagraph.core.outdir import (
    LOCK_NAME,
    MARKER_NAME,
    claim_output_dir,
    file_identity,
    fingerprint_changes,
)


def _claim(*args, **kwargs) -> None:
    with claim_output_dir(*args, **kwargs):
        pass


def test_new_dir_gets_a_marker_and_resumes_with_the_same_fingerprint(tmp_path):
    out = tmp_path / "new" / "out"
    with claim_output_dir(out, "score", ["a.jsonl"], fingerprint={"--judge": "kg"}):
        (out / "a.jsonl").write_text("1\n")
    marker = json.loads((out / MARKER_NAME).read_text())
    assert marker["format"] == 1 and marker["command"] == "score"
    assert marker["fingerprint"] == {"--judge": "kg"}
    with claim_output_dir(out, "score", ["a.jsonl"], fingerprint={"--judge": "kg"}):
        assert (out / "a.jsonl").read_text() == "1\n"  # kept for resuming


def test_changed_setting_is_refused_naming_it_and_fresh_starts_over(tmp_path):
    out = tmp_path / "out"
    with claim_output_dir(out, "score", ["a.jsonl"], fingerprint={"--judge": "kg", "x": 1}):
        (out / "a.jsonl").write_text("old\n")
    with pytest.raises(InputError) as err:
        _claim(out, "score", ["a.jsonl"], fingerprint={"--judge": "stored", "x": 1})
    message = str(err.value)
    assert '--judge: was "kg", now "stored"' in message and "--fresh" in message
    assert "x:" not in message
    assert (out / "a.jsonl").read_text() == "old\n"
    (out / "mine.txt").write_text("user file")  # not an output of the command: kept
    with claim_output_dir(
        out, "score", ["a.jsonl"], fingerprint={"--judge": "stored", "x": 1}, fresh=True
    ):
        assert not (out / "a.jsonl").exists()
    assert (out / "mine.txt").read_text() == "user file"
    assert json.loads((out / MARKER_NAME).read_text())["fingerprint"]["--judge"] == "stored"


def test_a_dir_without_results_takes_the_new_settings(tmp_path):
    out = tmp_path / "out"
    _claim(out, "score", ["a.jsonl"], fingerprint={"--model": None})  # stopped before output
    _claim(out, "score", ["a.jsonl"], fingerprint={"--model": "m"})
    assert json.loads((out / MARKER_NAME).read_text())["fingerprint"] == {"--model": "m"}


def test_foreign_non_empty_dir_is_refused_untouched(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.txt").write_text("my notes")
    with pytest.raises(InputError, match="not made by creagraph"):
        _claim(out, "score", ["README.txt"], fresh=True)
    assert sorted(os.listdir(out)) == ["README.txt"]  # not even a lock file was left
    assert (out / "README.txt").read_text() == "my notes"


def test_other_commands_dir_and_bad_marker_are_refused(tmp_path):
    out = tmp_path / "out"
    with claim_output_dir(out, "distinct", ["d.csv"]):
        pass
    with pytest.raises(InputError, match="creagraph distinct"):
        _claim(out, "report", ["r.html"])
    (out / MARKER_NAME).write_text("{not json")
    with pytest.raises(InputError, match="marker"):
        _claim(out, "distinct", ["d.csv"])
    (out / MARKER_NAME).write_text(json.dumps({"format": 99, "command": "distinct"}))
    with pytest.raises(InputError, match="newer creagraph"):
        _claim(out, "distinct", ["d.csv"])


def test_input_inside_out_under_an_output_name_is_refused(tmp_path):
    data = tmp_path / "queries.jsonl"
    data.write_text('{"a": 1}\n')
    with pytest.raises(InputError, match="output file 'queries.jsonl'"):
        _claim(tmp_path, "score", ["queries.jsonl"], inputs=[data])
    link = tmp_path / "elsewhere.jsonl"
    os.link(data, link)  # the same file under another name outside the outputs
    out = tmp_path / "o"
    out.mkdir()
    with claim_output_dir(out, "score", ["queries.jsonl"], inputs=[link]):
        pass
    os.link(data, out / "queries.jsonl")
    with pytest.raises(InputError, match="output file 'queries.jsonl'"):
        _claim(out, "score", ["queries.jsonl"], inputs=[link])
    assert data.read_text() == '{"a": 1}\n'


def test_second_claim_while_another_process_holds_the_lock(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from creagraph.core.outdir import claim_output_dir\n"
            f"with claim_output_dir({str(out)!r}, 'score', ['a']):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(InputError) as err, claim_output_dir(out, "score", ["a"]):
            pass
        assert f"pid {holder.pid} on " in str(err.value)
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 10
    while True:  # the kernel drops the lock of a killed holder
        try:
            with claim_output_dir(out, "score", ["a"]):
                break
        except InputError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert (out / LOCK_NAME).exists()


def test_file_identity_and_changes(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text("x\n")
    ident = file_identity(f)
    assert ident["size"] == 2 and len(ident["sha256"]) == 64
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert file_identity(fifo)["type"] == "non-seekable"  # identified without reading it
    f.write_text("y\n")
    (change,) = fingerprint_changes({"inputs": [ident]}, {"inputs": [file_identity(f)]})
    assert change.startswith("inputs: was [a.jsonl (")


# issue 23: single-file outputs, ids as file names, a concurrent run's temporary marker -----
def _claim_file(*args, **kwargs) -> None:
    from creagraph.core.outdir import claim_output_file

    with claim_output_file(*args, **kwargs):
        pass


def test_claim_output_file_rules(tmp_path):
    from creagraph.core.io import write_jsonl
    from creagraph.core.outdir import claim_output_file

    target = tmp_path / "sub" / "s.jsonl"
    with claim_output_file(target, "tig score", fingerprint={"k": 1}) as claimed:
        write_jsonl(claimed.path, [{"a": 1}])
        # one writer at a time: a second claim while the first holds it stops at once
        with pytest.raises(InputError, match="another `creagraph` run is writing this file"):
            _claim_file(target, "tig score")
    record = json.loads((tmp_path / "sub" / ".s.jsonl.creagraph-out.json").read_text())
    assert record["fingerprint"] == {"k": 1} and record["command"] == "tig score"
    with claim_output_file(target, "tig score", fingerprint={"k": 2}) as claimed:
        write_jsonl(claimed.path, [{"a": 2}])  # its own file, other settings: recorded
    record = json.loads((tmp_path / "sub" / ".s.jsonl.creagraph-out.json").read_text())
    assert record["fingerprint"] == {"k": 2}
    with pytest.raises(InputError, match="creagraph tig score`, not of `creagraph judge bt"):
        _claim_file(target, "judge bt")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with pytest.raises(InputError, match="this input is also the --out file"):
        _claim_file(link, "tig score", inputs=[target])
    with pytest.raises(InputError, match="not a regular file"):
        _claim_file(link, "tig score")
    failed = tmp_path / "f.jsonl"
    with pytest.raises(RuntimeError), claim_output_file(failed, "tig score"):
        raise RuntimeError("stopped")  # no record for a run that failed before writing
    assert not (tmp_path / ".f.jsonl.creagraph-out.json").exists()


def test_id_file_stems_are_one_to_one_and_case_collisions_refused():
    from urllib.parse import unquote

    from creagraph.core.outdir import id_file_stem, unique_file_stems

    ids = ["a/b", "a_b", "a%2Fb", "a b", "..", ".", "", "é", "x" * 300, "x" * 299 + "y"]
    stems = [id_file_stem(i) for i in ids]
    assert len(set(stems)) == len(ids)
    assert all("/" not in s and s not in (".", "..") and len(s.encode()) <= 200 for s in stems)
    assert [unquote(s) for s in stems[:6]] == ids[:6]
    with pytest.raises(InputError, match="'Task' and 'task' would be written to the same"):
        unique_file_stems(["Task", "task"], "task id")


def test_a_concurrent_runs_temporary_marker_is_not_named_as_foreign(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("")
    (out / f".{MARKER_NAME}.abc123.tmp").write_text("{}")  # atomic_write of another run
    with claim_output_dir(out, "score", ["a.jsonl"]):
        pass
    assert json.loads((out / MARKER_NAME).read_text())["command"] == "score"
