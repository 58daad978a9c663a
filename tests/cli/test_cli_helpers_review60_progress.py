"""``one_line`` leaves out every line the CLI's line progress writes on a busy machine, the step's
last line "...: done in 5 s" too, and never an error line (review 60: the early full run under
load failed test_a_chunks_file_is_refused_without_the_overwrite_hint on "trustlab: loading
...: done in 5 s")."""

import pytest

from cli_helpers import PROGRESS_LINE, one_line
from trustlab.cli._progress import LineProgress


def test_the_lines_line_progress_writes_are_left_out():
    progress = LineProgress()
    bare = progress.tasks[progress.add_task("loading /tmp/tiny-llama")]
    counted = progress.tasks[progress.add_task("audit: training", total=8)]
    counted.completed = 3
    written = [
        progress.line(bare, bare.started + 4),  # "trustlab: loading /tmp/tiny-llama: 4 s"
        progress.line(bare, bare.started + 5, done=True),  # "...: done in 5 s"
        progress.line(counted, counted.started + 65),  # "...: 3/8 (38%), 1 min 05 s"
        progress.line(counted, counted.started + 152, done=True),  # "...: done in 2 min 32 s"
    ]
    assert written[1] == "trustlab: loading /tmp/tiny-llama: done in 5 s"
    error = "trustlab: error: --out: expected a directory that can be created, got 'x'"
    assert one_line("\n".join([*written, error]) + "\n") == error
    assert not PROGRESS_LINE.match("trustlab: error: --n: expected a count, done in 5 s")
    with pytest.raises(AssertionError):
        one_line("\n".join(written))
