"""Review 59: one power-of-2 prescaling helper, shared by column_mean_scale and the transfer
map's metrics and standardisation (mapping.py had a second copy, _power_of_2)."""

import numpy as np

from trustlab import _numerics
from trustlab._numerics import column_mean_scale, power_of_2
from trustlab.safety.transfer import mapping


def test_power_of_2_brackets_every_positive_finite_magnitude():
    rng = np.random.default_rng(59)
    m = np.abs(rng.standard_normal(20000)) * 10.0 ** rng.uniform(-320, 307, 20000)
    m = np.concatenate([m[(m > 0) & np.isfinite(m)], [5e-324, 2.2250738585072014e-308, 1.0]])
    m = np.concatenate([m, [np.finfo(np.float64).max]])
    size = power_of_2(m)
    # a power of 2 (mantissa 0.5) with size <= m < 2 size, also for subnormals and the float max
    assert np.all(np.frexp(size)[0] == 0.5)
    ratio = m / size  # exact: size is a power of 2
    assert np.all((ratio >= 1) & (ratio < 2))


def test_power_of_2_is_1_at_zero_and_non_finite_magnitudes():
    assert power_of_2(np.array([0.0, np.inf, np.nan])).tolist() == [1.0, 1.0, 1.0]
    assert float(power_of_2(3.0)) == 2.0


def test_column_mean_scale_and_the_transfer_map_share_the_one_helper():
    assert mapping.power_of_2 is _numerics.power_of_2
    assert not hasattr(mapping, "_power_of_2")


def test_column_mean_scale_is_the_plain_mean_and_std_on_ordinary_and_zero_columns():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 4)) * [1.0, 3.0, 1e-3, 0.0]
    mean, scale = column_mean_scale(X)
    # dividing by a power of 2 and multiplying back is exact: equal to the last bit
    np.testing.assert_array_equal(mean, X.mean(axis=0))
    np.testing.assert_array_equal(scale[:3], X.std(axis=0)[:3])
    assert scale[3] == 1.0  # the zero column is constant: unscaled
