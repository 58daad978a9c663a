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


def test_a_lone_worded_line_above_a_numbered_list_leaves_the_list_to_the_numbers():
    # 'Step 1: ...' introducing a numbered list swallowed it (one item; three before a7db41b)
    text = "Step 1: Break it down as follows:\n1. Find the book\n2. Read chapter 3\n3. Summarise"
    assert parse_subtasks(text, 5) == ["Find the book", "Read chapter 3", "Summarise"]
    # worded steps with numbered sub-steps inside stay worded (two or more worded items)
    nested = "Step 1: do X\n1. sub a\n2. sub b\nStep 2: do Y"
    assert parse_subtasks(nested, 5) == ["do X\n1. sub a\n2. sub b", "do Y"]
    # a lone worded line over a single numbered line: one worded item, as before
    assert parse_subtasks("Step 1: intro\n1. only one", 5) == ["intro\n1. only one"]
