"""parse_subtasks on worded and lettered lists (review pass 54).

A proposal written as 'Step 1: ...', 'Subtask 1 - ...', '1: ...', 'a) ...' or '(a) ...' gave []
and was counted as a failed decomposition (the combination then scored 0 on the task).
"""

from __future__ import annotations

import pytest

from trustlab.safety.misuse import parse_subtasks


@pytest.mark.parametrize(
    "text",
    [
        "Step 1: Sort a list\nStep 2: Merge two lists",
        "Sure, here they are.\n\nStep 1. Sort a list\nStep 2. Merge two lists",
        "**Step 1:** Sort a list\n**Step 2:** Merge two lists",
        "**Step 1: Sort a list**\n**Step 2: Merge two lists**",
        "### Step 1: Sort a list\n### Step 2: Merge two lists",
        "Subtask 1 - Sort a list\nSubtask 2 - Merge two lists",
        "Task 1) Sort a list\nTask 2) Merge two lists",
        "1: Sort a list\n2: Merge two lists",
        "a) Sort a list\nb) Merge two lists",
        "(A) Sort a list\n(B) Merge two lists",
        "```\nStep 1: Sort a list\nStep 2: Merge two lists\n```",
    ],
)
def test_worded_and_lettered_lists_are_read(text):
    assert parse_subtasks(text, 5) == ["Sort a list", "Merge two lists"]


def test_a_worded_item_keeps_its_own_bullets():
    text = "Step 1: Sort a list\n- ascending\n- stable\nStep 2: Merge two lists"
    assert parse_subtasks(text, 5) == ["Sort a list\n- ascending\n- stable", "Merge two lists"]


def test_lettered_lines_under_a_numbered_item_stay_in_it():
    text = "1. Sort a list\na) ascending\nb) descending\n2. Merge two lists"
    assert parse_subtasks(text, 5) == [
        "Sort a list\na) ascending\nb) descending",
        "Merge two lists",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I would rather not. Step 1: would be to refuse, a) and b) too.",
        "Step 1 is to say no.\nThe meeting is at 10:30.\nChapter 1: none of this.",
        "Stepping 1: no\nab) no\n1:no",
    ],
)
def test_prose_is_not_split(text):
    assert parse_subtasks(text, 5) == []
