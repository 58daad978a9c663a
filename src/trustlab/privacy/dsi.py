"""Data-specific indistinguishability (DSI): the optimal anisotropic Gaussian mechanism.

A processing function F maps a data set U to F(U) in R^d. For reference data sets U_1..U_n
(U without a record, a group, one owner's data ...) the differences are
``delta_i = F(U) - F(U_i)``. Releasing ``F(U) + N(0, Sigma)`` makes each pair
``(U, U_i)`` as indistinguishable as a 1-D Gaussian with sensitivity
``sqrt(delta_i' Sigma^-1 delta_i)``. :func:`optimal_gaussian_covariance` finds the
minimum-trace ``Sigma`` with every such distance at most 1 (Xiao, Yang & Suh, ICML 2025),
:func:`~trustlab.privacy.calibrate` turns ``(epsilon, delta, steps)`` into the noise multiplier
that scales it, and :func:`dsi_noise` does both (and the release) in one call.

Sigma depends on the data: DSI bounds how far the release moves between U and the chosen
reference sets. It is not differential privacy.

The solver is in ``_solver``, the calibration in ``calibration``, the black-box mechanism (which
computes the differences itself) in ``mechanism`` and the result classes in ``results``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_positive_int,
    check_probability,
    check_random_state,
)
from trustlab._labels import sorted_unique
from trustlab.errors import InputError
from trustlab.privacy import _solver
from trustlab.privacy.calibration import calibrate
from trustlab.privacy.results import DSICovariance, DSINoise

__all__ = ["optimal_gaussian_covariance", "dsi_noise", "group_gradient_differences"]

# The solver works with squared norms and budgets' square roots: the largest difference must have
# a square that is a normal float, and budgets stay within a range that keeps that so.
_MIN_MAGNITUDE, _MAX_MAGNITUDE = 1e-100, 1e100
_MIN_BUDGET, _MAX_BUDGET = 1e-100, 1e100


def optimal_gaussian_covariance(
    deltas: Any,
    *,
    budgets: Any = None,
    max_iter: int = 1000,
    tol: float = 1e-7,
) -> DSICovariance:
    """Minimum-trace Gaussian covariance making every difference indistinguishable.

    Solves ``min tr(Sigma)`` over ``Sigma > 0`` subject to ``delta_i' Sigma^-1 delta_i <= c_i``
    through its dual, ``max_{mu >= 0} 2 tr((X diag(mu) X')^{1/2}) - sum_i c_i mu_i``, by mirror
    ascent with backtracking finished by projected Newton steps, in the n-dimensional span of
    the differences (cost ``O(n^2 d)`` once, then ``O(n^3)`` per iteration; no d x d matrix).
    The returned Sigma is always feasible (rescaled onto the constraints) and ``duality_gap``
    certifies how close its trace is to the optimum.

    Parameters
    ----------
    deltas : array-like of shape (n, d)
        The differences ``F(U) - F(U_i)``, one per row; none zero, no two equal.
    budgets : array-like of shape (n,), optional
        Per-difference bounds ``c_i > 0`` on the squared Mahalanobis distance (default 1). Noise
        calibrated for ``(epsilon, delta)`` gives difference i the guarantee of multiplier
        ``noise_multiplier / sqrt(c_i)``: looser than ``(epsilon, delta)`` where ``c_i > 1``.
    max_iter : int, default 1000
        Iteration cap of the dual ascent.
    tol : float, default 1e-7
        Stop when the relative duality gap is below ``tol``.

    Returns
    -------
    DSICovariance

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.privacy import optimal_gaussian_covariance
    >>> theta = 0.3
    >>> deltas = np.array([[1.0, 0.0], [np.cos(theta), np.sin(theta)]])
    >>> cov = optimal_gaussian_covariance(deltas)
    >>> print(f"{cov.trace:.6f} vs 1 + sin(theta) = {1 + np.sin(theta):.6f}")
    1.295520 vs 1 + sin(theta) = 1.295520
    """
    rows, caps = _check_differences(deltas, budgets)
    max_iter, tol = check_solver_options(max_iter, tol)
    return _solver.solve(rows, caps, max_iter=max_iter, tol=tol)


def dsi_noise(
    deltas: Any,
    *,
    epsilon: float,
    delta: float,
    steps: int = 1,
    accountant: str = "exact",
    budgets: Any = None,
    max_iter: int = 1000,
    tol: float = 1e-7,
    output: Any = None,
    random_state: Any = None,
) -> DSINoise:
    """The calibrated DSI noise for a set of differences, and optionally a noisy release.

    Solves :func:`optimal_gaussian_covariance`, calibrates the multiplier with
    :func:`~trustlab.privacy.calibrate` and, given the noiseless ``output`` ``F(U)``, adds one
    draw of ``noise_multiplier * N(0, Sigma)`` to it.

    Parameters
    ----------
    deltas : array-like of shape (n, d)
        The differences ``F(U) - F(U_i)``, one per row; none zero, no two equal.
    epsilon, delta : float
        The DSI guarantee per difference: epsilon > 0, delta in (0, 1). With ``budgets``, it is
        that of a difference with budget 1; difference i gets
        ``dsi_epsilon(noise_multiplier / sqrt(c_i), delta, steps)`` at that delta.
    steps : int, default 1
        Releases each difference takes part in (see :func:`~trustlab.privacy.calibrate`).
    accountant : {"exact", "paper"}, default "exact"
    budgets, max_iter, tol :
        Passed to :func:`optimal_gaussian_covariance`.
    output : array-like with d values, optional
        The noiseless output ``F(U)`` to release (any shape with d entries).
    random_state : None, int or numpy Generator
        The noise draw of the release.

    Returns
    -------
    DSINoise
        ``covariance``, ``calibration``, ``expected_noise_squared_norm``, ``guarantee`` and
        ``release`` (None without ``output``).

    Examples
    --------
    >>> from trustlab.privacy import dsi_noise
    >>> noise = dsi_noise([[1.0, 0.0], [0.0, 2.0]], epsilon=2.0, delta=1e-5,
    ...                   output=[10.0, 20.0], random_state=0)
    >>> round(noise.covariance.trace, 6), noise.release.shape
    (5.0, (2,))
    """
    calibration = calibrate(epsilon, delta, steps, accountant)
    rows, caps = _check_differences(deltas, budgets)
    max_iter, tol = check_solver_options(max_iter, tol)
    value = None
    if output is not None:
        value = as_float_array(output, "output")
        if value.size != rows.shape[1]:
            raise InputError.bad(
                "output", f"{rows.shape[1]} values (one per column of deltas)", value
            )
    rng = check_random_state(random_state)
    covariance = _solver.solve(rows, caps, max_iter=max_iter, tol=tol)
    release = None
    if value is not None:
        noise = covariance._draws(rng, 1, calibration.noise_multiplier)
        release = value + noise.reshape(value.shape)
    return DSINoise(covariance, calibration, release)


def group_gradient_differences(per_sample: Any, groups: Any) -> tuple[np.ndarray, np.ndarray]:
    """Differences of the mean gradient when each group is left out, from per-sample gradients.

    The paper's "mode A" (one gradient step): with ``S`` the sum of the N per-sample gradients and
    ``S_g`` the sum over group g (``n_g`` records), the difference is
    ``S/N - (S - S_g)/(N - n_g)``, i.e. ``F(U) - F(U without g)``. No retraining is needed.

    Parameters
    ----------
    per_sample : array-like of shape (N, d)
        One gradient per record.
    groups : array-like of shape (N,)
        The group of each record; at least two distinct groups.

    Returns
    -------
    labels : ndarray of shape (G,)
        The distinct groups, sorted.
    differences : ndarray of shape (G, d)
        One row per group, ready for :func:`optimal_gaussian_covariance`.

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.privacy import group_gradient_differences
    >>> labels, diffs = group_gradient_differences([[1.0], [2.0], [6.0]], [0, 0, 1])
    >>> diffs.ravel().tolist()
    [-3.0, 1.5]
    """
    grads = as_float_array(per_sample, "per_sample", ndim=2)
    labels = as_1d(groups, "groups")
    if labels.size != grads.shape[0]:
        raise InputError.bad("groups", f"one label per gradient row ({grads.shape[0]})", labels)
    unique, index = sorted_unique(labels, "groups", return_inverse=True)
    if unique.size < 2:
        raise InputError.bad("groups", "at least two distinct groups", labels)
    size = float(grads.shape[0])
    # The differences are the same for gradients all shifted by one vector: shifted by their mean,
    # the sums hold only the spread (a common part 1e14 times the spread cost 10% of the
    # differences to rounding, 1e11 times 6e-5), and stay in range unless the values do not
    with np.errstate(over="ignore", invalid="ignore"):
        grads = grads - (grads / size).sum(axis=0)
        group_sums = np.zeros((unique.size, grads.shape[1]))
        np.add.at(group_sums, index, grads)
        counts = np.bincount(index).astype(float)
        total = grads.sum(axis=0)
        differences = total / size - (total - group_sums) / (size - counts)[:, None]
    if not np.isfinite(differences).all():
        raise InputError.bad(
            "per_sample", "gradients whose sums stay within the float range", grads
        )
    return unique, differences


# ---------------------------------------------------------------------------------------------
# Checks at the public boundary


def check_solver_options(max_iter: Any, tol: Any) -> tuple[int, float]:
    """The solver's iteration cap (>= 1) and relative duality-gap tolerance (in (0, 1))."""
    return check_positive_int(max_iter, "max_iter"), check_probability(tol, "tol")


def _check_differences(deltas: Any, budgets: Any) -> tuple[np.ndarray, np.ndarray]:
    """(n, d) finite, non-zero, distinct differences and their n positive budgets."""
    rows = as_float_array(deltas, "deltas", ndim=2)
    caps = _check_budgets(budgets, rows.shape[0])
    _check_distinct_nonzero(rows)
    check_magnitude(rows)
    return rows, caps


def _check_budgets(budgets: Any, n: int) -> np.ndarray:
    if budgets is None:
        return np.ones(n)
    caps = as_float_array(budgets, "budgets", ndim=1)
    if caps.size != n:
        raise InputError.bad("budgets", f"one budget per difference ({n})", caps)
    outside = (caps < _MIN_BUDGET) | (caps > _MAX_BUDGET)
    if outside.any():
        i = int(np.argmax(outside))
        raise InputError(
            f"budgets: expected positive budgets between {_MIN_BUDGET:g} and {_MAX_BUDGET:g}, "
            f"got {caps[i]:g} at index {i}",
            argument="budgets",
        )
    return caps


def check_magnitude(rows: np.ndarray, argument: str = "deltas") -> None:
    """Differences whose squares are normal floats: the solver works with squared norms
    (``argument`` names them in the error: ``fn`` for :class:`~trustlab.privacy.DSIMechanism`)."""
    largest = float(np.abs(rows).max())
    if not _MIN_MAGNITUDE <= largest <= _MAX_MAGNITUDE:
        raise InputError(
            f"{argument}: expected differences of magnitude between {_MIN_MAGNITUDE:g} and "
            f"{_MAX_MAGNITUDE:g} (rescale the output), got a largest |value| of {largest:g}",
            argument=argument,
        )


def _check_distinct_nonzero(rows: np.ndarray) -> None:
    zero = np.flatnonzero(~np.any(rows != 0, axis=1))
    if zero.size:
        raise InputError.bad(
            "deltas",
            "non-zero differences (a zero one needs no noise: drop it)",
            f"a zero row at index {int(zero[0])}",
        )
    _, first, counts = np.unique(rows, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        row = int(first[np.argmax(counts > 1)])
        raise InputError.bad(
            "deltas",
            "distinct differences (a repeated one adds nothing: drop it)",
            f"row {row} repeated {int(counts.max())} times",
        )
