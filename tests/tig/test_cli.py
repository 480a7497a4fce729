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
    # no splitting to reach three atoms: a short idea may give fewer
    assert len(atoms) == 18 and all(1 <= len(a) <= 7 for a in atoms.values())
    rows = [json.loads(line) for line in (out / "atoms.jsonl").read_text().splitlines()]
    restating = [a for row in rows for a in row["atoms"] if a.get("from_brief")]
    assert restating and {a["text"] for a in restating} == {"calm"}
    canonical = [json.loads(line) for line in (out / "canonical.jsonl").read_text().splitlines()]
    assert sum(len(c["provenance"]) for c in canonical) == sum(
        len(a) for a in atoms.values()) - len(restating)
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


def test_score_command_writes_one_line_per_response(responses_file, tmp_path, capsys):
    out = tmp_path / "scores.jsonl"
    assert main(["tig", "score", str(responses_file), "--out", str(out)]) == 0
    assert "18 responses scored over 1 task(s)" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 18 and len({r["response_id"] for r in rows}) == 18
    assert all(0 <= r["novelty"] <= 1 and isinstance(r["clusters_hit"], list) for r in rows)
    assert main(["tig", "score", str(responses_file), "--out", str(out),
                 "--cliche-weight", "2"]) == 2
    assert "cliche_weight must lie in [0, 1]" in capsys.readouterr().err


def test_score_against_a_reference_file_with_per_model_summary(responses_file, tmp_path,
                                                                capsys):
    from creagraph.tig.schema import Response

    brief = calm_population()[0].brief
    user = [Response("calm", brief, "mine", i, text) for i, text in enumerate(
        ["A potted fern with green leaves to evoke calm.",
         "A snail carrying a sleeping volcano.", "A still lake at dawn seen from above."])]
    user_file = tmp_path / "mine.jsonl"
    write_responses(user_file, user)
    out, summary = tmp_path / "scores.jsonl", tmp_path / "summary.json"
    assert main(["tig", "score", str(user_file), "--reference", str(responses_file),
                 "--out", str(out), "--summary", str(summary)]) == 0
    printed = capsys.readouterr().out
    assert "3 responses scored over 1 task(s)" in printed and "mine" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["model"] for r in rows} == {"mine"}
    assert all(r["n_reference_models"] == 6 for r in rows)
    (model,) = json.loads(summary.read_text())["models"]
    assert model["model"] == "mine" and model["n_responses"] == 3
    assert model["ci_low"] <= model["novelty_mean"] <= model["ci_high"]
    # a model name shared with the reference is refused, naming the file
    assert main(["tig", "score", str(responses_file), "--reference", str(responses_file),
                 "--out", str(out)]) == 2
    assert "also in the reference population" in capsys.readouterr().err


def test_reference_tasks_not_answered_are_left_out(responses_file, tmp_path, capsys):
    """Only the answered tasks of a reference population are built and scored (no warning
    per unanswered task); an answered task the reference lacks is refused by name."""
    from creagraph.tig.io import read_responses
    from creagraph.tig.schema import Response

    population = read_responses(responses_file)
    other = [Response("joy", "Make joy visible.", r.model, r.sample, r.core_idea)
             for r in population]
    reference = tmp_path / "reference.jsonl"
    write_responses(reference, [*population, *other])
    brief = population[0].brief
    mine = tmp_path / "mine.jsonl"
    write_responses(mine, [Response("calm", brief, "mine", i, text) for i, text in enumerate(
        ["A potted fern with green leaves to evoke calm.", "A still lake at dawn."])])
    out = tmp_path / "scores.jsonl"
    assert main(["tig", "score", str(mine), "--reference", str(reference),
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2 responses scored over 1 task(s) →" in captured.out
    assert "joy" not in captured.err and "skipped" not in captured.err + captured.out
    stray = tmp_path / "stray.jsonl"
    write_responses(stray, [Response("storm", "Paint a storm.", "mine", 0, "A gull inside.")])
    assert main(["tig", "score", str(stray), "--reference", str(reference),
                 "--out", str(tmp_path / "s2.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{stray}: task(s) storm not in the reference population" in err


def test_runs_finish_and_nothing_produced_is_explained(tmp_path, capsys):
    from creagraph.tig.schema import Response

    duo = [Response("duo", "Make joy visible.", m, 0, text) for m, text in
           (("m1", "A kite made of laughter over a beach."),
            ("m2", "A dog leaping into a lake at noon."))]
    path = tmp_path / "mixed.jsonl"
    write_responses(path, calm_population() + duo)
    anchors = tmp_path / "anchors.jsonl"
    # a task with two models cannot be compared: skipped with its reason, the rest written
    assert main(["tig", "anchors", str(path), "--out", str(anchors)]) == 0
    captured = capsys.readouterr()
    assert "task 'duo' skipped: 2 model(s) answered" in captured.err
    assert "1 task(s) skipped" in captured.out
    assert {a.task_id for a in read_anchors(anchors)} == {"calm"}
    # a --pair typo is an error naming the unknown model
    assert main(["tig", "anchors", str(path), "--out", str(anchors), "--pair", "m1,m9"]) == 2
    assert "--pair names model(s) with no responses: m9" in capsys.readouterr().err
    assert main(["tig", "clusters", str(path), "--out", str(tmp_path / "c.jsonl"), "--pair",
                 "m1,mX"]) == 2
    assert "mX" in capsys.readouterr().err
    # --min-models above what a reference population can hold is an error
    assert main(["tig", "anchors", str(path), "--out", str(anchors), "--min-models",
                 "5"]) == 2
    assert "--min-models 5 exceeds" in capsys.readouterr().err
    # a pair whose models share no task: every task skipped, and said so
    only = [Response("solo", "Make joy visible.", m, 0, "A kite made of laughter.")
            for m in ("a", "b", "c")]
    write_responses(path, calm_population() + only)
    assert main(["tig", "anchors", str(path), "--out", str(anchors), "--pair", "m1,a"]) == 0
    err = capsys.readouterr().err
    assert "no requested pair has both models" in err and "no anchors written" in err
    # scoring: the single-model task is skipped with its reason, the rest written
    solo = [Response("solo", "Make joy visible.", "m1", 0, "A kite made of laughter.")]
    write_responses(path, calm_population() + solo)
    scores = tmp_path / "scores.jsonl"
    assert main(["tig", "score", str(path), "--out", str(scores)]) == 0
    captured = capsys.readouterr()
    assert "task 'solo' skipped: only one model (m1)" in captured.err
    assert len(scores.read_text().splitlines()) == 18


def test_options_show_the_library_defaults_and_choices(tmp_path, capsys):
    import typer

    from creagraph.tig.cli import app
    from creagraph.tig.config import ScoreConfig, TigConfig

    commands = typer.main.get_command(app).commands
    config, score_config = TigConfig(), ScoreConfig()
    expected = {"method": config.cluster_method, "resolution": config.resolution,
                "hierarchical": config.hierarchical, "seed": config.seed,
                "canonical_threshold": config.canonical_threshold,
                "similarity_threshold": config.similarity_threshold,
                "centrality": config.centrality}
    for name in ("build", "clusters", "anchors", "score"):
        defaults = {p.name: p.default for p in commands[name].params}
        assert {k: defaults[k] for k in expected} == expected, name
    defaults = {p.name: p.default for p in commands["score"].params}
    assert defaults["neighbour_share"] == score_config.neighbour_share
    assert defaults["cliche_weight"] == score_config.cliche_weight
    path = tmp_path / "r.jsonl"
    write_responses(path, calm_population())
    assert main(["tig", "clusters", str(path), "--out", str(tmp_path / "c.jsonl"),
                 "--method", "louvain"]) == 2
    assert "'louvain' is not one of 'auto', 'leidenalg', 'igraph', 'components'" in (
        capsys.readouterr().err)
