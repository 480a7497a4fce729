"""One vocabulary on the command line (issue 13.7): --llm-base-url / --llm-model /
--llm-api-key-env wherever an LLM is used, --property for a property id, --out for
outputs, enum choices, and old spellings kept as hidden deprecated aliases."""

import re

import pytest

from creagraph.cli import main


@pytest.fixture(autouse=True)
def wide_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # help text on one line per option


def _help(capsys, *command):
    assert main([*command, "--help"]) == 0
    return re.sub(r"[│\s]+", " ", capsys.readouterr().out)


def test_llm_options_are_the_same_everywhere(capsys):
    for command in (["score"], ["queries", "generate"], ["tig", "build"], ["tig", "clusters"],
                    ["tig", "anchors"]):
        text = _help(capsys, *command)
        for flag in ("--llm-base-url", "--llm-model", "--llm-api-key-env", "--out"):
            assert flag in text, (command, flag)
        for old in ("--llm-endpoint", "--llm-api-key "):
            assert old not in text, (command, old)  # hidden deprecated spellings


def test_judge_help_says_what_each_judge_needs(capsys):
    text = _help(capsys, "score")
    for needs in ("kg: computed from the knowledge graph (needs --store or --endpoint)",
                  "stored: the published judge's columns", "llm: an OpenAI-compatible",
                  "hybrid: kg, and the llm"):
        assert needs in text


def test_choices_are_enums(tmp_path, capsys):
    src = tmp_path / "a.jsonl"
    src.write_text("")
    assert main(["score", str(src), "--judge", "oracle", "--out", str(tmp_path / "o")]) == 2
    assert "'oracle' is not one of 'kg', 'stored', 'llm', 'hybrid'" in capsys.readouterr().err
    assert main(["distinct", str(tmp_path), "--mode", "paperr", "--out", str(tmp_path)]) == 2
    assert "'paperr' is not one of 'paper', 'published'" in capsys.readouterr().err


def test_property_and_its_deprecated_alias(store_dir, capsys):
    base = ["kg", "neighbors", "Q179051", "--store", str(store_dir)]
    assert main([*base, "--property", "P69"]) == 0
    new = capsys.readouterr()
    assert main([*base, "--prop", "P69"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and "P69" in new.out
    assert "--prop is deprecated; use --property" in old.err
    assert "--prop " not in _help(capsys, "kg", "neighbors")
    assert main([*base, "--prop", "P69", "--property", "P27"]) == 2
    assert "give --property or the deprecated --prop, not both" in capsys.readouterr().err
