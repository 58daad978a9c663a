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


def gaussian_delta(epsilon: float, mu: float) -> float:
    """The exact delta at ``epsilon`` of a ``mu``-GDP pair (Balle & Wang 2018, Theorem 8)."""
    first = log_ndtr(-epsilon / mu + mu / 2)
    second = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    # log-space difference keeps precision when both terms are tiny
    return float(np.exp(first) * -np.expm1(second - first)) if second < first else 0.0


def exact_mu(epsilon: float, delta: float) -> float:
    """The largest GDP ``mu`` whose pair is ``(epsilon, delta)``-indistinguishable."""
    low, high = 1e-8, 1.0
    while gaussian_delta(epsilon, high) < delta:
        high *= 2.0
    return float(
        brentq(
            lambda mu: math.log(max(gaussian_delta(epsilon, mu), 1e-300)) - math.log(delta),
            low,
            high,
            xtol=1e-15,
            rtol=1e-14,
            maxiter=500,
        )
    )


def exact_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon at which a ``mu``-GDP pair meets ``delta``."""
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    high = 1.0
    while gaussian_delta(high, mu) > delta:
        high *= 2.0
    return float(brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, high, xtol=1e-14, rtol=1e-14))


def paper_multiplier(epsilon: float, delta: float) -> float:
    """Root ``s`` of ``1/(2 s^2) + sqrt(2 ln(1/delta))/s = epsilon`` (a quadratic in ``1/s``)."""
    a = math.sqrt(2.0 * math.log(1.0 / delta))
    inverse = -a + math.sqrt(a * a + 2.0 * epsilon)
    return 1.0 / inverse


def paper_epsilon(multiplier: float, delta: float) -> float:
    """The paper conversion's epsilon for a single-release multiplier ``multiplier``."""
    return 1.0 / (2.0 * multiplier**2) + math.sqrt(2.0 * math.log(1.0 / delta)) / multiplier
