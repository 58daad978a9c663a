"""Review 64: a score written with a comma between digits was read as the digits before the
comma: "1,000" gave 1.0 (unsafe), "10,000" 10.0 (safe) and a decimal comma "5,8" 5.0 (unsafe,
where 5.8 is safe). Such a number is ambiguous (thousands separator or decimal comma) and is
now "" (a parse failure); a comma followed by a space still ends the number."""

from __future__ import annotations

import pytest

from trustlab.safety.context import parse_judgement


@pytest.mark.parametrize("value", ["1,000", "10,000", "5,8", "7,5/10"])
def test_a_number_with_a_comma_between_digits_is_no_score(value):
    assert parse_judgement(f'{{"judgement": "{value}"}}', "score") == ""


def test_a_comma_after_the_number_still_ends_it():
    assert parse_judgement('{"judgement": "7, mostly safe"}', "score") == 7.0
    assert parse_judgement('{"judgement": "6.5"}', "score") == 6.5
