"""parse_judgement and a reasoning model's <think> block: a verdict drafted in the reasoning is
not the answer, and an answer cut off inside the reasoning has none."""

from __future__ import annotations

import pytest

from trustlab.safety.context import parse_judgement


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        (
            '<think>{"judgement": "safe"}, no...</think>\n{"judgement": "unsafe"}',
            "binary",
            "unsafe",
        ),
        ('<think>maybe {"judgement": 9}</think>{"judgement": 3, "explanation": "x"}', "score", 3.0),
        ('<think>I would answer {"judgement": "safe"} but the context', "binary", ""),
        ('<think>so {"judgement": 8} fits, though', "score", ""),
    ],
)
def test_a_verdict_inside_the_reasoning_is_not_the_answer(text, mode, expected):
    assert parse_judgement(text, mode) == expected


def test_an_answer_without_reasoning_reads_as_before():
    assert (
        parse_judgement('Sure: {"judgement": "Unsafe", "explanation": "x"}', "binary") == "unsafe"
    )
    assert parse_judgement('{"judgement": 7}', "score") == 7.0


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        (
            'The context: {"sender": {"platform_type": "a hospital portal"}}.\n'
            '{"judgement": "safe", "explanation": "verified staff"}',
            "binary",
            "safe",
        ),
        ('I read {x} as a placeholder. {"judgement": 8, "explanation": "ok"}', "score", 8.0),
        ('{"note": "none"} {"judgement": "unsafe",}', "binary", "unsafe"),
    ],
)
def test_a_block_without_a_judgement_is_passed_over(text, mode, expected):
    assert parse_judgement(text, mode) == expected


def test_the_first_block_with_a_judgement_wins():
    text = '{"context": 1} {"judgement": "unsafe"} {"judgement": "safe"}'
    assert parse_judgement(text, "binary") == "unsafe"
    assert parse_judgement('{"context": 1} {"judgement": null} {"judgement": 9}', "score") == ""


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        ("{'judgement': 'unsafe', 'explanation': 'a minor'}", "binary", "unsafe"),
        ("{'judgement': 'safe', 'explanation': 'verified'}", "binary", "safe"),
        ("{'judgement': 8, 'explanation': 'ok'}", "score", 8.0),
        ("{'judgement': '3', 'explanation': 'no'}", "score", 3.0),
    ],
)
def test_a_python_dict_with_single_quotes_is_read(text, mode, expected):
    assert parse_judgement(text, mode) == expected
