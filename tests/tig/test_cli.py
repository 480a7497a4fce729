import json

import igraph
import pytest

from creagraph.cli import main
from creagraph.tig.anchors import read_anchors
from creagraph.tig.audit import read_audit, write_audit
from creagraph.tig.io import read_atoms, write_responses
from creagraph.tig.schema import AuditRecord

from .conftest import calm_population


@pytest.fixture()
def responses_file(tmp_path):
    path = tmp_path / "responses.jsonl"
    write_responses(path, calm_population())
    return path


def test_build_writes_atoms_canonical_and_graphs(responses_file, tmp_path, capsys):
    out = tmp_path / "built"
    assert main(["tig", "build", str(responses_file), "--out", str(out),
                 "--graph-format", "both"]) == 0
    assert "18 responses" in capsys.readouterr().out
    atoms = read_atoms(out / "atoms.jsonl")
    assert len(atoms) == 18 and all(3 <= len(a) <= 7 for a in atoms.values())
    canonical = [json.loads(line) for line in (out / "canonical.jsonl").read_text().splitlines()]
    assert sum(len(c["provenance"]) for c in canonical) == sum(len(a) for a in atoms.values())
    graph = igraph.Graph.Read_GraphML(str(out / "graphs" / "calm.graphml"))
    assert graph.vcount() == len(canonical)
    assert json.loads((out / "graphs" / "calm.json").read_text())["task_id"] == "calm"
    # the written atoms feed the pre-extracted backend
    again = tmp_path / "again"
    assert main(["tig", "build", str(responses_file), "--out", str(again), "--extractor",
                 "json", "--atoms", str(out / "atoms.jsonl")]) == 0
    assert (again / "canonical.jsonl").read_text() == (out / "canonical.jsonl").read_text()


def test_clusters_anchors_and_audit(responses_file, tmp_path, capsys):
    clusters = tmp_path / "clusters.jsonl"
    assert main(["tig", "clusters", str(responses_file), "--out", str(clusters),
                 "--method", "igraph"]) == 0
    rows = [json.loads(line) for line in clusters.read_text().splitlines()]
    assert rows and all(0 <= r["cliche_score"] <= 1 and r["comparison_key"] == "" for r in rows)
    assert [r["cliche_score"] for r in rows] == sorted((r["cliche_score"] for r in rows),
                                                       reverse=True)
    assert main(["tig", "clusters", str(responses_file), "--out", str(clusters), "--pair",
                 "m1,m2"]) == 0
    rows = [json.loads(line) for line in clusters.read_text().splitlines()]
    assert {r["comparison_key"] for r in rows} == {"m1||m2"}
    assert {r["n_reference_responses"] for r in rows} == {12}
    assert all(not {"m1", "m2"} & set(r["models"]) for r in rows)

    anchors = tmp_path / "anchors.jsonl"
    assert main(["tig", "anchors", str(responses_file), "--out", str(anchors), "--top-k", "3",
                 "--concept", "calm"]) == 0
    assert "for 15 comparison(s)" in capsys.readouterr().out
    found = read_anchors(anchors)
    assert {a.comparison_key for a in found} == {
        f"m{i}||m{j}" for i in range(1, 7) for j in range(i + 1, 7)}
    assert all(a.rank <= 3 for a in found)

    audit = tmp_path / "audit.csv"
    assert main(["tig", "audit-export", str(anchors), "--out", str(audit), "--annotator",
                 "ann"]) == 0
    records = read_audit(audit)
    assert len(records) == len(found) and {r.annotator_id for r in records} == {"ann"}
    write_audit(audit, [AuditRecord(**{**records[0].to_dict(), "overall_action": "accept"})]
                + records[1:])
    capsys.readouterr()
    assert main(["tig", "audit-import", str(audit), "--out", str(tmp_path / "a.jsonl")]) == 0
    output = capsys.readouterr().out
    assert "accept\t1" in output and f"(not audited)\t{len(records) - 1}" in output
    assert read_audit(tmp_path / "a.jsonl") == read_audit(audit)

    whole = tmp_path / "whole.jsonl"
    assert main(["tig", "anchors", str(responses_file), "--out", str(whole),
                 "--whole-population"]) == 0
    assert {a.comparison_key for a in read_anchors(whole)} == {""}


def test_user_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "t"}\n')
    assert main(["tig", "build", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.jsonl:1: missing field 'brief'" in capsys.readouterr().err
    assert main(["tig", "anchors", "--out", str(tmp_path / "a.jsonl")]) == 2
    good = tmp_path / "good.jsonl"
    write_responses(good, calm_population())
    capsys.readouterr()
    assert main(["tig", "anchors", str(good), "--out", str(tmp_path / "a.jsonl"), "--pair",
                 "m1"]) == 2
    assert "--pair expects two different models as A,B" in capsys.readouterr().err
    assert main(["tig", "clusters", "--source", "noveltybench", "--tasks", "curated-999",
                 "--out", str(tmp_path / "c.jsonl")]) == 2
    assert "no responses for task(s) curated-999" in capsys.readouterr().err


def test_noveltybench_source(tmp_path):
    out = tmp_path / "nb.jsonl"
    assert main(["tig", "anchors", "--source", "noveltybench", "--tasks", "curated-3",
                 "--pair", "gemini-1.5-pro,gpt-4o-2024-11-20", "--out", str(out)]) == 0
    anchors = read_anchors(out)
    assert anchors and all(a.task_id == "curated-3" for a in anchors)
    assert all(len(a.reference_models) == 22 for a in anchors)
