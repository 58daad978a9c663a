"""Progress reporting shared by certification and training: a Rich bar or a callback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["progress_reporter"]


def progress_reporter(progress: Any, total: int, label: str) -> Callable[[int | None], None]:
    """A function of the amount done (None when finished) that shows progress.

    ``progress`` is False (silent), True (a transient Rich bar on stderr) or a callable that
    receives ``(done, total)``.
    """
    if callable(progress):
        return lambda done: None if done is None else progress(done, total)
    if not progress:
        return lambda done: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress(
        label, BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )  # fmt: skip
    task = bar.add_task(label, total=total)
    bar.start()

    def report(done: int | None) -> None:
        if done is None:
            bar.stop()
        else:
            bar.update(task, completed=done)

    return report
