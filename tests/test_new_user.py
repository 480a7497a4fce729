"""What a new user ran into (issue 30, item 9): commands check their extras and inputs
before any work is done or folder made, and the shared folder is found one documented way."""

from __future__ import annotations

import json

from creagraph.cli import main
from tests.core.test_extras import _cli
from tests.shareddata import shared_file


def test_demo_without_the_report_extra_stops_before_any_work(tmp_path):
    out = tmp_path / "demo-out"
    done = _cli(tmp_path, "demo", "--out", str(out), "--store", str(tmp_path / "store"),
                blocked=("matplotlib",))
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        "error: matplotlib is not installed (needed by the demo's report): install the report "
        "extra, pip install 'creagraph[report]'"
    )
    assert done.stdout == ""  # nothing imported, scored or printed first
    assert not out.exists() and not (tmp_path / "store").exists()


def test_demo_with_a_wrong_shared_folder_names_it_before_any_work(capsys, tmp_path):
    out = tmp_path / "demo-out"
    empty = tmp_path / "not-shared"
    empty.mkdir()
    code = main(["demo", "--shared-dir", str(empty), "--out", str(out),
                 "--store", str(tmp_path / "store")])
    err = capsys.readouterr()
    assert code == 2 and err.out == ""
    slice_path = empty / "data" / "wikidata-slice" / "slice.nt.gz"
    assert err.err == f"error: {slice_path}: Wikidata slice not found (pass --slice FILE)\n"
    assert not out.exists() and not (tmp_path / "store").exists()
    code = main(["demo", "--shared-dir", str(tmp_path / "nowhere"), "--out", str(out)])
    assert code == 2 and "shared data folder not found (pass --shared-dir" in (
        capsys.readouterr().err
    )
    assert not out.exists()


def test_demo_checks_every_input_of_the_shared_folder(capsys, tmp_path, shared_dir):
    from creagraph.demo import check_demo_inputs

    found = check_demo_inputs(shared_dir)
    assert found.shared == shared_dir and found.slice.is_file() and len(found.samples) >= 4
    # a folder holding only the slice: the sample outputs are named as missing
    partial = tmp_path / "partial"
    (partial / "data" / "wikidata-slice").mkdir(parents=True)
    (partial / "data" / "wikidata-slice" / "slice.nt.gz").symlink_to(found.slice)
    code = main(["demo", "--shared-dir", str(partial), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "no CREATE sample outputs (*.jsonl) to score" in err
    assert not (tmp_path / "o").exists()


def test_judge_bt_parquet_without_pyarrow_fails_before_printing(tmp_path, shared_dir):
    data = shared_file(shared_dir, "external", "stats-testvectors", "evalica", "llmfao.csv")
    out = tmp_path / "board.parquet"
    done = _cli(tmp_path, "judge", "bt", str(data), "--out", str(out), blocked=("pyarrow",))
    assert done.returncode == 2
    assert done.stdout == ""  # the table is not printed first
    assert done.stderr.strip().splitlines()[-1] == (
        "error: pyarrow is not installed (needed to write .parquet files): install the parquet "
        "extra, pip install 'creagraph[parquet]'"
    )
    assert not out.exists()
    # with pyarrow the same command writes the table
    done = _cli(tmp_path, "judge", "bt", str(data), "--out", str(out), "--json", blocked=())
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.stat().st_size > 0 and json.loads(done.stdout.splitlines()[0])
