"""Review 65: group_gradient_differences of gradients sharing a large common part."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import group_gradient_differences


def test_a_common_part_does_not_cost_the_differences_their_digits():
    rng = np.random.default_rng(0)
    spread = rng.integers(-20, 21, size=(40, 2)) / 1024.0  # multiples of 2^-10, |x| < 0.02
    shared = spread + 2.0**40  # exact: 2^40 + k 2^-10 needs 51 bits
    groups = rng.integers(0, 5, size=40)
    _, expected = group_gradient_differences(spread, groups)
    _, got = group_gradient_differences(shared, groups)
    # the differences do not change under a common shift; the old sums kept ~1e-4 absolute of
    # differences ~1e-3 (10% off); now they agree to rounding of the spread alone
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-15)


def test_huge_gradients_give_their_differences_or_an_error():
    _, got = group_gradient_differences([[1e308], [1e308], [6.0]], [0, 0, 1])  # sums overflowed
    np.testing.assert_allclose(got.ravel(), [1e308 / 1.5, -1e308 / 3], rtol=1e-12)
    with pytest.raises(InputError, match="per_sample"):
        group_gradient_differences([[1.7e308], [1.7e308], [-1.7e308]], [0, 1, 2])
