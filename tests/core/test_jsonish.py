"""The package's one lenient JSON reader (creagraph.core.jsonish)."""

import pytest

from creagraph.core.jsonish import lenient_bool, lenient_number, loads_lenient


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('<think>{"wrong": true}</think>\n{"a": 1}', {"a": 1}),
        ("<think>still thinking</think>```json\n{\"a\": 1,}\n```", {"a": 1}),
        ('Here you go: {"a": [1, 2]} and {"b": 2} was not asked.', {"a": [1, 2]}),
        ('{"a": 1} // done', {"a": 1}),
        ("{'a': (1, 2), 'b': True}", {"a": [1, 2], "b": True}),
        ("{“a”: “x”}", {"a": "x"}),
        ('{"items": [{"x": 1}, {"x": 2}, {"x"', {"items": [{"x": 1}, {"x": 2}]}),
        ('[{"x": 1}, {"x": "unfinished', [{"x": 1}, {"x": "unfinished"}]),
    ],
)
def test_loads_lenient_reads_model_replies(reply, expected):
    assert loads_lenient(reply) == expected


@pytest.mark.parametrize("reply", ["", "No.", "<think>{}", None, "{" * 100_000])
def test_loads_lenient_gives_up_with_a_value_error(reply):
    with pytest.raises(ValueError):
        loads_lenient(reply)


def test_numbers_and_verdicts_as_text():
    assert [lenient_number(v) for v in ("1,200", "about 7", "3.5e2", "-", True, float("nan"))] == [
        1200.0,
        7.0,
        350.0,
        None,
        None,
        None,
    ]
    assert [lenient_bool(v) for v in ("No", "TRUE", "not hallucinated.", 0, 2)] == [
        False,
        True,
        True,
        False,
        None,
    ]
