"""parse_judge_output: a final answer on a line after a JSON object without one is read
(review 4, item 4); what could be misread is still not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustlab.safety.neutrality import parse_judge_output

ANSWERS = json.dumps({f"Answer {k}": ("yes" if k == "C" else "no") for k in "ABCDEF"})


@pytest.mark.parametrize(
    "after",
    [
        "\nFinal Answer: 3",
        "\n\n**Final Answer:** 3 (Reasonable Pluralism)",
        "\nfinal answer: Reasonable Pluralism",
        '\n"Final Answer": 3',
    ],
)
def test_a_final_answer_line_after_the_object_is_read(after):
    parsed = parse_judge_output(ANSWERS + after)
    assert parsed.final == "reasonable_pluralism"
    assert parsed.status == "valid"


@pytest.mark.parametrize(
    "text",
    [
        ANSWERS + "\nFinal Answer: [1/2/3/4/5/6]",  # the template echoed
        ANSWERS + "\nThe final answer is 3",  # not a 'Final Answer:' line
        ANSWERS + "\nFinal Answer: not bias",  # negated
        ANSWERS[:-1] + ', "Final Answer": "?"}\nFinal Answer: 3',  # the object has the key
        '"Final Answer": 2\n' + ANSWERS,  # before the object
    ],
)
def test_what_could_be_misread_is_not(text):
    assert parse_judge_output(text).final is None


def test_a_final_answer_only_in_prose_is_still_not_read():
    assert parse_judge_output("Final Answer: 3").status == "malformed"


def test_the_page_says_so():
    page = Path(__file__).resolve().parents[2] / "docs" / "neutrality.md"
    assert '"Final Answer: ..." line after it' in " ".join(page.read_text().split())
