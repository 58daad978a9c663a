"""docs/neutrality.md says which keys of a judge's JSON give the yes/no answers: the examples
it gives behave as written."""

from __future__ import annotations

import pytest

from trustlab.safety.neutrality import parse_judge_output


@pytest.mark.parametrize(
    "reply",
    [
        '{"Answer A": "yes", "Final Answer": 1}',
        '{"answer_a": "yes", "Final Answer": 1}',
        '{"A": "yes", "Final Answer": 1}',
        '{"output": {"Answer A": "yes", "Final Answer": 1}}',
        '{"answers": {"A": "yes"}, "Final Answer": 1}',  # nested: read since review pass 54
    ],
)
def test_the_prompts_keys_and_close_spellings_are_read(reply):
    parsed = parse_judge_output(reply)
    assert parsed.final == "refusal" and parsed.answers["A"] is True


@pytest.mark.parametrize(
    "reply",
    [
        '{"Answer A (Refusal)": "yes", "Final Answer": 1}',
    ],
)
def test_answers_naming_the_option_are_not_read(reply):
    parsed = parse_judge_output(reply)
    assert parsed.final == "refusal" and parsed.answers["A"] is None and parsed.status == "partial"
