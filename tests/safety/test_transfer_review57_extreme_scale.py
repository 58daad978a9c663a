"""ActivationMap on source activations of extreme magnitude (review 57, second reviewer diffC):
the source standardisation squared raw activations, as SafetyPolytope.fit did before 02891aa,
so around 1e200 a numpy overflow warning leaked and the scale was inf, around 1e-200 every
coordinate counted as constant: either way the trained map ignored its input (held-out R^2
0.65 -> -0.02). Scaling the source by a power of 2 now gives the same map, scaled back."""

import warnings

import numpy as np
import pytest

from trustlab.safety.transfer import ActivationMap


@pytest.mark.parametrize("power", [700, -700])
def test_a_source_scaled_by_a_power_of_2_gives_the_same_map(power):
    rng = np.random.default_rng(41)
    source = rng.normal(size=(60, 3))
    target = source @ rng.normal(size=(3, 2)) + 1.0
    settings = {"kind": "affine", "solver": "adam", "batch_size": 16, "max_epochs": 3}
    plain = ActivationMap(**settings).fit(source, target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the overflow in the squares leaked as a RuntimeWarning
        scaled = ActivationMap(**settings).fit(np.ldexp(source, power), target)
    np.testing.assert_allclose(np.ldexp(scaled.coef_, power), plain.coef_, rtol=1e-12)
    np.testing.assert_allclose(scaled.intercept_, plain.intercept_, rtol=1e-12)
    assert scaled.fit_.held_out_r2 == pytest.approx(plain.fit_.held_out_r2, rel=1e-9)
