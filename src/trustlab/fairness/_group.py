"""The exact group step of the aggregate-regime DCP solver (see :mod:`._aggregate`).

For a fixed baseline a the objective J separates over groups, and each group's part is convex in
its confusion matrix b. With the rows of a and of b summing to 1,

    max_z eta(a^{yz}, b^{yz}) = max_z (1 - b^{yz} / a^{yz}),

because the complement branch ``(b - a) / (1 - a)`` of one z never exceeds the first branch of
another: the excess ``b^{yz} - a^{yz}`` is missing from the other entries of the row, and the
largest relative shortfall there is at least that excess over ``1 - a^{yz}``. Each first branch
is linear in b, so the best b for a is one small LP (:class:`GroupLP`), solved exactly.
"""

from __future__ import annotations

import highspy
import numpy as np

from trustlab.fairness._eta import ENTRY_MIN
from trustlab.fairness._highs import QuietHighs

__all__ = ["FEASIBILITY_TOL", "GroupLP"]

FEASIBILITY_TOL = 1e-7  # an LP answer further than this from feasible counts as a failure


class GroupLP:
    """The best confusion matrix of one group for a fixed baseline a.

    Variables (b (K*K, index y*K + z), t (K)). Minimise
    ``sum_y beta c_y t_y - (1 - beta) c_y b^{yy}`` subject to ``t_y >= 1 - b^{yz} / a^{yz}``
    (row y*K + z, written ``-b^{yz} / a^{yz} - t_y <= -1``), the rows of b summing to 1, the
    aggregate rows ``sum_y pi^y b^{yz} = p^z`` for z < K - 1 (the last one follows from the
    others), b in [1e-5, 1 - 1e-5] and t >= 0. The pattern is fixed: each solve rewrites the cut
    coefficients and restarts HiGHS's dual simplex from this group's previous basis.

    Parameters
    ----------
    cell_mass, label_dist, pred_dist : arrays of shape (K,)
        c_gy, pi_g^y and the smoothed p_g^z of the group.
    beta : float
    """

    def __init__(self, cell_mass, label_dist, pred_dist, beta: float):
        self.n_labels = k = len(cell_mass)
        n_b = k * k
        self._label_dist = np.asarray(label_dist, dtype=np.float64)
        self._pred_dist = np.asarray(pred_dist, dtype=np.float64)
        self._cost = np.r_[np.zeros(n_b), beta * np.asarray(cell_mass, dtype=np.float64)]
        self._cost[np.arange(k) * (k + 1)] -= (1.0 - beta) * np.asarray(cell_mass)
        self._col_lower = np.r_[np.full(n_b, ENTRY_MIN), np.zeros(k)]
        self._col_upper = np.r_[np.full(n_b, 1.0 - ENTRY_MIN), np.full(k, highspy.kHighsInf)]
        # row-wise: the cuts (b^{yz}, t_y), the row sums (b^{y.}), the aggregates (b^{.z})
        cuts = np.column_stack([np.arange(n_b), n_b + np.arange(n_b) // k])
        columns = np.arange(k)[None, :] * k + np.arange(k - 1)[:, None]  # row z: b^{yz} for all y
        self._index = np.r_[cuts.ravel(), np.arange(n_b), columns.ravel()].astype(np.int32)
        self._value = np.r_[
            np.tile([0.0, -1.0], n_b), np.ones(n_b), np.tile(self._label_dist, k - 1)
        ]
        self._start = np.r_[
            2 * np.arange(n_b), 2 * n_b + k * np.arange(k), 3 * n_b + k * np.arange(k - 1)
        ].astype(np.int32)
        rhs = np.r_[np.ones(k), self._pred_dist[: k - 1]]
        self._row_lower = np.r_[np.full(n_b, -highspy.kHighsInf), rhs]
        self._row_upper = np.r_[np.full(n_b, -1.0), rhs]
        self._solver = QuietHighs(presolve="off")
        self._basis = None

    def solve(self, baseline: np.ndarray) -> np.ndarray | None:
        """The optimal confusion matrix (K, K) for ``baseline`` (K, K), or None if HiGHS fails."""
        k = self.n_labels
        a = np.asarray(baseline, dtype=np.float64).ravel()
        # at a = 1e-5 the cut can never be positive (b >= 1e-5): it becomes the bound t >= 0
        live = a > ENTRY_MIN * (1.0 + 1e-9)
        self._value[0 : 2 * k * k : 2] = np.where(live, -1.0 / a, 0.0)
        self._row_upper[: k * k] = np.where(live, -1.0, 0.0)
        arrays = (self._cost, self._col_lower, self._col_upper, self._row_lower, self._row_upper)
        if not self._solver.pass_lp(*arrays, self._start, self._index, self._value, rowwise=True):
            return None
        x, self._basis = self._solver.run_from(self._basis)
        if x is None:
            return None
        b = x[: k * k].reshape(k, k)
        return b if self.violation(b) <= FEASIBILITY_TOL else None

    def violation(self, confusion: np.ndarray) -> float:
        """Largest violation of the row sums, all K aggregate rows and the entry bounds."""
        return float(
            max(
                np.max(np.abs(confusion.sum(axis=1) - 1.0)),
                np.max(np.abs(self._label_dist @ confusion - self._pred_dist)),
                ENTRY_MIN - confusion.min(),
                confusion.max() - (1.0 - ENTRY_MIN),
            )
        )
