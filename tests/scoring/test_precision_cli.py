"""`--precision` on the embedding commands (issue 19, item 3)."""

import json

import pytest

from creagraph.cli import main
from creagraph.core.embeddings import bf16_support


def _distances(pairs, capsys, *extra) -> list[dict]:
    capsys.readouterr()
    assert main(["distance", str(pairs), *extra]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_precision_option(tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    a = [["Ann", "born in", "Paris"], ["Paris", "capital of", "France"]]
    b = [["Ann", "plays", "chess"], ["chess", "popular in", "Russia"]]
    pairs.write_text(json.dumps({"a": a, "b": b}) + "\n")
    fp32 = _distances(pairs, capsys)
    assert _distances(pairs, capsys, "--precision", "fp32") == fp32
    capsys.readouterr()
    assert main(["distance", str(pairs), "--precision", "fp16"]) == 2
    assert "--precision must be one of fp32, bf16" in capsys.readouterr().err
    out = tmp_path / "o"
    assert main(["score", str(pairs), "--out", str(out), "--precision", "int8"]) == 2
    if bf16_support()[0]:
        bf16 = _distances(pairs, capsys, "--precision", "bf16")
        assert bf16[0]["raw"] == pytest.approx(fp32[0]["raw"], abs=5e-3)
        assert bf16[0]["raw"] != fp32[0]["raw"]
