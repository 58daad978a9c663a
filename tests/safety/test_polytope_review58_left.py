"""Review 58 (left): SafetyPolytope.fit on activations near the largest float (1.7e308).

column_mean_scale divided each column by 2^e with 2^(e-1) <= max|x| < 2^e: for max|x| >= 2^1023
that power of 2 overflowed to inf and the mean came out NaN (fit then failed inside KMeans);
and ``X - mean`` overflowed where a value and its column mean have opposite signs near 1e308."""

import warnings

import numpy as np
import pytest

from trustlab._numerics import column_mean_scale
from trustlab.safety import SafetyPolytope


def _data(seed):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + [3.0, 0.0, 0.0]])
    X[:, 2] = np.where(np.arange(40) < 37, 1.0, -1.0)  # its mean 0.85: -1 - 0.85 passes 1.8e308
    X[:, :2] *= 0.2
    return X / np.abs(X).max(), np.r_[np.zeros(20), np.ones(20)]


@pytest.mark.parametrize("top", [1.7e308, 2.0**1023])
def test_fit_near_the_largest_float_equals_the_fit_on_unit_data(top):
    X, y = _data(58)
    plain = SafetyPolytope(n_facets=2, max_epochs=2, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = SafetyPolytope(n_facets=2, max_epochs=2, random_state=0).fit(X * top, y)
        np.testing.assert_allclose(big.scale_, plain.scale_ * top, rtol=1e-12)
        np.testing.assert_allclose(big.violations(X * top), plain.violations(X), atol=1e-9)


def test_column_mean_scale_is_numpy_s_mean_and_std_on_ordinary_data():
    rng = np.random.default_rng(5858)
    for _ in range(20):
        X = rng.standard_t(3, size=(int(rng.integers(1, 30)), 4)) * 10.0 ** rng.uniform(-6, 6, 4)
        mean, scale = column_mean_scale(X)
        std = X.std(axis=0)
        std[std <= 1e-12 * np.abs(X).max()] = 1.0
        assert np.array_equal(mean, X.mean(axis=0)) and np.array_equal(scale, std)
