"""`creagraph.score(...)`: one call from Python, the same numbers as `creagraph score`
(issue 13.6); library errors name parameters, not command-line flags."""

import json

import pytest

import creagraph
from creagraph.cli import main
from creagraph.core.io import InputError, read_jsonl, read_records


def test_score_in_one_call_equals_the_cli(sample_files, tmp_path):
    rows = [json.loads(line) for line in sample_files[1].open()][:4]
    src = tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "cli"
    args = ["score", str(src), "--model", "M", "--judge", "stored", "--mode", "published"]
    assert main([*args, "--out", str(out)]) == 0

    tables = creagraph.score(str(src), judge="stored", mode="published", model="M")
    assert tables.out is None  # scored in a temporary directory
    cli_queries = read_jsonl(out / "queries.jsonl")
    strip = lambda q: {k: v for k, v in q.items() if k != "source"}  # noqa: E731
    assert [strip(q) for q in tables.queries] == [strip(q) for q in cli_queries]
    assert len(tables.paths) == sum(q["n_paths"] for q in cli_queries)
    (row,) = read_records(out / "summary.csv")
    assert tables.summary[0]["s_0.9_mean"] == pytest.approx(float(row["s_0.9_mean"]), abs=0)
    queries, paths, summary = tables.frames()
    assert len(queries) == 4 and "utility" in queries.columns and "kept" in paths.columns

    # records in memory, and a config object with named fields, give the same numbers
    config = creagraph.ScorerConfig(judge="stored", mode="published")
    again = creagraph.score([{**r, "model": "M"} for r in rows], config=config)
    assert [q["utility"] for q in again.queries] == [q["utility"] for q in cli_queries]


def test_library_errors_name_parameters(tmp_path):
    with pytest.raises(InputError, match=r"^judge must be kg, stored, llm or hybrid, not 'x'"):
        creagraph.score([], judge="x")
    with pytest.raises(InputError, match=r"^factuality_threshold must be between 0 and 1"):
        creagraph.score([], judge="stored", factuality_threshold=2)
    with pytest.raises(InputError, match=r"judge 'llm' needs llm_base_url and llm_model") as e:
        creagraph.score([], judge="llm", llm_base_url=None)
    assert "--" not in str(e.value)


def test_cli_errors_name_flags(tmp_path, capsys):
    src = tmp_path / "a.jsonl"
    src.write_text("")
    assert main(["score", str(src), "--judge", "llm", "--out", str(tmp_path / "o")]) == 2
    assert "--judge 'llm' needs --llm-base-url and --llm-model" in capsys.readouterr().err


def test_moved_names_still_import_from_their_old_places():
    """Issue 18 moved the scorer's configuration and the choices into the library; the
    old import paths are the same objects."""
    from creagraph import cliopts
    from creagraph.scoring import api, cli, config, distributed

    assert distributed.ScorerConfig is config.ScorerConfig is api.ScorerConfig
    assert creagraph.ScorerConfig is config.ScorerConfig
    assert distributed.ENGINES == config.ENGINES == ("local", "dask", "ray")
    assert cli.build_scorer is api.build_scorer
    assert cli.score_fingerprint is api.score_fingerprint
    assert (cliopts.Mode, cliopts.JudgeKind, cliopts.Engine) == (
        config.Mode,
        config.JudgeKind,
        config.Engine,
    )


def test_score_to_dir_rejects_an_unknown_engine(tmp_path):
    from creagraph.scoring.api import ScorerConfig, score_to_dir

    with pytest.raises(InputError, match=r"^engine must be one of local, dask, ray, not 'spark'"):
        score_to_dir([], tmp_path / "out", ScorerConfig(judge="stored"), engine="spark")
    assert not (tmp_path / "out").exists()
