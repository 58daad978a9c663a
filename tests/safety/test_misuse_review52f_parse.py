"""parse_subtasks: a Markdown horizontal rule is no subtask; '1.Sort' (no white space) is no item."""

from trustlab.safety.misuse.decompose import parse_subtasks


def test_horizontal_rule_is_not_an_item():
    assert parse_subtasks("1. Sort a list\n* * *\n2. Merge two lists", 5) == [
        "Sort a list\n* * *",
        "Merge two lists",
    ]
    assert parse_subtasks("Plan:\n\n* * *\n\n- Sort\n- Merge", 5) == ["Sort", "Merge"]
    assert parse_subtasks("- - -\n_ _ _\n***", 5) == []


def test_marker_without_white_space_is_not_an_item():
    # the docstring's rule (marker, then white space): '3.14' or '1.5 cups' lines are text too
    assert parse_subtasks("1.Sort a list", 3) == []
    assert parse_subtasks("1. Mix\n1.5 cups of flour\n2. Bake", 3) == [
        "Mix\n1.5 cups of flour",
        "Bake",
    ]
