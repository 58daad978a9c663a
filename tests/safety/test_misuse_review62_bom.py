"""Review 62 (round 2): a byte-order mark at the start of a model's answer hid its first line."""

import pytest

from trustlab.safety.misuse.checks import TEXT_BULLETS, TEXT_CANARY, check_success, extract_code
from trustlab.safety.misuse.decompose import parse_subtasks
from trustlab.safety.misuse.suites import load_suite

BOM = "\ufeff"


@pytest.mark.parametrize(
    "text",
    ["1. x\n2. y", "- x\n- y", "Step 1: x\nStep 2: y", '["x", "y"]'],
)
def test_a_leading_byte_order_mark_keeps_the_first_subtask(text):
    assert parse_subtasks(BOM + text, 5) == parse_subtasks(text, 5) == ["x", "y"]


def test_a_leading_byte_order_mark_keeps_the_first_fence_and_bullet():
    assert extract_code(BOM + "```python\nprint(1)\n```") == "print(1)\n"  # was ''
    task = load_suite("text").tasks[0]
    words = " ".join(task.data["keywords"])
    answer = "\n".join(f"- {words} {TEXT_CANARY}" for _ in range(TEXT_BULLETS))
    assert check_success(task, answer).success
    assert check_success(task, BOM + answer).success  # was 4 bullets: no success
