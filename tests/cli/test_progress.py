"""Progress of long commands without a terminal, and the up-front plan with its --yes bound."""

from __future__ import annotations

import io
import time

import pytest

from trustlab.cli._progress import LineProgress, announce, format_seconds, progress, tracker
from trustlab.errors import InputError


def test_seconds_read_like_a_person_writes_them():
    assert [format_seconds(s) for s in (0.4, 7, 65, 3600 + 125)] == [
        "0 s",
        "7 s",
        "1 min 05 s",
        "1 h 02 min",
    ]


def test_a_quick_task_writes_nothing():
    stream = io.StringIO()
    with LineProgress(stream, delay=5.0, interval=1.0) as bar:
        task = bar.add_task("certifying 3 points", total=3)
        for _ in range(3):
            bar.advance(task)
    assert stream.getvalue() == ""


def test_a_long_task_writes_lines_with_totals_and_a_last_line():
    stream = io.StringIO()
    with LineProgress(stream, delay=0.0, interval=0.05) as bar:
        task = bar.add_task("certifying 4 points", total=4)
        for _ in range(4):
            time.sleep(0.06)
            bar.advance(task)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("trustlab: certifying 4 points: ")
    assert any("/4 (" in line for line in lines)
    assert lines[-1].startswith("trustlab: certifying 4 points: done in ")


def test_a_task_without_total_still_says_it_is_running():
    # the background ticker writes even when the command gives no updates (an opaque solve)
    stream = io.StringIO()
    with LineProgress(stream, delay=0.05, interval=0.05) as bar:
        bar.add_task("solving", total=None)
        time.sleep(0.7)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2 and lines[0].startswith("trustlab: solving: ")
    assert lines[-1].startswith("trustlab: solving: done in")


def test_a_new_stage_is_said_at_once():
    stream = io.StringIO()
    with LineProgress(stream, delay=0.0, interval=60.0) as bar:
        task = bar.add_task("stage one", total=2)
        bar.advance(task)
        bar.update(task, description="stage two")
    text = stream.getvalue()
    assert "trustlab: stage one: 1/2 (50%)" in text and "trustlab: stage two:" in text


def test_a_hidden_task_ends_there():
    # Rich's update(task, visible=False): the loading spinner stops once the model is loaded
    stream = io.StringIO()
    with LineProgress(stream, delay=0.0, interval=0.05) as bar:
        task = bar.add_task("loading", total=None)
        time.sleep(0.12)
        bar.update(task, visible=False)
        at_hiding = stream.getvalue()
        time.sleep(0.3)  # the ticker runs on: it must not speak of the task again
    assert at_hiding.splitlines()[-1].startswith("trustlab: loading: done in ")
    assert stream.getvalue() == at_hiding


def test_no_last_line_after_an_error():
    stream = io.StringIO()
    with pytest.raises(RuntimeError), LineProgress(stream, delay=0.0, interval=60.0) as bar:
        bar.add_task("working", total=2)
        time.sleep(0.01)
        bar.advance(0)
        raise RuntimeError("boom")
    assert "done in" not in stream.getvalue()


def test_announce_says_the_plan_or_asks_for_yes(capsys):
    announce("certifying 5 points x 1,000 samples", work=5e3, limit=1e9, yes=False)
    assert capsys.readouterr().err == "trustlab: certifying 5 points x 1,000 samples\n"
    with pytest.raises(InputError, match=r"^--yes: certifying .* is 5e\+12 samples, beyond"):
        announce("certifying 5 points", work=5e12, limit=1e9, yes=False, unit=" samples")
    announce("certifying 5 points", work=5e12, limit=1e9, yes=True)
    assert "certifying 5 points" in capsys.readouterr().err


def test_a_tracker_moves_its_task_to_the_reported_count():
    stream = io.StringIO()
    with LineProgress(stream, delay=0.0, interval=0.0) as bar:
        report = tracker(bar, "reading 3 prompts", 3)
        report(2, 3)
        report(3, 3)
    lines = stream.getvalue().splitlines()
    assert "trustlab: reading 3 prompts: 2/3 (67%), 0 s" in lines
    assert lines[-1].startswith("trustlab: reading 3 prompts: done in ")


def test_the_terminal_bar_shows_no_count_without_a_total():
    # Rich's own column shows "0/?" for a spinner task (a model load); ours shows nothing
    from rich.console import Console

    import trustlab.cli._progress as module

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    original = module.err_console
    module.err_console = console
    try:
        with progress() as bar:
            bar.add_task("loading a model", total=None)
            counted = bar.add_task("reading", total=4)
            bar.update(counted, completed=1)
            rows = [str(column.render(task)) for task in bar.tasks for column in bar.columns[3:4]]
    finally:
        module.err_console = original
    assert rows == ["", "1/4"]


def test_announce_tells_a_size_just_beyond_the_limit_from_the_limit():
    # review 55: 1,000,001 rows read "is 1e+06 rows, beyond the 1e+06 rows"
    with pytest.raises(InputError, match=r"is 1000001 rows, beyond the 1000000 rows this"):
        announce("explaining all rows", work=1_000_001, limit=1e6, yes=False, unit=" rows")
