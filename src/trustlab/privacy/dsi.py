"""Data-specific indistinguishability (DSI): the optimal anisotropic Gaussian mechanism.

A processing function F maps a data set U to F(U) in R^d. For reference data sets U_1..U_n
(U without a record, a group, one owner's data ...) the differences are
``delta_i = F(U) - F(U_i)``. Releasing ``F(U) + N(0, Sigma)`` makes each pair
``(U, U_i)`` as indistinguishable as a 1-D Gaussian with sensitivity
``sqrt(delta_i' Sigma^-1 delta_i)``. :func:`optimal_gaussian_covariance` finds the
minimum-trace ``Sigma`` with every such distance at most 1 (Xiao, Yang & Suh, ICML 2025), and
:func:`calibrate` turns ``(epsilon, delta, steps)`` into the noise multiplier that scales it.

Sigma depends on the data: DSI bounds how far the release moves between U and the chosen
reference sets. It is not differential privacy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_choice,
    check_in_range,
    check_positive_int,
    check_random_state,
)
from trustlab.errors import InputError
from trustlab.privacy import _accounting

__all__ = [
    "DSICovariance",
    "NoiseCalibration",
    "DSIMechanism",
    "optimal_gaussian_covariance",
    "calibrate",
    "dsi_epsilon",
    "group_gradient_differences",
]

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


@dataclass(frozen=True)
class DSICovariance:
    """The minimum-trace Gaussian covariance for a set of output differences.

    ``Sigma = basis @ factor @ factor.T @ basis.T``; Sigma lives in the span of the differences,
    so a d x d matrix is never formed (call :meth:`covariance` to form it).

    Attributes
    ----------
    basis : ndarray of shape (d, r)
        Orthonormal basis of the span of the differences (r = their rank).
    factor : ndarray of shape (r, r)
        A square root of Sigma in basis coordinates: ``factor @ factor.T`` is Sigma there.
    trace : float
        ``tr(Sigma)``, the expected squared l2 norm of one noise draw.
    max_std : float
        The largest standard deviation in any direction, ``sqrt(lambda_max(Sigma))``.
    constraint_values : ndarray of shape (n,)
        ``delta_i' Sigma^-1 delta_i / c_i``; each is at most 1 (up to rounding).
    worst_slack : float
        ``min_i (1 - constraint_values_i)``: non-negative means every constraint holds.
    duality_gap : float
        Relative gap between ``trace`` and the dual lower bound: a certificate that ``trace`` is
        within this fraction of the optimum.
    isotropic_span_trace, isotropic_full_trace : float
        Trace of isotropic noise with the same guarantee, in the span (``r max_i |delta_i|^2/c_i``)
        and in the whole output space (``d max_i |delta_i|^2/c_i``, the DP-SGD-style baseline).
    gain : float
        ``isotropic_span_trace / trace``: how many times less noise power DSI adds.
    multipliers : ndarray of shape (n,)
        The dual variables; positive ones mark the differences that shape Sigma.
    span_residual : float
        Largest norm of a difference's part outside ``basis`` (dropped as rounding error).
    iterations : int
    converged : bool
    """

    basis: np.ndarray = field(repr=False)
    factor: np.ndarray = field(repr=False)
    trace: float
    max_std: float
    constraint_values: np.ndarray = field(repr=False)
    worst_slack: float
    duality_gap: float
    isotropic_span_trace: float
    isotropic_full_trace: float
    multipliers: np.ndarray = field(repr=False)
    span_residual: float
    iterations: int
    converged: bool

    @property
    def dim(self) -> int:
        """Output dimension d."""
        return int(self.basis.shape[0])

    @property
    def rank(self) -> int:
        """Rank r of Sigma (the dimension of the span of the differences)."""
        return int(self.basis.shape[1])

    @property
    def gain(self) -> float:
        return self.isotropic_span_trace / self.trace

    @property
    def full_gain(self) -> float:
        """``isotropic_full_trace / trace``: the gain over full-space isotropic noise."""
        return self.isotropic_full_trace / self.trace

    def covariance(self) -> np.ndarray:
        """The d x d matrix Sigma (memory d^2: only for small d)."""
        root = self.basis @ self.factor
        return root @ root.T

    def sample(self, size: int | None = None, *, scale: float = 1.0, random_state=None):
        """Draws of ``N(0, scale^2 Sigma)``: shape (d,) or (size, d)."""
        rng = check_random_state(random_state)
        count = 1 if size is None else check_positive_int(size, "size")
        z = rng.standard_normal((count, self.rank))
        draws = scale * (z @ self.factor.T) @ self.basis.T
        return draws[0] if size is None else draws

    def mahalanobis(self, deltas: Any) -> np.ndarray:
        """``sqrt(delta' Sigma^+ delta)`` for each row; ``inf`` for a row leaving the span."""
        rows = as_float_array(deltas, "deltas")
        rows = np.atleast_2d(rows)
        if rows.ndim != 2 or rows.shape[1] != self.dim:
            raise InputError.bad("deltas", f"rows of length {self.dim}", rows)
        coords = rows @ self.basis
        outside = np.linalg.norm(rows - coords @ self.basis.T, axis=1)
        whitened = np.linalg.solve(self.factor, coords.T)
        distance = np.linalg.norm(whitened, axis=0)
        scale = np.maximum(np.linalg.norm(rows, axis=1), 1e-300)
        return np.where(outside > 1e-8 * scale, np.inf, distance)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dim": self.dim,
            "rank": self.rank,
            "n_differences": int(self.constraint_values.size),
            "trace": float(self.trace),
            "max_std": float(self.max_std),
            "worst_slack": float(self.worst_slack),
            "duality_gap": float(self.duality_gap),
            "isotropic_span_trace": float(self.isotropic_span_trace),
            "isotropic_full_trace": float(self.isotropic_full_trace),
            "gain": float(self.gain),
            "full_gain": float(self.full_gain),
            "span_residual": float(self.span_residual),
            "iterations": int(self.iterations),
            "converged": bool(self.converged),
            "constraint_values": [float(v) for v in self.constraint_values],
            "multipliers": [float(v) for v in self.multipliers],
        }

    def summary(self) -> str:
        status = "converged" if self.converged else "NOT converged"
        return (
            f"DSI covariance: {self.constraint_values.size} differences in d={self.dim} "
            f"(rank {self.rank}); trace {self.trace:.6g}, max std {self.max_std:.4g}\n"
            f"  isotropic noise with the same guarantee: trace {self.isotropic_span_trace:.6g} "
            f"in the span ({self.gain:.3g}x more), {self.isotropic_full_trace:.6g} in the full "
            f"space ({self.full_gain:.3g}x more)\n"
            f"  worst slack {self.worst_slack:.2e}, duality gap {self.duality_gap:.1e}, "
            f"{self.iterations} iterations ({status})"
        )

    def plot(self, ax=None):
        """Noise standard deviation along Sigma's principal axes vs the isotropic level."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        stds = np.sort(np.linalg.svd(self.factor, compute_uv=False))[::-1]
        axis = np.arange(1, stds.size + 1)
        ax.bar(axis, stds, color="tab:blue", label="DSI (optimal)")
        iso = math.sqrt(self.isotropic_span_trace / max(self.rank, 1))
        ax.axhline(iso, color="tab:red", linestyle="--", label="isotropic, same guarantee")
        ax.set_xlabel("principal axis of Sigma")
        ax.set_ylabel("noise standard deviation")
        ax.set_title(f"DSI noise: {self.gain:.2g}x less power than isotropic in span")
        ax.legend()
        return ax


@dataclass(frozen=True)
class NoiseCalibration:
    """The noise multiplier for ``steps`` releases that must be ``(epsilon, delta)``-DSI.

    ``noise_multiplier`` scales a unit covariance (every Mahalanobis distance <= 1):
    the released noise is ``noise_multiplier * N(0, Sigma)``. ``per_release_epsilon`` is the
    guarantee of one release alone under the same accountant.
    """

    epsilon: float
    delta: float
    steps: int
    accountant: str
    noise_multiplier: float
    per_release_epsilon: float

    @property
    def gdp_mu(self) -> float:
        """The exact Gaussian-DP parameter of the composition: ``sqrt(steps)/noise_multiplier``."""
        return math.sqrt(self.steps) / self.noise_multiplier

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "steps": int(self.steps),
            "accountant": self.accountant,
            "noise_multiplier": float(self.noise_multiplier),
            "per_release_epsilon": float(self.per_release_epsilon),
            "gdp_mu": float(self.gdp_mu),
        }

    def summary(self) -> str:
        return (
            f"noise multiplier {self.noise_multiplier:.6g} for ({self.epsilon:g}, {self.delta:g})"
            f"-DSI over {self.steps} release(s), {self.accountant} accountant "
            f"(GDP mu {self.gdp_mu:.4g})"
        )


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
    ascent with backtracking, in the n-dimensional span of the differences (cost
    ``O(n^2 d)`` once, then ``O(n^3)`` per iteration; no d x d matrix). The returned Sigma is
    always feasible (rescaled onto the constraints) and ``duality_gap`` certifies how close its
    trace is to the optimum.

    Parameters
    ----------
    deltas : array-like of shape (n, d)
        The differences ``F(U) - F(U_i)``, one per row; none zero, no two equal.
    budgets : array-like of shape (n,), optional
        Per-difference bounds ``c_i > 0`` on the squared Mahalanobis distance (default 1).
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
    rows = as_float_array(deltas, "deltas", ndim=2)
    n, d = rows.shape
    caps = _check_budgets(budgets, n)
    max_iter = check_positive_int(max_iter, "max_iter")
    tol = check_in_range(tol, "tol", 0.0, 1.0, low_open=True, high_open=True)
    _check_distinct_nonzero(rows)

    basis, coords, residual = _span_of(rows)
    unit = coords / np.sqrt(caps)  # budgets folded in: every constraint becomes <= 1
    scale = float(np.linalg.norm(unit, axis=0).max())
    solution = _dual_ascent(unit / scale, max_iter=max_iter, tol=tol)

    eigvals, eigvecs, values, mu, iterations, gap, converged = solution
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


def calibrate(
    epsilon: float, delta: float, steps: int = 1, accountant: str = "exact"
) -> NoiseCalibration:
    """Noise multiplier for ``(epsilon, delta)``-DSI over ``steps`` unit-sensitivity releases.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta, in (0, 1).
    steps : int, default 1
        How many noisy releases each reference difference takes part in (the paper's ``E``:
        the number of epochs when every group is touched once per epoch; the number of training
        steps when every step solves for every group). The guarantee is for all of them
        composed.
    accountant : {"exact", "paper"}, default "exact"
        ``"exact"``: Gaussian-DP composition and the exact analytic-Gaussian conversion (tight).
        ``"paper"``: the authors' RDP conversion, ``1/(2 s^2) + sqrt(2 ln(1/delta))/s =
        epsilon``; closed form but it overstates epsilon, so it adds more noise.

    Returns
    -------
    NoiseCalibration

    Examples
    --------
    >>> from trustlab.privacy import calibrate
    >>> round(calibrate(1.0, 1e-5, accountant="paper").noise_multiplier, 5)
    4.90056
    >>> calibrate(1.0, 1e-5).noise_multiplier < 4.90056
    True
    """
    epsilon, delta, steps, accountant = _check_budget(epsilon, delta, steps, accountant)
    if accountant == "paper":
        single = _accounting.paper_multiplier(epsilon, delta)
        return NoiseCalibration(
            epsilon, delta, steps, accountant, single * math.sqrt(steps), epsilon
        )
    mu = _accounting.exact_mu(epsilon, delta)
    multiplier = math.sqrt(steps) / mu
    per_release = _accounting.exact_epsilon(1.0 / multiplier, delta)
    return NoiseCalibration(epsilon, delta, steps, accountant, multiplier, per_release)


def dsi_epsilon(
    noise_multiplier: float, delta: float, steps: int = 1, accountant: str = "exact"
) -> float:
    """Epsilon of ``steps`` releases with multiplier ``noise_multiplier`` (the inverse of
    :func:`calibrate`).

    Examples
    --------
    >>> from trustlab.privacy import dsi_epsilon
    >>> round(dsi_epsilon(4.90056, 1e-5), 4)
    0.7416
    """
    multiplier = check_in_range(
        noise_multiplier, "noise_multiplier", 0.0, math.inf, low_open=True, high_open=True
    )
    _, delta, steps, accountant = _check_budget(1.0, delta, steps, accountant)
    if accountant == "paper":
        return _accounting.paper_epsilon(multiplier / math.sqrt(steps), delta)
    return _accounting.exact_epsilon(math.sqrt(steps) / multiplier, delta)


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
    unique, index = np.unique(labels, return_inverse=True)
    if unique.size < 2:
        raise InputError.bad("groups", "at least two distinct groups", labels)
    group_sums = np.zeros((unique.size, grads.shape[1]))
    np.add.at(group_sums, index, grads)
    counts = np.bincount(index).astype(float)
    total, size = grads.sum(axis=0), float(grads.shape[0])
    without = (total - group_sums) / (size - counts)[:, None]
    return unique, total / size - without


class DSIMechanism:
    """Black-box DSI release of ``fn(data)`` protecting every group of records.

    ``fit`` runs ``fn`` on the full data and once with each group left out, forms the differences
    ``fn(U) - fn(U without group g)``, solves :func:`optimal_gaussian_covariance` and calibrates
    the multiplier; ``release`` adds ``noise_multiplier * N(0, Sigma)`` to ``fn(U)``. The output
    may be model parameters, predictions or any fixed-shape array.

    Parameters
    ----------
    fn : callable
        ``fn(subset) -> array-like`` of a fixed shape; deterministic (the same subset gives the
        same output), or the differences measure its randomness, not the data.
    data : array-like, DataFrame, or tuple of them
        The records, indexed by row. A tuple ``(X, y, ...)`` is subset element-wise.
    groups : array-like of shape (n_samples,)
        The group of each record; each distinct value is one reference set (its removal).
        Give every record its own label to protect single records.
    epsilon, delta : float
        The DSI guarantee per group.
    steps : int, default 1
        Number of releases the guarantee must cover (see :func:`calibrate`).
    accountant : {"exact", "paper"}, default "exact"
    max_iter, tol :
        Passed to :func:`optimal_gaussian_covariance`.
    n_jobs : int, optional
        joblib workers for the ``n_groups + 1`` runs of ``fn``.

    Attributes
    ----------
    output_ : ndarray
        ``fn(data)``, the noiseless output.
    differences_ : ndarray of shape (n_groups, d)
        One row per group, flattened.
    group_labels_ : ndarray
        The group labels, in the order of ``differences_``.
    constrained_ : ndarray of bool
        False for groups whose removal does not change the output (or repeats another group's
        difference): their constraint holds for any Sigma and is left out of the solve.
    covariance_ : DSICovariance
    calibration_ : NoiseCalibration

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.privacy import DSIMechanism
    >>> x = np.arange(12.0).reshape(6, 2)
    >>> mech = DSIMechanism(lambda rows: rows.mean(axis=0), x, [0, 0, 1, 1, 2, 2],
    ...                     epsilon=2.0, delta=1e-5).fit()
    >>> mech.release(random_state=0).shape
    (2,)
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        data: Any,
        groups: Any,
        *,
        epsilon: float,
        delta: float,
        steps: int = 1,
        accountant: str = "exact",
        max_iter: int = 1000,
        tol: float = 1e-7,
        n_jobs: int | None = None,
    ):
        self.fn = fn
        self.data = data
        self.groups = groups
        self.epsilon = epsilon
        self.delta = delta
        self.steps = steps
        self.accountant = accountant
        self.max_iter = max_iter
        self.tol = tol
        self.n_jobs = n_jobs

    def fit(self) -> DSIMechanism:
        """Run ``fn`` on the data and on each leave-one-group-out subset, then solve."""
        if not callable(self.fn):
            raise InputError.bad("fn", "a callable", self.fn)
        self.calibration_ = calibrate(self.epsilon, self.delta, self.steps, self.accountant)
        labels = as_1d(self.groups, "groups")
        n_samples = _length_of(self.data)
        if labels.size != n_samples:
            raise InputError.bad("groups", f"one label per record ({n_samples})", labels)
        self.group_labels_ = np.unique(labels)
        if self.group_labels_.size < 1:
            raise InputError.bad("groups", "at least one group", labels)
        masks = [labels != g for g in self.group_labels_]
        outputs = self._run_all([None, *masks])
        self.output_ = outputs[0]
        full = self.output_.ravel()
        self.differences_ = np.stack([full - out.ravel() for out in outputs[1:]])
        self.constrained_ = _informative_rows(self.differences_)
        if not self.constrained_.any():
            raise InputError.bad(
                "fn", "an output that changes when some group is left out", "the same output"
            )
        self.covariance_ = optimal_gaussian_covariance(
            self.differences_[self.constrained_], max_iter=self.max_iter, tol=self.tol
        )
        return self

    @property
    def noise_multiplier_(self) -> float:
        return self.calibration_.noise_multiplier

    def release(self, random_state=None) -> np.ndarray:
        """``fn(data)`` plus calibrated DSI noise, in the shape of ``fn``'s output.

        Fits first if ``fit`` has not been called.
        """
        if not hasattr(self, "covariance_"):
            self.fit()
        noise = self.covariance_.sample(scale=self.noise_multiplier_, random_state=random_state)
        return self.output_ + noise.reshape(self.output_.shape)

    def _run_all(self, masks: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        from joblib import Parallel, delayed

        raw = Parallel(n_jobs=self.n_jobs)(
            delayed(_call)(self.fn, _subset(self.data, mask)) for mask in masks
        )
        outputs = [as_float_array(out, "fn(data)", allow_nan=False) for out in raw]
        shape = outputs[0].shape
        for out in outputs[1:]:
            if out.shape != shape:
                raise InputError.bad(
                    "fn(data)", f"the same output shape {shape} on every subset", out
                )
        return outputs


def _call(fn: Callable[[Any], Any], subset: Any) -> Any:
    return fn(subset)


def _length_of(data: Any) -> int:
    if isinstance(data, tuple):
        if not data:
            raise InputError.bad("data", "a non-empty tuple of arrays", data)
        lengths = {len(part) for part in data}
        if len(lengths) != 1:
            raise InputError.bad("data", "tuple elements of the same length", sorted(lengths))
        return lengths.pop()
    try:
        return len(data)
    except TypeError:
        raise InputError.bad(
            "data", "records indexed by row (an array, DataFrame or list)", data
        ) from None


def _subset(data: Any, mask: np.ndarray | None) -> Any:
    if mask is None:
        return data
    if isinstance(data, tuple):
        return tuple(_subset(part, mask) for part in data)
    if hasattr(data, "iloc"):
        return data.iloc[np.flatnonzero(mask)]
    if isinstance(data, np.ndarray):
        return data[mask]
    return [item for item, keep in zip(data, mask, strict=True) if keep]


def _informative_rows(rows: np.ndarray) -> np.ndarray:
    """False for zero rows and for repeats of an earlier row (their constraints are redundant)."""
    keep = np.any(rows != 0, axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    unique = np.zeros(rows.shape[0], dtype=bool)
    unique[first] = True
    return keep & unique


def _check_budgets(budgets: Any, n: int) -> np.ndarray:
    if budgets is None:
        return np.ones(n)
    caps = as_float_array(budgets, "budgets", ndim=1)
    if caps.size != n:
        raise InputError.bad("budgets", f"one budget per difference ({n})", caps)
    if (caps <= 0).any():
        raise InputError.bad("budgets", "positive budgets", caps)
    return caps


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


def _check_budget(epsilon, delta, steps, accountant):
    epsilon = check_in_range(epsilon, "epsilon", 0.0, math.inf, low_open=True, high_open=True)
    delta = check_in_range(delta, "delta", 0.0, 1.0, low_open=True, high_open=True)
    steps = check_positive_int(steps, "steps")
    accountant = check_choice(accountant, "accountant", _accounting.ACCOUNTANTS)
    return epsilon, delta, steps, accountant


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
