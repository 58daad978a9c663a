"""The results of DSI: the covariance (:class:`DSICovariance`), the noise calibration
(:class:`NoiseCalibration`) and both together with an optional release (:class:`DSINoise`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import (
    as_float_array,
    check_non_negative,
    check_positive_int,
    check_random_state,
)
from trustlab._numerics import power_of_2
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.privacy import _accounting

__all__ = ["DSICovariance", "NoiseCalibration", "DSINoise"]

GUARANTEE = "data-specific indistinguishability (not differential privacy)"


def _row_norms(rows: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row, without underflow: ``np.linalg.norm`` squares the entries,
    so a row below ~1e-162 came out 0 (and one above ~1e154 inf)."""
    top = np.abs(rows).max(axis=1, keepdims=True)
    top = np.where(top > 0, top, 1.0)
    return np.linalg.norm(rows / top, axis=1) * top[:, 0]


@dataclass(frozen=True, eq=False)  # compared by identity: its fields are arrays
class DSICovariance(Result):
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
    budgets : ndarray of shape (n,)
        The budgets ``c_i`` (1 unless given): difference i's squared Mahalanobis distance is
        ``budgets_i * constraint_values_i``.
    span_residual : float
        Largest norm of a difference's part outside ``basis`` (dropped as rounding error: at
        most 1e-8 of that difference's own norm, else the differences are refused). That part
        gets no noise and the guarantee does not cover it: unless it is mere rounding of the
        solve, the release can tell the data sets apart along it, even when it is an ulp-level
        change of the output (round the output to remove such changes).
    iterations : int
    converged : bool
    """

    basis: np.ndarray = internal_field()
    factor: np.ndarray = internal_field()
    trace: float
    max_std: float
    constraint_values: np.ndarray = field(repr=False)
    worst_slack: float
    duality_gap: float
    isotropic_span_trace: float
    isotropic_full_trace: float
    multipliers: np.ndarray = field(repr=False)
    budgets: np.ndarray = field(repr=False)
    span_residual: float
    iterations: int
    converged: bool

    _dict_extras = ("dim", "rank", "n_differences", "gain", "full_gain")
    figure_size = (6.0, 3.5)

    @property
    def dim(self) -> int:
        """Output dimension d."""
        return int(self.basis.shape[0])

    @property
    def rank(self) -> int:
        """Rank r of Sigma (the dimension of the span of the differences)."""
        return int(self.basis.shape[1])

    @property
    def n_differences(self) -> int:
        """Number n of differences (constraints) Sigma was solved for."""
        return int(self.constraint_values.size)

    @property
    def gain(self) -> float:
        return self.isotropic_span_trace / self.trace

    @property
    def full_gain(self) -> float:
        """``isotropic_full_trace / trace``: the gain over full-space isotropic noise."""
        return self.isotropic_full_trace / self.trace

    def _dict_items(self) -> dict[str, Any]:
        """The sizes first and the per-difference lists last, as ``result.json`` always had them."""
        items = super()._dict_items()
        head = {key: items.pop(key) for key in ("dim", "rank", "n_differences")}
        tail = {key: items.pop(key) for key in ("constraint_values", "multipliers", "budgets")}
        return {**head, **items, **tail}

    def covariance(self) -> np.ndarray:
        """The d x d matrix Sigma (memory d^2: only for small d)."""
        root = self.basis @ self.factor
        return root @ root.T

    def sample(self, size: int | None = None, *, scale: float = 1.0, random_state=None):
        """Draws of ``N(0, scale^2 Sigma)``: shape (d,) or (size, d); ``scale`` finite, >= 0."""
        scale = check_non_negative(scale, "scale")
        rng = check_random_state(random_state)
        count = 1 if size is None else check_positive_int(size, "size")
        draws = self._draws(rng, count, scale)
        return draws[0] if size is None else draws

    def _draws(self, rng: np.random.Generator, count: int, scale: float) -> np.ndarray:
        """(count, d) draws of ``N(0, scale^2 Sigma)`` from a checked generator."""
        z = rng.standard_normal((count, self.rank))
        return scale * (z @ self.factor.T) @ self.basis.T

    def mahalanobis(self, deltas: Any) -> np.ndarray:
        """``sqrt(delta' Sigma^+ delta)`` for each row; ``inf`` for a row leaving the span."""
        rows = as_float_array(deltas, "deltas")
        rows = np.atleast_2d(rows)
        if rows.ndim != 2 or rows.shape[1] != self.dim:
            raise InputError.bad("deltas", f"rows of length {self.dim}", rows)
        # each row divided by a power of 2 near its largest entry (exact: ordinary rows give the
        # same bits): a subnormal row's projection rounded in its last bits, so one in the span
        # ([1, 1] * 1e-323 for the span of [1, 1]) left it, and its distance underflowed to 0
        size = power_of_2(np.abs(rows).max(axis=1))
        unit = rows / size[:, None]
        coords = unit @ self.basis
        outside = _row_norms(unit - coords @ self.basis.T)
        whitened = np.linalg.solve(self.factor, coords.T)
        # the whitened column shifted by a power of 2 near its largest entry too (same bits):
        # its squares overflowed at ~1e154 (a Sigma of 1e-300 gave inf for its own differences);
        # both shifts are undone at once, rounding once (a product of them could underflow)
        shift = power_of_2(np.abs(whitened).max(axis=0, initial=0.0))
        exponent = np.frexp(shift)[1] + np.frexp(size)[1] - 2
        with np.errstate(over="ignore"):  # a distance past float64 is inf
            distance = np.ldexp(np.linalg.norm(whitened / shift, axis=0), exponent)
        return np.where(outside > 1e-8 * _row_norms(unit), np.inf, distance)

    def summary(self) -> str:
        status = "converged" if self.converged else "NOT converged"
        return (
            f"DSI covariance: {self.n_differences} differences in d={self.dim} "
            f"(rank {self.rank}); trace {self.trace:.6g}, max std {self.max_std:.4g}\n"
            f"  isotropic noise with the same guarantee: trace {self.isotropic_span_trace:.6g} "
            f"in the span ({self.gain:.3g}x more), {self.isotropic_full_trace:.6g} in the full "
            f"space ({self.full_gain:.3g}x more)\n"
            f"  worst slack {self.worst_slack:.2e}, duality gap {self.duality_gap:.1e}, "
            f"{self.iterations} iterations ({status})"
        )

    def plot(self, ax=None):
        """Standard deviation along Sigma's principal axes vs the isotropic level (of the unit
        Sigma: the noise added is the noise multiplier times these)."""
        ax = new_axes(ax, figsize=self.figure_size)
        stds = np.sort(np.linalg.svd(self.factor, compute_uv=False))[::-1]
        axis = np.arange(1, stds.size + 1)
        ax.bar(axis, stds, color="tab:blue", label="DSI (optimal)")
        iso = math.sqrt(self.isotropic_span_trace / max(self.rank, 1))
        ax.axhline(iso, color="tab:red", linestyle="--", label="isotropic, same guarantee")
        ax.set_xlabel("principal axis of Sigma")
        ax.set_ylabel("standard deviation of Sigma\n(the noise is the multiplier times this)")
        ax.set_title(f"DSI noise: {self.gain:.2g}x less power than isotropic in span")
        ax.legend()
        return ax


@dataclass(frozen=True)
class NoiseCalibration(Result):
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

    _dict_extras = ("gdp_mu",)

    @property
    def gdp_mu(self) -> float:
        """The exact Gaussian-DP parameter of the composition: ``sqrt(steps)/noise_multiplier``."""
        return math.sqrt(self.steps) / self.noise_multiplier

    def summary(self) -> str:
        return (
            f"noise multiplier {self.noise_multiplier:.6g} for "
            f"({self.epsilon:.12g}, {self.delta:.12g})"  # :g showed a delta of 1 - 1e-7 as 1
            f"-DSI over {self.steps} release(s), {self.accountant} accountant "
            f"(GDP mu {self.gdp_mu:.4g})"
        )


@dataclass(frozen=True, eq=False)  # compared by identity: its fields are arrays
class DSINoise(Result):
    """DSI noise for a release: the covariance, its calibration and optionally a noisy release.

    The noise is ``noise_multiplier * basis @ factor @ z`` with ``z ~ N(0, I_r)``. Saved (e.g. by
    ``trustlab privacy dsi --out``) as ``result.json`` (every number of :meth:`to_dict`),
    ``basis.npy`` (d, r), ``factor.npy`` (r, r) and, when there is one, ``release.npy``.

    Attributes
    ----------
    covariance : DSICovariance
    calibration : NoiseCalibration
    release : ndarray or None
        The noiseless output plus one noise draw, in the output's shape (None without output).
    """

    covariance: DSICovariance
    calibration: NoiseCalibration
    release: np.ndarray | None = internal_field(default=None)

    _dict_extras = ("expected_noise_squared_norm", "worst_epsilon", "guarantee")

    @property
    def expected_noise_squared_norm(self) -> float:
        """``E |noise|^2 = noise_multiplier^2 tr(Sigma)``, the expected noise power."""
        return self.covariance.trace * self.calibration.noise_multiplier**2

    @property
    def worst_epsilon(self) -> float:
        """The largest epsilon at ``delta`` (same steps and accountant) of any difference, from its
        Mahalanobis distance ``m_i = sqrt(budgets_i * constraint_values_i)``: that of noise
        multiplier ``noise_multiplier / m_i``. At most ``epsilon`` when no budget exceeds 1
        (equal up to rounding without budgets); larger where a budget does."""
        cov, cal = self.covariance, self.calibration
        distance = math.sqrt(float(np.max(cov.budgets * cov.constraint_values)))
        multiplier = cal.noise_multiplier / distance
        value = _accounting.composed_epsilon(multiplier, cal.delta, cal.steps, cal.accountant)
        # within unit distance epsilon is the calibrated bound; the round trip may add an ulp
        return min(value, cal.epsilon) if distance <= 1.0 else value

    @property
    def guarantee(self) -> str:
        """What the noise guarantees, in words: DSI, not differential privacy."""
        return GUARANTEE

    def summary(self) -> str:
        cov, cal = self.covariance, self.calibration
        lines = [
            cov.summary(),
            cal.summary(),
            f"noise added: {cal.noise_multiplier:.6g} x N(0, Sigma), expected squared norm "
            f"{self.expected_noise_squared_norm:.6g}, largest std "
            f"{cal.noise_multiplier * cov.max_std:.4g}",
        ]
        if np.any(cov.budgets != 1):
            lines.append(
                f"  budgets {cov.budgets.min():.4g} to {cov.budgets.max():.4g}: "
                f"({cal.epsilon:.6g}, {cal.delta:.6g}) holds for budget 1; the worst difference "
                f"gets epsilon {self.worst_epsilon:.6g} at that delta"
            )
        lines.append(
            "guarantee: between U and each reference set U_i behind the differences, no "
            f"other; {GUARANTEE}"
        )
        return "\n".join(lines)

    def files(self) -> Mapping[str, Any]:
        """``basis.npy``, ``factor.npy`` and, with a release, ``release.npy``."""
        arrays = {"basis.npy": self.covariance.basis, "factor.npy": self.covariance.factor}
        if self.release is not None:
            arrays["release.npy"] = self.release
        return arrays
