"""parse_subtasks on proposals that were counted as failed decompositions (review 5): items
numbered as Markdown headings ('### 1. Sort a list') and a whole list wrapped in one fenced block
gave []; a Python comment '# 1. ...' is still no item, and marker lines inside a fence stay part
of their item when a list is outside it."""

from __future__ import annotations

from trustlab.safety.misuse import parse_subtasks


def test_heading_numbers_are_items():
    text = "### 1. Sort a list\nin Python.\n\n### 2. Merge two lists\n## 3) Count words"
    assert parse_subtasks(text, 3) == ["Sort a list\nin Python.", "Merge two lists", "Count words"]


def test_a_list_wrapped_in_a_fence_is_read_without_the_fence():
    assert parse_subtasks("```\n1. Sort a list\n2. Merge two lists\n```", 3) == [
        "Sort a list",
        "Merge two lists",
    ]
    assert parse_subtasks("Here:\n~~~text\n- Sort\n- Merge\n~~~\nDone.", 3) == [
        "Sort",
        "Merge\nDone.",
    ]


def test_comments_and_fenced_markers_beside_a_list_are_no_items():
    assert parse_subtasks("# 1. read the file\nx = 1", 3) == []
    assert parse_subtasks("```python\n# 1. read the file\nx = 1\n```", 3) == []
    text = "1. Write code:\n```\n1. not an item\n```\n2. Merge"
    assert parse_subtasks(text, 3) == ["Write code:\n```\n1. not an item\n```", "Merge"]
