"""Published-mode fidelity (issue 13.2, SPEC §3.5–3.6 quirks d and e), through the CLI:
raw distances above 1 go through the published cosine expression; stored per-triple
factuality of another length than the path is averaged as the published code does."""

import json
import math

from creagraph.cli import main
from creagraph.core.io import read_jsonl

# Two path strings from the published sample outputs whose embeddings have negative cosine.
FAR_A = (
    " [academic affiliation] university of berlin"
    " | university of berlin [faculty member] fritz haber"
)
FAR_B = (
    " [acted in] maniac | maniac [starred] caroline munro | caroline munro [acted in] starcrash"
    " | starcrash [starred] joe spinell"
)
PATH_A = [
    ["X", "academic affiliation", "University of Berlin"],
    ["University of Berlin", "faculty member", "Fritz Haber"],
    ["Fritz Haber", "r", "Y"],
]
PATH_B = [
    ["X", "acted in", "Maniac"],
    ["Maniac", "starred", "Caroline Munro"],
    ["Caroline Munro", "acted in", "Starcrash"],
    ["Starcrash", "starred", "Joe Spinell"],
    ["Joe Spinell", "r", "Y"],
]


def published_g(x: float) -> float:
    """The published code's transform, written out: only (0.7, 1] saturates."""
    if 0.7 < x <= 1.0:
        return 1.0
    return 0.5 * (1 - math.cos(math.pi * (x / 0.7) ** 2))


def _distance(tmp_path, capsys, mode, pair):
    src = tmp_path / "pairs.jsonl"
    src.write_text(json.dumps(pair) + "\n")
    capsys.readouterr()
    assert main(["distance", str(src), "--mode", mode]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_distance_above_one_follows_the_published_expression(tmp_path, capsys):
    published = _distance(tmp_path, capsys, "published", {"a": FAR_A, "b": FAR_B})
    assert published["a"] == FAR_A  # a path string is used as given
    raw = published["raw"]
    assert raw > 1.0
    assert published["transformed"] == published_g(raw) < 0.2
    paper = _distance(tmp_path, capsys, "paper", {"a": PATH_A, "b": FAR_B})
    assert paper["a"] == FAR_A  # triples build the same string
    assert paper["raw"] == raw and paper["transformed"] == 1.0


def _row(paths, salience, factuality, **extra):
    return {
        "model": "m",
        "query": "How are X and Y connected?",
        "entity_a": "X",
        "entity_b": "Y",
        "rel_b": "r",
        "path_prediction": json.dumps({str(i + 1): p for i, p in enumerate(paths)}),
        "raw_salience_scores_0": salience,
        "parsed_scores_factuality_0": factuality,
        **extra,
    }


def _score(tmp_path, name, rows, mode):
    src = tmp_path / f"{name}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / f"{name}-{mode}"
    assert main(["score", str(src), "--judge", "stored", "--mode", mode, "--out", str(out)]) == 0
    return read_jsonl(out / "queries.jsonl"), read_jsonl(out / "paths.jsonl")


def test_scoring_a_pair_above_one(tmp_path, capsys):
    raw = _distance(tmp_path, capsys, "published", {"a": FAR_A, "b": FAR_B})["raw"]
    row = _row([PATH_A, PATH_B], [[5, 5, 5], [5] * 5], [[1.0] * 3, [1.0] * 5], index=0)
    (pub,), paths = _score(tmp_path, "far", [row], "published")
    assert [p["kept"] for p in paths] == [True, True]
    # published discount 1, 1, γ, …: s = 5·1 + 5·g(raw) at every γ
    for gamma in ("0.7", "0.9"):
        assert math.isclose(pub["utility"][gamma], 5 + 5 * published_g(raw), rel_tol=1e-6)
    (paper,), _ = _score(tmp_path, "far", [row], "paper")
    assert math.isclose(paper["utility"]["0.9"], 5 + 0.9 * 5 * 1.0, rel_tol=1e-9)


def test_stored_factuality_of_another_length_is_averaged_in_published_mode(tmp_path):
    short = _row([PATH_A], [[4, 4]], [[1.0, 1.0]], index=0)  # one judgment missing
    long = _row([PATH_A], [[4, 4, 5, 1]], [[1.0, 1.0, 1.0, 0.0]], index=1)  # one extra
    _, pub = _score(tmp_path, "len", [short, long], "published")
    assert [(p["factual_fraction"], p["factual"]) for p in pub] == [(1.0, True), (0.75, False)]
    assert pub[0]["quality"] == 4.0 and pub[0]["kept"]
    _, paper = _score(tmp_path, "len", [short, long], "paper")
    # the paper mode judges the path's own triples: a missing judgment is not factual
    assert [p["factual"] for p in paper] == [False, True]
