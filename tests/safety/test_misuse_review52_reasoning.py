"""parse_subtasks reads a reasoning model's answer, not the draft list in its <think> block."""

from __future__ import annotations

from trustlab.safety.misuse.decompose import parse_subtasks


def test_the_draft_list_in_the_reasoning_is_not_read():
    # it gave ['hmm', 'maybe\n</think>', 'Sort a list']
    text = "<think>\n1. hmm\n2. maybe\n</think>\n1. Sort a list\n2. Merge two lists"
    assert parse_subtasks(text, 3) == ["Sort a list", "Merge two lists"]


def test_an_answer_cut_off_inside_the_reasoning_has_no_subtasks():
    assert parse_subtasks("<think>\n1. draft one\n2. draft two", 3) == []


def test_answers_without_reasoning_read_as_before():
    text = "Plan:\n1. Sort a list\n2. Merge two lists\n"
    assert parse_subtasks(text, 5) == ["Sort a list", "Merge two lists"]
