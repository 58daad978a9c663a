"""Minimal corrections into a safety polytope: the :class:`Projection` result and the solvers
behind ``SafetyPolytope.project``.

Linear facets, ``c(x) = A x - e`` with target ``c(x') <= -margin``:

- L2 (the default) is the quadratic program ``min ||x' - x||^2  s.t.  A x' <= e - margin``.
  It is solved through its dual, a K-variable problem (K facets, usually far fewer than the d
  coordinates): ``min_{lam >= 0} 1/2 lam' A A' lam - lam' (c(x) + margin)`` with
  ``x' = x - A' lam``. Clarabel (an interior-point solver) gives an approximate ``lam``; the
  active set it identifies is then solved exactly (a small linear system) and refined by
  adding the most violated or dropping the most negative constraint until the
  Karush-Kuhn-Tucker conditions hold to rounding error. Stationarity holds by construction, so
  the certificate checks primal feasibility, dual feasibility and complementarity. When it
  fails (nearly parallel facets, e.g. raw-space facets of coordinates of very different
  spread, make the dual ill-conditioned), the primal program (d variables) is solved with
  Clarabel too and the nearer feasible point of the two kept. A point is feasible when it
  meets every constraint to the tolerance and no facet value is positive (see ``feasible``).
- L1 is the linear program ``min sum |x' - x|`` with the same constraints (HiGHS).

Concept facets ``c(x) = Phi relu(W z(x) + beta) - xi`` are piecewise linear in ``x``. The
projection is solved by sequential linearisation: at the current point the facets are exactly
linear on the current ReLU pattern, the linearised L2 program is solved exactly as above
(always measuring the distance to the original ``x``), and the step is repeated until the true
facets hold (or an iteration budget runs out). Unlike the authors' single gradient step per
token it reports whether feasibility was reached; the result is a feasible point close to the
nearest one (a local, not certified global, minimum: the safe set is not convex).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trustlab._results import Result, internal_field

__all__ = [
    "Projection",
    "LinearSolve",
    "project_linear_l2",
    "project_linear_l1",
    "project_concept",
    "unflagged",
    "NORMS",
    "MAX_ITER",
]

NORMS = ("l2", "l1")
#: Linearisation steps of the concept-encoder projection (``SafetyPolytope.project(max_iter=)``).
MAX_ITER = 50

# Relative tolerance of the KKT certificate (scaled by the size of the problem's numbers).
_KKT_TOL = 1e-9
_MAX_REFINEMENTS = 200


@dataclass(frozen=True)
class Projection(Result):
    """Rows moved into the polytope by :meth:`SafetyPolytope.project`.

    Attributes
    ----------
    method : str
        "exact-l2", "exact-l1" (linear encoder) or "sequential-linearisation" (concept encoder).
    norm : str
        The norm of the distance, "l2" or "l1".
    margin : float
        The target: ``c_k(h') <= -margin``.
    moved : ndarray of bool (n,)
        Rows that were outside (``max_k c_k > -margin``) and got corrected.
    feasible : ndarray of bool (n,)
        Rows that end inside: every facet value ``c_k(h') <= -margin`` up to the solver's
        tolerance (linear L2: ``1e-9 x (2 + max_k |c_k(h) + margin| / |a_k|)`` in
        distance units, i.e. ``|a_k|`` times that in facet units, ``a_k`` the facet's raw-space
        normal; L1: ``1e-9 x (1 + max_k |c_k(h)|)``; concept: ``1e-9 x (1 + margin)``) and
        none above 0, so ``is_unsafe`` is False on them (when ``margin`` is below the rounding
        slack ``1e-9 x (1 + margin + |c_k(h')|)`` of the facet, up to that slack less
        ``margin``).
        Always True for unmoved rows. Linear L2: the point is the nearest one when the KKT
        certificate holds; otherwise the nearer feasible one of the dual and primal solves.
    distance : ndarray (n,)
        ``||h' - h||`` in the chosen norm.
    max_violation : ndarray (n,)
        ``max_k c_k(h')`` after the correction.
    points : ndarray (n, d)
        The corrected rows (unchanged rows are bit-identical copies); not in ``to_dict()``.
    kkt_residual : ndarray (n,)
        Linear encoder, L2: the KKT residual of the exact solve (0 for unmoved rows).
    iterations : ndarray of int (n,)
        Active-set refinements (linear) or linearisation steps (concept).
    """

    method: str
    norm: str
    margin: float
    moved: np.ndarray
    feasible: np.ndarray
    distance: np.ndarray
    max_violation: np.ndarray
    points: np.ndarray = internal_field()
    kkt_residual: np.ndarray = internal_field()
    iterations: np.ndarray = internal_field()

    _dict_extras = ("n", "n_moved", "n_feasible", "all_feasible")

    @property
    def n(self) -> int:
        """Rows projected."""
        return int(len(self.moved))

    @property
    def n_moved(self) -> int:
        """Rows that were outside and got corrected."""
        return int(self.moved.sum())

    @property
    def n_feasible(self) -> int:
        """Rows that end inside."""
        return int(self.feasible.sum())

    @property
    def all_feasible(self) -> bool:
        """Whether every row ends inside."""
        return bool(self.feasible.all())

    def summary(self) -> str:
        moved = self.moved
        mean = float(self.distance[moved].mean()) if moved.any() else 0.0
        return (
            f"projection ({self.method}): {int(moved.sum())} of {len(moved)} rows moved, "
            f"{int(self.feasible.sum())} feasible, mean {self.norm} distance of moved rows "
            f"{mean:.4g}"
        )


@dataclass(frozen=True)
class LinearSolve:
    """The result of one projection: the point, the multipliers and the certificate."""

    point: np.ndarray
    feasible: bool
    kkt_residual: float
    iterations: int


def project_linear_l2(x: np.ndarray, A: np.ndarray, e: np.ndarray, margin: float) -> LinearSolve:
    """Exact Euclidean projection of ``x`` onto ``{y : A y - e <= -margin}``.

    Each constraint is divided by the length of its normal first (the same set): its value is
    then a signed distance, so one tolerance fits every facet and the Gram matrix has a unit
    diagonal, whatever the scale of the facets (long normals, e.g. from standardising
    activations of small spread, made a tolerance mixing facet units with their squares accept
    rows still outside).

    The point is feasible when it meets every constraint to the certificate's tolerance (in
    distance units) and no facet value is positive (:func:`unflagged`); a certified point is
    the nearest one. When the certificate fails, the nearer of the dual point and Clarabel's
    primal point that is feasible is kept (the dual point when neither is); when the dual solve
    itself fails (parallel facets far from ``x``), the primal point, solved again in units of the
    distance when it fails on a far row (``x`` when that fails too)."""
    raw_A, raw_e = A, e
    lengths = np.linalg.norm(A, axis=1)
    lengths[lengths == 0.0] = 1.0  # a zero normal stays as it is (feasible or not everywhere)
    A, limits = A / lengths[:, None], (e - margin) / lengths  # the constraints A y <= limits
    shifted = A @ x - limits  # signed distances at x; > 0 where violated
    gram = A @ A.T
    tol = _KKT_TOL * (1.0 + float(np.max(np.abs(shifted))) + float(np.max(np.abs(gram))))

    def feasible(y: np.ndarray) -> bool:
        return bool(np.max(A @ y - limits) <= tol) and unflagged(raw_A @ y - raw_e, margin)

    lam0, solved = _clarabel_dual(gram, shifted)
    if solved:
        lam, iterations = _refine_active_set(gram, shifted, lam0, tol)
        point = x - A.T @ lam
        residual = _kkt_residual(A @ point - limits, lam)
        inside = feasible(point)
    else:  # parallel facets far away stall the dual (InsufficientProgress): try the primal
        point, residual, iterations, inside = x.copy(), float("inf"), 0, False
    if residual > tol or not inside:  # nearly parallel facets: the dual is ill-conditioned
        step, solved = _clarabel_primal(A, shifted)
        unit = float(np.max(np.abs(shifted)))
        if not solved and unit > 1.0:  # far rows (~1e4, K > d) stall it too: solve in their units
            step, solved = _clarabel_primal(A, shifted / unit)
            step = step * unit
        other = x + step
        if solved and feasible(other) and (not inside or step @ step < (point - x) @ (point - x)):
            violation = float(np.max(A @ other - limits))
            return LinearSolve(other, True, max(violation, 0.0), iterations)
    return LinearSolve(point, inside, residual, iterations)


def unflagged(values: np.ndarray, margin: float) -> bool:
    """Whether facet values ``values`` (K,) of a projected point are not flagged: none above 0,
    but for each facet's rounding slack ``1e-9 x (1 + margin + |c_k|)`` less ``margin`` where
    that is positive (``margin`` 0 asks for the boundary, where rounding falls either side). The
    slack is the facet's own: a far facet (|c_j| ~ 1e6) does not excuse a flagged one."""
    slack = 1e-9 * (1.0 + margin + np.abs(values))
    return bool(np.all(values <= np.maximum(0.0, slack - margin)))


def _clarabel_primal(A: np.ndarray, shifted: np.ndarray) -> tuple[np.ndarray, bool]:
    """Solve ``min 1/2 |s|^2, A s <= -shifted`` (the step from x) with Clarabel."""
    import clarabel
    import scipy.sparse as sp

    k, d = A.shape
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_threads = 1
    # Clarabel's default gaps (1e-8) left feasible points up to 4e-4 farther than the nearest
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12
    solver = clarabel.DefaultSolver(
        sp.identity(d, format="csc"),
        np.zeros(d),
        sp.csc_matrix(A),
        -shifted,
        [clarabel.NonnegativeConeT(k)],
        settings,
    )
    solution = solver.solve()
    solved = str(solution.status) in ("Solved", "AlmostSolved")
    return np.asarray(solution.x, dtype=np.float64), solved


def _clarabel_dual(gram: np.ndarray, shifted: np.ndarray) -> tuple[np.ndarray, bool]:
    """Solve ``min 1/2 lam' G lam - lam' r, lam >= 0`` with Clarabel; (lam, solved?)."""
    import clarabel
    import scipy.sparse as sp

    k = gram.shape[0]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_threads = 1
    solver = clarabel.DefaultSolver(
        sp.triu(sp.csc_matrix(gram), format="csc"),
        -shifted,
        -sp.identity(k, format="csc"),
        np.zeros(k),
        [clarabel.NonnegativeConeT(k)],
        settings,
    )
    solution = solver.solve()
    solved = str(solution.status) in ("Solved", "AlmostSolved")
    return np.maximum(np.asarray(solution.x, dtype=np.float64), 0.0), solved


def _refine_active_set(
    gram: np.ndarray, shifted: np.ndarray, lam0: np.ndarray, tol: float
) -> tuple[np.ndarray, int]:
    """Exact multipliers from an approximate ``lam0``: solve the equality system on the active
    set, drop negative multipliers, add violated constraints, until the KKT conditions hold
    (to ``tol``)."""
    top = float(lam0.max()) if lam0.size else 0.0
    active = lam0 > 1e-7 * max(top, 1.0)
    lam = lam0
    for iteration in range(1, _MAX_REFINEMENTS + 1):
        lam = np.zeros_like(shifted)
        idx = np.flatnonzero(active)
        if idx.size:
            sub = gram[np.ix_(idx, idx)]
            lam[idx] = np.linalg.lstsq(sub, shifted[idx], rcond=None)[0]
            if lam[idx].min() < -tol:
                active[idx[np.argmin(lam[idx])]] = False
                continue
            lam = np.maximum(lam, 0.0)
        values = shifted - gram @ lam  # the constraint values at x' = x - A' lam
        # dependent active rows that disagree (parallel facets of different scale: the margin
        # is per facet): least squares leaves the looser one slack; it is not active
        if idx.size and values[idx].min() < -tol:
            active[idx[np.argmin(values[idx])]] = False
            continue
        worst = int(np.argmax(np.where(active, -np.inf, values)))
        if active.all() or values[worst] <= tol:
            return lam, iteration
        active[worst] = True
    return lam, _MAX_REFINEMENTS


def _kkt_residual(values: np.ndarray, lam: np.ndarray) -> float:
    """max of primal infeasibility, dual infeasibility and complementarity violation."""
    primal = float(np.max(np.maximum(values, 0.0), initial=0.0))
    dual = float(np.max(np.maximum(-lam, 0.0), initial=0.0))
    complementarity = float(np.max(np.abs(lam * values), initial=0.0))
    return max(primal, dual, complementarity)


def project_linear_l1(x: np.ndarray, A: np.ndarray, e: np.ndarray, margin: float) -> LinearSolve:
    """Exact L1 projection: ``min sum t  s.t.  -t <= y - x <= t,  A y <= e - margin`` (HiGHS)."""
    from scipy.optimize import linprog

    d = x.size
    k = A.shape[0]
    # variables: step s = y - x (d), bounds t (d); minimise sum t
    cost = np.concatenate([np.zeros(d), np.ones(d)])
    eye = np.eye(d)
    upper = np.block(
        [
            [eye, -eye],
            [-eye, -eye],
            [A, np.zeros((k, d))],
        ]
    )
    rhs = np.concatenate([np.zeros(2 * d), e - margin - A @ x])
    bounds = [(None, None)] * d + [(0, None)] * d
    res = linprog(cost, A_ub=upper, b_ub=rhs, bounds=bounds, method="highs")
    if res.status != 0:
        return LinearSolve(x.copy(), False, float("inf"), 0)
    point = x + res.x[:d]
    violation = float(np.max(A @ point - e + margin))
    tol = _KKT_TOL * (1.0 + float(np.max(np.abs(A @ x - e))))
    feasible = violation <= tol and unflagged(A @ point - e, margin)
    return LinearSolve(point, feasible, max(violation, 0.0), int(res.nit))


def project_concept(
    x: np.ndarray,
    violations,
    jacobian,
    margin: float,
    max_iter: int,
) -> LinearSolve:
    """Sequential linearisation for piecewise-linear facets.

    ``violations(y)`` gives c(y) (K,), ``jacobian(y)`` its (K, d) Jacobian (exact on the current
    ReLU pattern). Each step projects the original ``x`` exactly onto the facets linearised at
    the current point; when a step lands off its linear piece and is still infeasible, the next
    step aims deeper by the remaining violation, so the iteration does not stall on a boundary.
    A row that never gets inside comes back as the least violated point met (``x`` itself when
    no step improved on it): the deepening can run away, and its last step may lie far off.
    """
    current = x
    extra = 0.0
    best, least = x, float(np.max(violations(x)) + margin)
    for iteration in range(1, max_iter + 1):
        values = violations(current)
        J = jacobian(current)
        offsets = J @ current - values  # c(y) ~ J y - offsets near ``current``
        step = project_linear_l2(x, J, offsets, margin + extra)
        if not np.isfinite(step.kkt_residual):
            break
        current = step.point
        worst = float(np.max(violations(current)) + margin)
        if worst <= _KKT_TOL * (1.0 + abs(margin)):
            return LinearSolve(current, True, 0.0, iteration)
        if worst < least:
            best, least = current, worst
        extra += worst
    return LinearSolve(best.copy(), False, max(least, 0.0), max_iter)
