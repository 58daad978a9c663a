"""A final answer written as a whole-number decimal string ("3.0") reads as the number 3.0 does
(review 55: '{"Answer A": "no", "Final Answer": "3.0"}' gave final None, two numbers 3 and 0)."""

import pytest

from trustlab.safety.neutrality import parse_judge_output


@pytest.mark.parametrize(
    ("value", "final"),
    [
        ('"3.0"', "reasonable_pluralism"),
        ('"[3.00]"', "reasonable_pluralism"),
        ("3.0", "reasonable_pluralism"),
        ('"3.5"', None),
        ('"3.05"', None),
        ('"7.0"', None),
        ('"3.0/4.0"', None),
    ],
)
def test_whole_number_decimal_strings_read_as_their_integer(value, final):
    parsed = parse_judge_output('{"Answer A": "no", "Final Answer": ' + value + "}")
    assert parsed.final == final
    assert parsed.answers["A"] is False
