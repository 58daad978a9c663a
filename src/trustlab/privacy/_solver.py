"""The minimum-trace DSI covariance, solved through its dual in the span of the differences.

``min tr(Sigma)`` over ``Sigma > 0`` subject to ``x_i' Sigma^-1 x_i <= 1`` has the dual
``max_{mu >= 0} 2 tr((X diag(mu) X')^{1/2}) - sum_i mu_i``, whose optimum gives
``Sigma = (X diag(mu) X')^{1/2}``. :func:`solve` runs an exponentiated-gradient (mirror) ascent on
it with backtracking, in the r-dimensional span of the differences: a QR of the d x n matrix once
(``O(n^2 d)``), then ``O(n^3)`` per iteration; no d x d matrix is ever formed. Once the ascent is
close (or stalls), projected Newton steps on the dual finish the solve: the mirror ascent alone
converges slowly where the multipliers span orders of magnitude, and near the optimum the dual is
flat to second order, so comparing dual values stops telling better from worse at a gap of about
1e-8 (within rounding of the dual, a step is then taken on the certified gap). Every state comes
from an SVD of ``X diag(mu)^{1/2}`` rather than an eigendecomposition of ``X diag(mu) X'``, which
would square the condition number. The kernel trusts its inputs (checked by
:func:`trustlab.privacy.optimal_gaussian_covariance`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.linalg

from trustlab.errors import InputError
from trustlab.privacy.results import DSICovariance, _row_norms

# Singular values of the difference matrix below this fraction of the largest are rounding error
# (QR keeps them accurate to ~1e-16 relative); see DSICovariance.span_residual.
RANK_TOL = 1e-10
# A difference with more than this fraction of its own norm outside the span would get no noise
# there (its constraint would not hold: an infinite Mahalanobis distance): it is refused.
OWN_TOL = 1e-8
_INITIAL_STEP = 10.0
_STEP_RESET_EVERY = 20
# Near the optimum the dual is flat to ~(constraint slack)^2, so once a step of this size no
# longer raises it in floating point the ascent has reached precision (the spec's 1e-100 would
# only spend ~90 more decompositions finding that out).
_MIN_STEP = 1e-10
# No multiplier changes by more than e^5 in one step (keeps X diag(mu) X' well conditioned).
_MAX_LOG_CHANGE = 5.0
# The mirror ascent hands over to Newton steps at this duality gap (or when it stalls).
_NEWTON_FROM_GAP = 1e-3
# Newton builds an m x m Hessian of the dual in O(r^2 m^2) for m free multipliers; above this
# work the mirror ascent carries on alone (r = m = 250 is about 4e9).
_NEWTON_MAX_WORK = 4e9
# Dual values closer than this (relative) are equal to rounding; the certified gap then decides.
_DUAL_ROUNDING = 1e-12
_MIN_NEWTON_STEP = 1e-10
_MAX_SHRINK = 100.0
# Sigma(mu)'s eigenvalues are floored at this fraction of the largest. The floored Sigma is the
# primal candidate: it costs at most r * 1e-10 of the trace, and it keeps the constraint values
# accurate (an SVD resolves singular values to ~1e-16 of the largest, so a floor near that makes
# them rounding noise); the dual value is always taken from the exact singular values. Chosen on
# drawn problems (norms 1e4 and 1e6 apart, nearly dependent differences): 1e-10 converged most
# often among 1e-9 to 1e-12 and 1e-14.
_SIGMA_FLOOR = 1e-10


def solve(
    rows: np.ndarray,
    caps: np.ndarray,
    *,
    max_iter: int,
    tol: float,
    argument: str = "deltas",
    row_names: list[str] | None = None,
    advice: str = "drop or rescale it",
) -> DSICovariance:
    """The minimum-trace covariance for non-zero, distinct ``rows`` (n, d) and budgets ``caps``.

    The returned Sigma is always feasible: it is rescaled onto the constraints whatever the
    iteration reached, and ``duality_gap`` certifies how close its trace is to the optimum.
    A row the span cannot cover is refused naming ``argument``, the row (``row_names[i]``, else
    ``difference i``) and what to do (``advice``).
    """
    d = rows.shape[1]
    basis, coords, outside = _span_of(rows)
    own = outside / _row_norms(rows)  # squared, a row below 1e-162 was 0: own NaN, not refused
    if (own > OWN_TOL).any():
        i = int(np.argmax(own))
        raise InputError(
            f"{argument}: expected differences within {1 / RANK_TOL:.0e} of each other in size, "
            f"so that each gets noise in all its directions, got "
            f"{f'difference {i}' if row_names is None else row_names[i]} with "
            f"{own[i]:.2g} of its norm ({outside[i]:.2g}) below {RANK_TOL:g} of the largest "
            "singular value, which no noise would cover (the guarantee would not hold for it); "
            f"{advice}",
            argument=argument,
        )
    residual = float(outside.max())
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
    with np.errstate(over="ignore"):  # past float64 (differences 1e100, budgets 1e-100): inf
        multipliers = mu * scale**2 / caps
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
        multipliers=multipliers,
        budgets=caps,
        span_residual=residual,
        iterations=iterations,
        converged=converged,
    )


def _span_of(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Orthonormal basis (d, r) of the rows' span, their coordinates (r, n), and the norm of each
    row's part outside it. QR keeps small singular values accurate (a Gram matrix
    would square the condition number)."""
    q, r_mat = scipy.linalg.qr(rows.T, mode="economic", check_finite=False)
    left, singular, right_t = np.linalg.svd(r_mat, full_matrices=False)
    rank = int(np.count_nonzero(singular > RANK_TOL * singular[0]))
    basis = q @ left[:, :rank]
    coords = singular[:rank, None] * right_t[:rank]
    outside = r_mat - left[:, :rank] @ (left[:, :rank].T @ r_mat)
    return basis, coords, _row_norms(outside.T)


class _State(NamedTuple):
    """The dual at one ``mu``: its value, the constraint values, Sigma(mu)'s spectrum."""

    dual: float  # g(mu) from the exact singular values: a valid lower bound
    values: np.ndarray  # x_i' Sigma^-1 x_i with the floored Sigma
    root_trace: float  # tr Sigma with the floor (the primal candidate's trace over max(values))
    eigvals: np.ndarray  # eigenvalues of M = Sigma^2 (ascending, floored)
    eigvecs: np.ndarray

    @property
    def gap(self) -> float:
        """The certified relative gap ``(primal - dual) / primal``: ``max_i(value_i) * Sigma`` is
        feasible, and the dual value is a lower bound on the optimum."""
        primal = float(self.values.max()) * self.root_trace
        return 1.0 - self.dual / primal


def _dual_state(x: np.ndarray, mu: np.ndarray) -> _State:
    """The dual state at ``mu`` (Sigma(mu) = M^{1/2}, M = X diag(mu) X').

    The spectrum comes from the SVD of ``X diag(mu)^{1/2}``, whose singular values are the
    eigenvalues of Sigma itself: forming M would square the condition number, and at the optimum
    M's spread is the fourth power of the spread of the differences' norms (1e4 apart gives 1e-16,
    below what an eigendecomposition of M resolves)."""
    left, singular, _ = np.linalg.svd(x * np.sqrt(mu), full_matrices=False)
    left, singular = left[:, ::-1], singular[::-1]
    # a floor relative to the largest keeps Sigma^-1 finite when some mu underflow
    root = np.maximum(singular, singular[-1] * _SIGMA_FLOOR)
    whitened = (left.T @ x) / np.sqrt(root)[:, None]
    values = np.einsum("ij,ij->j", whitened, whitened)
    dual = 2.0 * float(singular.sum()) - float(mu.sum())
    return _State(dual, values, float(root.sum()), root * root, left)


def _dual_ascent(x: np.ndarray, *, max_iter: int, tol: float):
    """Exponentiated-gradient ascent on the dual (the gradient is the constraint slack), then
    projected Newton steps.

    Each iterate is first rescaled optimally (g(t mu) is maximised in closed form at
    ``t = (tr M^{1/2} / sum mu)^2``), which removes the slow scale direction. After the rescaling
    the gap is ``1 - 1 / max_i(value_i)``, accurate to rounding even where the dual values
    themselves no longer differ. Returns the state with the smallest gap met on the way.

    A span of dimension one (every difference on one line) has the optimum in closed form: all
    the dual weight on the longest row, Sigma its squared length, no gap. The ascent would crawl
    there when two rows are nearly as long (the gradient between them vanishes).
    """
    if x.shape[0] == 1:
        mu = np.zeros(x.shape[1])
        mu[int(np.argmax(np.abs(x[0])))] = 1.0
        mu, state = _best_scale(mu, _dual_state(x, mu))
        gap = state.gap
        return state.eigvals, state.eigvecs, state.values, mu, 0, max(gap, 0.0), gap <= tol
    mu = np.full(x.shape[1], 10.0)
    step = _INITIAL_STEP
    iteration = 0
    mu, state = _best_scale(mu, _dual_state(x, mu))
    best_mu, best = mu, state
    newton = False
    while best.gap > tol and iteration < max_iter:
        iteration += 1
        if not newton:
            if iteration % _STEP_RESET_EVERY == 0:
                step = _INITIAL_STEP
            moved, mu, state, step = _mirror_step(x, mu, state, step)
            newton = not moved or state.gap <= _NEWTON_FROM_GAP
            if newton and not _newton_affordable(x, mu, state):
                newton = False
                if not moved:
                    break
        else:
            moved, mu, state = _newton_step(x, mu, state)
            if not moved:  # back to the mirror ascent, from a fresh step size
                step = _INITIAL_STEP
                moved, mu, state, step = _mirror_step(x, mu, state, step)
                if not moved:
                    break
        if state.gap < best.gap:
            best_mu, best = mu, state
    gap = best.gap
    return best.eigvals, best.eigvecs, best.values, best_mu, iteration, max(gap, 0.0), gap <= tol


def _better(new: _State, old: _State) -> bool:
    """A higher dual value, or (within rounding of it) a smaller certified gap."""
    rounding = _DUAL_ROUNDING * abs(old.dual)
    if new.dual > old.dual + rounding:
        return True
    return new.dual >= old.dual - rounding and new.gap < old.gap


def _mirror_step(x: np.ndarray, mu: np.ndarray, state: _State, step: float):
    """One exponentiated-gradient step with backtracking: (moved, mu, state, step)."""
    values = state.values
    while step >= _MIN_STEP:
        trial = mu * np.exp(np.clip(step * (values - 1.0), -_MAX_LOG_CHANGE, _MAX_LOG_CHANGE))
        trial, trial_state = _best_scale(trial, _dual_state(x, trial))
        if _better(trial_state, state):
            return True, trial, trial_state, step
        step *= 0.1
    return False, mu, state, step


def _free_set(mu: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Multipliers Newton moves: all but those at (or within a small band of) zero whose
    gradient pushes them further down (Bertsekas' projected Newton); those go to zero."""
    residual = float(np.abs(mu - np.maximum(mu + grad, 0.0)).max())
    band = min(1e-3 * float(mu.max()), residual)
    return ~((mu <= band) & (grad < 0))


def _newton_affordable(x: np.ndarray, mu: np.ndarray, state: _State) -> bool:
    m = int(np.count_nonzero(_free_set(mu, state.values - 1.0)))
    return float(x.shape[0]) ** 2 * float(m) ** 2 <= _NEWTON_MAX_WORK


def _newton_step(x: np.ndarray, mu: np.ndarray, state: _State):
    """One projected Newton step on the dual with a halving line search: (moved, mu, state).

    When the projected step (small multipliers whose gradient points down held at zero) finds
    no better point, a plain Newton step over every positive multiplier is tried: a constraint
    that is active at the optimum with a tiny multiplier looks like a bound one, and sending its
    multiplier to zero makes it infeasible."""
    grad = state.values - 1.0
    projected, support = _free_set(mu, grad), mu > 0
    tries = [projected] if np.array_equal(projected, support) else [projected, support]
    for free in tries:
        moved, trial, trial_state = _newton_try(x, mu, state, grad, free)
        if moved:
            return True, trial, trial_state
    return False, mu, state


def _newton_try(x: np.ndarray, mu: np.ndarray, state: _State, grad: np.ndarray, free):
    direction = -mu  # the bound multipliers go towards zero
    curvature = -_dual_hessian(x[:, free], state.eigvals, state.eigvecs)  # positive semi-definite
    eigvals, eigvecs = np.linalg.eigh(curvature)
    keep = eigvals > 1e-12 * max(float(eigvals[-1]), 1e-300)
    coords = eigvecs[:, keep].T @ grad[free]
    direction[free] = eigvecs[:, keep] @ (coords / eigvals[keep])
    # Where the curvature vanishes (more free multipliers than the span's r(r+1)/2 degrees of
    # freedom: several constraints active at once) the dual can still rise linearly, and the
    # Newton step ignores that part of the gradient: go along it until a multiplier reaches zero
    # (the line search below shortens the whole step if that overshoots).
    flat = eigvecs[:, ~keep] @ (eigvecs[:, ~keep].T @ grad[free])
    if float(np.abs(flat).max(initial=0.0)) > 1e-12 * float(np.abs(grad[free]).max()):
        down = flat < 0
        held = mu[free]
        reach = (
            float(np.min(held[down] / -flat[down]))
            if down.any()
            else float(held.max()) / float(np.abs(flat).max())
        )
        direction[free] += reach * flat
    alpha = 1.0
    while alpha >= _MIN_NEWTON_STEP:
        # no multiplier shrinks more than _MAX_SHRINK-fold in one step: one set to zero could
        # leave X diag(mu) X' singular, where the constraint values are rounding noise
        trial = np.maximum(mu + alpha * direction, mu / _MAX_SHRINK)
        trial, trial_state = _best_scale(trial, _dual_state(x, trial))
        if _better(trial_state, state):
            return True, trial, trial_state
        alpha *= 0.5
    return False, mu, state


def _dual_hessian(x: np.ndarray, eigvals: np.ndarray, eigvecs: np.ndarray) -> np.ndarray:
    """The Hessian of the dual in the multipliers of the columns ``x`` (r, m).

    ``d value_i / d mu_j = x_i' D[M^-1/2](x_j x_j') x_i``; with ``M = V diag(lam) V'`` and
    ``y = V' x`` the Daleckii-Krein formula gives ``sum_kl F_kl y_ik y_il y_jk y_jl``, where
    ``F_kl = (lam_k^-1/2 - lam_l^-1/2) / (lam_k - lam_l) = -1 / (a_k a_l (a_k + a_l))`` with
    ``a = sqrt(lam)`` (no cancellation, and ``-1 / (2 a_k^3)`` on the diagonal)."""
    y = eigvecs.T @ x
    root = np.sqrt(eigvals)
    divided = -1.0 / (root[:, None] * root[None, :] * (root[:, None] + root[None, :]))
    hessian = np.zeros((x.shape[1], x.shape[1]))
    for k in range(y.shape[0]):  # one (r, m) slab at a time keeps memory at O(r m)
        slab = y[k] * y
        hessian += slab.T @ (divided[k][:, None] * slab)
    return hessian


def _best_scale(mu: np.ndarray, state: _State):
    """``t mu`` and its state for the best ``t = (tr M^{1/2} / sum mu)^2``, without another
    decomposition: M scales by t, Sigma by sqrt(t), the constraint values by 1/sqrt(t)."""
    exact_root = (state.dual + float(mu.sum())) / 2.0  # tr M^{1/2} without the floor
    t = (exact_root / mu.sum()) ** 2
    root_t = math.sqrt(t)
    dual = 2.0 * exact_root * root_t - t * float(mu.sum())
    scaled = _State(
        dual,
        state.values / root_t,
        state.root_trace * root_t,
        state.eigvals * t,
        state.eigvecs,
    )
    return t * mu, scaled
