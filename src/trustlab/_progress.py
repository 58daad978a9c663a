"""Progress of long library calls as one ``(done, total)`` count across several steps.

Library functions take ``progress: Callable[[int, int], None] | None``; a function that runs
several steps (read states, generate, score ...) sums their sizes into one total and hands each
step a callback that moves the shared count (:meth:`WorkCounter.part`), so the caller sees one
bar with a real total instead of a spinner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trustlab.errors import InputError

__all__ = ["Progress", "WorkCounter", "check_progress"]

Progress = Callable[[int, int], None]


def check_progress(
    progress: Any, expected: str = "a callable (done, total) or None"
) -> Progress | None:
    """``progress`` itself when it is None or callable; InputError otherwise, checked before any
    work starts (a non-callable would only fail when first called, after the first step).

    Examples
    --------
    >>> check_progress(None) is None
    True
    >>> check_progress(5)
    Traceback (most recent call last):
    ...
    trustlab.errors.InputError: progress: expected a callable (done, total) or None, got 5
    """
    if progress is not None and not callable(progress):
        raise InputError.bad("progress", expected, progress)
    return progress


class WorkCounter:
    """A count of work units done out of ``total``, reported to ``callback`` (may be None).

    Examples
    --------
    >>> seen = []
    >>> counter = WorkCounter(lambda done, total: seen.append((done, total)), 5)
    >>> part = counter.part()
    >>> part(2, 3); part(3, 3); counter.advance(2)
    >>> seen
    [(2, 5), (3, 5), (5, 5)]
    """

    def __init__(self, callback: Progress | None, total: int):
        self.callback, self.total, self.done = callback, int(total), 0

    def advance(self, n: int = 1) -> None:
        self.done += int(n)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def part(self) -> Progress | None:
        """A ``(done, total)`` callback for one step whose units are units of this count
        (None when nobody listens, so the step skips the calls)."""
        if self.callback is None:
            return None
        reported = 0

        def report(done: int, total: int) -> None:
            nonlocal reported
            self.advance(done - reported)
            reported = done

        return report
