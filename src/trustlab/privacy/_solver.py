"""The minimum-trace DSI covariance, solved through its dual in the span of the differences.

``min tr(Sigma)`` over ``Sigma > 0`` subject to ``x_i' Sigma^-1 x_i <= 1`` has the dual
``max_{mu >= 0} 2 tr((X diag(mu) X')^{1/2}) - sum_i mu_i``, whose optimum gives
``Sigma = (X diag(mu) X')^{1/2}``. :func:`solve` runs an exponentiated-gradient (mirror) ascent on
it with backtracking, in the r-dimensional span of the differences: a QR of the d x n matrix once
(``O(n^2 d)``), then ``O(n^3)`` per iteration; no d x d matrix is ever formed. The kernel trusts
its inputs (checked by :func:`trustlab.privacy.optimal_gaussian_covariance`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from trustlab.privacy.results import DSICovariance

# Singular values of the difference matrix below this fraction of the largest are rounding error
# (QR keeps them accurate to ~1e-16 relative); see DSICovariance.span_residual.
RANK_TOL = 1e-10
_INITIAL_STEP = 10.0
_STEP_RESET_EVERY = 20
# Near the optimum the dual is flat to ~(constraint slack)^2, so once a step of this size no
# longer raises it in floating point the ascent has reached precision (the spec's 1e-100 would
# only spend ~90 more eigendecompositions finding that out).
_MIN_STEP = 1e-10
# No multiplier changes by more than e^5 in one step (keeps X diag(mu) X' well conditioned).
_MAX_LOG_CHANGE = 5.0


def solve(rows: np.ndarray, caps: np.ndarray, *, max_iter: int, tol: float) -> DSICovariance:
    """The minimum-trace covariance for non-zero, distinct ``rows`` (n, d) and budgets ``caps``.

    The returned Sigma is always feasible: it is rescaled onto the constraints whatever the
    iteration reached, and ``duality_gap`` certifies how close its trace is to the optimum.
    """
    d = rows.shape[1]
    basis, coords, residual = _span_of(rows)
    unit = coords / np.sqrt(caps)  # budgets folded in: every constraint becomes <= 1
    scale = float(np.linalg.norm(unit, axis=0).max())
    eigvals, eigvecs, values, mu, iterations, gap, converged = _dual_ascent(
        unit / scale, max_iter=max_iter, tol=tol
    )
    # Rescale onto the constraints so the returned Sigma is feasible whatever the iteration did.
    stretch = float(values.max())
    sigma_eigs = stretch * scale**2 * np.sqrt(eigvals)
    factor = eigvecs * np.sqrt(sigma_eigs)
    norms_sq = np.sum(rows * rows, axis=1) / caps
    return DSICovariance(
        basis=basis,
        factor=factor,
        trace=float(sigma_eigs.sum()),
        max_std=float(math.sqrt(sigma_eigs.max())),
        constraint_values=values / stretch,
        worst_slack=float(1.0 - (values / stretch).max()),
        duality_gap=gap,
        isotropic_span_trace=float(basis.shape[1] * norms_sq.max()),
        isotropic_full_trace=float(d * norms_sq.max()),
        multipliers=mu * scale**2 / caps,
        span_residual=residual,
        iterations=iterations,
        converged=converged,
    )


def _span_of(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Orthonormal basis (d, r) of the rows' span, their coordinates (r, n), and the largest
    norm of a row's part outside it. QR keeps small singular values accurate (a Gram matrix
    would square the condition number)."""
    q, r_mat = scipy.linalg.qr(rows.T, mode="economic", check_finite=False)
    left, singular, right_t = np.linalg.svd(r_mat, full_matrices=False)
    rank = int(np.count_nonzero(singular > RANK_TOL * singular[0]))
    basis = q @ left[:, :rank]
    coords = singular[:rank, None] * right_t[:rank]
    outside = r_mat - left[:, :rank] @ (left[:, :rank].T @ r_mat)
    return basis, coords, float(np.linalg.norm(outside, axis=0).max())


def _dual_state(x: np.ndarray, mu: np.ndarray):
    """Dual value, constraint values ``x_i' Sigma(mu)^-1 x_i`` and the eigenpairs of
    ``M = X diag(mu) X'`` (Sigma(mu) = M^{1/2})."""
    eigvals, eigvecs = np.linalg.eigh((x * mu) @ x.T)
    # a floor relative to the largest eigenvalue keeps Sigma^-1 finite when some mu underflow
    eigvals = np.maximum(eigvals, eigvals[-1] * 1e-14)
    whitened = (eigvecs.T @ x) * eigvals[:, None] ** -0.25
    values = np.einsum("ij,ij->j", whitened, whitened)
    root_trace = float(np.sqrt(eigvals).sum())
    return 2.0 * root_trace - float(mu.sum()), values, root_trace, eigvals, eigvecs


def _dual_ascent(x: np.ndarray, *, max_iter: int, tol: float):
    """Exponentiated-gradient ascent on the dual; the gradient is the constraint slack.

    Each iterate is first rescaled optimally (g(t mu) is maximised in closed form at
    ``t = (tr M^{1/2} / sum mu)^2``), which removes the slow scale direction. The primal
    candidate ``max_i(value_i) * Sigma(mu)`` is feasible, so its trace against the dual value is
    a certified gap.
    """
    mu = np.full(x.shape[1], 10.0)
    step = _INITIAL_STEP
    gap, iteration, converged = math.inf, 0, False
    mu, state = _best_scale(mu, _dual_state(x, mu))
    for iteration in range(1, max_iter + 1):
        dual, values, root_trace = state[0], state[1], state[2]
        primal = float(values.max()) * root_trace
        gap = (primal - dual) / primal
        if gap <= tol:
            converged = True
            break
        if iteration % _STEP_RESET_EVERY == 0:
            step = _INITIAL_STEP
        while step >= _MIN_STEP:
            trial = mu * np.exp(np.clip(step * (values - 1.0), -_MAX_LOG_CHANGE, _MAX_LOG_CHANGE))
            trial, trial_state = _best_scale(trial, _dual_state(x, trial))
            if trial_state[0] > dual:
                mu, state = trial, trial_state
                break
            step *= 0.1
        else:
            break
    _, values, _, eigvals, eigvecs = state
    return eigvals, eigvecs, values, mu, iteration, max(gap, 0.0), converged


def _best_scale(mu: np.ndarray, state):
    """``t mu`` and its state for the best ``t = (tr M^{1/2} / sum mu)^2``, without another
    eigendecomposition: M scales by t, Sigma by sqrt(t), the constraint values by 1/sqrt(t)."""
    _, values, root_trace, eigvals, eigvecs = state
    t = (root_trace / mu.sum()) ** 2
    root_t = math.sqrt(t)
    scaled_root = root_trace * root_t
    dual = 2.0 * scaled_root - t * float(mu.sum())
    return t * mu, (dual, values / root_t, scaled_root, eigvals * t, eigvecs)
