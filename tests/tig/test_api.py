"""creagraph.tig.api: the TIG pipeline as library functions gives what `creagraph tig`
writes; population sources and atom extractors are chosen by name or by a user's
``module:attr`` (a real module in tmp_path), with errors naming what is wrong (issue 30,
items 3 and 4)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from creagraph.cli import main
from creagraph.core.io import InputError, read_jsonl
from creagraph.core.registry import RegistryError
from creagraph.tig import api
from creagraph.tig.anchors import read_anchors
from creagraph.tig.io import read_atoms, write_responses

from .conftest import calm_population

USER_MODULE = textwrap.dedent('''
    """A user's population source and atom extractor."""
    from creagraph.tig.schema import Atom, Response


    def calm_source(n_models=6, context=None):
        from tests.tig.conftest import calm_population

        keep = sorted({r.model for r in calm_population()})[:n_models]
        return [r for r in calm_population() if r.model in keep]


    def not_responses():
        return [{"task_id": "x"}]


    class FirstWordsExtractor:
        """Each Core Idea's first three words as one concept atom."""

        name = "first-words"

        def __init__(self, words=3):
            self.words = words

        def extract(self, responses):
            return [[Atom("motif", " ".join(r.core_idea.split()[:self.words]))]
                    for r in responses]


    class NoExtract:
        name = "none"
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "mytig.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "mytig"
    sys.modules.pop("mytig", None)


@pytest.fixture()
def responses_file(tmp_path):
    path = tmp_path / "responses.jsonl"
    write_responses(path, calm_population())
    return path


def test_load_population_by_name_path_and_filters(responses_file, user_module):
    assert api.load_population(responses_file) == calm_population()
    assert len(api.load_population(source="mytig:calm_source",
                                   source_args={"n_models": 2})) == 6
    aut = api.load_population(source="aut", tasks="aut-brick", source_args={"max_runs": 1})
    assert {r.task_id for r in aut} == {"aut-brick"} and {r.meta["run"] for r in aut} == {0}
    two = api.load_population(source="aut", limit_tasks=2, source_args={"max_runs": 1})
    assert len({r.task_id for r in two}) == 2
    with pytest.raises(InputError, match="give a responses JSONL file"):
        api.load_population()
    with pytest.raises(InputError, match=r"no responses for task\(s\) nope"):
        api.load_population(responses_file, tasks=["calm", "nope"])
    with pytest.raises(RegistryError, match=r"^population source must be jsonl, "
                       r"noveltybench or aut, not 'csv'"):
        api.load_population(source="csv")
    with pytest.raises(InputError, match=r"source 'mytig:not_responses' returned a dict"):
        api.load_population(source="mytig:not_responses")


def test_user_extractor_and_errors(user_module, tmp_path):
    extractor = api.make_extractor("mytig:FirstWordsExtractor", extractor_args={"words": 2})
    tables = api.atom_tables(calm_population(), extractor, show_progress=False)
    assert sorted(set(tables["calm"].atom_text))[:2] == ["A clock", "A glass"]
    with pytest.raises(RegistryError, match=r"extractor 'mytig:NoExtract' lacks extract"):
        api.make_extractor("mytig:NoExtract")
    with pytest.raises(InputError, match="--extractor json needs --atoms FILE"):
        api.make_extractor("json")
    with pytest.raises(RegistryError, match="module 'nosuch' does not import"):
        api.make_extractor("nosuch:X")


def test_the_api_writes_what_the_cli_writes(responses_file, tmp_path, embedder):
    """build, clusters, anchors and score from Python equal the CLI's files."""
    cli = tmp_path / "cli"
    for command in (["build", "--out", str(cli / "built")],
                    ["clusters", "--out", str(cli / "clusters.jsonl")],
                    ["anchors", "--out", str(cli / "anchors.jsonl"), "--pair", "m1,m2"],
                    ["score", "--out", str(cli / "scores.jsonl")]):
        assert main(["tig", command[0], str(responses_file), *command[1:]]) == 0
    tables = api.atom_tables(api.load_population(responses_file), show_progress=False)
    done = api.write_build(tmp_path / "built", tables)
    assert (done.n_responses, done.n_graphs) == (18, 1)
    for name in ("atoms.jsonl", "canonical.jsonl"):
        assert (tmp_path / "built" / name).read_bytes() == (cli / "built" / name).read_bytes()
    assert read_atoms(tmp_path / "built" / "atoms.jsonl")
    assert (tmp_path / "built" / "graphs" / "calm.graphml").read_bytes() == (
        cli / "built" / "graphs" / "calm.graphml").read_bytes()
    rows = api.cluster_rows(tables, show_progress=False).rows
    assert rows == read_jsonl(cli / "clusters.jsonl")
    run = api.find_anchors(tables, pairs=api.parse_pairs(["m1,m2"]), show_progress=False)
    assert [a.to_dict() for a in run.anchors] == [
        a.to_dict() for a in read_anchors(cli / "anchors.jsonl")]
    assert run.comparisons == 1 and len(run.results) == 1
    scores = api.score_population(tables)
    assert len(scores.scores) == 18
    assert [s["novelty"] for s in read_jsonl(cli / "scores.jsonl")] == [
        s.to_dict()["novelty"] if hasattr(s, "to_dict") else s["novelty"]
        for s in scores.scores]


def test_checks_name_the_option(responses_file):
    tables = api.atom_tables(calm_population(), show_progress=False)
    with pytest.raises(InputError, match="--pair expects two different models"):
        api.parse_pairs(["m1,m1"])
    with pytest.raises(InputError, match=r"--pair names model\(s\) with no responses: zz"):
        api.check_pairs([("m1", "zz")], tables)
    with pytest.raises(InputError, match="--min-models 5 exceeds"):
        api.check_min_models(5, tables, whole_population=False)
    warned = api.cluster_rows(tables, pairs=[("m1", "zz")], show_progress=False)
    assert warned.rows == [] and "no --pair has both models" in warned.warnings[0]
    with pytest.raises(InputError, match="graph_format must be"):
        api.write_build("unused", tables, graph_format="svg")


def test_user_source_and_extractor_from_the_cli(user_module, tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    assert main(["tig", "clusters", "--source", "mytig:calm_source", "--source-arg",
                 "n_models=4", "--extractor", "mytig:FirstWordsExtractor",
                 "--extractor-arg", "words=2", "--out", str(out)]) == 0
    rows = read_jsonl(out)
    assert rows and {m for r in rows for m in r["models"]} <= {"m1", "m2", "m3", "m4"}
    assert main(["tig", "clusters", "--source", "nope", "--out", str(out)]) == 2
    assert "'nope' is not one of 'jsonl', 'noveltybench', 'aut' (or a MODULE:ATTR path)" in (
        capsys.readouterr().err)
    assert main(["tig", "build", "--help"]) == 0
    text = capsys.readouterr().out.replace(" ", "").replace("\n", "")
    assert "[jsonl|noveltybench|aut|MODULE:ATTR]" in text
    assert "[offline|json|llm|MODULE:ATTR]" in text


def test_tig_score_takes_a_named_embedder(responses_file, tmp_path, capsys):
    """``tig score --embedder``: another embedder gives other vectors, is named in the run's
    manifest and the output's settings, and the calibration fitted on MiniLM features
    refuses it."""
    import json

    default_out, hashed_out = tmp_path / "minilm.jsonl", tmp_path / "hashing.jsonl"
    base = ["tig", "score", str(responses_file)]
    assert main([*base, "--out", str(default_out)]) == 0
    assert main([*base, "--embedder", "hashing", "--embedder-arg", "dim=64",
                 "--out", str(hashed_out)]) == 0
    default_rows, hashed_rows = read_jsonl(default_out), read_jsonl(hashed_out)
    assert len(default_rows) == len(hashed_rows) > 0
    assert [r["novelty"] for r in default_rows] != [r["novelty"] for r in hashed_rows]
    manifest = json.loads((tmp_path / "hashing.jsonl.run.json").read_text())
    assert manifest["embedder"] == {"name": "hashing", "args": {"dim": 64}}
    assert json.loads((tmp_path / "minilm.jsonl.run.json").read_text())["embedder"] == {
        "model": "sentence-transformers/all-MiniLM-L6-v2"}
    capsys.readouterr()
    assert main([*base, "--embedder", "hashing", "--calibrated",
                 "--out", str(tmp_path / "c.jsonl")]) == 2
    assert "fitted on all-MiniLM-L6-v2" in capsys.readouterr().err
    assert main([*base, "--embedder", "nope:Nothing", "--out", str(tmp_path / "d.jsonl")]) == 2
