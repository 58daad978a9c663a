"""The authors' joint sequential LP for the aggregate regime of DCP, kept as a test reference.

This is ``solve_large.solveFairness`` of Sabato, Treister & Yom-Tov (ICML 2025): one LP per
iteration over all variables (the baseline, every confusion matrix and the epigraph variables),
where trustlab's solver (:mod:`trustlab.fairness._aggregate`) eliminates the confusion matrices.
Its eta-splitting cuts, for each (g, y, z) and each smooth branch of eta,
``c_gy >= branch + d/da * (a - a0) + d/db * (b - b0)``; cuts whose branch is below -1 or which
cannot rise above 0 in the box are dropped; infeasible starts are projected onto the feasible set
(nearest point in L1, by an LP). The iteration is trustlab's sequential-LP loop
(:mod:`trustlab.fairness._slp`) with the reduced regime's rules, except that the LP of the first
iteration spans the whole box and later steps are capped at 0.2 in the max norm; when an LP
fails, smaller trust boxes are tried. Back ends, the first installed: Clarabel (interior point,
pattern factorised once), highspy (dual simplex from the previous basis; interior point from
5000 rows on), ``scipy.optimize.linprog(method="highs-ipm")``.

It is slow (about 200 CPU-s for 5 restarts at K = 10, G = 50) and reached only by the tests that
compare the two methods and by ``benchmarks/bench_dcp.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from trustlab.errors import BackendError
from trustlab.fairness import _slp
from trustlab.fairness._aggregate import (
    AggregateProblem,
    AggregateSolution,
    RestartTrace,
    draw_starts,
    smooth_rows,
    violation,
)
from trustlab.fairness._eta import ENTRY_MIN, eta_branches
from trustlab.fairness._group import FEASIBILITY_TOL
from trustlab.fairness._highs import QuietHighs

TRUST_RADII = (0.2, 0.02, 0.004)  # after iteration 1; the next one is tried when the LP fails
STEP_CAP = 0.2  # steps after the first are capped at this (max norm)
# A cut whose branch is below -1 at the current point is far from active; dropping it keeps
# 1/a**2-sized coefficients out of the LP (the authors use the same threshold).
CUT_FLOOR = -1.0
HIGHS_IPM_ROWS = 5000  # highspy: the simplex below, the interior point from here on


def solve_joint(
    group_weights,
    label_dist,
    pred_dist,
    *,
    rng: np.random.Generator,
    beta: float = 1.0,
    restarts: int = 5,
    init=None,
    max_iter: int = _slp.REDUCED.max_iter,
    backend: str | None = None,
) -> AggregateSolution:
    """The joint method from the same starts as :func:`trustlab.fairness._aggregate.solve_aggregate`
    (no second descents), best of the restarts."""
    problem = AggregateProblem.build(group_weights, label_dist, pred_dist, beta)
    backend = default_backend() if backend is None else backend
    traces = [
        solve_from_start(problem, start, max_iter, backend)
        for start in draw_starts(problem, int(restarts), rng, init)
    ]
    return AggregateSolution.best_of(traces)


@dataclass(frozen=True, eq=False)
class _Point:
    x: np.ndarray  # (baseline, confusions) raveled
    value: float


def solve_from_start(problem: AggregateProblem, start, max_iter: int, backend: str) -> RestartTrace:
    """Sequential LP from one start; J never increases after the feasible start."""
    model = CutModel(problem)
    solver = make_solver(backend)
    x = feasible_start(problem, model, start, backend)

    def lp_step(point: _Point, iteration: int):
        radii = ((np.inf,) if iteration == 1 else ()) + TRUST_RADII
        target = _solve_step(model, solver, point.x, radii)
        if target is None:
            return None
        step = target[: model.n_point] - point.x
        size = float(np.max(np.abs(step)))
        if iteration > 1 and size > STEP_CAP:
            step *= STEP_CAP / size
        return step, size

    def trial(point: _Point, step: np.ndarray, rate: float) -> _Point:
        moved = point.x + rate * step
        return _Point(moved, problem.objective(*model.split(moved)))

    start_point = _Point(x, problem.objective(*model.split(x)))
    run = _slp.minimise(start_point, lp_step, trial, _slp.REDUCED, max_iter=max_iter)
    baseline, confusions = model.split(run.point.x)
    return RestartTrace(
        run.point.value,
        baseline.copy(),
        confusions.copy(),
        run.iterations,
        run.converged,
        run.history,
    )


def _solve_step(model, solver, point, radii):
    """LP solution inside the first radius whose LP solves to a feasible point."""
    for radius in radii:
        lp = model.update(point, radius)
        target = solver.solve(lp)
        if target is not None and lp.violation(target) <= FEASIBILITY_TOL:
            return target
    return None


# --------------------------------------------------------------------------- LP matrices


class RowMatrix:
    """A CSR matrix with a fixed pattern whose ``data`` is rewritten in place between solves.

    The first ``n_ineq`` rows are "<=" rows, the rest equalities.
    """

    def __init__(self, indptr, indices, data, n_cols, n_ineq):
        self.indptr = np.asarray(indptr, dtype=np.int32)
        self.indices = np.asarray(indices, dtype=np.int32)
        self.data = np.asarray(data, dtype=np.float64)
        self.n_cols = int(n_cols)
        self.n_ineq = int(n_ineq)

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    def block(self, start: int, stop: int) -> sp.csr_matrix:
        """Rows start..stop as a CSR matrix sharing this data (no copy)."""
        low, high = self.indptr[start], self.indptr[stop]
        return sp.csr_matrix(
            (self.data[low:high], self.indices[low:high], self.indptr[start : stop + 1] - low),
            shape=(stop - start, self.n_cols),
            copy=False,
        )


def _equality_rows(problem: AggregateProblem, n_cols: int):
    """Baseline and confusion rows summing to 1, then the aggregate rows (g, z); CSR and rhs."""
    n_groups, n_labels = problem.n_groups, problem.n_labels
    n_base = n_labels * n_labels
    g, y, z = (axis.ravel() for axis in np.indices((n_groups, n_labels, n_labels)))
    conf_col = n_base + np.arange(g.size)
    row_sum_rows = np.r_[np.arange(n_base) // n_labels, n_labels + g * n_labels + y]
    row_sums = sp.coo_matrix(
        (np.ones(n_base + g.size), (row_sum_rows, np.r_[np.arange(n_base), conf_col])),
        shape=(n_labels + n_groups * n_labels, n_cols),
    )
    aggregate = sp.coo_matrix(
        (problem.label_dist[g, y], (g * n_labels + z, conf_col)),
        shape=(n_groups * n_labels, n_cols),
    )
    matrix = sp.vstack([row_sums, aggregate]).tocsr()
    matrix.sort_indices()
    rhs = np.r_[np.ones(n_labels + n_groups * n_labels), problem.pred_dist.ravel()]
    return matrix, rhs


def _stack_rows(ineq_indptr, ineq_indices, ineq_data, equalities: sp.csr_matrix, n_cols):
    """Stack the "<=" rows, given as CSR parts, on top of the equality rows; keep data order."""
    nnz = len(ineq_data)
    return RowMatrix(
        np.r_[ineq_indptr, equalities.indptr[1:] + nnz],
        np.r_[ineq_indices, equalities.indices],
        np.r_[ineq_data, equalities.data],
        n_cols,
        len(ineq_indptr) - 1,
    )


@dataclass(eq=False)
class LinearProgram:
    """min cost.x subject to row_lower <= matrix x <= row_upper, col_lower <= x <= col_upper."""

    matrix: RowMatrix
    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray

    def violation(self, x) -> float:
        """Largest violation of the equalities and the column bounds at x."""
        n_ineq = self.matrix.n_ineq
        equalities = self.matrix.block(n_ineq, self.matrix.n_rows) @ x - self.row_upper[n_ineq:]
        return float(
            max(
                np.max(np.abs(equalities), initial=0.0),
                np.max(self.col_lower - x),
                np.max(x - self.col_upper),
            )
        )


class CutModel:
    """The LP of one iteration: the eta cuts at the current point, the equalities and a box.

    Columns: baseline (K*K, index y*K + z), confusions (G*K*K, index (g*K + y)*K + z), epigraph
    variables (G*K, index g*K + y). Rows: 2*G*K*K cuts (branch, g, y, z), then the equalities.
    """

    def __init__(self, problem: AggregateProblem):
        n_groups, n_labels = problem.n_groups, problem.n_labels
        self.n_labels = n_labels
        self.n_base = n_labels * n_labels
        self.n_conf = n_groups * n_labels * n_labels
        self.n_point = self.n_base + self.n_conf
        n_cols = self.n_point + n_groups * n_labels
        g, y, z = (axis.ravel() for axis in np.indices((n_groups, n_labels, n_labels)))
        self.base_col = y * n_labels + z  # the baseline entry each confusion entry is compared to
        cut_cols = np.stack(
            [self.base_col, self.n_base + np.arange(self.n_conf), self.n_point + g * n_labels + y],
            axis=1,
        )
        n_cuts = 2 * self.n_conf
        equalities, rhs = _equality_rows(problem, n_cols)
        matrix = _stack_rows(
            3 * np.arange(n_cuts + 1),
            np.tile(cut_cols.ravel(), 2),
            np.tile([0.0, 0.0, -1.0], n_cuts),
            equalities,
            n_cols,
        )
        # (branch, cell, [d/da, d/db, epigraph]): a view into the matrix data, rewritten in place
        self.cut_coef = matrix.data[: 3 * n_cuts].reshape(2, self.n_conf, 3)
        cost = np.zeros(n_cols)
        cost[self.n_point :] = problem.beta * problem.cell_mass.ravel()
        cell = np.arange(n_groups * n_labels)  # g*K + y
        diagonal = self.n_base + cell * n_labels + cell % n_labels  # confusion entry (g, y, y)
        cost[diagonal] -= (1.0 - problem.beta) * problem.cell_mass.ravel()
        self.lp = LinearProgram(
            matrix,
            cost,
            col_lower=np.zeros(n_cols),
            col_upper=np.full(n_cols, np.inf),
            row_lower=np.r_[np.full(n_cuts, -np.inf), rhs],
            row_upper=np.r_[np.zeros(n_cuts), rhs],
        )

    def split(self, point):
        """Views (baseline (K, K), confusions (G, K, K)) of a point vector."""
        n_labels = self.n_labels
        return (
            point[: self.n_base].reshape(n_labels, n_labels),
            point[self.n_base : self.n_point].reshape(-1, n_labels, n_labels),
        )

    def update(self, point, radius) -> LinearProgram:
        """Linearise eta at ``point`` inside the box of half-width ``radius`` (inf: full box)."""
        lower = np.maximum(ENTRY_MIN, point - radius)
        upper = np.minimum(1.0 - ENTRY_MIN, point + radius)
        self.lp.col_lower[: self.n_point] = lower
        self.lp.col_upper[: self.n_point] = upper
        a = point[self.base_col]
        b = point[self.n_base :]
        branches = np.stack(eta_branches(a, b))
        grad_a = np.stack([b / a**2, -(1.0 - b) / (1.0 - a) ** 2])
        grad_b = np.stack([-1.0 / a, 1.0 / (1.0 - a)])
        down, up = lower - point, upper - point
        rise = (
            branches
            + _largest_change(grad_a, down[self.base_col], up[self.base_col])
            + _largest_change(grad_b, down[self.n_base :], up[self.n_base :])
        )
        # a cut that cannot exceed 0 inside the box is implied by c >= 0; one far below 0 is off
        keep = (branches >= CUT_FLOOR) & (rise > 0.0)
        self.cut_coef[:, :, 0] = np.where(keep, grad_a, 0.0)
        self.cut_coef[:, :, 1] = np.where(keep, grad_b, 0.0)
        # a dropped cut keeps its place in the pattern as the redundant row -c <= 1
        rhs = grad_a * a + grad_b * b - branches
        self.lp.row_upper[: 2 * self.n_conf] = np.where(keep, rhs, 1.0).ravel()
        return self.lp


def _largest_change(grad, low_step, high_step):
    """max of grad * step over step in [low_step, high_step], elementwise."""
    return np.maximum(grad * low_step, grad * high_step)


# --------------------------------------------------------------------------- feasible start


def feasible_start(problem: AggregateProblem, model: CutModel, start, backend: str) -> np.ndarray:
    """The smoothed start when it is feasible, else its nearest feasible point in L1."""
    baseline, confusions = (smooth_rows(part) for part in start)
    point = np.r_[baseline.ravel(), confusions.ravel()]
    if violation(problem, baseline, confusions) <= FEASIBILITY_TOL:
        return point
    return project(problem, model, point, backend)


def project(problem: AggregateProblem, model: CutModel, start, backend: str) -> np.ndarray:
    """LP over (x, d): min sum d with d >= |x - start|, x feasible."""
    n_point = model.n_point
    n_cols = 2 * n_point
    equalities, rhs = _equality_rows(problem, n_cols)
    index = np.arange(n_point)
    # rows i: x_i - d_i <= start_i ; rows n + i: -x_i - d_i <= -start_i
    matrix = _stack_rows(
        2 * np.arange(2 * n_point + 1),
        np.tile(np.stack([index, n_point + index], axis=1).ravel(), 2),
        np.r_[np.tile([1.0, -1.0], n_point), np.full(2 * n_point, -1.0)],
        equalities,
        n_cols,
    )
    lp = LinearProgram(
        matrix,
        cost=np.r_[np.zeros(n_point), np.ones(n_point)],
        col_lower=np.r_[np.full(n_point, ENTRY_MIN), np.zeros(n_point)],
        col_upper=np.r_[np.full(n_point, 1.0 - ENTRY_MIN), np.full(n_point, np.inf)],
        row_lower=np.r_[np.full(2 * n_point, -np.inf), rhs],
        row_upper=np.r_[start, -start, rhs],
    )
    solution = make_solver(backend).solve(lp)
    if solution is None or lp.violation(solution) > FEASIBILITY_TOL:
        raise BackendError(
            "the LP solver could not project the start onto the aggregate constraints"
        )
    return solution[:n_point].copy()


# --------------------------------------------------------------------------- LP solvers


def available_backends() -> tuple[str, ...]:
    """LP back ends installed here, fastest first; "scipy" is always there."""
    from importlib.util import find_spec

    return tuple(name for name in ("clarabel", "highspy") if find_spec(name)) + ("scipy",)


def default_backend() -> str:
    return available_backends()[0]


def make_solver(backend: str):
    solvers = {"clarabel": _ClarabelSolver, "highspy": _HighspySolver, "scipy": _ScipySolver}
    return solvers[backend]()


class _ScipySolver:
    """HiGHS interior point (with crossover) through scipy.optimize.linprog."""

    def solve(self, lp: LinearProgram):
        from scipy.optimize import linprog

        n_ineq, n_rows = lp.matrix.n_ineq, lp.matrix.n_rows
        result = linprog(
            lp.cost,
            A_ub=lp.matrix.block(0, n_ineq),
            b_ub=lp.row_upper[:n_ineq],
            A_eq=lp.matrix.block(n_ineq, n_rows),
            b_eq=lp.row_upper[n_ineq:],
            bounds=np.stack([lp.col_lower, lp.col_upper], axis=1),
            method="highs-ipm",
        )
        return result.x if result.status == 0 else None


class _HighspySolver:
    """HiGHS through highspy: dual simplex restarted from the previous optimal basis for small
    LPs, interior point (no crossover) from ``HIGHS_IPM_ROWS`` rows on, where it is faster."""

    def __init__(self):
        self._highs = QuietHighs()
        self._basis = None
        self._simplex = None

    def solve(self, lp: LinearProgram):
        matrix, highs = lp.matrix, self._highs
        if self._simplex is None:
            self._simplex = matrix.n_rows < HIGHS_IPM_ROWS
            highs.setOptionValue("solver", "simplex" if self._simplex else "ipm")
            highs.setOptionValue("run_crossover", "on" if self._simplex else "off")
        arrays = (lp.cost, lp.col_lower, lp.col_upper, lp.row_lower, lp.row_upper)
        highs.pass_lp(*arrays, matrix.indptr, matrix.indices, matrix.data, rowwise=True)
        x, self._basis = highs.run_from(self._basis, keep_basis=self._simplex)
        return x


class _ClarabelSolver:
    """Clarabel interior point; later solves update the data of the first one's pattern.

    Clarabel's rows: the equalities (zero cone), then the "<=" rows, x <= upper where finite and
    -x <= -lower (non-negative cone).
    """

    def __init__(self):
        self._solver = None

    def _build(self, lp: LinearProgram):
        import clarabel

        matrix = lp.matrix
        n_cols, n_rows, n_ineq = matrix.n_cols, matrix.n_rows, matrix.n_ineq
        self._bounded_above = np.flatnonzero(np.isfinite(lp.col_upper))
        n_up = self._bounded_above.size
        self._row_order = np.r_[np.arange(n_ineq, n_rows), np.arange(n_ineq)]
        position = np.empty(n_rows, dtype=np.int64)
        position[self._row_order] = np.arange(n_rows)
        rows = np.r_[
            position[np.repeat(np.arange(n_rows), np.diff(matrix.indptr))],
            n_rows + np.arange(n_up),
            n_rows + n_up + np.arange(n_cols),
        ]
        cols = np.r_[matrix.indices, self._bounded_above, np.arange(n_cols)]
        # CSC of entry numbers 1..nnz gives the permutation from our data order to Clarabel's
        stacked = sp.csc_matrix(
            (np.arange(1.0, rows.size + 1.0), (rows, cols)), shape=(n_rows + n_up + n_cols, n_cols)
        )
        self._permutation = stacked.data.astype(np.int64) - 1
        self._bound_data = np.r_[np.ones(n_up), -np.ones(n_cols)]
        stacked.data = self._data(lp)
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.presolve_enable = False  # keeps the pattern fixed, so data updates are allowed
        settings.max_threads = 1
        cones = [
            clarabel.ZeroConeT(n_rows - n_ineq),
            clarabel.NonnegativeConeT(n_ineq + n_up + n_cols),
        ]
        self._solver = clarabel.DefaultSolver(
            sp.csc_matrix((n_cols, n_cols)), lp.cost, stacked, self._rhs(lp), cones, settings
        )
        self._accepted = (clarabel.SolverStatus.Solved, clarabel.SolverStatus.AlmostSolved)

    def _data(self, lp: LinearProgram):
        return np.r_[lp.matrix.data, self._bound_data][self._permutation]

    def _rhs(self, lp: LinearProgram):
        return np.r_[
            lp.row_upper[self._row_order], lp.col_upper[self._bounded_above], -lp.col_lower
        ]

    def solve(self, lp: LinearProgram):
        if self._solver is None:
            self._build(lp)
        else:
            self._solver.update(A=self._data(lp), b=self._rhs(lp))
        solution = self._solver.solve()
        if solution.status not in self._accepted:
            return None
        return np.asarray(solution.x)
