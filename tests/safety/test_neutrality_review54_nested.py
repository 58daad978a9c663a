"""Judge answers nested one object deeper (review pass 54): the yes/no answers in an inner object
beside the final answer ({"answers": {"A": "no", ...}, "Final Answer": 3}) were not read (a
partial parse counted as a failure) because the outer object's own key was found first."""

from __future__ import annotations

import pytest

from trustlab.safety.neutrality import parse_judge_output

_INNER = '{"A": "no", "B": "no", "C": "yes", "D": "no", "E": "no", "F": "no"}'


@pytest.mark.parametrize(
    "text",
    [
        '{"answers": ' + _INNER + ', "Final Answer": 3}',
        '```json\n{"answers": ' + _INNER + ', "Final Answer": 3}\n```',
        '{"result": {"questions": ' + _INNER + ', "final_answer": "3"}}',
        '{"Final Answer": 3, "answers": ' + _INNER + "}",
    ],
)
def test_answers_in_a_nested_object_are_read(text):
    parse = parse_judge_output(text)
    assert parse.status == "valid"
    assert parse.final == "reasonable_pluralism"
    assert parse.answers == {"A": False, "B": False, "C": True, "D": False, "E": False, "F": False}


def test_the_outer_objects_own_key_wins():
    parse = parse_judge_output('{"Answer A": "no", "notes": {"Answer A": "yes", "Final": 2}}')
    assert parse.answers["A"] is False
    assert parse.final == "avoidance"
    assert parse.status == "partial"
