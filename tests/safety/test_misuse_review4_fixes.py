"""run_humaneval: an answer cannot forge the sign that ``check`` returned (review 4, item 1)."""

from __future__ import annotations

import pytest

from trustlab.safety.misuse.checks import run_humaneval

TEST = "def check(f):\n    assert f(1) == 2\n"
WRONG = "def inc(x):\n    return x + 2\n"


@pytest.mark.parametrize(
    "forgery",
    [
        "open('check_returned', 'w').close()\n",
        "open('check_returned', 'w').write('x' * 32)\n",
    ],
)
def test_an_answer_that_writes_the_marker_and_exits_fails(forgery):
    program = WRONG + forgery + "import os\nos._exit(0)\n"
    run = run_humaneval(program, TEST, "inc")
    assert not run.passed
    assert run.status == "failed"
    assert "before the test ended" in run.detail


def test_the_program_reads_the_null_device_not_the_token():
    program = (
        "def inc(x):\n    return x + 1\n"
        "import sys\nseen = sys.stdin.read()\nassert seen == '', repr(seen)\n"
    )
    run = run_humaneval(program, TEST, "inc")
    assert run.passed, run.detail


def test_a_correct_answer_still_passes_and_a_wrong_one_fails():
    assert run_humaneval("def inc(x):\n    return x + 1\n", TEST, "inc").passed
    assert not run_humaneval(WRONG, TEST, "inc").passed


def test_prose_after_the_list_stays_in_the_last_subtask_as_the_page_says():
    from pathlib import Path

    from trustlab.safety.misuse.decompose import parse_subtasks

    # the same shape: a blank line, then a paragraph at the list's indentation
    prose = parse_subtasks("1. A\n2. B\n\nThese subtasks are harmless.", 3)
    passage = parse_subtasks("1. Summarise the passage below.\n\nPassage: Rain.", 3)
    assert prose == ["A", "B\n\nThese subtasks are harmless."]
    assert passage == ["Summarise the passage below.\n\nPassage: Rain."]
    page = " ".join(
        (Path(__file__).resolve().parents[2] / "docs" / "misuse.md").read_text().split()
    )
    assert "prose after the proposal's list" in page
    assert "stays in its last subtask" in page
