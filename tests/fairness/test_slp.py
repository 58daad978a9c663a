"""The sequential-LP loop shared by both DCP regimes: its stopping rules, on a toy problem.

The toy minimises f(x) = |x - 1| on the line; its "LP" proposes the step to a given target, so
each rule can be triggered on purpose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from trustlab.fairness import _slp

RULES = _slp.Rules(step_tol=1e-6, max_step=0.5, halvings=10, max_iter=50)


@dataclass(frozen=True)
class Point:
    x: float

    @property
    def value(self) -> float:
        return abs(self.x - 1.0)


def towards(target):
    """An LP step from the point to ``target`` (None: the LP fails)."""

    def lp_step(point, iteration):
        if target is None:
            return None
        step = np.array(target - point.x)
        return step, float(abs(step))

    return lp_step


def trial(point, step, rate):
    return Point(point.x + rate * float(step))


def test_converges_to_the_minimum_with_capped_steps():
    run = _slp.minimise(Point(-1.0), towards(1.0), trial, RULES)
    assert run.converged and run.point.x == pytest.approx(1.0)
    # capped at 0.5: four steps to reach 1, one more LP to see a step below the tolerance
    assert run.history == (2.0, 1.5, 1.0, 0.5, 0.0)
    assert run.iterations == 5


def test_the_value_never_increases_and_a_useless_step_stops_the_run():
    run = _slp.minimise(Point(1.0), towards(3.0), trial, RULES)  # every step length is worse
    assert run.converged and run.point.x == 1.0
    assert run.history == (0.0,) and run.iterations == 1


def test_line_search_halves_until_the_value_decreases_strictly():
    # from 0 (value 1) the full step overshoots to 2.25 (value 1.25); the half step lands on 1.125
    assert _slp.line_search(Point(0.0), np.array(2.25), trial, 3).x == 1.125
    # from 0.75 (value 0.25): 1.75 is worse, 1.25 only as good (not strictly lower), 1.0 wins
    assert _slp.line_search(Point(0.75), np.array(1.0), trial, 2).x == 1.0
    assert _slp.line_search(Point(0.75), np.array(1.0), trial, 1) is None


def test_a_failed_lp_stops_the_run_unconverged():
    run = _slp.minimise(Point(0.0), towards(None), trial, RULES)
    assert not run.converged and run.iterations == 1 and run.point.x == 0.0


def test_the_floor_stops_the_run_before_any_lp():
    run = _slp.minimise(Point(0.5), towards(1.0), trial, RULES, floor=0.5)
    assert run.converged and run.iterations == 0


def test_max_iter_stops_the_run_unconverged():
    run = _slp.minimise(Point(-10.0), towards(1.0), trial, RULES, max_iter=3)
    assert not run.converged and run.iterations == 3 and len(run.history) == 4


def test_a_stalled_run_stops_converged():
    slow = _slp.Rules(step_tol=1e-12, max_step=math.inf, halvings=0, max_iter=50, stall_window=2)

    def creep(point, iteration):  # moves 1e-6 closer each time: far below 0.1 % per step
        return np.array(1e-6), 1e-6

    run = _slp.minimise(Point(0.0), creep, trial, slow)
    assert run.converged and run.iterations == 2
    assert _slp.stalled(list(run.history), 2)
    assert not _slp.stalled(list(run.history), 0)  # window 0: the rule is off


def test_the_regimes_have_their_rules():
    assert _slp.KNOWN.stall_window == 0 and _slp.KNOWN.max_step == 0.1
    assert _slp.REDUCED.max_step == math.inf and _slp.REDUCED.stall_window == 5
