"""Review 65: DSICovariance.mahalanobis of the differences a tiny Sigma was solved for."""

import numpy as np
import pytest

from trustlab.privacy import optimal_gaussian_covariance


@pytest.mark.parametrize("small", [1e-104, 1e-109])
def test_distance_of_own_differences_with_a_tiny_sigma_is_finite(small):
    # Sigma's eigenvalues are ~1e-300 and below: the whitened coordinates reach ~1e155, whose
    # squares overflowed, so the distance came out inf (a difference "leaving the span")
    deltas = np.array([[1e-100, 0.0], [0.0, small]])
    budgets = np.array([1e100, 1e100])
    cov = optimal_gaussian_covariance(deltas, budgets=budgets)
    squared = cov.mahalanobis(deltas) ** 2 / budgets
    # the solver's own constraint values, to the solver's rounding (rel 1e-6 is far above it)
    np.testing.assert_allclose(squared, cov.constraint_values, rtol=1e-6)
