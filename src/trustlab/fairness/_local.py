"""The known regime's local minimisation of F_y: the shared sequential LP on one baseline row.

Each step solves the LP linearisation of F_y at the current row a (HiGHS, warm-started), with the
per-group maxima f as variables; the loop, the line search and the stopping rules are those of
:mod:`trustlab.fairness._slp` with its :data:`~trustlab.fairness._slp.KNOWN` rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from trustlab.errors import BackendError
from trustlab.fairness import _slp
from trustlab.fairness._highs import QuietHighs
from trustlab.fairness._label import TIE_TOL, LabelProblem

__all__ = ["LocalResult", "LinearisedLP", "linearise", "local_minimum"]


@dataclass(frozen=True)
class LocalResult:
    row: np.ndarray
    value: float
    iterations: int
    converged: bool


class LinearisedLP:
    """The LP of one sequential-LP step for one label, built once and updated in place.

    Variables x = (a (K), f (G')). Minimise sum_g c_g f_g subject to
    f_g >= eta(a^k_z, b_gz) + d_gz (a_z - a^k_z) for every (g, z), sum a = 1 and a, f in [0, 1].
    Only the slopes d_gz and the right-hand sides change between iterations, so the column-wise
    arrays are kept and rewritten, and HiGHS restarts from the previous optimal basis (primal
    simplex, no presolve).
    """

    def __init__(self, conf: np.ndarray, mass: np.ndarray):
        n_groups, self.k = conf.shape
        n_rows = n_groups * self.k  # row g*K + z; the equality row comes last
        n_cols = self.k + n_groups
        self._starts, self._index, self._values, self._slope_at = self._column_layout(
            n_groups, self.k
        )
        self._cost = np.concatenate([np.zeros(self.k), mass])
        self._col_lower, self._col_upper = np.zeros(n_cols), np.ones(n_cols)
        self._row_lower = np.concatenate([np.full(n_rows, -highspy.kHighsInf), [1.0]])
        self._row_upper = np.ones(n_rows + 1)
        self._solver = QuietHighs(presolve="off", simplex_strategy=4)
        self._basis = None

    @staticmethod
    def _column_layout(n_groups, k):
        """Column starts, row indices and values; ``slope_at[g, z]`` locates d_gz in values."""
        n_rows = n_groups * k
        # a_z: the rows (g, z) for all g, then the equality row; f_g: the rows (g, z) for all z
        a_index = np.column_stack(
            [np.arange(n_groups)[None, :] * k + np.arange(k)[:, None], np.full(k, n_rows)]
        )
        f_index = np.arange(n_rows).reshape(n_groups, k)
        index = np.concatenate([a_index.ravel(), f_index.ravel()]).astype(np.int32)
        values = np.concatenate([np.ones(a_index.size), -np.ones(f_index.size)])
        starts = np.concatenate(
            [np.arange(k) * (n_groups + 1), k * (n_groups + 1) + np.arange(n_groups) * k]
        ).astype(np.int32)
        slope_at = (np.arange(k) * (n_groups + 1))[None, :] + np.arange(n_groups)[:, None]
        return starts, index, values, slope_at

    def solve(self, slopes: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
        """The optimum x = (a, f) of the LP with rows d a_z - f_g <= rhs, or None if none found.

        ``slopes`` and ``rhs`` are (G', K): rhs_gz = d_gz a^k_z - eta(a^k_z, b_gz).
        """
        self._values[self._slope_at] = slopes
        self._row_upper[:-1] = rhs.ravel()
        arrays = (self._cost, self._col_lower, self._col_upper, self._row_lower, self._row_upper)
        if not self._solver.pass_lp(
            *arrays, self._starts, self._index, self._values, rowwise=False
        ):
            raise BackendError("HiGHS rejected the LP of a local-search step")
        x, self._basis = self._solver.run_from(self._basis)
        return x


@dataclass(frozen=True)
class Linearisation:
    """F_y and its LP data at one baseline row."""

    row: np.ndarray  # (K,) the row a
    value: float  # F_y(a)
    unfair: np.ndarray  # (G',) f_g(a) = max_z eta(a_z, b_gz)
    slopes: np.ndarray  # (G', K) d eta / d a_z on the active branch
    rhs: np.ndarray  # (G', K) d a_z - eta(a_z, b_gz)


def linearise(a, conf, mass) -> Linearisation:
    """F_y(a), the per-group unfairness and the LP slopes and right-hand sides at ``a``.

    The slope is taken on the active eta branch: b/a^2 if a >= b, else -(1-b)/(1-a)^2 (finite at
    a = 0 and a = 1 because b lies strictly inside (0, 1)).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        first, second = conf / a, (1.0 - conf) / (1.0 - a)
        slopes = np.where(a >= conf, first / a, -second / (1.0 - a))
    eta = 1.0 - np.minimum(first, second)
    unfair = eta.max(axis=1)
    return Linearisation(a, float(unfair @ mass), unfair, slopes, slopes * a - eta)


def local_minimum(
    problem: LabelProblem, start: np.ndarray, lp=None, floor: float = -np.inf
) -> LocalResult:
    """Sequential-LP local minimisation of F_y from ``start``, monotone in F_y.

    Each step solves the LP linearisation at the current row a (with f the true per-group maxima
    at a) and caps the step e = x_LP - (a, f) in the max norm; the row moves to the first of
    a + e, a + e/2, ... (clipped to [0, 1] and renormalised) that lowers F_y. It stops when the
    step is tiny, when F_y reaches ``floor`` (a known lower bound or the global minimum: nothing
    lower exists; ties within TIE_TOL count), when no step length lowers F_y, or after the
    :data:`~trustlab.fairness._slp.KNOWN` number of LPs. The returned value is never above
    F_y(start). ``lp`` reuses a :class:`LinearisedLP` of the same problem (its warm basis
    carries over).
    """
    a = np.clip(start, 0.0, 1.0)
    a = a / a.sum()
    if problem.mass.size == 0:
        return LocalResult(a, 0.0, 0, True)
    conf, mass = problem.conf, problem.mass
    lp = LinearisedLP(conf, mass) if lp is None else lp

    def lp_step(point: Linearisation, iteration: int):
        x_new = lp.solve(point.slopes, point.rhs)
        if x_new is None:
            return None
        step = np.clip(x_new[: lp.k], 0.0, 1.0) - point.row
        return step, max(np.abs(step).max(), np.abs(x_new[lp.k :] - point.unfair).max())

    def trial(point: Linearisation, step: np.ndarray, rate: float) -> Linearisation:
        row = np.clip(point.row + rate * step, 0.0, 1.0)
        row /= row.sum()
        return linearise(row, conf, mass)

    run = _slp.minimise(linearise(a, conf, mass), lp_step, trial, _slp.KNOWN, floor=floor + TIE_TOL)
    return LocalResult(run.point.row, run.point.value, run.iterations, run.converged)
