"""Review 65: dual multipliers past the float range are inf without a warning."""

import warnings

import numpy as np

from trustlab.privacy import optimal_gaussian_covariance


def test_multipliers_past_float64_are_inf_without_a_warning():
    # difference 1e100 with budget 1e-100: Sigma 1e300 and a multiplier of 1e400 (the CLI printed
    # 'trustlab: warning: overflow encountered in divide' for it)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cov = optimal_gaussian_covariance([[1e100, 0.0], [0.0, 1e100]], budgets=[1e-100, 1e-100])
    assert np.isinf(cov.multipliers).all()
    np.testing.assert_allclose(cov.trace, 2e300, rtol=1e-9)
