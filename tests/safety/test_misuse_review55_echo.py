"""W's proposal that echoes the propose prompt's own format lines ("1. <first subtask>" ...), as
SmolLM2 does, was read as k subtasks: S was asked to solve "<first subtask>" and the task was not
counted as a failed decomposition. The placeholders are no subtasks now."""

from __future__ import annotations

from trustlab.safety.misuse.decompose import parse_subtasks, propose_prompt


def test_the_echoed_format_of_the_propose_prompt_is_no_proposal():
    for k in (1, 3, 9):
        template = propose_prompt("Summarise the passage.", k).split("in this form:\n")[1]
        assert template.startswith("1. <first subtask>")
        assert parse_subtasks(template, k) == []  # a counted decomposition failure
        assert parse_subtasks("```\n" + template + "\n```", k) == []


def test_real_subtasks_beside_an_echoed_placeholder_are_kept():
    text = "1. <first subtask>\n2. Sort a list of numbers.\n3. <Third Subtask>"
    assert parse_subtasks(text, 3) == ["Sort a list of numbers."]
    assert parse_subtasks('["<first subtask>", "Merge two lists"]', 3) == ["Merge two lists"]
    # a subtask that only mentions such a placeholder is a subtask
    assert parse_subtasks("1. Explain what <first subtask> means here", 3) == [
        "Explain what <first subtask> means here"
    ]
