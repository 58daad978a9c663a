"""Parsing odd judge answers (second review): malformed JSON whose other values mention the key."""

from __future__ import annotations

import math

import pytest

from trustlab.safety.context import parse_judgement, safe_probability


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


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ({"safe": -800.0, "unsafe": -801.0}, 1 / (1 + math.exp(-1))),  # both exp() underflow
        ({"Safe": -1e9, "Un": -1e9}, 0.5),
        ({"safe": math.log(0.3), " Safe": math.log(0.1), "unsafe": math.log(0.1)}, 0.8),
        ({"unsafe": -2000.0, "maybe": -0.1}, 0.0),
    ],
)
def test_safe_probability_of_tiny_probabilities_is_their_ratio(top, expected):
    assert safe_probability(top) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("mode", ["binary", "score"])
def test_an_echo_of_the_prompts_answer_form_is_no_verdict(mode):
    from trustlab.safety.context import judge_prompt

    prompt = judge_prompt("q?", {"sender": {"platform_type": "web"}}, mode)
    form = prompt[prompt.index('{"judgement"') : prompt.rindex("}") + 1]  # as the prompt has it
    assert parse_judgement(form, mode) == ""  # read, it gave "safe" or a score of 1
    real = (
        '{"judgement": "unsafe", "explanation": "x"}'
        if mode == "binary"
        else ('{"judgement": 8, "explanation": "x"}')
    )
    assert parse_judgement(f"Form: {form}\nAnswer: {real}", mode) == (
        "unsafe" if mode == "binary" else 8.0
    )
    # a real answer first is read as before
    assert parse_judgement(f"{real} (form was {form})", mode) == parse_judgement(real, mode)
