"""Known-regime algorithms of multiclass DCP (the per-group confusion matrices are known).

The objective separates by true label y: DCP = sum_y min_{a in simplex} F_y(a) with

    F_y(a) = sum_g c_gy * max_z eta(a_z, alpha_g^{yz}),   c_gy = w_g * pi_g^y.

Per label this module computes the exact lower bound, the mean and greedy upper bounds and a local
minimisation by sequential linear programming (HiGHS), following Sabato, Treister & Yom-Tov (ICML
2025) and the authors' reference code, with these deliberate differences:

- the greedy label orders come from an explicit generator, or are injected;
- the line search never accepts an increase of F_y (the authors' takes a tiny step anyway);
- cells with zero mass (c_gy = 0) are left out of every per-label problem;
- ties between candidates (values within TIE_TOL) go to the smallest candidate, so the result does
  not depend on the order of the groups.

Every function here assumes validated input: ``alpha`` clipped by :func:`clip_confusions`, so every
entry lies strictly inside (0, 1) and eta needs no special case at a = 0 or 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from trustlab.fairness._eta import eta_grad_a

try:  # the HiGHS bindings SciPy >= 1.15 ships; with them each LP is warm-started (4x faster)
    from scipy.optimize._highspy import _core as _highs
except ImportError:  # pragma: no cover - older SciPy: every LP goes through linprog
    _highs = None

__all__ = [
    "MIN_ALPHAG",
    "METHODS",
    "KnownSolution",
    "LabelProblem",
    "clip_confusions",
    "label_objective",
    "group_unfairness",
    "label_problems",
    "lower_bound",
    "mean_row",
    "greedy_baselines",
    "local_minimum",
    "solve_known",
]

MIN_ALPHAG = 1e-5  # the authors' clip for alpha_g entries; keeps eta and its slope finite
ROUND_DECIMALS = 6  # greedy candidates are rounded like the authors' code
TIE_TOL = 1e-12  # objective values this close are ties, broken towards the smallest candidate
LOCAL_TOL = 1e-5  # stop when the LP step is this small in the max norm
LOCAL_MAX_STEP = 0.1  # cap on the LP step (max norm over (a, f))
LOCAL_MAX_ITER = 200
LINE_SEARCH_TRIES = 25
METHODS = ("mean", "greedy", "mean_lm", "greedy_lm")
_PACK_LIMIT = 2.0**53  # integers below this are exact in float64


def clip_confusions(alpha: np.ndarray) -> np.ndarray:
    """Clip entries to [MIN_ALPHAG, 1 - MIN_ALPHAG] and renormalise each row to sum 1."""
    clipped = np.clip(alpha, MIN_ALPHAG, 1.0 - MIN_ALPHAG)
    return clipped / clipped.sum(axis=-1, keepdims=True)


def _eta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """eta(a, b) for a in [0, 1] and b strictly inside (0, 1).

    ``1 - min(b/a, (1-b)/(1-a))`` equals max(1 - b/a, 1 - (1-b)/(1-a)); at a = 0 or a = 1 one
    division gives +inf, so the minimum picks the other branch and the limits come out exactly
    (eta(0, b) = b, eta(1, b) = 1 - b) with half the work of :func:`trustlab.fairness._eta.eta`.
    """
    with np.errstate(divide="ignore"):
        return 1.0 - np.minimum(b / a, (1.0 - b) / (1.0 - a))


def group_unfairness(rows: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """max_z eta(rows[..., z], conf[g, z]) for every group: shape (..., G)."""
    return _eta(rows[..., None, :], conf).max(axis=-1)


def label_objective(rows: np.ndarray, conf: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """F_y at one or many baseline rows ``rows`` (..., K) for one label (conf (G, K), mass (G,))."""
    return group_unfairness(rows, conf) @ mass


def _first_minimum(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Index of the first entry within TIE_TOL of the minimum along ``axis``."""
    lowest = values.min(axis=axis, keepdims=True)
    return np.argmax(values <= lowest + TIE_TOL, axis=axis)


@dataclass(frozen=True)
class LabelProblem:
    """The groups with positive mass for one true label y, and their rows of alpha."""

    label: int
    conf: np.ndarray  # (G', K) rows alpha_g^{y.} of the groups with c_gy > 0
    mass: np.ndarray  # (G',) the masses c_gy > 0

    def value(self, rows: np.ndarray) -> np.ndarray:
        """F_y at one or many rows (0 for a label without mass)."""
        if self.mass.size == 0:
            return np.zeros(rows.shape[:-1])
        return label_objective(rows, self.conf, self.mass)


def label_problems(alpha: np.ndarray, cell_mass: np.ndarray) -> list[LabelProblem]:
    """Split the audit by true label, dropping zero-mass cells (they contribute nothing)."""
    problems = []
    for y in range(alpha.shape[1]):
        keep = cell_mass[:, y] > 0
        problems.append(LabelProblem(y, alpha[keep, y, :], cell_mass[keep, y]))
    return problems


# --------------------------------------------------------------------------- lower bound


def lower_bound(problem: LabelProblem) -> tuple[float, float]:
    """The exact lower bound LB_y = max_z min_a sum_g c_g eta(a, alpha_g^{yz}).

    Each z gives a valid bound because max_z eta(a_z, .) >= eta(a_z, .) for that z. The 1-D
    function of a is concave between consecutive breakpoints alpha_g^{yz} (both eta branches are
    concave), so its minimum over [0, 1] lies on {alpha_g^{yz}} u {0, 1}: O(G^2) per z.

    Returns LB_y and the minimiser of the diagonal (z = y) sub-problem, which fixes the diagonal
    in the greedy upper bound. For K = 2 both columns give the same function and LB_y is exact.
    """
    if problem.mass.size == 0:
        return 0.0, 0.0
    conf = problem.conf
    ends = np.broadcast_to(np.array([[0.0], [1.0]]), (2, conf.shape[1]))
    candidates = np.sort(np.concatenate([conf, ends]), axis=0)  # (G' + 2, K), per column z
    totals = np.einsum("mgz,g->mz", _eta(candidates[:, None, :], conf[None, :, :]), problem.mass)
    diagonal = candidates[_first_minimum(totals[:, problem.label], axis=0), problem.label]
    return float(totals.min(axis=0).max()), float(diagonal)


# --------------------------------------------------------------------------- mean upper bound


def mean_row(problem: LabelProblem) -> np.ndarray:
    """The c-weighted mean row, centred on the first row so identical rows give it exactly."""
    if problem.mass.size == 0:
        return np.full(problem.conf.shape[1], 1.0 / problem.conf.shape[1])
    first = problem.conf[0]
    return first + problem.mass @ (problem.conf - first) / problem.mass.sum()


# --------------------------------------------------------------------------- greedy upper bound


def _inflections(b1, b2, v, gamma):
    """The eight per-group points where the 2-variable greedy objective changes piece.

    Pieces: v, eta(a, b1) (two branches), eta(gamma - a, b2) (two branches); each point solves
    piece = piece for one pair: v with each eta branch (4) and the eta branches pairwise (4).
    """
    gamma = gamma[:, None]
    one_v = 1.0 - v
    one_b = 1.0 - b1 - b2
    return np.concatenate(
        [
            b1 / one_v,
            1.0 - (1.0 - b1) / one_v,
            gamma - b2 / one_v,
            gamma - 1.0 + (1.0 - b2) / one_v,
            gamma * b1 / (b1 + b2),
            (b1 * (1.0 - gamma) - b2 + gamma) / (2.0 - b1 - b2),
            b1 * (1.0 - gamma) / one_b,
            (gamma * (1.0 - b1) - b2) / one_b,
        ],
        axis=1,
    )


def _greedy_candidates(b1, b2, v, gamma, active):
    """Sorted candidates for a_z per row; invalid ones (NaN, outside [0, gamma]) are +inf.

    The set is {b1_g, b2_g, 0, gamma} u inflections over the groups with mass, rounded to
    ROUND_DECIMALS as in the authors' code.
    """
    n_rows = b1.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_group = np.concatenate([_inflections(b1, b2, v, gamma), b1, b2], axis=1)
    per_group[~np.tile(active, 10)] = np.nan
    cands = np.concatenate([per_group, np.zeros((n_rows, 1)), gamma[:, None]], axis=1)
    cands = np.round(cands, ROUND_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    valid = np.isfinite(cands) & (cands >= 0.0) & (cands <= gamma[:, None])
    return np.sort(np.where(valid, cands, np.inf), axis=1)


def _piece_coefficients(b1, b2, v, gamma, mass):
    """Breakpoints and piece coefficients of every group's term of the greedy sub-objective.

    The term of group g is mass_g * max(v_g, eta(a, b1_g), eta(gamma - a, b2_g)); on each
    interval between the group's breakpoints (its eight inflections, b1 where eta(., b1) switches
    branch, gamma - b2 where eta(gamma - ., b2) does) it is one piece C - K / d(a) with
    d(a) in {a, 1-a, gamma-a, 1-gamma+a}. Returns the interval starts (R, G, P) and the
    coefficients (C, K1..K4) of each interval, times mass (R, G, P, 5).
    """
    n_rows, n_groups = b1.shape
    g3 = gamma[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        own = _inflections(b1, b2, v, gamma).reshape(n_rows, 8, n_groups).transpose(0, 2, 1)
    own = np.concatenate([own, b1[..., None], (gamma[:, None] - b2)[..., None]], axis=2)
    own = np.clip(np.where(np.isfinite(own), own, 0.0), 0.0, g3)
    edges = np.concatenate(
        [
            np.zeros((n_rows, n_groups, 1)),
            np.sort(own, axis=2),
            np.broadcast_to(g3, (n_rows, n_groups, 1)),
        ],
        axis=2,
    )
    starts = edges[..., :-1]
    mid = 0.5 * (starts + edges[..., 1:])  # one point inside every interval decides its piece
    b1_, b2_, v_ = b1[..., None], b2[..., None], v[..., None]
    first, second = _eta(mid, b1_), _eta(g3 - mid, b2_)
    use_v = (v_ >= first) & (v_ >= second)
    use_first = ~use_v & (first >= second)
    use_second = ~use_v & ~use_first
    right = mid >= b1_  # eta(a, b1) = 1 - b1/a right of b1, 1 - (1-b1)/(1-a) left of it
    near = (g3 - mid) >= b2_  # eta(gamma-a, b2) = 1 - b2/(gamma-a) while gamma - a >= b2
    zero = np.zeros_like(mid)
    coef = np.stack(
        [
            np.where(use_v, v_, 1.0) + zero,
            np.where(use_first & right, b1_, zero),
            np.where(use_first & ~right, 1.0 - b1_, zero),
            np.where(use_second & near, b2_, zero),
            np.where(use_second & ~near, 1.0 - b2_, zero),
        ],
        axis=-1,
    )
    return starts, coef * mass[:, :, None, None]


def _step_objective(cands, b1, b2, v, gamma, mass):
    """S(a) = sum_g mass_g max(v_g, eta(a, b1_g), eta(gamma - a, b2_g)) at every candidate.

    A sweep rather than evaluating every group at every candidate (O(M G) per row): the
    coefficients of S(a) = C - K1/a - K2/(1-a) - K3/(gamma-a) - K4/(1-gamma+a) are step functions
    of a, summed in order of the groups' breakpoints, so a row costs O((M + G) log(M + G)).
    A pole coefficient K_i is set to exactly 0 where no group uses that piece, so summation
    residue is never divided by a tiny denominator.
    """
    n_rows, n_groups = b1.shape
    starts, coef = _piece_coefficients(b1, b2, v, gamma, mass)
    n_points = starts.shape[1] * starts.shape[2]
    uses = coef[..., 1:] > 0  # which pole piece each interval uses
    # pack the four use counts into one channel, base G + 1: exact while (G + 1)^4 < 2^53
    base = float(n_groups + 1)
    packed = base**4 < _PACK_LIMIT
    if packed:
        uses = (uses @ base ** np.arange(4))[..., None]
    channels = np.concatenate([coef, uses], axis=-1)
    width = channels.shape[-1]
    steps = np.diff(channels, axis=2, prepend=0.0).reshape(n_rows * n_points, width)
    starts = starts.reshape(n_rows, n_points)
    order = np.argsort(starts, axis=1)
    offsets = (np.arange(n_rows) * n_points)[:, None]
    running = np.cumsum(steps[(order + offsets).ravel()].reshape(n_rows, n_points, width), axis=1)
    sorted_starts = np.take_along_axis(starts, order, axis=1)
    finite = np.isfinite(cands)
    a = np.where(finite, cands, 0.0)
    # the interval holding a is the last one starting at or before a
    found = np.stack(
        [np.searchsorted(s, x, side="right") for s, x in zip(sorted_starts, a, strict=True)]
    )
    at = running.reshape(n_rows * n_points, width)[(found - 1 + offsets).ravel()]
    at = at.reshape(found.shape + (width,))
    users = at[..., 5:]
    if packed:  # integer division of exact integers below 2^53 is exact
        users = np.floor(np.round(users) / base ** np.arange(4)) % base
    c = np.where(users > 0.5, at[..., 1:5], 0.0)
    rest = gamma[:, None] - a
    total = at[..., 0] - (
        _ratio(c[..., 0], a)
        + _ratio(c[..., 1], 1.0 - a)
        + _ratio(c[..., 2], rest)
        + _ratio(c[..., 3], 1.0 - rest)
    )
    return np.where(finite, total, np.inf)


def _ratio(k, d):
    """k / d where k is 0 whenever d is (a piece is never in use at its own pole)."""
    return k / np.where(d > 0, d, 1.0)


def _greedy_step(b1, b2, v, gamma, mass):
    """The best a_z of every row's 2-variable sub-problem (rows are (label, attempt) pairs).

    Minimises sum_g mass_g max(v_g, eta(a, b1_g), eta(gamma - a, b2_g)) over the candidates; the
    breakpoints include every point where a group's term changes piece and the terms are concave
    in between, so the candidate set holds an exact minimiser (up to the 6-decimal rounding).
    """
    cands = _greedy_candidates(b1, b2, v, gamma, mass > 0)
    best = _first_minimum(_step_objective(cands, b1, b2, v, gamma, mass), axis=1)
    return cands[np.arange(cands.shape[0]), best]


def greedy_baselines(
    alpha: np.ndarray, cell_mass: np.ndarray, diagonals: np.ndarray, orders: np.ndarray
) -> np.ndarray:
    """Greedy baseline rows for every label and attempt: shape (K, T, K).

    ``orders[t, y]`` lists the labels other than y in visiting order. The diagonal a_y is fixed to
    ``diagonals[y]`` (the minimiser of the z = y sub-problem); each visited label but the last gets
    the exact best value of its 2-variable sub-problem (a_z against the mass still unassigned);
    the last label takes what remains. All (label, attempt) pairs advance together.
    """
    n_attempts, k = orders.shape[0], alpha.shape[1]
    labels = np.repeat(np.arange(k), n_attempts)  # row r = (label, attempt)
    order = orders.transpose(1, 0, 2).reshape(k * n_attempts, k - 1)
    rows = np.zeros((labels.size, k))
    rows[np.arange(labels.size), labels] = diagonals[labels]
    mass = cell_mass[:, labels].T  # (R, G)
    ordered = alpha[:, labels[:, None], order].transpose(1, 0, 2)  # (R, G, K-1)
    remaining = np.cumsum(ordered[:, :, ::-1], axis=2)[:, :, ::-1]  # alpha mass from j onwards
    gamma = 1.0 - diagonals[labels]
    v = _eta(diagonals[labels][:, None], alpha[:, labels, labels].T)
    for j in range(k - 2):
        b1 = ordered[:, :, j]
        a_z = _greedy_step(b1, remaining[:, :, j + 1], v, gamma, mass)
        rows[np.arange(labels.size), order[:, j]] = a_z
        gamma = gamma - a_z
        v = np.maximum(v, _eta(a_z[:, None], b1))
    rows[np.arange(labels.size), order[:, -1]] = gamma
    return rows.reshape(k, n_attempts, k)


# --------------------------------------------------------------------------- local minimisation


@dataclass(frozen=True)
class LocalResult:
    row: np.ndarray
    value: float
    iterations: int
    converged: bool


class _LinearisedLP:
    """The LP of one sequential-LP step for one label, built once and updated in place.

    Variables x = (a (K), f (G')). Minimise sum_g c_g f_g subject to
    f_g >= eta(a^k_z, b_gz) + d_gz (a_z - a^k_z) for every (g, z), sum a = 1 and a, f in [0, 1].
    Only the slopes d_gz and the right-hand sides change between iterations, so the model is kept
    column-wise and HiGHS restarts from the previous optimal basis (primal simplex, no presolve).
    Without SciPy's HiGHS bindings, or if they fail, the step goes through ``linprog``.
    """

    def __init__(self, conf: np.ndarray, mass: np.ndarray, backend: str = "auto"):
        self.conf, self.mass = conf, mass
        n_groups, self.k = conf.shape
        self.n_rows = n_groups * self.k  # row g*K + z; the equality row comes last
        self.cost = np.concatenate([np.zeros(self.k), mass])
        self.backend = backend if _highs is not None else "linprog"
        self._direct = None
        if self.backend != "linprog":
            self._direct = self._build_direct()

    def _column_layout(self):
        n_groups, k = self.conf.shape
        # a_z: the rows (g, z) for all g, then the equality row; f_g: the rows (g, z) for all z
        a_index = np.column_stack(
            [np.arange(n_groups)[None, :] * k + np.arange(k)[:, None], np.full(k, self.n_rows)]
        )
        f_index = np.arange(self.n_rows).reshape(n_groups, k)
        index = np.concatenate([a_index.ravel(), f_index.ravel()])
        values = np.concatenate([np.ones(a_index.size), -np.ones(f_index.size)])
        starts = np.concatenate(
            [np.arange(k) * (n_groups + 1), k * (n_groups + 1) + np.arange(n_groups + 1) * k]
        )
        slope_at = (np.arange(k) * (n_groups + 1))[None, :] + np.arange(n_groups)[:, None]
        return starts, index, values, slope_at

    def _build_direct(self):
        starts, index, values, self._slope_at = self._column_layout()
        n_cols = self.cost.size
        lp = _highs.HighsLp()
        lp.num_col_, lp.num_row_ = n_cols, self.n_rows + 1
        lp.col_cost_ = self.cost
        lp.col_lower_, lp.col_upper_ = np.zeros(n_cols), np.ones(n_cols)
        lp.row_lower_ = np.concatenate([np.full(self.n_rows, -_highs.kHighsInf), [1.0]])
        lp.a_matrix_.format_ = _highs.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n_cols, self.n_rows + 1
        lp.a_matrix_.start_, lp.a_matrix_.index_ = starts, index
        self._values = values
        solver = _highs._Highs()
        for option, value in (("output_flag", False), ("presolve", "off"), ("simplex_strategy", 4)):
            solver.setOptionValue(option, value)
        self._lp, self._solver, self._basis = lp, solver, None
        return solver

    def solve(self, a: np.ndarray) -> np.ndarray | None:
        """The LP optimum x = (a, f) for the linearisation at ``a``, or None if none was found."""
        slopes = eta_grad_a(a, self.conf)
        rhs = (slopes * a - _eta(a, self.conf)).ravel()
        if self._direct is not None:
            try:
                x = self._solve_direct(slopes, rhs)
            except (AttributeError, TypeError, RuntimeError):  # bindings changed: stop using them
                self._direct, x = None, None
            if x is not None:
                return x
        return self._solve_linprog(slopes, rhs)

    def _solve_direct(self, slopes, rhs):
        self._values[self._slope_at] = slopes
        self._lp.a_matrix_.value_ = self._values
        self._lp.row_upper_ = np.concatenate([rhs, [1.0]])
        self._solver.passModel(self._lp)
        if self._basis is not None:
            self._solver.setBasis(self._basis)
        self._solver.run()
        if self._solver.getModelStatus() != _highs.HighsModelStatus.kOptimal:
            self._basis = None
            return None
        self._basis = self._solver.getBasis()
        return np.asarray(self._solver.getSolution().col_value, dtype=np.float64)

    def _solve_linprog(self, slopes, rhs):
        n_groups, k = self.conf.shape
        a_ub = np.zeros((self.n_rows, k + n_groups))
        rows = np.arange(self.n_rows)
        a_ub[rows, np.tile(np.arange(k), n_groups)] = slopes.ravel()
        a_ub[rows, k + np.repeat(np.arange(n_groups), k)] = -1.0
        a_eq = np.concatenate([np.ones(k), np.zeros(n_groups)])[None, :]
        res = linprog(
            self.cost, A_ub=a_ub, b_ub=rhs, A_eq=a_eq, b_eq=[1.0], bounds=(0.0, 1.0), method="highs"
        )
        return res.x if res.status == 0 else None


def local_minimum(problem: LabelProblem, start: np.ndarray, backend: str = "auto") -> LocalResult:
    """Sequential-LP local minimisation of F_y from ``start``, monotone in F_y.

    Each step solves the LP linearisation at the current point a (with f the true per-group
    maxima at a), caps the step e = x_LP - (a, f) at LOCAL_MAX_STEP in the max norm, and halves
    the step length (at most LINE_SEARCH_TRIES times) until F_y decreases. It stops when
    max|e| < LOCAL_TOL (converged), when no step length decreases F_y, or after LOCAL_MAX_ITER
    LPs. The returned value is never above F_y(start).
    """
    a = np.clip(start, 0.0, 1.0)
    a = a / a.sum()
    value = float(problem.value(a))
    if problem.mass.size == 0:
        return LocalResult(a, value, 0, True)
    conf, mass = problem.conf, problem.mass
    lp = _LinearisedLP(conf, mass, backend)
    for iteration in range(1, LOCAL_MAX_ITER + 1):
        x_new = lp.solve(a)
        if x_new is None:
            return LocalResult(a, value, iteration, False)
        step_a = np.clip(x_new[: lp.k], 0.0, 1.0) - a
        step_f = x_new[lp.k :] - group_unfairness(a, conf)
        size = max(np.abs(step_a).max(), np.abs(step_f).max())
        if size < LOCAL_TOL:
            return LocalResult(a, value, iteration, True)
        if size > LOCAL_MAX_STEP:
            step_a = step_a * (LOCAL_MAX_STEP / size)
        moved = _line_search(a, step_a, value, conf, mass)
        if moved is None:
            return LocalResult(a, value, iteration, False)
        a, value = moved
    return LocalResult(a, value, LOCAL_MAX_ITER, False)


def _line_search(a, step, value, conf, mass):
    """First of a + step, a + step/2, ... (renormalised) that lowers F_y; None if none does."""
    rates = 0.5 ** np.arange(LINE_SEARCH_TRIES)
    trials = np.clip(a + rates[:, None] * step, 0.0, 1.0)
    trials /= trials.sum(axis=1, keepdims=True)
    values = label_objective(trials, conf, mass)
    better = np.flatnonzero(values < value)
    if better.size == 0:
        return None
    return trials[better[0]], float(values[better[0]])


# --------------------------------------------------------------------------- all labels


@dataclass(frozen=True)
class KnownSolution:
    """Per-label results of the known regime (arrays indexed by true label y)."""

    lower: np.ndarray  # (K,)
    bounds: dict  # method -> (K,) value of F_y
    rows: dict  # method -> (K, K) the baseline rows reaching it
    upper: np.ndarray  # (K,) best of the methods per label
    baseline: np.ndarray  # (K, K) rows achieving ``upper``
    best_method: tuple  # per label, the method that achieved ``upper``
    local_iterations: dict  # "mean_lm"/"greedy_lm" -> (K,) LPs solved
    local_converged: dict  # "mean_lm"/"greedy_lm" -> (K,) whether the step size criterion was met


def solve_known(
    alpha: np.ndarray,
    cell_mass: np.ndarray,
    orders: np.ndarray,
    local_search: bool = True,
    backend: str = "auto",
) -> KnownSolution:
    """All bounds for clipped ``alpha`` (G, K, K), masses c_gy (G, K), greedy ``orders`` (T, K, K-1).

    The local minimisations start from the mean and the greedy rows; each keeps the better of its
    start and its result. ``backend`` is "auto" (warm-started HiGHS bindings when available) or
    "linprog".
    """
    k = alpha.shape[1]
    problems = label_problems(alpha, cell_mass)
    lower, diagonals = np.zeros(k), np.zeros(k)
    for problem in problems:
        lower[problem.label], diagonals[problem.label] = lower_bound(problem)
    greedy = greedy_baselines(alpha, cell_mass, diagonals, orders)
    rows = {m: np.zeros((k, k)) for m in METHODS}
    bounds = {m: np.zeros(k) for m in METHODS}
    iterations = {"mean_lm": np.zeros(k, dtype=int), "greedy_lm": np.zeros(k, dtype=int)}
    converged = {"mean_lm": np.ones(k, dtype=bool), "greedy_lm": np.ones(k, dtype=bool)}
    for problem in problems:
        y = problem.label
        attempts = problem.value(greedy[y])
        starts = {"mean": mean_row(problem), "greedy": greedy[y][_first_minimum(attempts)]}
        for name, row in starts.items():
            rows[name][y], bounds[name][y] = row, problem.value(row)
            improved, lm = (row, bounds[name][y]), f"{name}_lm"
            if local_search and problem.mass.size:
                result = local_minimum(problem, row, backend)
                iterations[lm][y], converged[lm][y] = result.iterations, result.converged
                if result.value < bounds[name][y]:
                    improved = (result.row, result.value)
            rows[lm][y], bounds[lm][y] = improved
    table = np.stack([bounds[m] for m in METHODS])  # (4, K)
    best = table.argmin(axis=0)
    return KnownSolution(
        lower=lower,
        bounds=bounds,
        rows=rows,
        upper=table[best, np.arange(k)],
        baseline=np.stack([rows[METHODS[m]][y] for y, m in enumerate(best)]),
        best_method=tuple(METHODS[m] for m in best),
        local_iterations=iterations,
        local_converged=converged,
    )
