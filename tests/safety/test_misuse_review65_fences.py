"""Review 65: parse_subtasks closes a fenced block only at a fence of its opening's kind and
length (CommonMark), as extract_code does; a ``` line inside a ```` or ~~~ block stays code."""

import pytest

from trustlab.safety.misuse import parse_subtasks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a four-backtick block showing a three-backtick one: '- no' is code, not a subtask
        ("1. a\n````\n```\n- no\n```\n````\n2. b", ["a\n````\n```\n- no\n```\n````", "b"]),
        # a tilde block holding backtick fences
        ("1. a\n~~~\n```\n- no\n```\n~~~\n2. b", ["a\n~~~\n```\n- no\n```\n~~~", "b"]),
        # an info string closes nothing: the block ends at the bare fence
        ("1. a\n```\nx\n```python\n- no\n```\n2. b", ["a\n```\nx\n```python\n- no\n```", "b"]),
        # a list wrapped in a four-backtick fence with a nested block: read without its fences
        ("````markdown\n1. a\n```\n- x\n```\n2. b\n````", ["a", "x", "b"]),
    ],
)
def test_nested_fences_keep_their_lines(text, expected):
    assert parse_subtasks(text, 5) == expected


def test_plain_fences_unchanged():
    text = "1. Write code:\n```python\n2. not an item\n```\n2. Merge\n```\n- x\n```"
    assert parse_subtasks(text, 5) == [
        "Write code:\n```python\n2. not an item\n```",
        "Merge\n```\n- x\n```",
    ]
