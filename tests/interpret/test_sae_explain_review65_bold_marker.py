"""Review 65 (rsae2): an answer with the marker in bold, as chat models write it, kept the bold's
closing stars in the explanation ("**[EXPLANATION]:** The word cat" -> "** The word cat",
"**[EXPLANATION]: The word cat**" -> "The word cat**"), which then went to every scorer."""

from __future__ import annotations

import pytest

from trustlab.interpret.sae.explain import parse_explanation


@pytest.mark.parametrize(
    "answer",
    [
        "**[EXPLANATION]:** The word cat",
        "**[EXPLANATION]: The word cat**",
        "Thinking...\n__[EXPLANATION]:__ The word cat\n",
        "[EXPLANATION]: **The word cat**",
    ],
)
def test_a_bold_marker_leaves_no_stars(answer):
    assert parse_explanation(answer) == ("The word cat", True)


def test_stars_inside_the_explanation_are_kept():
    assert parse_explanation("[EXPLANATION]: the **bold** word cat") == (
        "the **bold** word cat", True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("**[EXPLANATION]: **kwargs parameters**", "**kwargs parameters"),
        ("*[EXPLANATION]: *args*", "*args"),
        ("**[EXPLANATION]:** **kwargs parameters", "**kwargs parameters"),
        ("__[EXPLANATION]:__ snake_case_", "snake_case_"),
        ("[EXPLANATION]: snake_case_", "snake_case_"),
    ],
)
def test_an_explanation_starting_with_stars_keeps_them(answer, expected):
    # diff review 65 S: the start was cut first, so "**kwargs parameters**" lost its own stars
    assert parse_explanation(answer) == (expected, True)
