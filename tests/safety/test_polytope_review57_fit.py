"""Review 57: standardising activations of extreme magnitude neither overflows nor vanishes."""

import warnings

import numpy as np
import pytest

from trustlab.safety import SafetyPolytope


@pytest.mark.parametrize("factor", [1e200, 1e-200])
def test_fit_is_scale_invariant_at_extreme_magnitudes(factor):
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(size=(30, 3)), rng.normal(size=(30, 3)) + [3.0, 0.0, 0.0]])
    y = np.r_[np.zeros(30), np.ones(30)]
    plain = SafetyPolytope(n_facets=2, max_epochs=2, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = SafetyPolytope(n_facets=2, max_epochs=2, random_state=0).fit(X * factor, y)
    # old: 1e200: the squares in X.std overflowed (a RuntimeWarning, scale inf), 1e-200: they
    # vanished (scale 0, taken for a constant coordinate); either way every row scored the same
    np.testing.assert_allclose(scaled.scale_, plain.scale_ * factor, rtol=1e-12)
    np.testing.assert_allclose(scaled.violations(X * factor), plain.violations(X), atol=1e-9)
