"""The reduced form of the aggregate-regime DCP problem (see :mod:`._aggregate`).

With the rows of the baseline a and of a group's confusion matrix b summing to 1,

    max_z eta(a^{yz}, b^{yz}) = 1 - s_y,   s_y = min_z b^{yz} / a^{yz}

(see :mod:`._group`), so row y of b treats the fraction s_y of the label fairly
exactly when ``b^{y.} >= s_y a^{y.}``. J depends on the confusion matrices only through the fair
masses ``x_gy = pi_g^y s_gy`` and, for beta < 1, the correct predictions. Which of them some b
with the entry bounds realises is a transport question with a closed answer. Write row y of
group g as

    b^{y.} = s_y a^{y.} + (1 - s_y) eps + u^{y.} / pi^y,     eps = 1e-5, u >= 0

(the first two terms are at least max(eps, s_y a^{y.}), and equal to it where a^{yz} = eps). The
rows of u must carry (pi^y - x_y)(1 - K eps) and its columns what the aggregates leave,
``p^z - eps - sum_y x_y (a^{yz} - eps)``; both totals agree, so u exists (the proportional split,
with the diagonal mass d_y first: :func:`realise`) exactly when

    sum_y x_gy (a^{yz} - eps) + d_gz <= p_g^z - eps   (every z),
    (1 - K eps) x_gy + d_gy <= (1 - K eps) pi_g^y,     0 <= x_gy <= pi_g^y,  d_gy >= 0.

Every such (a, x, d) gives a feasible point whose J is at most

    Phi(a; x, d) = beta sum_g w_g (1 - sum_y x_gy)
                   + (1 - beta) sum_g w_g (1 - eps - sum_y (x_gy (a^{yy} - eps) + d_gy)),

and the reduced problem is min over a of Phi(a) = min_{x, d} Phi(a; x, d). For a fixed a this is
an LP with K (2K for beta < 1) columns per group (:class:`FairMassLP`, all groups at once). The
only non-linearity is the product x a, so a sequential LP over (a, x, d), with
``x a ~ x0 a + x a0 - x0 a0`` (:class:`StepLP`), needs K^2 + G K (+ G K) columns and G K
(+ G K) rows, against K^2 + G K^2 + G K columns and 2 G K^2 cut rows when the confusion matrices
are variables (the authors' joint problem). :func:`descend` runs the shared sequential-LP loop of
:mod:`trustlab.fairness._slp` on it.

Phi is an upper bound on min_b J(a, b), tight to about K eps (the floor (1 - s) eps is above
max(eps, s a) by at most (1 - s) eps); the caller re-solves the exact group problem at the end,
so the reported J is the objective at a feasible point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import highspy
import numpy as np

from trustlab.fairness import _slp
from trustlab.fairness._eta import ENTRY_MIN
from trustlab.fairness._highs import QuietHighs

__all__ = ["Descent", "FairMassLP", "FairMasses", "ReducedProblem", "StepLP", "descend", "realise"]

_INF = highspy.kHighsInf
_MOVE_COST = 1e-6  # per unit of |da|: among equally good LP steps the baseline stays put
# HiGHS scales the matrix so its largest entries are 1 (strategy 4) instead of its default
# equilibration: the step LPs then take about 60 % of the time (measured at K=10, G=50), with
# the same iterates.
_SCALING = 4


@dataclass(frozen=True, eq=False)
class ReducedProblem:
    """Group weights, label shares, the prediction mass above the floors, and beta."""

    weights: np.ndarray  # (G,) w_g = sum_y c_gy
    label_dist: np.ndarray  # (G, K) pi_g^y
    room: np.ndarray  # (G, K) p_g^z - eps, p smoothed
    free: float  # 1 - K eps: the part of a row above the entry floors
    beta: float

    @classmethod
    def build(cls, cell_mass, label_dist, pred_dist, beta) -> ReducedProblem:
        n_labels = label_dist.shape[1]
        return cls(
            weights=cell_mass.sum(axis=1),
            label_dist=label_dist,
            room=pred_dist - ENTRY_MIN,
            free=1.0 - n_labels * ENTRY_MIN,
            beta=float(beta),
        )

    @property
    def n_groups(self) -> int:
        return self.label_dist.shape[0]

    @property
    def n_labels(self) -> int:
        return self.label_dist.shape[1]

    @property
    def n_diagonal(self) -> int:
        """How many diagonal masses d are variables: G*K when the error term is on, else 0."""
        return self.label_dist.size if self.beta < 1.0 else 0

    def value(self, baseline, fair, diagonal) -> float:
        """Phi(a; x, d): J is at most this at the point :func:`realise` builds."""
        value = self.beta * float(self.weights @ (1.0 - fair.sum(axis=1)))
        if self.beta < 1.0:
            correct = fair @ (np.diagonal(baseline) - ENTRY_MIN) + diagonal.sum(axis=1)
            value += (1.0 - self.beta) * float(self.weights @ (1.0 - ENTRY_MIN - correct))
        return value


class _Solver:
    """A quiet HiGHS dual simplex (no presolve) restarted from its previous optimal basis; the
    models are passed row-wise with every column continuous."""

    def __init__(self):
        self._highs = QuietHighs(presolve="off", simplex_scale_strategy=_SCALING)
        self._basis = None

    def solve(self, *arrays):
        """Solve the LP given as :meth:`QuietHighs.pass_lp`'s arrays; None if HiGHS fails."""
        if not self._highs.pass_lp(*arrays, rowwise=True):
            return None
        x, self._basis = self._highs.run_from(self._basis)
        return x


@dataclass(frozen=True, eq=False)
class FairMasses:
    """Phi at a baseline and the fair and diagonal masses (G, K) that reach it."""

    baseline: np.ndarray
    value: float
    fair: np.ndarray
    diagonal: np.ndarray


def _row_caps(problem: ReducedProblem) -> np.ndarray:
    """Right-hand sides (1 - K eps) pi of the row caps, when d is a variable (else none)."""
    return (problem.free * problem.label_dist.ravel())[: problem.n_diagonal]


def _groups_labels(problem: ReducedProblem):
    """Index grids (g, z, y) raveled: the entry of packing row (g, z) for label y."""
    n_groups, k = problem.n_groups, problem.n_labels
    return tuple(axis.ravel() for axis in np.indices((n_groups, k, k)))


class FairMassLP:
    """Phi(a) and its optimal (x, d) for a fixed baseline, all groups in one LP.

    Columns: x (G*K, index g*K + y) in [0, pi], then d (G*K) when beta < 1. Rows: the packing
    rows (g, z) ``sum_y (a^{yz} - eps) x_gy + d_gz <= p_g^z - eps``, then (beta < 1) the row
    caps ``(1 - K eps) x_gy + d_gy <= (1 - K eps) pi_g^y``.
    """

    def __init__(self, problem: ReducedProblem):
        self.problem = problem
        k, n_x, n_d = problem.n_labels, problem.label_dist.size, problem.n_diagonal
        g, z, y = _groups_labels(problem)
        self._entry = (y, z)
        packing = (g * k + y).reshape(n_x, k)
        self._width = k + (1 if n_d else 0)
        if n_d:
            packing = np.column_stack([packing, n_x + np.arange(n_x)])
        caps = np.column_stack([np.arange(n_x), n_x + np.arange(n_x)])[:n_d]
        self._index = np.r_[packing.ravel(), caps.ravel()].astype(np.int32)
        self._start = np.r_[self._width * np.arange(n_x), self._width * n_x + 2 * np.arange(n_d)]
        self._start = self._start.astype(np.int32)
        self._value = np.r_[np.ones(self._width * n_x), np.tile([problem.free, 1.0], n_d)]
        self._weights = np.repeat(problem.weights, k)
        self._col_lower = np.zeros(n_x + n_d)
        self._col_upper = np.r_[problem.label_dist.ravel(), np.full(n_d, _INF)]
        self._row_lower = np.full(n_x + n_d, -_INF)
        self._row_upper = np.r_[problem.room.ravel(), _row_caps(problem)]
        self._solver = _Solver()

    def solve(self, baseline) -> FairMasses | None:
        """Phi(a) and its masses x (G, K) and d (G, K) at the baseline a; None if HiGHS fails."""
        problem = self.problem
        k, n_x, n_d = problem.n_labels, problem.label_dist.size, problem.n_diagonal
        packing = self._value[: self._width * n_x].reshape(n_x, self._width)
        packing[:, :k] = baseline[self._entry].reshape(n_x, k) - ENTRY_MIN
        beta = problem.beta
        cost = np.r_[-beta * self._weights, -(1.0 - beta) * self._weights[:n_d]]
        if n_d:  # fair mass of label y is also predicted right with share a^{yy} - eps
            on_diagonal = np.tile(np.diagonal(baseline) - ENTRY_MIN, problem.n_groups)
            cost[:n_x] -= (1.0 - beta) * self._weights * on_diagonal
        solution = self._solver.solve(
            cost,
            self._col_lower,
            self._col_upper,
            self._row_lower,
            self._row_upper,
            self._start,
            self._index,
            self._value,
        )
        if solution is None:
            return None
        fair = solution[:n_x].reshape(-1, k)
        diagonal = solution[n_x:].reshape(-1, k) if n_d else np.zeros_like(fair)
        return FairMasses(baseline, problem.value(baseline, fair, diagonal), fair, diagonal)


class StepLP:
    """The sequential-LP step at (a0, x0, d0): the product x a linearised, inside a trust box.

    Columns: da+ and da- (K*K each, index y*K + z; the new baseline is a0 + da+ - da-), x (G*K),
    then d (G*K) when beta < 1. Rows: the packing rows (g, z)
    ``sum_y (x0_gy da_yz + (a0^{yz} - eps) x_gy) + d_gz <= p_g^z - eps`` (the terms
    x0 (a0 - eps) cancel), the row caps of :class:`FairMassLP` (beta < 1), and
    ``sum_z da_yz = 0``. With da split into two parts that are 0 unless they help, and a cost
    of 1e-6 per unit as a tie-break, entries whose movement does not help stay where they are (a
    single column in [-r, r] could sit at either end of its box).
    """

    def __init__(self, problem: ReducedProblem):
        self.problem = problem
        k, n_x, n_d = problem.n_labels, problem.label_dist.size, problem.n_diagonal
        n_base = k * k
        g, z, y = _groups_labels(problem)
        self._entry = (y, z)
        self._fair_entry = (g, y)
        x_col, d_col = 2 * n_base, 2 * n_base + n_x  # the first x and d columns
        # packing row (g, z): for each y the entries da+_yz, da-_yz, x_gy; then d_gz
        packing = np.stack([y * k + z, n_base + y * k + z, x_col + g * k + y], axis=1)
        packing = packing.reshape(n_x, 3 * k)
        if n_d:
            packing = np.column_stack([packing, d_col + np.arange(n_x)])
        self._width = packing.shape[1]
        caps = np.column_stack([x_col + np.arange(n_x), d_col + np.arange(n_x)])[:n_d]
        row_sums = np.column_stack([np.arange(n_base), n_base + np.arange(n_base)])
        row_sums = row_sums.reshape(k, k, 2).transpose(0, 2, 1)  # row y: da+_y., then da-_y.
        self._index = np.r_[packing.ravel(), caps.ravel(), row_sums.ravel()].astype(np.int32)
        self._start = np.r_[
            self._width * np.arange(n_x),
            self._width * n_x + 2 * np.arange(n_d),
            self._width * n_x + 2 * n_d + 2 * k * np.arange(k),
        ].astype(np.int32)
        self._value = np.r_[
            np.ones(self._width * n_x),
            np.tile([problem.free, 1.0], n_d),
            np.tile(np.repeat([1.0, -1.0], k), k),
        ]
        self._row_lower = np.r_[np.full(n_x + n_d, -_INF), np.zeros(k)]
        self._row_upper = np.r_[problem.room.ravel(), _row_caps(problem), np.zeros(k)]
        self._weights = np.repeat(problem.weights, k)
        self._solver = _Solver()

    def _cost(self, baseline, fair):
        problem = self.problem
        k, n_x, n_d = problem.n_labels, problem.label_dist.size, problem.n_diagonal
        n_base, beta = k * k, problem.beta
        cost = np.r_[np.full(2 * n_base, _MOVE_COST), -beta * self._weights, np.zeros(n_d)]
        if n_d:  # the correct predictions: x_gy (a^{yy} - eps) linearised, and d
            error = (1.0 - beta) * self._weights
            cost[2 * n_base : 2 * n_base + n_x] -= error * np.tile(
                np.diagonal(baseline) - ENTRY_MIN, problem.n_groups
            )
            on_diagonal = np.arange(k) * (k + 1)
            slope = (1.0 - beta) * (problem.weights @ fair)  # d/da^{yy} = sum_g w_g x_gy
            cost[on_diagonal] -= slope
            cost[n_base + on_diagonal] += slope
            cost[2 * n_base + n_x :] = -error
        return cost

    def solve(self, baseline, fair, diagonal, radius: float):
        """The baseline a0 + da (K, K) the LP moves to, or None if HiGHS fails."""
        problem = self.problem
        k, n_x, n_d = problem.n_labels, problem.label_dist.size, problem.n_diagonal
        packing = self._value[: self._width * n_x].reshape(n_x, self._width)
        triples = packing[:, : 3 * k].reshape(n_x, k, 3)
        triples[:, :, 0] = fair[self._fair_entry].reshape(n_x, k)
        triples[:, :, 1] = -triples[:, :, 0]
        triples[:, :, 2] = baseline[self._entry].reshape(n_x, k) - ENTRY_MIN
        a0, x0, d0 = baseline.ravel(), fair.ravel(), diagonal.ravel()[:n_d]
        col_lower = np.r_[
            np.zeros(2 * k * k), np.maximum(0.0, x0 - radius), np.maximum(0.0, d0 - radius)
        ]
        col_upper = np.r_[
            np.clip(1.0 - ENTRY_MIN - a0, 0.0, radius),
            np.clip(a0 - ENTRY_MIN, 0.0, radius),
            np.minimum(problem.label_dist.ravel(), x0 + radius),
            d0 + radius,
        ]
        solution = self._solver.solve(
            self._cost(baseline, fair),
            col_lower,
            col_upper,
            self._row_lower,
            self._row_upper,
            self._start,
            self._index,
            self._value,
        )
        if solution is None:
            return None
        move = solution[: k * k] - solution[k * k : 2 * k * k]
        return baseline + move.reshape(k, k)


def realise(problem: ReducedProblem, baseline, fair, diagonal) -> np.ndarray:
    """Confusion matrices (G, K, K) with fair masses ``fair`` and diagonal masses ``diagonal``.

    Row y of group g is ``s a^{y.} + (1 - s) eps + u^{y.} / pi^y`` with s = x_gy / pi_g^y and u
    the diagonal mass d plus the row masses left spread over the prediction masses left in
    proportion. A label without mass in the group copies the baseline row (it adds nothing to
    J). LP round-off can leave the row sums or the aggregates off by about the solver's
    tolerance divided by pi; the caller checks.
    """
    pi = problem.label_dist
    k = problem.n_labels
    present = pi > 0
    share = np.divide(fair, pi, out=np.ones_like(fair), where=present)
    rows_left = np.maximum(problem.free * (pi - fair) - diagonal, 0.0)  # per label y
    cols_left = np.maximum(problem.room - fair @ (baseline - ENTRY_MIN) - diagonal, 0.0)  # per z
    total = cols_left.sum(axis=1, keepdims=True)
    spread = np.divide(cols_left, total, out=np.zeros_like(cols_left), where=total > 0)
    mass = rows_left[:, :, None] * spread[:, None, :]
    mass[:, np.arange(k), np.arange(k)] += diagonal
    extra = np.divide(mass, pi[:, :, None], out=np.zeros_like(mass), where=present[:, :, None])
    floor = share[:, :, None] * (baseline[None, :, :] - ENTRY_MIN) + ENTRY_MIN
    rows = floor + extra
    return np.where(present[:, :, None], rows, baseline[None, :, :])


@dataclass(frozen=True, eq=False)
class Descent:
    """Where the reduced sequential LP stopped, and Phi after every accepted step."""

    baseline: np.ndarray
    fair: np.ndarray
    diagonal: np.ndarray
    history: tuple[float, ...]  # Phi at the start, then after every accepted step
    iterations: int
    converged: bool

    @property
    def value(self) -> float:
        return self.history[-1]


def descend(problem: ReducedProblem, baseline, max_iter: int) -> Descent | None:
    """Sequential LP on the reduced problem from ``baseline``; Phi never increases.

    The loop of :mod:`trustlab.fairness._slp` with its :data:`~trustlab.fairness._slp.REDUCED`
    rules: iteration 1 solves the LP over the whole box, later ones inside the trust box of
    half-width TRUST_RADIUS; the line search evaluates the exact Phi (:class:`FairMassLP`) at the
    trial baselines, put back in the box. At most ``max_iter`` LPs; None if Phi fails at the start.
    """
    fair_mass, step_lp = FairMassLP(problem), StepLP(problem)
    start = fair_mass.solve(baseline)
    if start is None:
        return None

    def lp_step(point: FairMasses, iteration: int):
        radius = math.inf if iteration == 1 else _slp.TRUST_RADIUS
        target = step_lp.solve(point.baseline, point.fair, point.diagonal, radius)
        if target is None:
            return None
        step = target - point.baseline
        return step, np.abs(step).max()

    def trial(point: FairMasses, step: np.ndarray, rate: float) -> FairMasses | None:
        return fair_mass.solve(_into_box(point.baseline + rate * step))

    run = _slp.minimise(start, lp_step, trial, _slp.REDUCED, max_iter=max_iter)
    end = run.point
    return Descent(end.baseline, end.fair, end.diagonal, run.history, run.iterations, run.converged)


def _into_box(rows):
    """Rows back in the box with sums 1, undoing the LP's round-off (about 1e-7): clipped,
    renormalised, and what renormalising took below eps restored from each row's largest entry.
    """
    rows = np.clip(rows, ENTRY_MIN, 1.0 - ENTRY_MIN)
    rows = np.maximum(rows / rows.sum(axis=1, keepdims=True), ENTRY_MIN)
    largest = np.argmax(rows, axis=1)
    rows[np.arange(len(rows)), largest] -= rows.sum(axis=1) - 1.0
    return rows
