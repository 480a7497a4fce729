"""--config FILE (TOML) for score, run create, tig score and tig judge: keys are option
names, the command line wins, an unknown key is an error naming the key and the file."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from creagraph.cli import app, main
from creagraph.cliopts import read_option_file
from creagraph.core.io import InputError
from tests.shareddata import shared_file


def _command(*path: str) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


@pytest.mark.parametrize("path", [("score",), ("run", "create"), ("tig", "score"),
                                  ("tig", "judge")])
def test_the_commands_take_config(path):
    command = _command(*path)
    assert any("--config" in p.opts for p in command.params), path


def test_keys_are_option_names_and_unknown_keys_are_errors(tmp_path):
    command = _command("tig", "score")
    good = tmp_path / "good.toml"
    good.write_text('neighbour-share = 0.2\n"--match-threshold" = 0.7\nout = "s.jsonl"\n'
                    "rarity_weight = 0.4\n")
    assert read_option_file(good, command) == {
        "neighbour_share": 0.2, "match_threshold": 0.7, "out": "s.jsonl", "rarity_weight": 0.4,
    }  # fmt: skip
    bad = tmp_path / "bad.toml"
    bad.write_text("neighbor-share = 0.2\n")
    with pytest.raises(InputError, match=r"bad\.toml: 'neighbor-share' is not an option of"):
        read_option_file(bad, command)
    bad.write_text("[out]\nx = 'x'\n")
    with pytest.raises(InputError, match="'out' must be a value, not a table"):
        read_option_file(bad, command)
    bad.write_text("out = \n")
    with pytest.raises(InputError, match=r"bad\.toml: not a TOML file"):
        read_option_file(bad, command)
    with pytest.raises(InputError, match="cannot read the --config file"):
        read_option_file(tmp_path / "missing.toml", command)
    with pytest.raises(InputError, match="'config' is not an option"):
        (tmp_path / "self.toml").write_text("config = 'x.toml'\n")
        read_option_file(tmp_path / "self.toml", command)


def test_score_from_a_config_file_equals_the_same_flags(capsys, shared_dir, tmp_path,
                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    sample = shared_file(shared_dir, "external", "create-leaderboard", "sample_outputs",
                         "GPT-5_med_model_name_gpt-5.jsonl")
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(sample.read_text().splitlines(keepends=True)[:2]))
    config = tmp_path / "score.toml"
    config.write_text('judge = "stored"\nmode = "published"\nmodel = "m"\nout = "from-file"\n'
                      "factuality-threshold = 0.5\n")
    assert main(["score", str(answers), "--config", str(config)]) == 0
    assert main(["score", str(answers), "--judge", "stored", "--mode", "published", "--model",
                 "m", "--factuality-threshold", "0.5", "--out", "from-flags"]) == 0
    for name in ("paths.jsonl", "queries.jsonl", "summary.csv"):
        assert (tmp_path / "from-file" / name).read_bytes() == (
            tmp_path / "from-flags" / name
        ).read_bytes(), name
    # the command line wins over the file
    assert main(["score", str(answers), "--config", str(config), "--mode", "paper",
                 "--out", "paper"]) == 0
    summary = (tmp_path / "paper" / "summary.csv").read_text()
    assert ",paper," in summary and ",published," not in summary
    capsys.readouterr()
    config.write_text('judge = "stored"\nfactuality-treshold = 0.5\nout = "never"\n')
    assert main(["score", str(answers), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {config}: 'factuality-treshold' is not an option of `score`")
    assert not (tmp_path / "never").exists()
