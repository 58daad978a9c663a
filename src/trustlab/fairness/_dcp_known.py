"""Known-regime algorithms of multiclass DCP (the per-group confusion matrices are known).

The objective separates by true label y: DCP = sum_y min_{a in simplex} F_y(a) with

    F_y(a) = sum_g c_gy * max_z eta(a_z, alpha_g^{yz}),   c_gy = w_g * pi_g^y.

Per label this module computes the exact lower bound, the mean and greedy upper bounds and a local
minimisation by sequential linear programming (HiGHS through ``highspy``), following Sabato,
Treister & Yom-Tov (ICML 2025) and the authors' reference code, with these deliberate differences:

- the greedy label orders come from an explicit generator, or are injected;
- the line search never accepts an increase of F_y (the authors' takes a tiny step anyway);
- cells with zero mass (c_gy = 0) are left out of every per-label problem;
- ties between candidates (values within TIE_TOL) go to the smallest candidate, so the result does
  not depend on the order of the groups;
- the "greedy+LM" bound searches further than the authors' (see :func:`solve_known`): where it is
  affordable an exact search over the vertices of the piecewise structure of F_y (which finds the
  global minimum), otherwise local minimisations from extra starts.

Every function here assumes validated input: ``alpha`` clipped by :func:`clip_confusions`, so every
entry lies strictly inside (0, 1) and eta needs no special case at a = 0 or 1.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import highspy
import numpy as np

from trustlab.errors import BackendError
from trustlab.fairness._highs import QuietHighs

__all__ = [
    "MIN_ALPHAG",
    "METHODS",
    "KnownSolution",
    "LabelProblem",
    "LocalResult",
    "clip_confusions",
    "label_objective",
    "group_unfairness",
    "label_problems",
    "lower_bound",
    "mean_row",
    "greedy_baselines",
    "vertex_minimum",
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
LOCAL_STARTS = 2  # extra local minimisations per label where the vertex search is too large,
LOCAL_START_WORK = 400  # ... fewer where G' x K > LOCAL_START_WORK / 2, none above it
VERTEX_BUDGET = 1_500_000  # vertex search while #(K-1)-subsets of hyperplanes x (K^2 + G K) fits
METHODS = ("mean", "greedy", "mean_lm", "greedy_lm")
_TINY = np.finfo(np.float64).tiny


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
#
# One greedy sub-step minimises, for every row r (a (label, attempt) pair), over a in [0, gamma]
#
#     S(a) = sum_g m_g max(v_g, eta(a, b1_g), eta(gamma - a, b2_g))
#          = sum_g m_g (1 - min(1 - v_g, b1/a, (1-b1)/(1-a), b2/(gamma-a), (1-b2)/(1-gamma+a))).
#
# Each group's term follows one of five "pieces" (the constant or one of the four poles) on each
# interval between its breakpoints, and the piece changes only where two pieces cross.


def _inflections(b1, b2, v, gamma):
    """The eight per-group points where the greedy sub-objective may change piece: (R, G, 8).

    Pieces: v, eta(a, b1) (two branches), eta(gamma - a, b2) (two branches); each point solves
    piece = piece for one pair: v with each eta branch (4) and the eta branches pairwise (4).
    """
    gamma = gamma[:, None]
    one_v = 1.0 - v
    one_b = 1.0 - b1 - b2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack(
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
            axis=2,
        )


def _greedy_candidates(b1, b2, gamma, active, inflections):
    """Sorted candidates for a_z per row; invalid ones (NaN, outside [0, gamma]) are +inf.

    The set is {b1_g, b2_g, 0, gamma} u inflections over the groups with mass, rounded to
    ROUND_DECIMALS as in the authors' code.
    """
    n_rows = b1.shape[0]
    per_group = np.concatenate([inflections, b1[..., None], b2[..., None]], axis=2)
    per_group[~active] = np.nan
    cands = np.concatenate(
        [per_group.reshape(n_rows, -1), np.zeros((n_rows, 1)), gamma[:, None]], axis=1
    )
    cands = np.round(cands, ROUND_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    with np.errstate(invalid="ignore"):
        valid = (cands >= 0.0) & (cands <= gamma[:, None])  # False for NaN
    return np.sort(np.where(valid, cands, np.inf), axis=1)


def _piece_ids(b1, b2, v, gamma, inflections):
    """Every group's intervals on [0, gamma] and the piece it follows on each.

    Returns the interval starts (R, G, 11) and the piece ids (R, G, 11): 0 the constant 1 - v,
    1 b1/a, 2 (1-b1)/(1-a), 3 b2/(gamma-a), 4 (1-b2)/(1-gamma+a). The breakpoints are the eight
    inflections, b1 (where eta(., b1) switches branch) and gamma - b2 (where eta(gamma - ., b2)
    does); the piece of an interval is the smallest one at its midpoint, the lowest id on ties.
    """
    n_rows, n_groups = b1.shape
    g3 = gamma[:, None, None]
    own = np.concatenate([inflections, b1[..., None], (gamma[:, None] - b2)[..., None]], axis=2)
    own = np.clip(np.where(np.isfinite(own), own, 0.0), 0.0, g3)
    own.sort(axis=2)
    starts = np.concatenate([np.zeros((n_rows, n_groups, 1)), own], axis=2)
    mid = 0.5 * (starts + np.concatenate([own, np.broadcast_to(g3, own[..., :1].shape)], axis=2))
    b1_, b2_ = b1[..., None], b2[..., None]
    with np.errstate(divide="ignore"):
        right, left = b1_ / mid, (1.0 - b1_) / (1.0 - mid)
        near, far = b2_ / (g3 - mid), (1.0 - b2_) / (1.0 - g3 + mid)
    first = np.minimum(right, left)
    second = np.minimum(near, far)
    piece = np.where(first <= second, np.where(right <= left, 1, 2), np.where(near <= far, 3, 4))
    piece[(1.0 - v[..., None]) <= np.minimum(first, second)] = 0
    return starts, piece


def _piece_channels(b1, b2, v, mass):
    """Contribution of each (row, group, piece) to the sweep channels: (R, G, 5, 9).

    Channels: C (the constant part of the term), K1..K4 (the pole coefficients, so that
    S(a) = C - K1/a - K2/(1-a) - K3/(gamma-a) - K4/(1-gamma+a)) and n1..n4 (how many groups with
    mass follow each pole piece; a pole sum with no group is set to exactly 0 so that summation
    residue is never divided by a tiny denominator).
    """
    n_rows, n_groups = b1.shape
    table = np.zeros((n_rows, n_groups, 5, 9))
    table[:, :, 0, 0] = mass * v
    table[:, :, 1:, 0] = mass[..., None]
    numerators = np.stack([b1, 1.0 - b1, b2, 1.0 - b2], axis=2)
    pole = np.arange(1, 5)
    table[:, :, pole, pole] = mass[..., None] * numerators
    table[:, :, pole, pole + 4] = (mass > 0)[..., None]
    return table


def _step_objective(cands, b1, b2, v, gamma, mass, inflections=None):
    """S(a) at every candidate (R, M): a sweep over the points where some group changes piece.

    Each group changes piece at only a few of its breakpoints, so the channel sums are built from
    those events (sorted per row, then cumulated) and read at every candidate: O((E + M) log E)
    per row instead of evaluating every group at every candidate (O(M G)).
    """
    if inflections is None:
        inflections = _inflections(b1, b2, v, gamma)
    n_rows = b1.shape[0]
    starts, piece = _piece_ids(b1, b2, v, gamma, inflections)
    table = _piece_channels(b1, b2, v, mass)
    rows, groups = np.indices(piece.shape[:2])
    initial = table[rows, groups, piece[..., 0]].sum(axis=1)  # (R, 9) on every first interval
    r, g, p = np.nonzero(piece[..., 1:] != piece[..., :-1])  # events, ordered by row
    deltas = table[r, g, piece[r, g, p + 1]] - table[r, g, piece[r, g, p]]
    where = starts[r, g, p + 1]
    # pad the events to a (row, slot) grid, each row's events sorted by position
    counts = np.bincount(r, minlength=n_rows)
    order = np.lexsort((where, r))
    slot = np.arange(r.size) - np.repeat(np.cumsum(counts) - counts, counts)
    width = int(counts.max(initial=0))
    positions = np.full((n_rows, width), np.inf)
    positions[r, slot] = where[order]
    states = np.zeros((n_rows, width + 1, 9))
    states[:, 0] = initial
    states[r, slot + 1] = deltas[order]
    states = np.cumsum(states, axis=1)
    states[..., 1:5] = np.where(states[..., 5:] > 0.5, states[..., 1:5], 0.0)
    finite = np.isfinite(cands)
    a = np.where(finite, cands, 0.0)
    # the state at a is the one after every event at or before a
    index = np.stack(
        [np.searchsorted(pos, x, side="right") for pos, x in zip(positions, a, strict=True)]
    )
    index += (np.arange(n_rows) * (width + 1))[:, None]
    channels = np.ascontiguousarray(states[..., :5].reshape(-1, 5).T)
    constant, *poles = np.take(channels, index, axis=1)  # 5 x (R, M)
    rest = gamma[:, None] - a
    total = constant
    for pole, distance in zip(poles, (a, 1.0 - a, rest, 1.0 - rest), strict=True):
        # a pole piece is never in use at its own pole, so its sum is 0 wherever distance is
        total = total - pole / np.maximum(distance, _TINY)
    return np.where(finite, total, np.inf)


def _greedy_step(b1, b2, v, gamma, mass):
    """The best a_z of every row's 2-variable sub-problem (rows are (label, attempt) pairs).

    Minimises sum_g mass_g max(v_g, eta(a, b1_g), eta(gamma - a, b2_g)) over the authors'
    candidate set (inflections, b1, b2, 0 and gamma, rounded to 6 decimals); ties go to the
    smallest candidate.
    """
    inflections = _inflections(b1, b2, v, gamma)
    cands = _greedy_candidates(b1, b2, gamma, mass > 0, inflections)
    values = _step_objective(cands, b1, b2, v, gamma, mass, inflections)
    return cands[np.arange(cands.shape[0]), _first_minimum(values, axis=1)]


def greedy_baselines(
    alpha: np.ndarray, cell_mass: np.ndarray, diagonals: np.ndarray, orders: np.ndarray
) -> np.ndarray:
    """Greedy baseline rows for every label and attempt: shape (K, T, K).

    ``orders[t, y]`` lists the labels other than y in visiting order. The diagonal a_y is fixed to
    ``diagonals[y]`` (the minimiser of the z = y sub-problem); each visited label but the last gets
    the best value of its 2-variable sub-problem (a_z against the mass still unassigned); the
    last label takes what remains. All (label, attempt) pairs advance together.
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


# --------------------------------------------------------------------------- vertex search
#
# On the simplex (rows of alpha sum to 1), max_z eta(a_z, b_z) = 1 - min_z b_z / a_z, so
#
#     F_y(a) = sum_g c_g - sum_g c_g min_z b_gz / a_z.
#
# Where the minimising z_g of every group is fixed, the subtracted sum is sum_z C_z / a_z with
# C_z >= 0, a convex function: F_y is concave on each such cell, the polytope
# {a in simplex: b_{g z_g} a_z <= b_gz a_{z_g} for all g, z}. A concave function on a polytope
# attains its minimum at a vertex, so the global minimum of F_y lies on a vertex of some cell: a
# point of the simplex on K - 1 linearly independent hyperplanes, each a_z = 0 or a "minimal
# tie" a_z b_gz' = a_z' b_gz where z and z' both minimise b_g. / a. for that group.


def _arrangement(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normals (N, K) of the tie hyperplanes of every group and label pair and of a_z = 0, with
    their group (-1 for a_z = 0) and label pair (N, 2)."""
    n_groups, k = conf.shape
    first, second = np.triu_indices(k, 1)
    pairs = np.arange(first.size)
    ties = np.zeros((n_groups, first.size, k))
    ties[:, pairs, first] = conf[:, second]
    ties[:, pairs, second] = -conf[:, first]
    normals = np.concatenate([ties.reshape(-1, k), np.eye(k)])
    group = np.concatenate([np.repeat(np.arange(n_groups), first.size), np.full(k, -1)])
    labels = np.column_stack([np.tile(first, n_groups), np.tile(second, n_groups)])
    labels = np.concatenate([labels, np.column_stack([np.arange(k), np.arange(k)])])
    return normals, group, labels


def _vertex_count(n_groups: int, k: int) -> int:
    """How many (K-1)-subsets of the arrangement's hyperplanes there are."""
    return math.comb(n_groups * k * (k - 1) // 2 + k, k - 1)


def _subsets(n: int, size: int) -> np.ndarray:
    if size == 1:
        return np.arange(n)[:, None]
    if size == 2:
        return np.column_stack(np.triu_indices(n, 1))
    flat = itertools.chain.from_iterable(itertools.combinations(range(n), size))
    return np.fromiter(flat, dtype=np.intp).reshape(-1, size)


def _null_directions(normals: np.ndarray) -> np.ndarray:
    """The direction orthogonal to K - 1 normals (c, K-1, K): its entry z is (-1)^z times the
    minor without column z (0 if the normals are dependent).

    The minors are built row by row as exterior products (Laplace expansion along the newest
    row), a few vectorised products per column subset instead of one determinant per matrix.
    """
    n_rows, k = normals.shape[1], normals.shape[2]
    entries = np.ascontiguousarray(normals.transpose(1, 2, 0))  # (K-1, K, c)
    minors = {(z,): entries[0, z] for z in range(k)}  # minors of the rows so far, by columns
    for j in range(1, n_rows):
        row = entries[j]
        minors = {
            columns: sum(
                (-1.0) ** (j + pos) * row[z] * minors[columns[:pos] + columns[pos + 1 :]]
                for pos, z in enumerate(columns)
            )
            for columns in itertools.combinations(range(k), j + 1)
        }
    full = tuple(range(k))
    return np.stack([(-1.0) ** z * minors[full[:z] + full[z + 1 :]] for z in range(k)], axis=1)


def _vertices(normals, group, labels, conf, subsets):
    """The points of the simplex where the hyperplanes of each subset meet, kept only if every
    tie among them is a minimal tie there (within a relative 1e-9)."""
    directions = _null_directions(normals[subsets])
    directions *= np.where(directions.sum(axis=1) < 0, -1.0, 1.0)[:, None]
    size = np.abs(directions).max(axis=1)
    scale = np.linalg.norm(normals, axis=1)[subsets].prod(axis=1)
    keep = (size > 1e-12 * scale) & (directions.min(axis=1) >= -1e-12 * size)
    points = np.clip(directions[keep], 0.0, None)
    points /= points.sum(axis=1, keepdims=True)
    subsets = subsets[keep]
    groups = group[subsets]  # (c', K-1)
    with np.errstate(divide="ignore"):
        ratios = conf[np.maximum(groups, 0)] / points[:, None, :]  # (c', K-1, K)
    tie = np.take_along_axis(ratios, labels[subsets], axis=2).max(axis=2)
    minimal = (groups < 0) | (tie <= ratios.min(axis=2) * (1.0 + 1e-9))
    return points[minimal.all(axis=1)]


def vertex_minimum(problem: LabelProblem, budget: int = VERTEX_BUDGET):
    """The global minimum of F_y by enumerating the vertices of its cells, if affordable.

    Returns (row, value) of the best vertex, or None when the work, #subsets x (K^2 + G K) with
    #subsets = C(G K (K-1)/2 + K, K-1) the (K-1)-subsets of hyperplanes, exceeds ``budget``
    (the default allows K = 2 up to 864 groups, K = 3 up to 46, K = 4 up to 8 and K = 5 up to 2,
    in at most about 30 ms with K >= 3). Ties go to the lexicographically smallest row, so the
    result does not depend on the order of the groups.
    """
    conf, mass = problem.conf, problem.mass
    n_groups, k = conf.shape
    if n_groups == 0 or _vertex_count(n_groups, k) * k * (k + n_groups) > budget:
        return None
    normals, group, labels = _arrangement(conf)
    subsets = _subsets(len(normals), k - 1)
    chunk = 50_000
    # the groups' own rows are vertices too (K - 1 ties of one group); taken exactly here
    points = np.concatenate(
        [conf]
        + [
            _vertices(normals, group, labels, conf, subsets[start : start + chunk])
            for start in range(0, len(subsets), chunk)
        ]
    )
    step = max(1, 200_000 // (n_groups * k))
    values = np.concatenate(
        [
            label_objective(points[start : start + step], conf, mass)
            for start in range(0, len(points), step)
        ]
    )
    lowest = values <= values.min() + TIE_TOL
    rows, values = points[lowest], values[lowest]
    first = np.lexsort(rows.T[::-1])[0]
    return rows[first], float(values[first])


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
        self._continuous = np.zeros(n_cols, dtype=np.int32)
        self._solver, self._basis = QuietHighs(), None
        for option, value in (("presolve", "off"), ("simplex_strategy", 4)):
            self._solver.setOptionValue(option, value)

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
        solver = self._solver
        status = solver.passModel(
            self._cost.size,  # columns
            self._row_upper.size,  # rows
            self._values.size,  # non-zeros
            int(highspy.MatrixFormat.kColwise),
            int(highspy.ObjSense.kMinimize),
            0.0,  # objective offset
            self._cost,
            self._col_lower,
            self._col_upper,
            self._row_lower,
            self._row_upper,
            self._starts,
            self._index,
            self._values,
            self._continuous,  # integrality: all continuous
        )
        if status == highspy.HighsStatus.kError:  # else run() would solve the previous LP
            raise BackendError("HiGHS rejected the LP of a local-search step")
        x, self._basis = solver.run_from(self._basis)
        return x


def local_minimum(
    problem: LabelProblem, start: np.ndarray, lp=None, floor: float = -np.inf
) -> LocalResult:
    """Sequential-LP local minimisation of F_y from ``start``, monotone in F_y.

    Each step solves the LP linearisation at the current point a (with f the true per-group
    maxima at a), caps the step e = x_LP - (a, f) at LOCAL_MAX_STEP in the max norm, and halves
    the step length (at most LINE_SEARCH_TRIES times) until F_y decreases. It stops when
    max|e| < LOCAL_TOL (converged), when F_y reaches ``floor`` (a known lower bound or the global
    minimum: nothing lower exists), when no step length decreases F_y, or after LOCAL_MAX_ITER
    LPs. The returned value is never above F_y(start). ``lp`` reuses a :class:`_LinearisedLP`
    of the same problem (its warm basis carries over).
    """
    a = np.clip(start, 0.0, 1.0)
    a = a / a.sum()
    if problem.mass.size == 0:
        return LocalResult(a, 0.0, 0, True)
    conf, mass = problem.conf, problem.mass
    lp = _LinearisedLP(conf, mass) if lp is None else lp
    point = _linearise(a, conf, mass)
    for iteration in range(1, LOCAL_MAX_ITER + 1):
        if point.value <= floor + TIE_TOL:
            return LocalResult(a, point.value, iteration - 1, True)
        x_new = lp.solve(point.slopes, point.rhs)
        if x_new is None:
            return LocalResult(a, point.value, iteration, False)
        step = np.clip(x_new[: lp.k], 0.0, 1.0) - a
        size = max(np.abs(step).max(), np.abs(x_new[lp.k :] - point.unfair).max())
        if size < LOCAL_TOL:
            return LocalResult(a, point.value, iteration, True)
        if size > LOCAL_MAX_STEP:
            step = step * (LOCAL_MAX_STEP / size)
        moved = _line_search(a, step, point, conf, mass)
        if moved is None:
            return LocalResult(a, point.value, iteration, False)
        a, point = moved
    return LocalResult(a, point.value, LOCAL_MAX_ITER, False)


@dataclass(frozen=True)
class _Linearisation:
    value: float  # F_y(a)
    unfair: np.ndarray  # (G',) f_g(a) = max_z eta(a_z, b_gz)
    slopes: np.ndarray  # (G', K) d eta / d a_z on the active branch
    rhs: np.ndarray  # (G', K) d a_z - eta(a_z, b_gz)


def _linearise(a, conf, mass) -> _Linearisation:
    """F_y(a), the per-group unfairness and the LP slopes and right-hand sides at ``a``.

    The slope is taken on the active eta branch: b/a^2 if a >= b, else -(1-b)/(1-a)^2 (finite at
    a = 0 and a = 1 because b lies strictly inside (0, 1)).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        first, second = conf / a, (1.0 - conf) / (1.0 - a)
        slopes = np.where(a >= conf, first / a, -second / (1.0 - a))
    eta = 1.0 - np.minimum(first, second)
    unfair = eta.max(axis=1)
    return _Linearisation(float(unfair @ mass), unfair, slopes, slopes * a - eta)


def _line_search(a, step, point, conf, mass):
    """The first of a + step, a + step/2, ... (renormalised) that lowers F_y, with its
    linearisation; None if none does.

    The full step, accepted most of the time, is tried alone; its linearisation is the next one.
    """
    full = np.clip(a + step, 0.0, 1.0)
    full /= full.sum()
    moved = _linearise(full, conf, mass)
    if moved.value < point.value:
        return full, moved
    rates = 0.5 ** np.arange(1, LINE_SEARCH_TRIES)
    trials = np.clip(a + rates[:, None] * step, 0.0, 1.0)
    trials /= trials.sum(axis=1, keepdims=True)
    for index in np.flatnonzero(label_objective(trials, conf, mass) < point.value):
        # the batch and single evaluations may differ in the last bit: keep F_y monotone
        moved = _linearise(trials[index], conf, mass)
        if moved.value < point.value:
            return trials[index], moved
    return None


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
    local_converged: dict  # "mean_lm"/"greedy_lm" -> (K,) whether a stopping rule was met
    exact: np.ndarray  # (K,) bool: the vertex search ran, so ``upper`` is the global minimum


def _distinct_rows(rows: np.ndarray, values: np.ndarray, taken: list, limit: int) -> list:
    """Up to ``limit`` rows in order of value, none within 1e-9 of a row in ``taken``."""
    chosen = []
    for index in np.argsort(values, kind="stable"):
        if len(chosen) == limit:
            break
        row = rows[index]
        if all(np.abs(row - other).max() > 1e-9 for other in taken + chosen):
            chosen.append(row)
    return chosen


def _solve_label(problem, mean, attempts, lower, local_search, local_starts, vertex_budget):
    """Rows and values of the four methods for one label, the kept local results and whether
    the vertex search ran."""
    greedy = attempts[_first_minimum(problem.value(attempts))]
    rows = {"mean": mean, "greedy": greedy}
    bounds = {name: float(problem.value(row)) for name, row in rows.items()}
    results, exact = {"mean": None, "greedy": None}, False
    if local_search and problem.mass.size:
        optimal = min(bounds.values()) <= lower + TIE_TOL  # nothing lower exists
        results, exact = _search_label(
            problem, mean, greedy, lower, optimal, local_starts, vertex_budget
        )
    for name, result in results.items():
        better = result is not None and result.value < bounds[name]
        rows[f"{name}_lm"] = result.row if better else rows[name]
        bounds[f"{name}_lm"] = result.value if better else bounds[name]
    return rows, bounds, results, exact


def _search_label(problem, mean, greedy, lower, optimal, local_starts, vertex_budget):
    """The local minimisation from the mean row, and the best of the greedy row's and the
    further search ("greedy" side): the vertex search, or extra local minimisations."""
    exact = None if optimal else vertex_minimum(problem, vertex_budget)
    floor = lower if exact is None else max(lower, exact[1])
    lp = _LinearisedLP(problem.conf, problem.mass)
    from_mean = local_minimum(problem, mean, lp, floor)
    if exact is not None:
        return {"mean": from_mean, "greedy": LocalResult(exact[0], exact[1], 0, True)}, True
    found = [
        from_mean if np.array_equal(greedy, mean) else local_minimum(problem, greedy, lp, floor)
    ]
    if local_starts is None:  # extra starts only while their LPs are small
        local_starts = min(LOCAL_STARTS, LOCAL_START_WORK // problem.conf.size)
    # the groups' own rows (at its own row a group is treated fairly), best-valued first
    starts = problem.conf
    for row in _distinct_rows(starts, problem.value(starts), [mean, greedy], local_starts):
        if min(result.value for result in found) <= floor + TIE_TOL:
            break
        found.append(local_minimum(problem, row, lp, floor))
    return {"mean": from_mean, "greedy": min(found, key=lambda result: result.value)}, False


def solve_known(
    alpha: np.ndarray,
    cell_mass: np.ndarray,
    orders: np.ndarray,
    local_search: bool = True,
    local_starts: int | None = None,
    vertex_budget: int = VERTEX_BUDGET,
) -> KnownSolution:
    """All bounds for clipped ``alpha`` (G, K, K), masses c_gy (G, K), greedy ``orders`` (T, K, K-1).

    Per label: the lower bound; the mean row; the best of the greedy attempts; "mean_lm", the
    local minimisation from the mean row; "greedy_lm", the best of the local minimisation from the
    greedy row and a further search. The further search is the exact vertex search
    (:func:`vertex_minimum`, the global minimum) when its work stays within ``vertex_budget``,
    else local minimisations from ``local_starts`` extra starts, the best-valued rows alpha_g^{y.}
    of the groups (by default 2 while G' K <= 200, 1 while G' K <= 400, else none: at K = 10,
    G = 50 one extra start adds about a quarter to the run time). Each "_lm" method keeps the
    better of its start and its result; every local search stops once it meets the lower bound
    (or the vertex minimum), and a label whose mean or greedy value already meets the lower
    bound is not searched. ``local_starts=0, vertex_budget=0`` gives the authors' method.
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
    exact = np.zeros(k, dtype=bool)
    for problem in problems:
        y = problem.label
        label_rows, label_bounds, results, exact[y] = _solve_label(
            problem,
            mean_row(problem),
            greedy[y],
            lower[y],
            local_search,
            local_starts,
            vertex_budget,
        )
        for m in METHODS:
            rows[m][y], bounds[m][y] = label_rows[m], label_bounds[m]
        for name, result in results.items():
            if result is not None:
                iterations[f"{name}_lm"][y] = result.iterations
                converged[f"{name}_lm"][y] = result.converged
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
        exact=exact,
    )
