"""The report's Ekphrasis section: one leaderboard per dimension from `creagraph tig judge`
folders, their diagnostics and pilot gates, and each anchor's provenance a click away."""

from __future__ import annotations

import os

import pytest

from creagraph.core.io import InputError
from creagraph.tig.io import write_responses
from tests.clirun import run
from tests.judgeserver import scripted_server
from tests.tig.conftest import calm_population

os.environ.setdefault("CREAGRAPH_PROGRESS", "0")


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    from creagraph.cli import main

    root = tmp_path_factory.mktemp("ekphrasis")
    calm = root / "calm.jsonl"
    write_responses(calm, calm_population())
    folders = {}
    with pytest.MonkeyPatch.context() as patch, scripted_server() as (url, _):
        patch.setenv("CREAGRAPH_CACHE_DIR", str(root / "cache"))  # this module's own cache
        for dimension in ("usefulness", "expressiveness"):
            folders[dimension] = root / dimension
            assert main([str(a) for a in (
                "tig", "judge", calm, "--judge", "llm", "--dimension", dimension,
                "--llm-base-url", url, "--llm-model", "s", "--budget", 16,
                "--n-bootstrap", 20, "--out", folders[dimension])]) == 0
    folders["novelty"] = root / "novelty"
    assert main([str(a) for a in ("tig", "judge", calm, "--judge", "novelty-score",
                                  "--budget", 24, "--n-bootstrap", 20,
                                  "--out", folders["novelty"])]) == 0
    return folders


def test_three_leaderboards_diagnostics_and_anchor_provenance(judged, tmp_path):
    from creagraph.report import read_ekphrasis, write_report

    runs = read_ekphrasis([judged["novelty"], judged["usefulness"], judged["expressiveness"]])
    queries = [{"model": "m", "utility": {"0.7": u, "0.9": u}, "n_kept": 1} for u in (1., 2.)]
    page = write_report(queries, tmp_path, n_resamples=50, ekphrasis=runs)[0].read_text()
    section = page.split('data-dimension="usefulness"', 1)[1]
    # the three leaderboards, in the design's order, each ranking the six models
    assert section.index("expressiveness") < section.index('data-dimension="novelty"')
    for model in ("m1", "m2", "m3", "m4", "m5", "m6"):
        assert section.count(f'data-model="{model}"') == 3
    for gate in ("parsing", "l2mo_profile", "repair", "ties", "position"):
        assert section.count(f'data-gate="{gate}"') == 3
    assert "FAIL" in section  # the scripted judge fails the parsing and repair gates
    # every anchor the novelty comparisons used, with its cluster and reference population
    novelty = runs[0]
    assert novelty["dimension"] == "novelty" and novelty["anchors"]
    for anchor in novelty["anchors"]:
        assert f'id="anchor-novelty-{anchor["anchor_id"]}"' in page
        assert f"cluster {anchor['cluster_id']}" in page
    assert "<details>" in page and "both candidates left out" in page


def test_not_a_judge_folder_is_refused(tmp_path):
    from creagraph.report import read_ekphrasis

    with pytest.raises(InputError, match="leaderboard.csv"):
        read_ekphrasis([tmp_path])


def test_report_cli_takes_ekphrasis_folders(judged, tmp_path, capsys):
    from creagraph.core.io import write_jsonl

    write_jsonl(tmp_path / "scored" / "queries.jsonl",
                [{"model": "m", "query_key": f"q{u}", "utility": {"0.7": u, "0.9": u},
                  "n_kept": 1} for u in (1.0, 2.0)])
    code, _, err = run(capsys, "report", tmp_path / "scored", "--ekphrasis", judged["novelty"],
                       "--resamples", 50, "--out", tmp_path / "report")
    assert code == 0, err
    page = (tmp_path / "report" / "report.html").read_text()
    assert 'data-dimension="novelty"' in page
