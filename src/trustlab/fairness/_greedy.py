"""The greedy upper bound of the known regime: a baseline row built one label at a time.

For every (label, attempt) pair the diagonal a_y is fixed to the minimiser of the z = y lower-bound
sub-problem; then the other labels are visited in a random order and each gets the best value of a
two-variable sub-problem (a_z against the mass still unassigned), as in the authors' method. One
sub-step minimises, for every row r (a (label, attempt) pair), over a in [0, gamma]

    S(a) = sum_g m_g max(v_g, eta(a, b1_g), eta(gamma - a, b2_g))
         = sum_g m_g (1 - min(1 - v_g, b1/a, (1-b1)/(1-a), b2/(gamma-a), (1-b2)/(1-gamma+a))).

Each group's term follows one of five "pieces" (the constant or one of the four poles) on each
interval between its breakpoints, and the piece changes only where two pieces cross; a sweep over
those changes evaluates S at every candidate at once.
"""

from __future__ import annotations

import numpy as np

from trustlab.fairness._eta import eta_interior
from trustlab.fairness._label import first_minimum

__all__ = ["ROUND_DECIMALS", "greedy_baselines", "label_orders", "random_orders"]

ROUND_DECIMALS = 6  # greedy candidates are rounded like the authors' code
_TINY = np.finfo(np.float64).tiny


def label_orders(n_labels: int) -> np.ndarray:
    """Row y: the labels other than y in increasing order, shape (K, K-1)."""
    return np.array([[z for z in range(n_labels) if z != y] for y in range(n_labels)])


def random_orders(rng: np.random.Generator, attempts: int, n_labels: int) -> np.ndarray:
    """``attempts`` random visiting orders per label: shape (attempts, K, K-1)."""
    others = label_orders(n_labels)
    return rng.permuted(np.broadcast_to(others, (attempts,) + others.shape), axis=2)


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
    return cands[np.arange(cands.shape[0]), first_minimum(values, axis=1)]


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
    v = eta_interior(diagonals[labels][:, None], alpha[:, labels, labels].T)
    for j in range(k - 2):
        b1 = ordered[:, :, j]
        a_z = _greedy_step(b1, remaining[:, :, j + 1], v, gamma, mass)
        rows[np.arange(labels.size), order[:, j]] = a_z
        gamma = gamma - a_z
        v = np.maximum(v, eta_interior(a_z[:, None], b1))
    rows[np.arange(labels.size), order[:, -1]] = gamma
    return rows.reshape(k, n_attempts, k)
