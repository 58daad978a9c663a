"""The judge parser on replies found in review: non-finite or overlong final answers (no
exception)."""

from __future__ import annotations

import pytest

from trustlab.safety.neutrality import parse_judge_output

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
