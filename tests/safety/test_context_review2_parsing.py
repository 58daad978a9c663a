"""Parsing odd judge answers (second review): malformed JSON whose other values mention the key."""

from __future__ import annotations

import pytest

from trustlab.safety.context import parse_judgement


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [  # a trailing comma or a missing comma makes the block invalid JSON
        ('{"explanation": "the judgement: unsafe", "judgement": "safe",}', "binary", "safe"),
        ('{"explanation": "my judgment: unsafe" "judgement": "safe"}', "binary", "safe"),
        ('{"explanation": "judgement: 2 would be wrong", "judgement": 9,}', "score", 9.0),
        # no quoted key at all: the loose reading still applies
        ("{judgement: unsafe, explanation: x}", "binary", "unsafe"),
        ('{"judgement": "unsafe", "explanation": "a judgement: safe",}', "binary", "unsafe"),
    ],
)
def test_the_judgement_key_wins_over_the_word_inside_another_value(text, mode, expected):
    assert parse_judgement(text, mode) == expected
