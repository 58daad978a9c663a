"""Noise calibration for a unit-sensitivity Gaussian mechanism composed over several releases.

After DSI normalises every Mahalanobis distance to at most 1, each release is a Gaussian mechanism
with sensitivity 1 and noise multiplier ``s``. Two accountants turn ``(epsilon, delta, steps)``
into ``s``:

- ``"paper"``: the conversion used by Xiao, Yang & Suh (2025): Renyi DP of the Gaussian with a
  continuous order, ``1/(2 s^2) + sqrt(2 ln(1/delta))/s = epsilon`` per composed release. It has
  a closed form but overstates epsilon.
- ``"exact"``: ``steps`` Gaussian releases with multiplier ``s`` are exactly ``mu``-GDP with
  ``mu = sqrt(steps)/s`` (Dong, Roth & Su 2022), and a ``mu``-Gaussian pair is
  ``(epsilon, delta)``-indistinguishable exactly when
  ``Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2) <= delta`` (Balle & Wang 2018).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

ACCOUNTANTS = ("exact", "paper")
# The roots are found to a relative tolerance; the absolute one only has to stay out of its way
# (a multiplier of 1e300 has a GDP mu of 1e-300).
_TINY = 1e-320


def log_gaussian_delta(epsilon: float, mu: float) -> float:
    """``log`` of the exact delta at ``epsilon`` of a ``mu``-GDP pair, accurate where delta
    itself underflows (-inf where it is 0).

    ``delta = Phi(a) - e^epsilon Phi(b)`` with ``a, b = -epsilon/mu +- mu/2``. For a small
    ``mu`` the two terms agree to many digits (a delta of 1e-16 at a tiny epsilon would come out
    of rounding noise), so there ``Phi(a) - Phi(b)`` is integrated directly and the
    ``(e^epsilon - 1) Phi(b)`` part is taken off it in log space.
    """
    if mu < _SMALL_MU and epsilon < 1.0:
        return _log_delta_small_mu(epsilon, mu)
    first = log_ndtr(-epsilon / mu + mu / 2)
    second = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    if not second < first:  # equal terms (or both -inf): delta is 0
        return -math.inf
    return float(first + math.log(-math.expm1(second - first)))


# Below this mu (and epsilon below 1) delta is computed by quadrature: Phi(a) - Phi(b) over an
# interval of width mu, where the integrand phi(m + s) = phi(m) e^(-m s - s^2/2) varies by at
# most e^(+-epsilon/2), so 16 Gauss-Legendre nodes are exact to rounding.
_SMALL_MU = 1e-3
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)


def _log_delta_small_mu(epsilon: float, mu: float) -> float:
    middle, half = -epsilon / mu, mu / 2
    s = half * _NODES
    integral = half * float(np.sum(_WEIGHTS * np.exp(-middle * s - s * s / 2)))
    log_difference = -middle * middle / 2 - 0.5 * math.log(2 * math.pi) + math.log(integral)
    if epsilon == 0 or log_difference == -math.inf:
        return log_difference
    log_taken = math.log(math.expm1(epsilon)) + float(log_ndtr(middle - half)) - log_difference
    if log_taken >= 0:
        return -math.inf
    return log_difference + math.log(-math.expm1(log_taken))


def gaussian_delta(epsilon: float, mu: float) -> float:
    """The exact delta at ``epsilon`` of a ``mu``-GDP pair (Balle & Wang 2018, Theorem 8)."""
    return math.exp(log_gaussian_delta(epsilon, mu))


def exact_mu(epsilon: float, delta: float) -> float:
    """The largest GDP ``mu`` whose pair is ``(epsilon, delta)``-indistinguishable.

    The root is bracketed by doubling (halving) ``mu`` until delta(mu) passes the target, and
    solved in log space, so deltas down to the smallest float and epsilons up to
    :data:`~trustlab.privacy.calibration.MAX_EPSILON` converge (delta grows with ``mu``).
    """
    target = math.log(delta)

    def gap(mu: float) -> float:
        return log_gaussian_delta(epsilon, mu) - target

    low, high = 0.5, 1.0
    while gap(high) < 0:
        low, high = high, high * 2.0
    while gap(low) > 0:
        low, high = low / 2.0, low
    if gap(low) == 0:
        return low
    return float(brentq(gap, low, high, xtol=_TINY, rtol=1e-14, maxiter=500))


def exact_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon at which a ``mu``-GDP pair meets ``delta``."""
    target = math.log(delta)

    def gap(epsilon: float) -> float:  # falls as epsilon grows
        return log_gaussian_delta(epsilon, mu) - target

    if gap(0.0) <= 0:
        return 0.0
    low, high = 0.5, 1.0
    while gap(high) > 0:
        low, high = high, high * 2.0
    while gap(low) <= 0 and low > 0:
        low, high = low / 2.0, low
    return float(brentq(gap, low, high, xtol=_TINY, rtol=1e-14, maxiter=500))


def paper_multiplier(epsilon: float, delta: float) -> float:
    """Root ``s`` of ``1/(2 s^2) + sqrt(2 ln(1/delta))/s = epsilon`` (a quadratic in ``1/s``).

    ``1/s = 2 epsilon / (a + sqrt(a^2 + 2 epsilon))`` with ``a = sqrt(2 ln(1/delta))``: the
    form without cancellation (``-a + sqrt(...)`` loses every digit for a tiny epsilon).
    """
    a = math.sqrt(2.0 * -math.log(delta))
    return (a + math.sqrt(a * a + 2.0 * epsilon)) / (2.0 * epsilon)


def paper_epsilon(multiplier: float, delta: float) -> float:
    """The paper conversion's epsilon for a single-release multiplier ``multiplier``."""
    inverse = 1.0 / multiplier
    return 0.5 * inverse * inverse + math.sqrt(2.0 * -math.log(delta)) * inverse


def composed_epsilon(multiplier: float, delta: float, steps: int, accountant: str) -> float:
    """Epsilon at ``delta`` of ``steps`` releases with noise multiplier ``multiplier`` (checked
    inputs; :func:`trustlab.privacy.dsi_epsilon` is the public, checking form)."""
    if multiplier < 1e-100:  # so little noise that epsilon is beyond any float use
        return math.inf
    if accountant == "paper":
        return paper_epsilon(multiplier / math.sqrt(steps), delta)
    return exact_epsilon(math.sqrt(steps) / multiplier, delta)
