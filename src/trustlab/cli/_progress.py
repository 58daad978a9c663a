"""Progress of long commands: a Rich bar on a terminal, plain lines on stderr everywhere else.

A command wraps its work in ``with progress() as bar`` and calls ``bar.add_task``,
``bar.update`` and ``bar.advance`` as with Rich. Without a terminal (CI logs, pipes, nohup)
:class:`LineProgress` writes a line such as ``trustlab: certifying 540 points: 120/540 (22%),
1 min 05 s`` once a task has run for a couple of seconds and then every ``interval`` seconds, and
a last line when it ends; short commands stay silent, so a quick error is still one line.
:func:`announce` says up front what a command will do and asks for ``--yes`` beyond a bound.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, TextIO

import typer

from trustlab.cli._console import err_console, tell
from trustlab.errors import InputError

__all__ = [
    "LineProgress",
    "YesOption",
    "announce",
    "format_seconds",
    "planned",
    "progress",
    "tracker",
]

YesOption = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Run even when the work is far beyond the usual size."),
]


def format_seconds(seconds: float) -> str:
    """``"7 s"``, ``"2 min 05 s"``, ``"1 h 02 min"``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass
class _Task:
    description: str
    total: float | None
    started: float
    completed: float = 0.0
    last_line: float | None = None  # when its last line was written (None: never)
    finished: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class LineProgress:
    """Rich's ``add_task`` / ``update`` / ``advance`` as lines on a text stream.

    Parameters
    ----------
    stream : text stream, default sys.stderr
    delay : float
        A task writes nothing before it has run this long (quick commands stay silent).
    interval : float
        Seconds between two lines of the same task.
    """

    def __init__(self, stream: TextIO | None = None, *, delay: float = 2.0, interval: float = 10.0):
        self.stream = sys.stderr if stream is None else stream
        self.delay, self.interval = delay, interval
        self.tasks: list[_Task] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # Rich's interface ---------------------------------------------------------------------

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        self.tasks.append(_Task(description, total, time.monotonic()))
        return len(self.tasks) - 1

    def update(
        self,
        task_id: int,
        *,
        completed: float | None = None,
        total: float | None = None,
        advance: float | None = None,
        description: str | None = None,
        visible: bool | None = None,
        **_: Any,
    ) -> None:
        task = self.tasks[task_id]
        if visible is False:  # Rich hides the task; here it ends (its last line if it had one)
            self._finish(task, time.monotonic())
            return
        with task.lock:
            if total is not None:
                task.total = total
            if completed is not None:
                task.completed = completed
            if advance is not None:
                task.completed += advance
            if description is not None and description != task.description:
                task.description = description
                task.last_line = None if task.last_line is None else 0.0  # say the new stage
        self._tick(task)

    def advance(self, task_id: int, advance: float = 1) -> None:
        self.update(task_id, advance=advance)

    # lines ---------------------------------------------------------------------------------

    def line(self, task: _Task, now: float, done: bool = False) -> str:
        elapsed = format_seconds(now - task.started)
        if done:
            return f"trustlab: {task.description}: done in {elapsed}"
        if task.total:
            share = task.completed / task.total
            count = f"{task.completed:g}/{task.total:g} ({share:.0%})"
            return f"trustlab: {task.description}: {count}, {elapsed}"
        return f"trustlab: {task.description}: {elapsed}"

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def _tick(self, task: _Task, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with task.lock:
            if task.finished or now - task.started < self.delay:
                return
            if task.last_line is not None and now - task.last_line < self.interval:
                return
            task.last_line = now
            text = self.line(task, now)
        self._write(text)

    def _run(self) -> None:
        while not self._stop.wait(min(0.5, max(self.interval, 0.01))):
            for task in list(self.tasks):
                self._tick(task)

    def __enter__(self) -> LineProgress:
        self._thread = threading.Thread(target=self._run, name="trustlab-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        now = time.monotonic()
        for task in self.tasks:
            self._finish(task, now, quiet=exc_type is not None)

    def _finish(self, task: _Task, now: float, quiet: bool = False) -> None:
        with task.lock:
            announced = task.last_line is not None and not task.finished
            task.finished = True
        if announced and not quiet:
            self._write(self.line(task, now, done=True))


@contextmanager
def progress(enabled: bool = True) -> Iterator[Any]:
    """A Rich progress bar on a terminal, :class:`LineProgress` lines on stderr otherwise (and
    nothing at all when ``enabled`` is False)."""
    if enabled and not err_console.is_terminal:
        with LineProgress() as lines:
            yield lines
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    class CountColumn(MofNCompleteColumn):
        """``12/540``, and nothing (not ``0/?``) while the total is unknown."""

        def render(self, task: Any) -> Any:
            from rich.text import Text

            return Text("") if task.total is None else super().render(task)

    bar = Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        CountColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not enabled,
        transient=True,
    )
    with bar:
        yield bar


def tracker(bar: Any, description: str, total: int | None = None) -> Callable[[int, int], None]:
    """A new task on ``bar`` and the ``progress(done, total)`` callback that moves it (the
    shape library functions take)."""
    task = bar.add_task(description, total=total)

    def report(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return report


def planned(report: Callable[[int, int], None], plan: str) -> Callable[[int, int], None]:
    """``report`` that first says ``plan`` on stderr: at the library's first progress call, so
    once it has checked its input (bad input stays one line) and started the work."""
    said = False

    def first_says(done: int, total: int) -> None:
        nonlocal said
        if not said:
            said = True
            tell(f"trustlab: {plan}", as_json=True)
        report(done, total)

    return first_says


def announce(plan: str, *, work: float, limit: float, yes: bool, unit: str = "") -> None:
    """Say what a command is about to do, or refuse work far beyond the usual size.

    ``work`` is its size in any unit (samples, rounds x silos ...), ``limit`` the largest size
    run without asking; beyond it the command needs ``--yes``. The plan goes to stderr.
    """
    if work > limit and not yes:
        digits = 3  # more where 3 would print the two sizes alike (1,000,001 and 1e6 rows)
        while digits < 17 and f"{work:.{digits}g}" == f"{limit:.{digits}g}":
            digits += 1
        raise InputError(
            f"--yes: {plan} is {work:.{digits}g}{unit}, beyond the {limit:.{digits}g}{unit} this "
            "command runs without asking (it may take very long); check the options or pass --yes",
            argument="--yes",
        )
    tell(f"trustlab: {plan}", as_json=True)
