"""Diff review 64 C: in a block that is not valid JSON (the broken-JSON path), the
``judgement`` value was cut at the first comma, so "5,8" or 1,000 still read as 5 / 1 although a
number with a comma between digits is no score; a comma that ends the value still does."""

from __future__ import annotations

import pytest

from trustlab.safety.context import parse_judgement


@pytest.mark.parametrize(
    "text",
    [
        '{"judgement": 5,8, "explanation": "x"}',
        '{"judgement": 1,000}',
        '{"judgement": "5,8" "explanation": "x"}',
        "{'judgement': 6,5, 'explanation': 'x'}",
    ],
)
def test_a_digit_comma_in_broken_json_is_no_score(text):
    assert parse_judgement(text, "score") == ""


@pytest.mark.parametrize(
    "text",
    ['{"judgement": 7,}', '{"judgement": 7,"explanation": "x",}', '{"judgement": 7,\n"e": 1,}'],
)
def test_a_comma_ending_the_value_in_broken_json_still_ends_it(text):
    assert parse_judgement(text, "score") == 7.0
