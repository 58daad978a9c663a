"""Noise calibration of DSI: the multiplier for ``(epsilon, delta)`` over several releases.

Once DSI has normalised every Mahalanobis distance to at most 1, each release is a Gaussian
mechanism with sensitivity 1; :func:`calibrate` turns ``(epsilon, delta, steps)`` into its noise
multiplier and :func:`dsi_epsilon` goes back. The two accountants are in ``_accounting``.
"""

from __future__ import annotations

import math

from trustlab._checks import check_choice, check_positive, check_positive_int, check_probability
from trustlab.privacy import _accounting
from trustlab.privacy.results import NoiseCalibration

__all__ = ["calibrate", "dsi_epsilon"]


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
    epsilon = check_positive(epsilon, "epsilon")
    delta, steps, accountant = _check_composition(delta, steps, accountant)
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
    if accountant == "paper":
        return _accounting.paper_epsilon(multiplier / math.sqrt(steps), delta)
    return _accounting.exact_epsilon(math.sqrt(steps) / multiplier, delta)


def _check_composition(delta, steps, accountant) -> tuple[float, int, str]:
    delta = check_probability(delta, "delta")
    steps = check_positive_int(steps, "steps")
    accountant = check_choice(accountant, "accountant", _accounting.ACCOUNTANTS)
    return delta, steps, accountant
