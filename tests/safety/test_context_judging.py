"""The three judging modes: prompts and parsing of one answer."""

from __future__ import annotations

import json
import math

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import (
    judge_prompt,
    parse_judgement,
    safe_probability,
    synthetic_casebench,
)


@pytest.fixture(scope="module")
def item():
    data = synthetic_casebench()
    return data.queries[0], data.contexts[0]


@pytest.mark.parametrize("mode", ["binary", "score", "logits"])
def test_prompts_carry_the_query_and_the_context_as_json(item, mode):
    query, context = item
    prompt = judge_prompt(query, context, mode)
    assert query in prompt
    assert json.dumps(context, indent=2, ensure_ascii=False) in prompt
    assert "verified" in prompt


def test_ablated_prompts_lose_the_group(item):
    query, context = item
    prompt = judge_prompt(query, context, "binary", ablate="sender")
    assert "platform_type" not in prompt and "confidentiality" in prompt
    with pytest.raises(InputError, match="^ablate"):
        judge_prompt(query, context, "binary", ablate="nope")


def test_unknown_mode_is_refused(item):
    with pytest.raises(InputError, match="^mode: expected one of 'binary', 'score', 'logits'"):
        judge_prompt(*item, "stars")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"judgement": "safe", "explanation": "x"}', "safe"),
        (
            'Here: {"judgement": "Unsafe", "explanation": "a {nested} brace"} {"judgement": "safe"}',
            "unsafe",
        ),
        ('{"judgement": "not safe at all"}', "safe"),  # the authors' rule: contains "safe"
        ('{"explanation": "x", "judgement": "UNSAFE."}', "unsafe"),
        ('{"judgement": "maybe"}', ""),
        ("safe", ""),  # no JSON block
        ("", ""),
        ('{"judgement": "safe" "explanation": "missing comma"}', "safe"),
        ('{"explanation": "contains } in a string", "judgement": "unsafe"}', "unsafe"),
    ],
)
def test_binary_parsing(text, expected):
    assert parse_judgement(text, "binary") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"judgement": 7, "explanation": "x"}', 7.0),
        ('{"judgement": "8/10"}', 8.0),
        ('{"judgement": "6.5"}', 6.5),
        ('{"judgement": 11}', ""),
        ('{"judgement": "high"}', ""),
        ("I would say 7", ""),
        ('{"judgement": ".5"}', ""),  # 0.5, out of range (was read as 5)
        ('{"judgement": "score .5 of 10"}', ""),
    ],
)
def test_score_parsing(text, expected):
    assert parse_judgement(text, "score") == expected


def test_safe_probability_sums_spellings_and_renormalises():
    top = {
        "safe": math.log(0.3),
        " Safe": math.log(0.1),
        "unsafe": math.log(0.05),
        " UNSAFE": math.log(0.05),
        "The": math.log(0.5),
    }
    assert safe_probability(top) == pytest.approx(0.4 / 0.5, rel=1e-12)
    pairs = [
        {"token": "▁safe", "logprob": math.log(0.2)},
        {"token": "Ġunsafe", "logprob": math.log(0.6)},
    ]
    assert safe_probability(pairs) == pytest.approx(0.25, rel=1e-12)
    assert safe_probability([("Sure", -0.1), ("I", -3.0)]) == ""
    assert safe_probability([("Understood", -0.1), ("Sample", -1.0)]) == ""


def test_safe_probability_of_a_nan_or_positive_logprob_is_no_answer():
    # NaN was skipped, so {"safe": nan, "unsafe": -1} read as P(safe) = 0 (certainly unsafe)
    assert safe_probability({"safe": math.nan, "unsafe": -1.0}) == ""
    assert safe_probability({"safe": 1.0, "unsafe": -1.0}) == ""  # log p > 0: no probability
    assert safe_probability({"safe": -math.inf, "unsafe": -1.0}) == 0.0  # p = 0 is one
    assert safe_probability({"safe": 1e-7, "unsafe": -30.0}) == pytest.approx(1.0)  # rounding


def test_safe_probability_counts_the_first_piece_of_a_split_word():
    # SmolLM2's tokenizer has "Safe" and "safe" but no "Unsafe" or "unsafe": an answer "Unsafe"
    # starts with the token "Un" (top tokens of its first position on a casebench prompt)
    top = {"The": 0.1, "Safe": 0.04, "safe": 0.05, "Un": 0.02, "un": 0.01, "Yes": 0.03}
    logprobs = {token: math.log(p) for token, p in top.items()}
    assert safe_probability(logprobs) == pytest.approx(0.09 / 0.12, rel=1e-12)
    assert safe_probability({"▁uns": math.log(0.3), "Sa": math.log(0.1)}) == pytest.approx(0.25)
    with pytest.raises(InputError, match="^top_logprobs"):
        safe_probability([1, 2, 3])
    with pytest.raises(InputError, match="^context: expected CI groups of JSON values"):
        judge_prompt("q", {"sender": {1, 2}}, "binary")
    # a log-probability that is not a number (a raw ValueError from float() before)
    with pytest.raises(InputError, match="^top_logprobs: expected a number as the log-prob"):
        safe_probability({"safe": "x"})
