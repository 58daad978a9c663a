"""dsi_noise: the solver, the calibration and the release in one result, saved as files."""

import json

import numpy as np
import pytest

from trustlab._results import write_outputs
from trustlab.errors import InputError
from trustlab.privacy import DSINoise, calibrate, dsi_noise, optimal_gaussian_covariance

COVARIANCE_KEYS = {
    "dim",
    "rank",
    "n_differences",
    "trace",
    "max_std",
    "worst_slack",
    "duality_gap",
    "isotropic_span_trace",
    "isotropic_full_trace",
    "gain",
    "full_gain",
    "span_residual",
    "iterations",
    "converged",
    "constraint_values",
    "multipliers",
    "budgets",
}
CALIBRATION_KEYS = {
    "epsilon",
    "delta",
    "steps",
    "accountant",
    "noise_multiplier",
    "per_release_epsilon",
    "gdp_mu",
}


@pytest.fixture(scope="module")
def deltas():
    return np.random.default_rng(0).normal(size=(6, 9))


def test_noise_is_the_covariance_scaled_by_the_calibration(deltas):
    noise = dsi_noise(deltas, epsilon=2.0, delta=1e-5, steps=3, accountant="paper")
    covariance = optimal_gaussian_covariance(deltas)
    calibration = calibrate(2.0, 1e-5, 3, "paper")
    assert isinstance(noise, DSINoise) and noise.release is None
    assert noise.covariance.trace == pytest.approx(covariance.trace, rel=1e-12)
    assert noise.calibration == calibration
    expected = covariance.trace * calibration.noise_multiplier**2
    assert noise.expected_noise_squared_norm == pytest.approx(expected, rel=1e-12)
    assert "not differential privacy" in noise.guarantee


def test_release_is_the_output_plus_one_seeded_draw(deltas):
    output = np.arange(9.0).reshape(3, 3)
    noise = dsi_noise(deltas, epsilon=1.0, delta=1e-6, output=output, random_state=4)
    draw = noise.covariance.sample(scale=noise.calibration.noise_multiplier, random_state=4)
    assert noise.release.shape == (3, 3)
    np.testing.assert_array_equal(noise.release, output + draw.reshape(3, 3))
    again = dsi_noise(deltas, epsilon=1.0, delta=1e-6, output=output, random_state=4)
    np.testing.assert_array_equal(again.release, noise.release)


def test_dict_keeps_the_keys_of_the_former_dsi_json(deltas):
    data = dsi_noise(deltas, epsilon=2.0, delta=1e-5, output=np.zeros(9)).to_dict()
    assert list(data) == [
        "covariance",
        "calibration",
        "expected_noise_squared_norm",
        "worst_epsilon",
        "guarantee",
    ]
    assert set(data["covariance"]) == COVARIANCE_KEYS
    assert set(data["calibration"]) == CALIBRATION_KEYS
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_saved_files_reproduce_sigma_and_the_release(deltas, tmp_path):
    noise = dsi_noise(deltas, epsilon=2.0, delta=1e-5, output=np.ones(9), random_state=0)
    names = sorted(p.name for p in write_outputs(noise, tmp_path))
    assert names == ["basis.npy", "factor.npy", "release.npy", "result.json"]
    basis, factor = np.load(tmp_path / "basis.npy"), np.load(tmp_path / "factor.npy")
    sigma = basis @ factor @ factor.T @ basis.T
    np.testing.assert_allclose(sigma, noise.covariance.covariance(), atol=1e-12)
    np.testing.assert_array_equal(np.load(tmp_path / "release.npy"), noise.release)
    assert json.loads((tmp_path / "result.json").read_text()) == noise.to_dict()
    without = dsi_noise(deltas, epsilon=2.0, delta=1e-5)
    assert set(without.files()) == {"basis.npy", "factor.npy"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(output=np.zeros(8)), r"output: expected 9 values"),
        (dict(output=[np.nan] * 9), r"output: expected finite"),
        (dict(random_state="seed"), r"random_state: expected None, an int seed"),
        (dict(epsilon=-1.0), r"epsilon: expected a number in"),
        (dict(tol=0.0), r"tol: expected a number in \(0, 1\)"),
        (dict(budgets=[1.0, 2.0]), r"budgets: expected one budget per difference \(6\)"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(deltas, kwargs, message):
    with pytest.raises(InputError, match=message):
        dsi_noise(deltas, **{"epsilon": 1.0, "delta": 1e-5, **kwargs})


@pytest.mark.parametrize("scale", [np.nan, np.inf, -1.0, "2"])
def test_sample_refuses_a_scale_that_is_not_a_finite_non_negative_number(deltas, scale):
    # NaN and inf gave NaN draws without a word; a string a numpy UFuncTypeError
    covariance = optimal_gaussian_covariance(deltas)
    with pytest.raises(InputError, match=r"^scale: expected a number"):
        covariance.sample(scale=scale, random_state=0)
    assert np.all(covariance.sample(scale=0.0, random_state=0) == 0)


def test_a_budget_scales_that_difference_s_guarantee_as_documented():
    """The reported (epsilon, delta) is for budget 1; budget c_i gives the guarantee of multiplier
    s / sqrt(c_i) (docs/privacy-dsi.md), looser for c_i > 1: nothing said so before."""
    from trustlab.privacy import dsi_epsilon, dsi_noise

    deltas = np.array([[1.0, 0.0], [0.3, 2.0]])
    noise = dsi_noise(deltas, epsilon=1.0, delta=1e-5, steps=3, budgets=[1.0, 4.0])
    s = noise.calibration.noise_multiplier
    distances = noise.covariance.mahalanobis(deltas)
    assert distances == pytest.approx([1.0, 2.0], rel=1e-6)
    epsilons = [dsi_epsilon(s / d, 1e-5, 3) for d in distances]
    assert epsilons[0] == pytest.approx(1.0, rel=1e-6)
    assert epsilons[1] == pytest.approx(dsi_epsilon(s / 2.0, 1e-5, 3), rel=1e-5) and epsilons[1] > 2
