"""Review pass 52: what the DSI summary and result.json say about the noise and the guarantee."""

import json

import numpy as np
import pytest

from trustlab.privacy import dsi_epsilon, dsi_noise

DELTAS = np.array([[1.0, 0.0], [0.3, 2.0]])


def test_summary_states_the_noise_added_and_that_it_is_not_dp():
    # it printed the unit Sigma's trace and std only: the noise added is the multiplier times that
    noise = dsi_noise(DELTAS, epsilon=1.0, delta=1e-5, steps=3)
    s = noise.calibration.noise_multiplier
    text = noise.summary()
    assert f"expected squared norm {s**2 * noise.covariance.trace:.6g}" in text
    assert f"largest std {s * noise.covariance.max_std:.4g}" in text
    assert "not differential privacy" in text
    assert "budgets" not in text


def test_budgets_are_recorded_and_the_worst_difference_s_epsilon_reported():
    noise = dsi_noise(DELTAS, epsilon=1.0, delta=1e-5, steps=3, budgets=[1.0, 4.0])
    s = noise.calibration.noise_multiplier
    worst = dsi_epsilon(s / 2.0, 1e-5, 3)  # budget 4, binding: Mahalanobis distance 2
    assert noise.worst_epsilon == pytest.approx(worst, rel=1e-6) and worst > 2
    data = json.loads(json.dumps(noise.to_dict()))
    assert data["covariance"]["budgets"] == [1.0, 4.0]
    assert data["worst_epsilon"] == pytest.approx(worst, rel=1e-6)
    assert f"worst difference gets epsilon {noise.worst_epsilon:.6g}" in noise.summary()


@pytest.mark.parametrize("accountant", ["exact", "paper"])
def test_without_budgets_the_worst_epsilon_is_the_target(accountant):
    noise = dsi_noise(DELTAS, epsilon=2.0, delta=1e-6, steps=5, accountant=accountant)
    assert noise.worst_epsilon == pytest.approx(2.0, rel=1e-9)
    assert noise.worst_epsilon <= 2.0  # never above the target by a round trip's ulp


def test_the_worst_epsilon_never_exceeds_the_target_by_rounding():
    rng = np.random.default_rng(3)
    for i in range(30):
        deltas = rng.normal(size=(int(rng.integers(1, 8)), int(rng.integers(1, 6))))
        deltas = np.unique(deltas, axis=0)
        epsilon = float(rng.uniform(0.1, 5))
        noise = dsi_noise(
            deltas,
            epsilon=epsilon,
            delta=1e-5,
            steps=int(rng.integers(1, 50)),
            accountant=("exact", "paper")[i % 2],
        )
        assert noise.worst_epsilon <= epsilon
    assert noise.to_dict()["covariance"]["budgets"] == [1.0, 1.0]


def test_budgets_below_one_give_a_worst_epsilon_below_the_target():
    noise = dsi_noise(DELTAS, epsilon=1.0, delta=1e-5, budgets=[0.25, 0.5])
    assert noise.worst_epsilon < 1.0
    assert noise.worst_epsilon == pytest.approx(
        dsi_epsilon(noise.calibration.noise_multiplier / np.sqrt(0.5), 1e-5), rel=1e-6
    )


def test_the_plot_says_its_stds_are_of_the_unit_sigma():
    import matplotlib.pyplot as plt

    ax = dsi_noise(DELTAS, epsilon=1.0, delta=1e-5).covariance.plot()
    assert "multiplier" in ax.get_ylabel()  # it read "noise standard deviation"
    plt.close(ax.figure)
