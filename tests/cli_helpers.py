"""Helpers for driving the CLI in tests (``from cli_helpers import ...``; tests/ is on the path)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from contextlib import contextmanager
from pathlib import Path

import pytest

from trustlab.cli.main import main


def run_main(args, capsys):
    """Run ``trustlab ARGS`` through main(); return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def run_quiet(*args):
    """``trustlab ARGS`` outside a test's capsys (for module fixtures): (code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
    return exc.value.code, out.getvalue(), err.getvalue()


#: A progress line of cli/_progress.LineProgress ("trustlab: loading m: 2 s", "...: 3/8 (38%),
#: 1 min 05 s", and the step's last line "...: done in 5 s"): written once a step has run for 2 s,
#: so on a busy machine it can come before an error that a quick machine reports alone.
PROGRESS_LINE = re.compile(
    r"^trustlab: (?!error: ).+: (\d+(\.\d+)?/\d+(\.\d+)? \(\d+%\), |done in )?"
    r"(\d+ s|\d+ min \d\d s|\d+ h \d\d min)$"
)


def with_options(args, extra) -> list:
    """``args`` with each option of ``extra`` (option, value pairs) set to its value: replaced
    where ``args`` gives it (``--n 200`` or ``--n=200``), appended where it does not (the CLI
    refuses an option given twice)."""
    args = list(args)
    extra = list(extra)
    for option, value in zip(extra[::2], extra[1::2], strict=True):
        if option in args:
            args[args.index(option) + 1] = value
        elif any(str(a).startswith(option + "=") for a in args):
            i = next(i for i, a in enumerate(args) if str(a).startswith(option + "="))
            args[i] = f"{option}={value}"
        else:
            args += [option, value]
    return args


def one_line(err: str) -> str:
    """The single non-empty line of ``err`` besides progress lines (failing if there is not
    exactly one)."""
    lines = [line for line in err.splitlines() if line.strip() and not PROGRESS_LINE.match(line)]
    assert len(lines) == 1, err
    return lines[0]


class Recorder:
    """Stands for the progress bar: records the tasks' totals and what was completed."""

    def __init__(self):
        self.totals, self.completed = [], []

    @contextmanager
    def progress(self, enabled=True):
        yield self

    def add_task(self, description, total=None, **_):
        self.totals.append(total)
        return len(self.totals) - 1

    def update(self, task, *, completed=None, total=None, **_):
        if completed is not None:
            self.completed.append(completed)


ROOT = Path(__file__).resolve().parents[1]


def documented(page: str, *commands: str) -> list[list[str]]:
    """The command lines of a page's code blocks that start with one of ``commands`` (e.g.
    ``"trustlab audit"``), as arguments without the leading ``trustlab``. Every example also runs
    in tests/test_cli_examples.py; the command's own tests use this to check its output."""
    found, inside = [], False
    for line in (ROOT / page).read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and any(line == c or line.startswith(c + " ") for c in commands):
            found.append(shlex.split(line, comments=True)[1:])
    assert found, f"{page} shows no {commands} command"
    return found


class InterruptAt:
    """Stands for a CLI module's ``progress`` bar and presses Ctrl-C when a task reaches
    ``completed`` (e.g. once epoch k is saved): ``patch.setattr(module, "progress",
    InterruptAt(2))``."""

    def __init__(self, completed: int):
        self.at = completed

    @contextmanager
    def __call__(self, enabled=True):
        yield self

    def add_task(self, description, total=None, **_):
        return 0

    def update(self, task, *, completed=None, **_):
        if completed == self.at:
            raise KeyboardInterrupt
