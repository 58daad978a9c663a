"""Unknown (aggregate) regime of multiclass DCP: a local minimiser of J.

Only the group weights w_g, the label distributions pi_g^y and the prediction distributions p_g^z
are known. The per-group confusion matrices alpha_g are unknown but tied to the aggregates by
``sum_y pi_g^y alpha_g^{yz} = p_g^z``. We look for the least

    J = beta * sum_{g,y} c_gy max_z eta(alpha^{yz}, alpha_g^{yz})
        + (1 - beta) * sum_{g,y} c_gy (1 - alpha_g^{yy}),        c_gy = w_g pi_g^y,

over a common row-stochastic baseline alpha and feasible alpha_g, every entry in [1e-5, 1 - 1e-5]
and p smoothed by +1.1e-5 and renormalised. The problem is non-convex: this finds a local
minimum, whose value upper-bounds the least DCP consistent with the aggregates.

Default method (``method="reduced"``), a sequential LP on a reduced form of the problem:

* With rows summing to 1, ``max_z eta(a^{yz}, b^{yz}) = 1 - min_z b^{yz} / a^{yz}``: J depends on
  the confusion matrices only through each cell's fair mass ``x_gy`` (the part of pi_g^y whose
  predictions follow the baseline row) and, for beta < 1, the correct predictions. Which masses
  some feasible alpha_g realises has a closed linear answer (a transport argument,
  :mod:`._dcp_aggregate_reduced`), so the confusion matrices drop out: J is at most
  Phi(a) = min over x (and diagonal masses d) of a small LP, tight to about K * 1e-5.
* Sequential LP over (a, x, d) with the product x a linearised: K^2 + G K (+ G K) columns and
  G K (+ G K) rows (the joint problem has K^2 + G K^2 + G K columns and 2 G K^2 rows). Iteration
  1 solves the LP over the whole box, later ones inside a trust box of +-0.2; each LP step is
  followed by a backtracking line search on the exact Phi (first strict decrease of
  step/2**i, i <= 30, wins). HiGHS dual simplex, restarted from the previous basis.
* Stops (converged) when the step is below 1e-7, the line search finds no decrease, or Phi fell
  by at most 0.1 % (plus 1e-9) over the last 5 iterations; reaching ``max_iter`` LP iterations
  or an LP failure counts as not converged.
* Finally every group's confusion matrix is re-solved exactly for the final baseline: for fixed
  alpha, J separates over groups and each part is an LP in alpha_g
  (:mod:`._dcp_aggregate_group`). The returned point is feasible (to 1e-7) and its value is the
  true J there.
* Monotone: the restart's first feasible point is its start, smoothed like p, when that satisfies
  the constraints (a warm start from a real classifier does), else the start's baseline with
  every confusion row equal to the group's prediction distribution (always feasible). A final
  point is kept only when its J is lower, so J never increases from the first feasible point.
* Second descent: while G * K <= 200 (where a descent is cheap), each random restart also
  descends from a second random baseline, drawn up front after all the starts, and keeps the
  better point; ``max_iter`` bounds both descents together. A warm start gets none, so its
  result does not depend on the seed.

Why not block-coordinate descent (the exact group step for fixed alpha, the known regime's
per-label local search for fixed alpha_g)? Measured on random problems it stalls at a
coordinate-wise minimum after one sweep, at about twice the value of a sequential LP (K=6,
G=20: 0.26-0.32 against 0.10-0.15): the kink of eta at alpha_g^{y.} = s alpha^{y.} couples the
blocks, and neither block alone moves along it. Run after the reduced sequential LP it lowered no
value by more than 1e-6, and a global per-label baseline step (the known regime's full search)
followed by a new descent helped on few problems at 4-6 times the cost; neither is used. The
exact group step is the last step above.

Measured (CPU seconds with ``time.process_time``, one thread, shared machine; best of 5
restarts): 5 restarts take about 0.15-0.25 s at K=3, G=5, 0.6-1.1 s at K=6, G=20 and 4.3-6.5 s
at K=10, G=50, against 0.2, 6-9 and 155-205 s for the joint method; a descent takes 5-35 LP
iterations. On 22 random problems with (K, G) in {(3, 5), (4, 10), (6, 20)}, 3 with (10, 50) and
the Chile audit (vote by region, logistic regression) the values are on average 0.0002 below the
joint method's; the largest excess was 0.0024 (at K=3: the methods find different local minima
from the same starts). On 100 more small problems (K <= 5, G <= 8) the mean was 0.0015 below,
with one excess above 0.005 (0.025). Without the second descent the means were 0.0001 and
0.0003 below, with 4 excesses above 0.005 in the 100. With beta = 0.5 (24 small problems) the
mean was 0.0013 above the joint method's, with two excesses above 0.005 (the worst, 0.039: the
joint method found a near-identity baseline that the reduced descents missed); beta = 0 is
solved exactly by the group step.

``method="joint"``: the authors' ``solve_large.solveFairness``, one LP per iteration over all
variables, kept as a reference. Its eta-splitting cuts, for each (g, y, z) and each smooth branch
of eta, ``c_gy >= branch + d/da * (a - a0) + d/db * (b - b0)``; cuts whose branch is below -1 or
which cannot rise above 0 in the box are dropped; infeasible starts are projected onto the
feasible set (nearest point in L1, by an LP); the iteration, trust region, line search and
stopping rule are the ones above (step cap 0.2 in the infinity norm). Back ends, the first
installed: Clarabel (interior point, pattern factorised once), highspy (dual simplex from the
previous basis; interior point from 5000 rows on), ``scipy.optimize.linprog(method="highs-ipm")``.
One LP at K=10, G=50 costs 0.5-0.8 CPU-s (Clarabel) to 4 (SciPy), and a restart needs 30-100.

Limits: the result is a local minimum (take the best of several restarts); ``J* <= LB`` of the
known regime is not guaranteed. Runs are deterministic for a given seed (and, for the joint
method, back end).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from trustlab._checks import check_random_state
from trustlab.errors import BackendError
from trustlab.fairness._dcp_aggregate_group import ENTRY_MIN as _ENTRY_MIN
from trustlab.fairness._dcp_aggregate_group import GroupLP
from trustlab.fairness._dcp_aggregate_reduced import ReducedProblem, descend, realise
from trustlab.fairness._eta import eta, eta_branches

__all__ = ["METHODS", "AggregateSolution", "aggregate_objective", "solve_aggregate"]

METHODS = ("reduced", "joint")
# every alpha entry lies in [_ENTRY_MIN, 1 - _ENTRY_MIN] = [1e-5, 1 - 1e-5] (authors: MIN_ALPHAG)
_P_SMOOTHING = 1.1e-5  # added to p_g^z before renormalising, so the entry bounds stay feasible
_TRUST_RADII = (0.2, 0.02, 0.004)  # after iteration 1; the next one is tried when the LP fails
_STEP_CAP = 0.2
_MAX_HALVINGS = 30
# A cut whose branch is below -1 at the current point is far from active; dropping it keeps
# 1/a**2-sized coefficients out of the LP (the authors use the same threshold).
_CUT_FLOOR = -1.0
_STEP_TOL = 1e-7
_WINDOW = 5
_REL_TOL = 1e-3
_ABS_TOL = 1e-9
_HIGHS_IPM_ROWS = 5000  # highspy: the simplex below, the interior point from here on
_FEASIBILITY_TOL = 1e-7  # an LP answer further than this from feasible counts as a failure
# reduced method: while G * K is at most this, each restart also descends from a second random
# baseline (at K=6, G=20 this doubles 0.35 CPU-s; see the module docstring for the gain)
_SECOND_DESCENT_WORK = 200


@dataclass(frozen=True, eq=False)
class AggregateSolution:
    """Best local minimum over the restarts.

    Attributes
    ----------
    value : float
        Best objective J* over the restarts.
    baseline : ndarray of shape (K, K)
        The common baseline alpha at the best point (row-stochastic).
    confusions : ndarray of shape (G, K, K)
        The per-group confusion matrices alpha_g at the best point: rows sum to 1,
        ``sum_y pi_g^y alpha_g^{yz}`` equals the smoothed p_g^z, entries in [1e-5, 1 - 1e-5].
    restart_values, iterations, converged : tuple
        Per restart (the warm start first, when given): the final J, the number of sequential-LP
        iterations and whether the convergence test stopped it before ``max_iter``.
    """

    value: float
    baseline: np.ndarray
    confusions: np.ndarray
    restart_values: tuple[float, ...]
    iterations: tuple[int, ...]
    converged: tuple[bool, ...]

    def to_dict(self) -> dict:
        """JSON-safe copy (plain floats, ints, bools and lists)."""
        return {
            "value": float(self.value),
            "baseline": self.baseline.tolist(),
            "confusions": self.confusions.tolist(),
            "restart_values": [float(v) for v in self.restart_values],
            "iterations": [int(i) for i in self.iterations],
            "converged": [bool(c) for c in self.converged],
        }


def aggregate_objective(baseline, confusions, group_weights, label_dist, beta=1.0) -> float:
    """The objective J of the aggregate regime at one point.

    ``J = beta * DCP + (1 - beta) * error`` with
    ``DCP = sum_{g,y} c_gy max_z eta(baseline[y, z], confusions[g, y, z])``,
    ``error = sum_{g,y} c_gy (1 - confusions[g, y, y])`` and
    ``c_gy = group_weights[g] * label_dist[g, y]``.

    Parameters
    ----------
    baseline : array of shape (K, K)
    confusions : array of shape (G, K, K)
    group_weights : array of shape (G,)
    label_dist : array of shape (G, K)
    beta : float, default 1.0

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> same = np.array([[0.8, 0.2], [0.3, 0.7]])
    >>> aggregate_objective(same, np.stack([same, same]), [0.5, 0.5], [[0.5, 0.5], [0.4, 0.6]])
    0.0
    """
    baseline = np.asarray(baseline, dtype=np.float64)
    confusions = np.asarray(confusions, dtype=np.float64)
    cell_mass = _cell_mass(group_weights, label_dist)
    assert confusions.shape == cell_mass.shape + (baseline.shape[0],)
    assert baseline.shape == (cell_mass.shape[1], cell_mass.shape[1])
    return _objective(baseline, confusions, cell_mass, float(beta))


def solve_aggregate(
    group_weights,
    label_dist,
    pred_dist,
    *,
    beta=1.0,
    restarts=5,
    random_state=None,
    init=None,
    max_iter=250,
    n_jobs=None,
    method="reduced",
) -> AggregateSolution:
    """Local minimum of the aggregate-regime objective J, best of several restarts.

    Inputs are assumed validated by the public wrapper (``dcp_from_aggregates``); shapes are still
    asserted here.

    Parameters
    ----------
    group_weights : array of shape (G,)
        w_g, summing to 1.
    label_dist : array of shape (G, K)
        pi_g^y, rows summing to 1.
    pred_dist : array of shape (G, K)
        p_g^z, rows summing to 1; smoothed by +1.1e-5 and renormalised before use.
    beta : float, default 1.0
        Weight of DCP against the error term (1 is pure DCP).
    restarts : int, default 5
        Number of starts, the warm start included.
    random_state : None, int or numpy Generator
        Seeds the random starts (uniform random rows, normalised) and, for the reduced method
        while G * K <= 200, one more random baseline per random start; all are drawn up front,
        so the result does not depend on ``n_jobs``.
    init : tuple (baseline (K, K), confusions (G, K, K)), optional
        Warm start, used as the first start.
    max_iter : int, default 250
        LP iterations per restart at most (for the reduced method, its descents together).
    n_jobs : int, optional
        Restarts run in parallel through joblib unless None or 1.
    method : {"reduced", "joint"}, default "reduced"
        "reduced": the sequential LP on the reduced problem, then the exact group step (fast);
        "joint": the authors' sequential LP over all variables (slow; kept as a reference).

    Returns
    -------
    AggregateSolution

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([0.5, 0.5])
    >>> pi = np.array([[0.6, 0.4], [0.3, 0.7]])
    >>> p = np.array([[0.5, 0.5], [0.4, 0.6]])
    >>> solution = solve_aggregate(w, pi, p, restarts=2, random_state=0)
    >>> solution.confusions.shape
    (2, 2, 2)
    >>> solution.value == min(solution.restart_values)
    True
    """
    assert method in METHODS
    problem = _Problem.build(group_weights, label_dist, pred_dist, beta)
    rng = check_random_state(random_state)
    starts = _draw_starts(problem, int(restarts), rng, init)
    if method == "joint":
        backend, seconds = _default_backend(), [None] * len(starts)
    else:
        backend, seconds = None, _draw_second_baselines(problem, starts, rng, init)
    jobs = list(zip(starts, seconds, strict=True))
    if n_jobs is None or n_jobs == 1:
        traces = [_run_restart(problem, *job, max_iter, backend) for job in jobs]
    else:
        from joblib import Parallel, delayed

        traces = Parallel(n_jobs=n_jobs)(
            delayed(_run_restart)(problem, *job, max_iter, backend) for job in jobs
        )
    best = min(range(len(traces)), key=lambda i: traces[i].value)
    return AggregateSolution(
        value=traces[best].value,
        baseline=traces[best].baseline,
        confusions=traces[best].confusions,
        restart_values=tuple(trace.value for trace in traces),
        iterations=tuple(trace.iterations for trace in traces),
        converged=tuple(trace.converged for trace in traces),
    )


# --------------------------------------------------------------------------- problem data


def _cell_mass(group_weights, label_dist) -> np.ndarray:
    weights = np.asarray(group_weights, dtype=np.float64)
    labels = np.asarray(label_dist, dtype=np.float64)
    assert weights.ndim == 1 and labels.ndim == 2 and labels.shape[0] == weights.shape[0]
    return weights[:, None] * labels


def _objective(baseline, confusions, cell_mass, beta) -> float:
    unfair = eta(baseline[None, :, :], confusions).max(axis=2)
    value = beta * float(np.sum(cell_mass * unfair))
    if beta != 1.0:
        correct = np.diagonal(confusions, axis1=1, axis2=2)
        value += (1.0 - beta) * float(np.sum(cell_mass * (1.0 - correct)))
    return value


def _smooth_rows(rows) -> np.ndarray:
    """Add 1.1e-5 to every entry and renormalise each row (the last axis)."""
    smoothed = np.asarray(rows, dtype=np.float64) + _P_SMOOTHING
    return smoothed / smoothed.sum(axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class _Problem:
    """The data of one aggregate problem, p already smoothed."""

    cell_mass: np.ndarray  # (G, K): c_gy = w_g pi_g^y
    label_dist: np.ndarray  # (G, K)
    pred_dist: np.ndarray  # (G, K), smoothed
    beta: float

    @classmethod
    def build(cls, group_weights, label_dist, pred_dist, beta) -> _Problem:
        cell_mass = _cell_mass(group_weights, label_dist)
        pred = np.asarray(pred_dist, dtype=np.float64)
        assert pred.shape == cell_mass.shape and cell_mass.shape[1] >= 2
        labels = np.asarray(label_dist, dtype=np.float64)
        return cls(cell_mass, labels, _smooth_rows(pred), float(beta))

    @property
    def n_groups(self) -> int:
        return self.cell_mass.shape[0]

    @property
    def n_labels(self) -> int:
        return self.cell_mass.shape[1]

    def objective(self, baseline, confusions) -> float:
        return _objective(baseline, confusions, self.cell_mass, self.beta)


def _draw_starts(problem: _Problem, restarts: int, rng: np.random.Generator, init) -> list:
    """The warm start (if any) then random ones, all drawn before any restart runs."""
    n_groups, n_labels = problem.n_groups, problem.n_labels
    assert restarts >= 1
    starts = []
    if init is not None:
        baseline, confusions = (np.asarray(part, dtype=np.float64) for part in init)
        assert baseline.shape == (n_labels, n_labels)
        assert confusions.shape == (n_groups, n_labels, n_labels)
        starts.append((baseline, confusions))
    while len(starts) < restarts:
        baseline = rng.random((n_labels, n_labels))
        confusions = rng.random((n_groups, n_labels, n_labels))
        starts.append(
            (
                baseline / baseline.sum(axis=1, keepdims=True),
                confusions / confusions.sum(axis=2, keepdims=True),
            )
        )
    return starts


# --------------------------------------------------------------------------- LP matrices


class _RowMatrix:
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


def _equality_rows(problem: _Problem, n_cols: int):
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
    return _RowMatrix(
        np.r_[ineq_indptr, equalities.indptr[1:] + nnz],
        np.r_[ineq_indices, equalities.indices],
        np.r_[ineq_data, equalities.data],
        n_cols,
        len(ineq_indptr) - 1,
    )


@dataclass(eq=False)
class _LinearProgram:
    """min cost.x subject to row_lower <= matrix x <= row_upper, col_lower <= x <= col_upper."""

    matrix: _RowMatrix
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


class _CutModel:
    """The LP of one iteration: the eta cuts at the current point, the equalities and a box.

    Columns: baseline (K*K, index y*K + z), confusions (G*K*K, index (g*K + y)*K + z), epigraph
    variables (G*K, index g*K + y). Rows: 2*G*K*K cuts (branch, g, y, z), then the equalities.
    """

    def __init__(self, problem: _Problem):
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
        self.lp = _LinearProgram(
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

    def update(self, point, radius) -> _LinearProgram:
        """Linearise eta at ``point`` inside the box of half-width ``radius`` (inf: full box)."""
        lower = np.maximum(_ENTRY_MIN, point - radius)
        upper = np.minimum(1.0 - _ENTRY_MIN, point + radius)
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
        keep = (branches >= _CUT_FLOOR) & (rise > 0.0)
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


def _feasible_start(problem: _Problem, model: _CutModel, start, backend: str) -> np.ndarray:
    """The smoothed start when it is feasible, else its nearest feasible point in L1."""
    baseline, confusions = (_smooth_rows(part) for part in start)
    point = np.r_[baseline.ravel(), confusions.ravel()]
    if _violation(problem, baseline, confusions) <= _FEASIBILITY_TOL:
        return point
    return _project(problem, model, point, backend)


def _violation(problem: _Problem, baseline, confusions) -> float:
    """Largest violation of the row sums, the aggregate constraint and the entry bounds."""
    aggregate = np.einsum("gy,gyz->gz", problem.label_dist, confusions) - problem.pred_dist
    return float(
        max(
            np.max(np.abs(baseline.sum(axis=1) - 1.0)),
            np.max(np.abs(confusions.sum(axis=2) - 1.0)),
            np.max(np.abs(aggregate)),
            _ENTRY_MIN - min(baseline.min(), confusions.min()),
            max(baseline.max(), confusions.max()) - (1.0 - _ENTRY_MIN),
        )
    )


def _project(problem: _Problem, model: _CutModel, start, backend: str) -> np.ndarray:
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
    lp = _LinearProgram(
        matrix,
        cost=np.r_[np.zeros(n_point), np.ones(n_point)],
        col_lower=np.r_[np.full(n_point, _ENTRY_MIN), np.zeros(n_point)],
        col_upper=np.r_[np.full(n_point, 1.0 - _ENTRY_MIN), np.full(n_point, np.inf)],
        row_lower=np.r_[np.full(2 * n_point, -np.inf), rhs],
        row_upper=np.r_[start, -start, rhs],
    )
    solution = _make_solver(backend).solve(lp)
    if solution is None or lp.violation(solution) > _FEASIBILITY_TOL:
        raise BackendError(
            "the LP solver could not project the start onto the aggregate constraints"
        )
    return solution[:n_point].copy()


# --------------------------------------------------------------------------- LP solvers


def _available_backends() -> tuple[str, ...]:
    """LP back ends installed here, fastest first; "scipy" is always there."""
    from importlib.util import find_spec

    return tuple(name for name in ("clarabel", "highspy") if find_spec(name)) + ("scipy",)


def _default_backend() -> str:
    return _available_backends()[0]


def _make_solver(backend: str):
    solvers = {"clarabel": _ClarabelSolver, "highspy": _HighspySolver, "scipy": _ScipySolver}
    return solvers[backend]()


class _ScipySolver:
    """HiGHS interior point (with crossover) through scipy.optimize.linprog."""

    def solve(self, lp: _LinearProgram):
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
    LPs, interior point (no crossover) from ``_HIGHS_IPM_ROWS`` rows on, where it is faster."""

    def __init__(self):

        from trustlab.fairness._highs import QuietHighs

        self._highs = QuietHighs()
        self._basis = None
        self._simplex = None

    def solve(self, lp: _LinearProgram):
        matrix, highs = lp.matrix, self._highs
        if self._simplex is None:
            self._simplex = matrix.n_rows < _HIGHS_IPM_ROWS
            highs.setOptionValue("solver", "simplex" if self._simplex else "ipm")
            highs.setOptionValue("run_crossover", "on" if self._simplex else "off")
        highs.passModel(
            matrix.n_cols,
            matrix.n_rows,
            len(matrix.data),
            2,  # row-wise matrix
            1,  # minimise
            0.0,
            lp.cost,
            lp.col_lower,
            lp.col_upper,
            lp.row_lower,
            lp.row_upper,
            matrix.indptr,
            matrix.indices,
            matrix.data,
            np.zeros(matrix.n_cols, dtype=np.int32),  # every column continuous
        )
        x, self._basis = highs.run_from(self._basis, keep_basis=self._simplex)
        return x


class _ClarabelSolver:
    """Clarabel interior point; later solves update the data of the first one's pattern.

    Clarabel's rows: the equalities (zero cone), then the "<=" rows, x <= upper where finite and
    -x <= -lower (non-negative cone).
    """

    def __init__(self):
        self._solver = None

    def _build(self, lp: _LinearProgram):
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

    def _data(self, lp: _LinearProgram):
        return np.r_[lp.matrix.data, self._bound_data][self._permutation]

    def _rhs(self, lp: _LinearProgram):
        return np.r_[
            lp.row_upper[self._row_order], lp.col_upper[self._bounded_above], -lp.col_lower
        ]

    def solve(self, lp: _LinearProgram):
        if self._solver is None:
            self._build(lp)
        else:
            self._solver.update(A=self._data(lp), b=self._rhs(lp))
        solution = self._solver.solve()
        if solution.status not in self._accepted:
            return None
        return np.asarray(solution.x)


# --------------------------------------------------------------------------- one restart


@dataclass(frozen=True, eq=False)
class _RestartTrace:
    value: float
    baseline: np.ndarray
    confusions: np.ndarray
    iterations: int
    converged: bool
    history: tuple[float, ...]  # J at the feasible start, then after every accepted step (joint)
    # or descent (reduced)


def _run_restart(problem: _Problem, start, second, max_iter: int, backend) -> _RestartTrace:
    """One restart: the reduced method when ``backend`` is None, else the joint one."""
    if backend is None:
        return _solve_reduced(problem, start, max_iter, second)
    return _solve_from_start(problem, start, max_iter, backend)


def _solve_reduced(problem: _Problem, start, max_iter: int, second=None) -> _RestartTrace:
    """The reduced sequential LP from the start's baseline (then from ``second``, if given),
    each followed by the exact group step.

    J never increases after the first feasible point: the history holds J there, then J at each
    descent's final point that is lower than the last entry. ``max_iter`` bounds the LP
    iterations of all descents together.
    """
    baseline, confusions = _reduced_start(problem, start)
    history = [problem.objective(baseline, confusions)]
    reduced = ReducedProblem.build(
        problem.cell_mass, problem.label_dist, problem.pred_dist, problem.beta
    )
    iterations, converged = 0, True
    for origin in (baseline,) if second is None else (baseline, _smooth_rows(second)):
        if iterations >= max_iter:
            break
        descent = descend(reduced, origin, max_iter - iterations)
        if descent is None:  # the first LP failed: nothing is known from this origin
            converged = False
            continue
        iterations += descent.iterations
        converged = converged and descent.converged
        found = _best_confusions(problem, reduced, descent)
        value = problem.objective(descent.baseline, found)
        if value < history[-1]:
            baseline, confusions = descent.baseline, found
            history.append(value)
    return _RestartTrace(history[-1], baseline, confusions, iterations, converged, tuple(history))


def _draw_second_baselines(problem: _Problem, starts: list, rng, init) -> list:
    """One more random baseline (uniform rows, normalised) per random start while G * K is at
    most _SECOND_DESCENT_WORK, else None; a warm start gets None, so its result does not depend
    on the seed. Drawn after the starts, which therefore do not change."""
    count = len(starts) - (init is not None)
    if problem.n_groups * problem.n_labels > _SECOND_DESCENT_WORK:
        return [None] * len(starts)
    baselines = rng.random((count, problem.n_labels, problem.n_labels))
    baselines /= baselines.sum(axis=2, keepdims=True)
    return [None] * (init is not None) + list(baselines)


def _reduced_start(problem: _Problem, start):
    """The smoothed start if it is feasible, else its baseline with every confusion row equal
    to the group's (smoothed) prediction distribution, which satisfies every constraint."""
    baseline, confusions = (_smooth_rows(part) for part in start)
    if _violation(problem, baseline, confusions) <= _FEASIBILITY_TOL:
        return baseline, confusions
    rows = np.broadcast_to(problem.pred_dist[:, None, :], confusions.shape)
    return baseline, rows.copy()


def _best_confusions(problem: _Problem, reduced: ReducedProblem, descent) -> np.ndarray:
    """Per group, the exact group step for the final baseline; where HiGHS fails, the
    confusion matrix the reduced solution realises, or the prediction rows if that is off."""
    baseline = descent.baseline
    realised = realise(reduced, baseline, descent.fair, descent.diagonal)
    confusions = np.empty_like(realised)
    for g in range(problem.n_groups):
        lp = GroupLP(
            problem.cell_mass[g], problem.label_dist[g], problem.pred_dist[g], problem.beta
        )
        exact = lp.solve(baseline)
        if exact is not None:
            confusions[g] = exact
        elif lp.violation(realised[g]) <= _FEASIBILITY_TOL:
            confusions[g] = realised[g]
        else:
            confusions[g] = problem.pred_dist[g]
    return confusions


def _solve_from_start(problem: _Problem, start, max_iter: int, backend: str) -> _RestartTrace:
    """Sequential LP from one start; J never increases after the feasible start."""
    model = _CutModel(problem)
    solver = _make_solver(backend)
    point = _feasible_start(problem, model, start, backend)
    history = [problem.objective(*model.split(point))]
    converged, iteration = False, 0
    for iteration in range(1, max_iter + 1):
        radii = ((np.inf,) if iteration == 1 else ()) + _TRUST_RADII
        target = _solve_step(model, solver, point, radii)
        if target is None:
            break
        step = target[: model.n_point] - point
        size = float(np.max(np.abs(step)))
        if size < _STEP_TOL:
            converged = True
            break
        if iteration > 1 and size > _STEP_CAP:
            step *= _STEP_CAP / size
        accepted = _line_search(problem, model, point, step, history[-1])
        if accepted is None:
            converged = True
            break
        point = accepted[0]
        history.append(accepted[1])
        if _stalled(history):
            converged = True
            break
    baseline, confusions = model.split(point)
    return _RestartTrace(
        history[-1], baseline.copy(), confusions.copy(), iteration, converged, tuple(history)
    )


def _solve_step(model: _CutModel, solver, point, radii):
    """LP solution inside the first radius whose LP solves to a feasible point."""
    for radius in radii:
        lp = model.update(point, radius)
        target = solver.solve(lp)
        if target is not None and lp.violation(target) <= _FEASIBILITY_TOL:
            return target
    return None


def _line_search(problem: _Problem, model: _CutModel, point, step, value):
    """First of step, step/2, ..., step/2**30 that lowers J strictly; None when none does."""
    rate = 1.0
    for _ in range(_MAX_HALVINGS + 1):
        trial = point + rate * step
        trial_value = problem.objective(*model.split(trial))
        if trial_value < value:
            return trial, trial_value
        rate *= 0.5
    return None


def _stalled(history) -> bool:
    """J fell by at most _REL_TOL (relative) over the last _WINDOW iterations."""
    if len(history) <= _WINDOW:
        return False
    before, now = history[-1 - _WINDOW], history[-1]
    return before - now <= _REL_TOL * before + _ABS_TOL
