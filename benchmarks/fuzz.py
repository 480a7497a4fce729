"""Fuzzing the answer parser (and, optionally, the JSON Lines loader) for a fixed time.

Run: ``.venv/bin/python benchmarks/fuzz.py [SECONDS] [--seed N] [--loaders]``
(default 180 s). Prints one JSON object: iterations, inputs per second, distinct crashes
(any exception out of :func:`~creagraph.scoring.parse.parse_answer`, which must never
raise, grouped by exception type and the line that raised it) with a shortened example
each, the slowest input (seconds and length) and the number of inputs slower than the
per-input budget (a stall). With ``--loaders`` the same inputs are also written as JSON
Lines files and read with :func:`~creagraph.core.io.read_jsonl`, where anything but
:class:`~creagraph.core.io.InputError` counts as a crash.

Inputs are drawn from a seed corpus of well-formed and broken answers (plus the published
sample answers when ``../shared`` is present) mutated by byte- and token-level operators:
random insertion of JSON/markup tokens, deletion, duplication, truncation, deep bracket
nesting, long repetitions, unpaired surrogates and control characters.

:func:`fuzz_parser` is the importable entry point (``benchmarks/reliability.py`` uses it).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError, read_jsonl
from creagraph.scoring.parse import parse_answer

#: An input slower than this (seconds) counts as a stall.
STALL_SECONDS = 2.0

SEEDS = [
    '<answer>{"1": [["A", "r", "B"], ["B", "s", "C"]], "2": [["A", "t", "C"]]}</answer>',
    '<think>hmm</think>\n```json\n{"1": [("A", "r", "B"),], // note\n}\n```',
    '{"paths": [{"path": ["(A, r, B)", "(B, s, C)"], "path_probability": 0.4}]}',
    '[["A", "r", "B", "B", "s", "C"]]',
    '{"1": [{"head": "A", "relation": "r", "tail": "B"}], "2": "A -> r -> B"}',
    "<answer>{'1': [['A', 'r', 'B'], ['B', 's', 'C']]",
    '{"1": [["A", "r", "B"], ["B", "s"',
    "/* c */ # x\n{\"1\": [[\"Ann's\", \"r\", \"B\"]]}",
    "no paths here",
    "",
]

TOKENS = [
    "{", "}", "[", "]", "(", ")", '"', "'", ",", ":", "\\", "\\u12", "//", "/*", "*/", "#",
    "\n", "<answer>", "</answer>", "<ANSWER>", "</think>", "```", "```json", "->", " | ",
    "path", '"path_probability": ', "1e999", "-0", "NaN", "null", "true", "\x00", "\ud800",
    "\u202e", "İ", "ß", "\U0001f600", "9" * 400,
]  # fmt: skip


def _published_seeds(limit: int = 40) -> list[str]:
    folder = (
        Path(__file__).resolve().parents[2] / "shared" / "external" / "create-leaderboard"
    ) / "sample_outputs"
    out: list[str] = []
    for f in sorted(folder.glob("*.jsonl")) if folder.exists() else []:
        with f.open(encoding="utf-8") as handle:
            for i, line in enumerate(handle):
                if i >= limit // 4:
                    break
                raw = json.loads(line).get("path_prediction")
                text = raw[0] if isinstance(raw, list) and raw else raw
                if isinstance(text, str):
                    out.append(text)
    return out


def _mutate(text: str, rng: random.Random) -> str:
    op = rng.randrange(9)
    n = len(text)
    i = rng.randint(0, n)
    if op == 0:  # insert tokens
        return text[:i] + "".join(rng.choices(TOKENS, k=rng.randint(1, 8))) + text[i:]
    if op == 1 and n:  # delete a slice
        j = rng.randint(i, min(n, i + rng.randint(1, 40)))
        return text[:i] + text[j:]
    if op == 2 and n:  # duplicate a slice
        j = rng.randint(i, min(n, i + rng.randint(1, 200)))
        return text[:j] + text[i:j] * rng.randint(1, 50) + text[j:]
    if op == 3:  # truncate
        return text[:i]
    if op == 4:  # deep nesting
        depth = rng.choice([10, 100, 1000, 5000, 50_000])
        opener = rng.choice(["[", "{", "(", '{"a":', "[[", '["'])
        closer = rng.choice(["", "]" * depth, "}" * depth, ")" * depth])
        return text[:i] + opener * depth + closer + text[i:]
    if op == 5:  # long repetition of one token
        return text[:i] + rng.choice(TOKENS) * rng.choice([100, 10_000, 100_000]) + text[i:]
    if op == 6:  # random characters, any code point
        chars = "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randint(1, 30)))
        return text[:i] + chars + text[i:]
    if op == 7:  # random bytes decoded leniently
        data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 200)))
        return text[:i] + data.decode("utf-8", "surrogateescape") + text[i:]
    # splice two seeds
    return text[:i] + rng.choice(SEEDS)[rng.randint(0, 20) :]


def _crash_key(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


def fuzz_parser(seconds: float, seed: int = 0, *, loaders: bool = False) -> dict[str, Any]:
    """Feed mutated answers to ``parse_answer`` for ``seconds``; report crashes and stalls.

    Parameters
    ----------
    seconds : float
        Wall-clock budget.
    seed : int
        Seed of the mutation generator (same seed, same input sequence).
    loaders : bool
        Also write every 20th input as a JSON Lines file (raw text, and the text as a
        ``path_prediction`` field) and read it back with ``read_jsonl``.

    Returns
    -------
    dict
        ``iterations``, ``inputs_per_second``, ``distinct_crashes``, ``crashes``
        (key -> shortened example), ``max_seconds``, ``slowest_length``,
        ``slowest_example``, ``stalls`` (inputs over :data:`STALL_SECONDS`),
        ``max_length``, ``parsed_ok`` (inputs that gave at least one path) and, with
        ``loaders``, ``loader_files``.

    Examples
    --------
    >>> result = fuzz_parser(0.2, seed=1)
    >>> result["distinct_crashes"], result["iterations"] > 0
    (0, True)
    """
    rng = random.Random(seed)
    corpus = SEEDS + _published_seeds()
    crashes: dict[str, str] = {}
    iterations = parsed_ok = stalls = loader_files = 0
    max_seconds, slowest_length, max_length, slowest = 0.0, 0, 0, ""
    tmp = tempfile.TemporaryDirectory(prefix="creagraph-fuzz-") if loaders else None
    start = time.perf_counter()
    deadline = start + seconds
    try:
        while time.perf_counter() < deadline:
            text = rng.choice(corpus)
            for _ in range(rng.randint(1, 4)):
                text = _mutate(text, rng)
            raw: Any = [text] if rng.random() < 0.3 else text
            t0 = time.perf_counter()
            try:
                result = parse_answer(raw)
                parsed_ok += bool(result.paths)
            except BaseException as exc:  # noqa: BLE001 - any exception is a finding
                if isinstance(exc, KeyboardInterrupt):
                    raise
                crashes.setdefault(_crash_key(exc), repr(text[:200]))
            elapsed = time.perf_counter() - t0
            iterations += 1
            max_length = max(max_length, len(text))
            if elapsed > max_seconds:
                max_seconds, slowest_length, slowest = elapsed, len(text), text
            stalls += elapsed > STALL_SECONDS
            if tmp is not None and iterations % 20 == 0:
                loader_files += 1
                _fuzz_loader(Path(tmp.name), text, rng, crashes)
            if len(corpus) < 500 and rng.random() < 0.01 and len(text) < 5000:
                corpus.append(text)
    finally:
        if tmp is not None:
            tmp.cleanup()
    total = time.perf_counter() - start
    out: dict[str, Any] = {
        "seconds": round(total, 1),
        "seed": seed,
        "iterations": iterations,
        "inputs_per_second": round(iterations / total, 1) if total else 0.0,
        "distinct_crashes": len(crashes),
        "crashes": crashes,
        "max_seconds": round(max_seconds, 4),
        "slowest_length": slowest_length,
        "slowest_example": repr(slowest[:300]),
        "stalls": stalls,
        "max_length": max_length,
        "parsed_ok": parsed_ok,
    }
    if loaders:
        out["loader_files"] = loader_files
    return out


def _fuzz_loader(folder: Path, text: str, rng: random.Random, crashes: dict[str, str]) -> None:
    path = folder / "input.jsonl"
    as_field = json.dumps({"path_prediction": [text]}, ensure_ascii=rng.random() < 0.5)
    data = (text if rng.random() < 0.5 else as_field).encode("utf-8", "surrogatepass")
    if rng.random() < 0.3:
        data = data[: rng.randint(0, len(data))]
    path.write_bytes(data)
    try:
        read_jsonl(path)
    except InputError:
        pass
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, KeyboardInterrupt):
            raise
        crashes.setdefault("read_jsonl: " + _crash_key(exc), repr(data[:200]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("seconds", nargs="?", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loaders", action="store_true", help="also fuzz read_jsonl")
    args = parser.parse_args(argv)
    result = fuzz_parser(args.seconds, args.seed, loaders=args.loaders)
    print(json.dumps(result, indent=1, ensure_ascii=True))
    return 1 if result["distinct_crashes"] or result["stalls"] else 0


if __name__ == "__main__":
    sys.exit(main())
