"""A user's judge and embedder, named ``module:attr``, work from ``creagraph.score``, the
CLI (``--judge``/``--judge-arg``/``--embedder``, and ``--config`` TOML) and the Dask and
Ray workers, which re-create them from the name (issue 30, item 4)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

import creagraph
from creagraph.cli import main
from creagraph.core.io import InputError, read_jsonl
from creagraph.core.registry import RegistryError

USER_JUDGE = textwrap.dedent('''
    """A user's judge: the stored scores, but a triple less specific than
    ``min_specificity`` is not factual."""
    from creagraph.scoring.judges import StoredJudge, TripleJudgment


    class StrictStoredJudge:
        name = "strict-stored"

        def __init__(self, min_specificity=1):
            self.min_specificity = min_specificity
            self.stored = StoredJudge()

        def judge(self, row, path_index, triples):
            out = []
            for j in self.stored.judge(row, path_index, triples):
                keep = j.specificity is not None and j.specificity >= self.min_specificity
                out.append(TripleJudgment(j.specificity, j.factual if keep else 0.0,
                                          "strict-stored"))
            return out


    class NotAJudge:
        name = "nothing"
''')


@pytest.fixture
def user_judge(tmp_path, monkeypatch):
    folder = tmp_path / "userpkg"
    folder.mkdir()
    (folder / "myjudges.py").write_text(USER_JUDGE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))  # the Dask worker processes import it too
    yield "myjudges:StrictStoredJudge"
    sys.modules.pop("myjudges", None)


@pytest.fixture(scope="module")
def rows(sample_files):
    return [{**json.loads(line), "model": "M"} for line in sample_files[1].open()][:6]


def test_user_judge_from_the_api(user_judge, rows):
    stored = creagraph.score(rows, judge="stored", mode="published")
    same = creagraph.score(rows, judge=user_judge, mode="published")
    assert {j["status"] for p in same.paths for j in p["judgments"]} == {"strict-stored"}
    assert [q["utility"] for q in same.queries] == [q["utility"] for q in stored.queries]
    strict = creagraph.score(rows, judge=user_judge, judge_args={"min_specificity": 5},
                             mode="published")
    assert sum(p["kept"] for p in strict.paths) < sum(p["kept"] for p in stored.paths)
    config = creagraph.ScorerConfig(judge=user_judge, judge_args={"min_specificity": 5},
                                    mode="published")
    again = creagraph.score(rows, config=config)
    assert again.queries == strict.queries
    with pytest.raises(ValueError, match="judge_args=.* conflicts with config.judge_args"):
        creagraph.score(rows, config=config, judge_args={"min_specificity": 2})


def test_named_embedder_from_the_api(rows):
    hashed = creagraph.score(rows, judge="stored", embedder="hashing",
                             embedder_args={"dim": 32})
    from creagraph.core.embeddings import HashingEmbedder

    direct = creagraph.score(rows, judge="stored", embedder=HashingEmbedder(32))
    assert hashed.queries == direct.queries


def test_bad_judges_are_named(user_judge, rows):
    with pytest.raises(RegistryError, match=r"judge 'nosuch\.mod:J': module 'nosuch\.mod' "
                       "does not import"):
        creagraph.score(rows, judge="nosuch.mod:J")
    with pytest.raises(RegistryError, match=r"judge 'myjudges:NotAJudge' lacks judge"):
        creagraph.score(rows, judge="myjudges:NotAJudge")
    with pytest.raises(RegistryError, match=r"does not take these arguments \['bogus'\]"):
        creagraph.score(rows, judge=user_judge, judge_args={"bogus": 1})
    with pytest.raises(InputError, match=r"^embedder must be minilm or hashing, not 'w2v'"):
        creagraph.score(rows, judge="stored", embedder="w2v")


def test_user_judge_from_the_cli_and_a_config_file(user_judge, sample_files, tmp_path,
                                                    capsys):
    src = str(sample_files[1])
    base = ["score", src, "--model", "M", "--mode", "published"]
    assert main([*base, "--judge", user_judge, "--judge-arg", "min_specificity=5",
                 "--out", str(tmp_path / "cli")]) == 0
    config = tmp_path / "score.toml"
    config.write_text(f'judge = "{user_judge}"\njudge-arg = {{min_specificity = 5}}\n')
    assert main([*base, "--config", str(config), "--out", str(tmp_path / "toml")]) == 0
    cli, toml = (read_jsonl(tmp_path / d / "queries.jsonl") for d in ("cli", "toml"))
    assert [q["utility"] for q in cli] == [q["utility"] for q in toml]
    paths = read_jsonl(tmp_path / "cli" / "paths.jsonl")
    assert {j["status"] for p in paths for j in p["judgments"]} == {"strict-stored"}
    run = json.loads((tmp_path / "cli" / "run.json").read_text())
    assert run["settings"]["--judge"] == user_judge
    assert run["settings"]["--judge-args"] == {"min_specificity": 5}
    assert main([*base, "--judge", "nosuch:J", "--out", str(tmp_path / "bad")]) == 2
    assert "--judge 'nosuch:J': module 'nosuch' does not import" in capsys.readouterr().err
    assert main([*base, "--judge-arg", "5", "--out", str(tmp_path / "bad")]) == 2
    assert "--judge-arg expects KEY=VALUE" in capsys.readouterr().err


def test_help_lists_the_builtin_choices(capsys):
    assert main(["score", "--help"]) == 0
    out = capsys.readouterr().out
    assert "kg|stored|llm|hybrid|MODULE:ATTR" in out.replace("\n", "").replace(" ", "")
    assert "minilm|hashing|MODULE:ATTR" in out.replace("\n", "").replace(" ", "")


@pytest.mark.distributed
@pytest.mark.parametrize("engine", ["dask", "ray"])
def test_distributed_workers_recreate_the_user_judge(engine, user_judge, sample_files, tmp_path):
    pytest.importorskip(engine)
    src = str(sample_files[1])
    args = ["score", src, "--model", "M", "--mode", "published", "--judge", user_judge,
            "--judge-arg", "min_specificity=4", "--embedder", "hashing"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--engine", engine, "--workers", "2",
                 "--out", str(tmp_path / engine)]) == 0
    local, remote = (read_jsonl(tmp_path / d / "paths.jsonl") for d in ("local", engine))
    assert local == remote and len(local) > 0
    assert {j["status"] for p in remote for j in p["judgments"]} == {"strict-stored"}


ANSWER = {
    "query": "What are different ways of connecting Ada and someone who is a poet?",
    "entity_a": "Ada", "entity_b": "poet", "rel_b": "occupation", "model": "demo",
    "path_prediction": '<answer>{"1": [["Ada", "award received", "Prize"], ["Prize", '
    '"award received", "Bea"], ["Bea", "occupation", "poet"]]}</answer>',
}
GRAPH = {
    "triples": [["Q1", "P166", "Q10"], ["Q2", "P166", "Q10"], ["Q2", "P106", "Q20"]],
    "labels": {"Q1": "Ada", "Q2": "Bea", "Q10": "Prize", "Q20": "poet",
               "P166": "award received", "P106": "occupation"},
}


def test_graph_backend_by_name_and_by_user_path(tmp_path, monkeypatch):
    from creagraph.core.embeddings import HashingEmbedder
    from creagraph.kg.memory import MemoryKG

    (tmp_path / "mygraphs.py").write_text(textwrap.dedent(f'''
        from creagraph.kg.memory import MemoryKG

        def tiny(**extra):
            return MemoryKG({GRAPH["triples"]!r}, labels={GRAPH["labels"]!r})

        class NotAGraph:
            pass
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        opened = creagraph.score([ANSWER], judge="kg", embedder=HashingEmbedder(64),
                                 kg=MemoryKG(GRAPH["triples"], labels=GRAPH["labels"]))
        named = creagraph.score([ANSWER], config=creagraph.ScorerConfig(
            judge="kg", graph="memory", graph_args=GRAPH), embedder=HashingEmbedder(64))
        user = creagraph.score([ANSWER], config=creagraph.ScorerConfig(
            judge="kg", graph="mygraphs:tiny"), embedder=HashingEmbedder(64))
        statuses = [j["status"] for j in opened.paths[0]["judgments"]]
        assert "verified" in statuses
        assert named.paths == opened.paths and user.paths == opened.paths
        with pytest.raises(RegistryError, match=r"graph backend 'mygraphs:NotAGraph' lacks "
                           "entity, search"):
            creagraph.score([ANSWER], config=creagraph.ScorerConfig(
                judge="kg", graph="mygraphs:NotAGraph"), embedder=HashingEmbedder(64))
        with pytest.raises(InputError, match="replaces store and endpoint"):
            creagraph.ScorerConfig(graph="memory", endpoint="http://x").validate()
    finally:
        sys.modules.pop("mygraphs", None)
