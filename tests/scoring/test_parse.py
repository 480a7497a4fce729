import json

from creagraph.scoring.parse import lower_paths, parse_answer


def test_published_samples_parse_exactly_like_stored_paths(sample_rows):
    assert len(sample_rows) == 80
    for _, row in sample_rows:
        result = parse_answer(row["path_prediction"])
        stored = json.loads(row["paths_0"])
        assert len(result.paths) == len(stored)
        assert lower_paths(result.paths) == stored


def triples(text):
    return [p.triples for p in parse_answer(text).paths]


def test_answer_shapes():
    a = [("A", "r", "B"), ("B", "s", "C")]
    assert triples(
        '<think>{"x": 1}</think><answer>{"1": [["A","r","B"],["B","s","C"]]}</answer>'
    ) == [a]
    assert triples('```json\n{"1": [["A","r","B"],["B","s","C"]]}\n```') == [a]
    assert triples('{"1": [["A","r","B"], // first\n ["B","s","C"],], /* c */}') == [a]
    assert triples('{"1": [("A", "r", "B"), ("B", "s", "C")]}') == [a]
    assert triples('{"1": ["(A, r, B)", "(B, s, C)"]}') == [a]
    assert triples('{"1": ["A", "r", "B", "B", "s", "C"]}') == [a]
    wrapped = parse_answer(
        '{"1": {"path": [["A","r","B"],["B","s","C"]], "path_probability": 0.4}}'
    )
    assert wrapped.paths[0].triples == a and wrapped.paths[0].probability == 0.4
    assert triples('[[["A","r","B"],["B","s","C"]], [["A","t","C"]]]') == [a, [("A", "t", "C")]]
    assert triples('{"1": [{"head": "A", "relation": "r", "tail": "B"}]}') == [[("A", "r", "B")]]
    assert triples("<answer>{'1': [['A', 'r', 'B']]}</answer>") == [[("A", "r", "B")]]
    assert triples('{"1": [["A","r","B"], ["B","s","C"]') == [a]  # truncated answer
    assert triples('{"1": [["http://x.org", "r", "B"]]}') == [[("http://x.org", "r", "B")]]


def test_garbage_never_raises_and_reports_reasons():
    for junk in (
        None,
        "",
        "{}",
        "<answer></answer>",
        "no json",
        "{{{[[[",
        42,
        ["{]"],
        [None],
        '{"1": 5, "2": [["A","r","B"]]}',
        '{"1": {"x": 1}}',
        "[1, 2, 3]",
    ):
        result = parse_answer(junk)
        assert isinstance(result.failures, list)
    mixed = parse_answer('{"1": 5, "2": [["A","r","B"]], "3": [["only two", "parts"]]}')
    assert [p.key for p in mixed.paths] == ["2", "3"]
    assert mixed.failures == ["path 1: not a list of triples"]
    bad = parse_answer('{"1": ["(a, b)", "(x, y, z)"]}').paths[0]
    assert bad.triples[1] == ("x", "y", "z") and bad.issues and "element 0" in bad.issues[0]
