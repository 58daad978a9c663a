"""One true label's part of the known-regime DCP: the objective F_y and its problem data.

The objective separates by true label y: DCP = sum_y min_{a in simplex} F_y(a) with

    F_y(a) = sum_g c_gy * max_z eta(a_z, alpha_g^{yz}),   c_gy = w_g * pi_g^y.

Every function here assumes ``alpha`` clipped by :func:`clip_confusions`, so every entry lies
strictly inside (0, 1) and eta needs no special case at a = 0 or 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trustlab.fairness._eta import ENTRY_MIN, eta_interior

__all__ = [
    "TIE_TOL",
    "LabelProblem",
    "clip_confusions",
    "first_minimum",
    "group_unfairness",
    "label_objective",
    "label_problems",
]

TIE_TOL = 1e-12  # objective values this close are ties, broken towards the smallest candidate


def clip_confusions(alpha: np.ndarray) -> np.ndarray:
    """Clip entries to [ENTRY_MIN, 1 - ENTRY_MIN] and renormalise each row to sum 1."""
    clipped = np.clip(alpha, ENTRY_MIN, 1.0 - ENTRY_MIN)
    return clipped / clipped.sum(axis=-1, keepdims=True)


def group_unfairness(rows: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """max_z eta(rows[..., z], conf[g, z]) for every group: shape (..., G)."""
    return eta_interior(rows[..., None, :], conf).max(axis=-1)


def label_objective(rows: np.ndarray, conf: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """F_y at one or many baseline rows ``rows`` (..., K) for one label (conf (G, K), mass (G,))."""
    return group_unfairness(rows, conf) @ mass


def first_minimum(values: np.ndarray, axis: int = -1) -> np.ndarray:
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
    """Split the audit by true label, dropping zero-mass cells (they contribute nothing).

    Each label's groups are put in one canonical order (by their row, then their mass), so no
    bound depends on the order of the groups: the mean row is summed and HiGHS meets the LP rows
    in that order, and a local search could otherwise end at another local minimum (with the
    groups permuted, mean+LM moved on 10 of 60 random problems, by up to 0.008, and by 0.036 on
    the problem of tests/fairness/test_dcp_review59_group_order.py).
    """
    problems = []
    for y in range(alpha.shape[1]):
        keep = np.flatnonzero(cell_mass[:, y] > 0)
        conf, mass = alpha[keep, y, :], cell_mass[keep, y]
        order = np.lexsort(np.column_stack([conf, mass]).T[::-1])  # first key: column 0
        problems.append(LabelProblem(y, conf[order], mass[order]))
    return problems
