"""The prompt's answer form echoed as a JSON string is no verdict either: a model that makes the
form valid JSON ("a score from 1 to 10", "safe or unsafe") before its answer was read as a score
of 1 or as "unsafe" (review 55)."""

from __future__ import annotations

import pytest

from trustlab.safety.context import parse_judgement

FORM = '"explanation": "your reasoning about the context"}'


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        ('{"judgement": "a score from 1 to 10", ' + FORM + '\n{"judgement": 8}', "score", 8.0),
        ('{"judgement": "safe or unsafe", ' + FORM + '\n{"judgement": "safe"}', "binary", "safe"),
        ('{"judgement": "\\"safe\\" or \\"unsafe\\""}\n{"judgement": "safe"}', "binary", "safe"),
        ('{"judgement": "a score from 1 to 10", ' + FORM, "score", ""),
        # the forms as the prompt writes them, and answers that only mention the words
        ('{"judgement": a score from 1 to 10, ' + FORM + '\n{"judgement": 8}', "score", 8.0),
        ('{"judgement": "unsafe", "explanation": "safe or unsafe depends"}', "binary", "unsafe"),
        ('{"judgement": "7", "explanation": "a score from 1 to 10 fits"}', "score", 7.0),
    ],
)
def test_an_echoed_answer_form_is_passed_over(text, mode, expected):
    assert parse_judgement(text, mode) == expected
