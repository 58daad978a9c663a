"""Bad input is refused with errors naming the argument, what was expected and what came."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import calibrate, dsi_epsilon, optimal_gaussian_covariance


def test_zero_difference_is_refused():
    with pytest.raises(InputError, match=r"deltas: expected non-zero.*index 1"):
        optimal_gaussian_covariance([[1.0, 2.0], [0.0, 0.0]])


def test_duplicated_difference_is_refused():
    with pytest.raises(InputError, match="deltas: expected distinct differences"):
        optimal_gaussian_covariance([[1.0, 2.0], [3.0, 1.0], [1.0, 2.0]])


def test_dimension_mismatch_is_refused():
    with pytest.raises(InputError, match="deltas"):
        optimal_gaussian_covariance([[1.0, 2.0], [3.0]])
    with pytest.raises(InputError, match="deltas: expected a 2-dimensional array"):
        optimal_gaussian_covariance([1.0, 2.0])
    with pytest.raises(InputError, match=r"budgets: expected one budget per difference \(2\)"):
        optimal_gaussian_covariance([[1.0, 0.0], [0.0, 1.0]], budgets=[1.0])
    cov = optimal_gaussian_covariance([[1.0, 0.0, 0.0]])
    with pytest.raises(InputError, match="deltas: expected rows of length 3"):
        cov.mahalanobis([[1.0, 0.0]])


def test_non_finite_and_non_positive_budgets_are_refused():
    with pytest.raises(InputError, match="deltas: expected finite"):
        optimal_gaussian_covariance([[1.0, np.nan]])
    with pytest.raises(InputError, match="budgets: expected positive"):
        optimal_gaussian_covariance([[1.0, 0.0]], budgets=[0.0])


@pytest.mark.parametrize("epsilon", [0.0, -1.0, float("nan"), float("inf")])
def test_non_positive_epsilon_is_refused(epsilon):
    with pytest.raises(InputError, match="epsilon: expected a number in"):
        calibrate(epsilon, 1e-5)


def test_bad_delta_steps_accountant_are_refused():
    with pytest.raises(InputError, match="delta"):
        calibrate(1.0, 0.0)
    with pytest.raises(InputError, match=r"steps: expected an integer in \[1, 10\^12\]"):
        calibrate(1.0, 1e-5, steps=0)
    with pytest.raises(InputError, match="accountant: expected one of 'exact', 'paper'"):
        calibrate(1.0, 1e-5, accountant="rdp")
    with pytest.raises(InputError, match="noise_multiplier"):
        dsi_epsilon(0.0, 1e-5)
    with pytest.raises(InputError, match="max_iter"):
        optimal_gaussian_covariance([[1.0]], max_iter=0)


@pytest.mark.parametrize(
    "deltas",
    [[[1.0, 0.0], [0.0, 1e-11]], [[1e6, 0.0, 0.0], [1.0, 1e-5, 0.0], [0.0, 0.0, 3.0]]],
    ids=["small-difference", "nearly-parallel-small-part"],
)
def test_a_difference_that_no_noise_would_cover_is_refused(deltas):
    """A direction below 1e-10 of the largest singular value was dropped as rounding error, so
    it got no noise, yet its constraint value and the worst slack were reported as 0 (held)."""
    from trustlab.privacy import dsi_noise

    with pytest.raises(InputError, match=r"^deltas: expected differences within 1e\+10 .*no noise"):
        dsi_noise(deltas, epsilon=1.0, delta=1e-5, output=[0.0] * len(deltas[0]), random_state=0)
    with pytest.raises(InputError, match="^deltas: "):
        optimal_gaussian_covariance(deltas)


def test_a_part_below_rounding_of_a_difference_is_still_dropped():
    cov = optimal_gaussian_covariance([[1.0, 0.0], [1.0, 1e-17], [0.0, 1.0]])
    assert cov.worst_slack >= -1e-9 and cov.basis.shape[1] == 2
