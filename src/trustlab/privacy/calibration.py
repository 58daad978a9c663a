"""Noise calibration of DSI: the multiplier for ``(epsilon, delta)`` over several releases.

Once DSI has normalised every Mahalanobis distance to at most 1, each release is a Gaussian
mechanism with sensitivity 1; :func:`calibrate` turns ``(epsilon, delta, steps)`` into its noise
multiplier and :func:`dsi_epsilon` goes back. The two accountants are in ``_accounting``.
"""

from __future__ import annotations

import math

import numpy as np

from trustlab._checks import (
    check_choice,
    check_in_range,
    check_positive,
    check_positive_int,
    check_probability,
)
from trustlab.errors import InputError
from trustlab.privacy import _accounting
from trustlab.privacy.results import NoiseCalibration

__all__ = ["calibrate", "dsi_epsilon", "MAX_EPSILON", "MAX_STEPS", "MAX_MULTIPLIER"]

#: The largest epsilon :func:`calibrate` takes: beyond it the guarantee bounds the likelihood
#: ratio of the two data sets by e^100 > 1e43, which says nothing (a larger value is a mistake
#: in the units, e.g. a log-base or a percentage).
MAX_EPSILON = 100.0
#: The most releases :func:`calibrate` composes (a trillion; more is surely a slip of the units).
MAX_STEPS = 10**12
#: The largest noise multiplier :func:`calibrate` returns (a tiny epsilon and a tiny delta
#: together ask for more; such a release is noise alone, and its square would overflow).
MAX_MULTIPLIER = 1e100


def calibrate(
    epsilon: float, delta: float, steps: int = 1, accountant: str = "exact"
) -> NoiseCalibration:
    """Noise multiplier for ``(epsilon, delta)``-DSI over ``steps`` unit-sensitivity releases.

    Parameters
    ----------
    epsilon : float
        Target epsilon, in (0, 100] (:data:`MAX_EPSILON`); a tiny epsilon is fine (the noise then
        approaches the delta-only limit).
    delta : float
        Target delta, in (0, 1); any such value is calibrated exactly (the accountants work in
        log space, so a delta of 1e-300 does not underflow).
    steps : int, default 1
        How many noisy releases each reference difference takes part in, 1 to 10^12
        (:data:`MAX_STEPS`; the paper's ``E``:
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

    Raises
    ------
    InputError
        For values outside these ranges, and where the multiplier would exceed 1e100
        (:data:`MAX_MULTIPLIER`: a tiny epsilon and a tiny delta together).

    Examples
    --------
    >>> from trustlab.privacy import calibrate
    >>> round(calibrate(1.0, 1e-5, accountant="paper").noise_multiplier, 5)
    4.90056
    >>> calibrate(1.0, 1e-5).noise_multiplier < 4.90056
    True
    """
    try:
        epsilon = check_in_range(epsilon, "epsilon", 0.0, MAX_EPSILON, low_open=True)
    except InputError:
        raise InputError.bad(
            "epsilon",
            f"a number in (0, {MAX_EPSILON:g}] (beyond, e^epsilon > 1e43: no guarantee at all)",
            epsilon,
        ) from None
    delta, steps, accountant = _check_composition(delta, steps, accountant)
    if accountant == "paper":
        single = _accounting.paper_multiplier(epsilon, delta)
        multiplier = single * math.sqrt(steps)
    else:
        mu = _accounting.exact_mu(epsilon, delta)
        multiplier = math.sqrt(steps) / mu if mu > 0 else math.inf
    if not multiplier <= MAX_MULTIPLIER:
        raise InputError.bad(
            "epsilon",
            f"a larger epsilon (or delta): at delta = {delta!r} the noise multiplier is beyond "
            f"{MAX_MULTIPLIER:g} (the release would be noise alone)",
            epsilon,
        )
    if accountant == "paper":  # one release alone: the paper conversion of its multiplier
        per_release = _accounting.paper_epsilon(multiplier, delta)
    else:
        per_release = _accounting.exact_epsilon(1.0 / multiplier, delta)
    return NoiseCalibration(epsilon, delta, steps, accountant, multiplier, per_release)


def dsi_epsilon(
    noise_multiplier: float, delta: float, steps: int = 1, accountant: str = "exact"
) -> float:
    """Epsilon of ``steps`` releases with multiplier ``noise_multiplier`` (the inverse of
    :func:`calibrate`).

    Parameters
    ----------
    noise_multiplier : float
        The multiplier ``s`` of a unit covariance, > 0.
    delta : float
        Target delta, in (0, 1).
    steps : int, default 1
        Releases each reference difference takes part in.
    accountant : {"exact", "paper"}, default "exact"

    Returns
    -------
    float

    Examples
    --------
    >>> from trustlab.privacy import dsi_epsilon
    >>> round(dsi_epsilon(4.90056, 1e-5), 4)
    0.7416
    """
    multiplier = check_positive(noise_multiplier, "noise_multiplier")
    delta, steps, accountant = _check_composition(delta, steps, accountant)
    return _accounting.composed_epsilon(multiplier, delta, steps, accountant)


def _check_composition(delta, steps, accountant) -> tuple[float, int, str]:
    delta = check_probability(delta, "delta")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        steps = check_positive_int(steps, "steps")  # refuses it, saying what it takes
    if not 1 <= steps <= MAX_STEPS:
        raise InputError.bad("steps", "an integer in [1, 10^12] (releases)", steps)
    steps = int(steps)
    accountant = check_choice(accountant, "accountant", _accounting.ACCOUNTANTS)
    return delta, steps, accountant
