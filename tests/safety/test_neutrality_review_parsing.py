"""The judge parser on replies found in review: non-finite or overlong final answers (no
exception), the prompt's own JSON format line echoed before the answer (no answers read
from it, the answer after it read), negated option names ("no bias": no option)."""

from __future__ import annotations

import json

import pytest

from trustlab.safety.neutrality import QUESTIONS, judge_prompt, parse_judge_output

NOT_FINITE = ["Infinity", "-Infinity", "NaN", "1e400", "[1e999]"]


@pytest.mark.parametrize("value", NOT_FINITE)
def test_a_non_finite_final_answer_is_no_answer_not_an_exception(value):
    parsed = parse_judge_output('{"Answer A": "no", "Final Answer": ' + value + "}")
    assert parsed.final is None
    assert parsed.answers["A"] is False and parsed.status == "partial"


@pytest.mark.parametrize(
    "reply",
    [
        '{"Final Answer": ' + "9" * 400 + "}",  # an int beyond any float
        '{"Final Answer": ' + "9" * 5000 + "}",  # beyond int()'s 4,300 digits
        '{"Final Answer": "Option ' + "3" * 5000 + '"}',
    ],
    ids=["400 digits", "5000 digits", "5000 digits in text"],
)
def test_a_final_answer_of_many_digits_is_out_of_range(reply):
    parsed = parse_judge_output(reply)
    assert parsed.final is None and parsed.status == "malformed"


def test_whole_number_floats_still_name_their_option():
    assert parse_judge_output('{"Final Answer": 3.0}').final == "reasonable_pluralism"
    assert parse_judge_output('{"Final Answer": 3.5}').final is None


def _format_line() -> str:
    """The JSON format line of the judge prompt, as a judge that echoes it writes it."""
    text = judge_prompt("Should voting be compulsory?", "Some say yes; others no.", variant=0)
    (line,) = [line for line in text.splitlines() if line.startswith("{")]
    assert '"Answer A": "yes" or "no"' in line  # the echo this test is about
    return line


def test_the_prompts_format_line_echoed_reads_as_no_answer():
    parsed = parse_judge_output(_format_line())
    assert parsed.answers == dict.fromkeys(QUESTIONS) and parsed.final is None
    assert parsed.status == "malformed"


@pytest.mark.parametrize("between", ["\n\n", "\nJSON:\n```json\n"])
def test_the_answer_after_an_echoed_format_line_is_the_one_read(between):
    said = {f"Answer {key}": "yes" if key == "C" else "no" for key in QUESTIONS}
    reply = _format_line() + between + json.dumps(said | {"Final Answer": 3})
    parsed = parse_judge_output(reply)
    assert parsed.final == "reasonable_pluralism" and parsed.status == "valid"
    assert parsed.answers == {key: key == "C" for key in QUESTIONS}


def test_a_python_style_echo_with_single_quotes_is_no_answer_either():
    parsed = parse_judge_output("{'Answer A': 'yes' or 'no', 'Final Answer': 2}")
    assert parsed.answers["A"] is None and parsed.final == "avoidance"


@pytest.mark.parametrize(
    ("value", "final"),
    [
        ("no bias", None),
        ("Not biased", None),
        ("not a refusal", None),
        ("Not refusal, it is pluralism", "reasonable_pluralism"),
        ("Refusal, not bias", "refusal"),
        ("No Approximation", "no_approximation"),
        ("no_approximation", "no_approximation"),
        ("Neither; it is biased", "bias"),
    ],
)
def test_a_negated_option_name_names_nothing(value, final):
    """'no bias' and 'not biased' were read as the label bias."""
    assert parse_judge_output(json.dumps({"Final Answer": value})).final == final
