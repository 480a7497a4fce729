"""Issue 23: every `creagraph tig` command that writes claims its output
(creagraph.core.outdir): never an input, never a user's file, graph file names
collision-free, and a second build leaves no graph of other settings behind."""

from __future__ import annotations

import json

from creagraph.core.outdir import MARKER_NAME
from creagraph.tig.io import write_responses

from ..clirun import run
from .conftest import calm_population


def test_score_refuses_to_write_over_its_input(tmp_path, capsys):
    responses = tmp_path / "r.jsonl"
    write_responses(responses, calm_population())
    before = responses.read_bytes()
    code, _, err = run(capsys, "tig", "score", responses, "--out", responses)
    assert code == 2 and err.count("\n") == 1, err
    assert "this input is also the --out file" in err
    assert responses.read_bytes() == before


def test_file_outputs_never_replace_a_users_file_but_replace_their_own(tmp_path, capsys):
    responses = tmp_path / "r.jsonl"
    write_responses(responses, calm_population())
    mine = tmp_path / "clusters.jsonl"
    mine.write_text("my notes\n")
    code, _, err = run(capsys, "tig", "clusters", responses, "--out", mine, "--method",
                       "components")
    assert code == 2 and "was not made by creagraph" in err, err
    assert mine.read_text() == "my notes\n"
    out = tmp_path / "c.jsonl"
    for _ in range(2):  # the second run replaces the file the first one made
        code, _, err = run(capsys, "tig", "clusters", responses, "--out", out, "--method",
                           "components")
        assert code == 0, err
    record = json.loads((tmp_path / ".c.jsonl.creagraph-out.json").read_text())
    assert record["command"] == "tig clusters" and record["fingerprint"]["method"] == "components"
    out.write_text(out.read_text() + "\n")  # edited by hand since: no longer ours to replace
    code, _, err = run(capsys, "tig", "clusters", responses, "--out", out)
    assert code == 2 and "changed since" in err, err


def test_build_refuses_a_users_folder_and_input_inside_it(tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "atoms.jsonl").write_text("my atoms\n")
    responses = tmp_path / "r.jsonl"
    write_responses(responses, calm_population())
    code, _, err = run(capsys, "tig", "build", responses, "--out", folder)
    assert code == 2 and "not made by creagraph" in err, err
    assert (folder / "atoms.jsonl").read_text() == "my atoms\n"
    assert sorted(p.name for p in folder.iterdir()) == ["atoms.jsonl"]


def test_build_graph_names_are_collision_free_and_rebuilds_leave_nothing_stale(
    tmp_path, capsys
):
    population = calm_population()
    from dataclasses import replace

    slash = [replace(r, task_id="a/b", response_id="") for r in population]
    under = [replace(r, task_id="a_b", response_id="") for r in population]
    responses = tmp_path / "r.jsonl"
    write_responses(responses, slash + under)
    out = tmp_path / "built"
    code, stdout, err = run(capsys, "tig", "build", responses, "--out", out, "--graph-format",
                            "json")
    assert code == 0, err
    assert "2 graphs" in stdout
    graphs = sorted(p.name for p in (out / "graphs").iterdir())
    assert graphs == ["a%2Fb.json", "a_b.json"]
    assert {json.loads((out / "graphs" / g).read_text())["task_id"] for g in graphs} == {
        "a/b", "a_b"}
    # a second build with other settings: the first run's graphs do not stay beside the new
    # ones, and the folder records the settings that made what it holds
    only = tmp_path / "only.jsonl"
    write_responses(only, under)
    code, _, err = run(capsys, "tig", "build", only, "--out", out, "--graph-format", "graphml")
    assert code == 0, err
    assert sorted(p.name for p in (out / "graphs").iterdir()) == ["a_b.graphml"]
    marker = json.loads((out / MARKER_NAME).read_text())
    assert marker["command"] == "tig build"
    assert marker["fingerprint"]["graph_format"] == "graphml"
    assert marker["fingerprint"]["responses"]["path"] == str(only.resolve())


def test_task_ids_equal_but_for_case_are_an_error(tmp_path, capsys):
    from dataclasses import replace

    population = calm_population()
    responses = tmp_path / "r.jsonl"
    write_responses(responses, [replace(r, task_id="Calm", response_id="") for r in population]
                    + [replace(r, task_id="calm", response_id="") for r in population])
    code, _, err = run(capsys, "tig", "build", responses, "--out", tmp_path / "o")
    assert code == 2 and "'Calm' and 'calm' would be written to the same file" in err, err
