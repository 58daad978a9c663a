"""calibrate / dsi_epsilon against dp-accounting's PLD accountant and the paper's table."""

import math
import warnings

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import norm

from trustlab.privacy import calibrate, dsi_epsilon
from trustlab.privacy._accounting import gaussian_delta

# Published by Xiao, Yang & Suh (2025) for epsilon = 1..8 at delta = 1e-5 (the authors' code).
PAPER_MULTIPLIERS = [4.90056, 2.49929, 1.69768, 1.29608, 1.05453, 0.893066, 0.777387, 0.69035]


def pld_epsilon(multiplier, steps, delta):
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(multiplier), steps))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("epsilon", range(1, 9))
def test_paper_accountant_reproduces_the_authors_multipliers(epsilon):
    calibration = calibrate(epsilon, 1e-5, accountant="paper")
    assert calibration.noise_multiplier == pytest.approx(PAPER_MULTIPLIERS[epsilon - 1], abs=1e-5)
    s = calibration.noise_multiplier
    assert 1 / (2 * s**2) + math.sqrt(2 * math.log(1e5)) / s == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize("multiplier", [PAPER_MULTIPLIERS[0], PAPER_MULTIPLIERS[3], 0.69035])
def test_exact_accountant_agrees_with_dp_accounting_pld(multiplier):
    ours = dsi_epsilon(multiplier, 1e-5)
    assert ours == pytest.approx(pld_epsilon(multiplier, 1, 1e-5), abs=1e-3)


@pytest.mark.parametrize(("multiplier", "steps"), [(5.0, 4), (12.0, 30)])
def test_exact_accountant_composes_like_dp_accounting(multiplier, steps):
    ours = dsi_epsilon(multiplier, 1e-5, steps)
    assert ours == pytest.approx(pld_epsilon(multiplier, steps, 1e-5), abs=1e-3)


@pytest.mark.parametrize("epsilon", [1.0, 4.0, 8.0])
def test_paper_accountant_overstates_epsilon(epsilon):
    multiplier = calibrate(epsilon, 1e-5, steps=3, accountant="paper").noise_multiplier
    assert pld_epsilon(multiplier, 3, 1e-5) <= epsilon
    assert dsi_epsilon(multiplier, 1e-5, 3) < epsilon
    exact = calibrate(epsilon, 1e-5, steps=3).noise_multiplier
    assert exact < multiplier


@settings(max_examples=30, deadline=None)
@given(
    epsilon=st.floats(0.05, 20.0),
    log_delta=st.floats(-12.0, -2.0),
    steps=st.integers(1, 500),
    accountant=st.sampled_from(["exact", "paper"]),
)
def test_calibrate_and_dsi_epsilon_are_inverse(epsilon, log_delta, steps, accountant):
    delta = 10.0**log_delta
    multiplier = calibrate(epsilon, delta, steps, accountant).noise_multiplier
    assert dsi_epsilon(multiplier, delta, steps, accountant) == pytest.approx(epsilon, rel=1e-8)


@settings(max_examples=30, deadline=None)
@given(
    epsilon=st.floats(0.05, 20.0),
    log_delta=st.floats(-12.0, -2.0),
    steps=st.integers(2, 500),
    accountant=st.sampled_from(["exact", "paper"]),
)
def test_per_release_epsilon_is_one_release_under_the_same_accountant(
    epsilon, log_delta, steps, accountant
):
    """One release of a multi-step calibration spends less than the whole budget, under either
    accountant (the paper accountant reported the composed epsilon as the per-release one)."""
    delta = 10.0**log_delta
    result = calibrate(epsilon, delta, steps, accountant)
    one = dsi_epsilon(result.noise_multiplier, delta, 1, accountant)
    assert result.per_release_epsilon == pytest.approx(one, rel=1e-12)
    assert result.per_release_epsilon < epsilon


@settings(max_examples=20, deadline=None)
@given(epsilon=st.floats(0.0, 6.0), mu=st.floats(0.05, 4.0))
def test_gaussian_delta_equals_the_privacy_loss_integral(epsilon, mu):
    """delta(eps) = E[(1 - e^(eps - L))_+] with the privacy loss L ~ N(mu^2/2, mu^2)."""

    def integrand(loss):
        return (1 - math.exp(epsilon - loss)) * norm.pdf(loss, mu**2 / 2, mu)

    expected = integrate.quad(integrand, epsilon, mu**2 / 2 + 40 * mu, epsabs=1e-14)[0]
    assert gaussian_delta(epsilon, mu) == pytest.approx(expected, rel=1e-6, abs=1e-13)


def test_steps_scale_the_multiplier_by_their_square_root():
    one = calibrate(2.0, 1e-6, 1).noise_multiplier
    assert calibrate(2.0, 1e-6, 9).gdp_mu == pytest.approx(calibrate(2.0, 1e-6, 1).gdp_mu)
    assert calibrate(2.0, 1e-6, 9).noise_multiplier == pytest.approx(3 * one, rel=1e-12)
    paper = calibrate(2.0, 1e-6, 1, "paper").noise_multiplier
    assert calibrate(2.0, 1e-6, 16, "paper").noise_multiplier == pytest.approx(4 * paper)


def test_calibration_to_dict_names_the_accountant():
    data = calibrate(3.0, 1e-5, 10, "paper").to_dict()
    assert data["accountant"] == "paper" and data["steps"] == 10
    assert all(isinstance(v, (int, float, str)) for v in data.values())
    assert np.isfinite(data["noise_multiplier"])


# Issue 18, section 4: extreme budgets are refused with the range, or calibrated exactly, and no
# solver warning ("Failed to converge", overflow) reaches the caller.


@pytest.mark.parametrize(
    ("kwargs", "argument", "range_text"),
    [
        ({"epsilon": 1e308, "delta": 1e-5}, "epsilon", "(0, 100]"),
        ({"epsilon": math.nan, "delta": 1e-5}, "epsilon", "(0, 100]"),
        ({"epsilon": 1.0, "delta": 1e-5, "steps": 10**15}, "steps", "[1, 10^12]"),
        ({"epsilon": 1e-300, "delta": 1e-5, "accountant": "paper"}, "epsilon", "1e+100"),
    ],
)
def test_extreme_values_are_refused_naming_the_range(kwargs, argument, range_text):
    from trustlab.errors import InputError

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError) as info:
            calibrate(**kwargs)
    assert info.value.argument == argument and range_text in str(info.value)


@pytest.mark.parametrize(
    ("epsilon", "delta", "steps"),
    [(100.0, 1e-5, 1), (1e-12, 1e-5, 1), (1.0, 1e-300, 1), (1.0, 0.999999, 1),
     (1e-8, 1e-300, 1), (1.0, 1e-5, 10**12), (1e-6, 1 - 1e-10, 1)],
)  # fmt: skip
def test_extreme_but_valid_budgets_calibrate_exactly_without_warnings(epsilon, delta, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calibration = calibrate(epsilon, delta, steps)
        back = dsi_epsilon(calibration.noise_multiplier, delta, steps)
    assert math.isfinite(calibration.noise_multiplier) and calibration.noise_multiplier > 0
    assert back == pytest.approx(epsilon, rel=1e-6, abs=1e-12)


def test_the_summary_does_not_round_delta_to_one():
    # :g printed "(0.5, 1)-DSI" for delta = 0.9999999, a delta the calibration refuses
    from trustlab.privacy import calibrate

    text = calibrate(0.5, 0.9999999).summary()
    assert "(0.5, 0.9999999)-DSI" in text
    assert "(2, 1e-05)-DSI" in calibrate(2.0, 1e-5).summary()
