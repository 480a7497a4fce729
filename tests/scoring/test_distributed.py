"""Scoring on a local Dask cluster gives the same records as the local loop."""

import pytest

from creagraph.cli import main
from creagraph.core.io import read_jsonl


def _comparable(records):
    return sorted(records, key=lambda r: (r["model"], str(r["index"]), r.get("path_index", -1)))


def test_dask_workers_match_local_run(sample_files, tmp_path):
    args = ["score", *map(str, sample_files[:2]), "--judge", "stored"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--workers", "2", "--out", str(tmp_path / "dask")]) == 0
    for name in ("queries.jsonl", "paths.jsonl"):
        local = _comparable(read_jsonl(tmp_path / "local" / name))
        remote = _comparable(read_jsonl(tmp_path / "dask" / name))
        assert len(local) == len(remote) > 0
        for a, b in zip(local, remote):
            assert a.keys() == b.keys()
            for key in a:
                if key in ("utility", "utility_curve"):
                    assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6)
                elif key in ("mean_pairwise_distance", "mean_pairwise_raw_distance"):
                    assert (a[key] is None) == (b[key] is None)
                    if a[key] is not None:
                        assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6)
                else:
                    assert a[key] == b[key], key
    assert (tmp_path / "dask" / "summary.csv").exists()
