"""The sequential linear programming (SLP) loop of both DCP regimes, and its rules.

Both regimes minimise a piecewise-smooth objective the same way: solve the LP linearisation at the
current point, scale its step down to a cap, backtrack along it (step, step/2, step/4 ...) until
the objective decreases strictly, and repeat. A run stops, *converged*, when the LP step is below
a tolerance, when no step length lowers the objective, when the value has stalled or when it
reaches a known floor (nothing lower exists); it stops *unconverged* when an LP fails or after
``max_iter`` LPs. The objective never increases.

What differs between the regimes is the LP and the point it works on, supplied as two functions
to :func:`minimise`, and the rules below, named once here:

- :data:`KNOWN`, the known regime's local minimisation of F_y over one baseline row;
- :data:`REDUCED`, the aggregate regime's descent on the reduced problem, whose LPs after the
  first (over the whole box) are bounded by a trust box of half-width :data:`TRUST_RADIUS`
  instead of a step cap.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "KNOWN",
    "REDUCED",
    "STALL_ABS_TOL",
    "STALL_REL_TOL",
    "TRUST_RADIUS",
    "Rules",
    "Run",
    "line_search",
    "minimise",
    "stalled",
]


@dataclass(frozen=True)
class Rules:
    """How one regime's sequential LP steps and stops."""

    step_tol: float  # converged once the LP step is below this (max norm)
    max_step: float  # a longer LP step is scaled down to this length (max norm)
    halvings: int  # the line search tries step, step/2, ..., step/2**halvings
    max_iter: int  # LPs per run at most, unless the caller says otherwise
    stall_window: int = 0  # stop once the value fell too little over this many steps (0: never)


#: A run has stalled when its value fell by at most STALL_REL_TOL (relative) plus STALL_ABS_TOL
#: over the last ``stall_window`` accepted steps.
STALL_REL_TOL = 1e-3
STALL_ABS_TOL = 1e-9
#: Known regime: F_y of one label over the simplex (the step covers the row and the per-group
#: maxima of the LP).
KNOWN = Rules(step_tol=1e-5, max_step=0.1, halvings=24, max_iter=200)
#: Aggregate regime, reduced problem: Phi over the baseline (``max_iter`` is the default budget
#: of a restart, all its descents together).
REDUCED = Rules(step_tol=1e-7, max_step=math.inf, halvings=30, max_iter=250, stall_window=5)
#: Reduced problem: half-width of the trust box (max norm) of every LP after the first.
TRUST_RADIUS = 0.2


@dataclass(frozen=True, eq=False)
class Run:
    """Where a run stopped (a point with a ``value``), its value after every accepted step, the
    number of LPs solved and whether a convergence rule stopped it."""

    point: Any
    history: tuple[float, ...]
    iterations: int
    converged: bool


def minimise(
    start: Any,
    lp_step: Callable[[Any, int], tuple[np.ndarray, float] | None],
    trial: Callable[[Any, np.ndarray, float], Any],
    rules: Rules,
    *,
    max_iter: int | None = None,
    floor: float = -math.inf,
) -> Run:
    """The sequential LP from ``start``; the value never increases.

    ``start`` and every point have a ``value``. ``lp_step(point, iteration)`` solves the LP at
    ``point`` (iteration counts from 1) and returns ``(step, size)``, the step and its length in
    the max norm, or None when the LP fails. ``trial(point, step, rate)`` is the point at
    ``rate`` times ``step`` (None when it cannot be evaluated). The run stops, converged, once the
    value is at most ``floor``.
    """
    max_iter = rules.max_iter if max_iter is None else max_iter
    point, history = start, [start.value]
    for iteration in range(1, max_iter + 1):
        if point.value <= floor:
            return Run(point, tuple(history), iteration - 1, True)
        proposal = lp_step(point, iteration)
        if proposal is None:
            return Run(point, tuple(history), iteration, False)
        step, size = proposal
        if size < rules.step_tol:
            return Run(point, tuple(history), iteration, True)
        if size > rules.max_step:
            step = step * (rules.max_step / size)
        moved = line_search(point, step, trial, rules.halvings)
        if moved is None:  # no step length lowers the value: a minimum along the LP's direction
            return Run(point, tuple(history), iteration, True)
        point = moved
        history.append(point.value)
        if stalled(history, rules.stall_window):
            return Run(point, tuple(history), iteration, True)
    return Run(point, tuple(history), max_iter, False)


def line_search(point: Any, step: np.ndarray, trial: Callable, halvings: int) -> Any:
    """The first of step, step/2, ..., step/2**halvings whose point lowers the value strictly;
    None when none does."""
    rate = 1.0
    for _ in range(halvings + 1):
        moved = trial(point, step, rate)
        if moved is not None and moved.value < point.value:
            return moved
        rate *= 0.5
    return None


def stalled(history: list[float], window: int) -> bool:
    """The value fell by at most STALL_REL_TOL (relative) plus STALL_ABS_TOL over the last
    ``window`` steps (never when ``window`` is 0)."""
    if not window or len(history) <= window:
        return False
    before, now = history[-1 - window], history[-1]
    return before - now <= STALL_REL_TOL * before + STALL_ABS_TOL
