"""Helpers of the commands that train a library model with ``checkpoint_dir`` into ``--out/_state``
(``explain regions train``, ``explain anova-tpnn fit``): a rerun resumes an interrupted fit and
says so on stderr (:func:`resume_note`); a state the library refuses (other data or settings,
or unreadable) stops the command unless ``--overwrite``, which discards it (:func:`fit_resuming`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trustlab.cli._console import tell
from trustlab.errors import InputError, ResourceError

__all__ = ["fit_resuming", "resume_note"]


def fit_resuming(fit: Callable[[], Any], state: Path, overwrite: bool) -> Any:
    """``fit()``: a library fit with ``checkpoint_dir=state``, which resumes an interrupted run
    left there. A state it refuses (other data or settings, or unreadable) stops the command;
    with ``overwrite`` it is discarded (said on stderr) and the fit starts afresh. Run it inside
    :func:`options_named` mapping ``checkpoint_dir`` to the option that chose ``state``, with a
    hint on how to start afresh."""
    try:
        return fit()
    except (InputError, ResourceError) as exc:  # a state of another fit, or unreadable
        if not str(exc).startswith("checkpoint_dir:"):
            raise
        damaged = isinstance(exc, ResourceError)
        if damaged and not overwrite:
            raise InputError(
                f"--out: {state / 'state.pt'} could not be read as a training state "
                f"({exc.__cause__}); rerun with --overwrite to discard it and start afresh",
                argument="--out",
            ) from exc
        if not overwrite:
            raise
        why = "could not be read" if damaged else "had other data or settings"
        tell(f"trustlab: discarding the interrupted run in {state}: it {why} (--overwrite)", True)
        shutil.rmtree(state)
        return fit()


def resume_note(state: Path) -> Callable[[int], None]:
    """``note(epoch)`` for a fit's progress callback: says once on stderr that the interrupted
    run in ``state`` was resumed when the first epoch done in this run is not the first."""
    seen: list[int] = []

    def note(epoch: int) -> None:
        if not seen and epoch > 1:
            tell(f"trustlab: resumed the interrupted run in {state} after epoch {epoch - 1}", True)
        seen.append(epoch)

    return note
