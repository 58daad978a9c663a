"""The public Clopper-Pearson bounds refuse arguments outside their domain (they returned NaN,
or a number that bounds nothing, without a word) and still equal statsmodels inside it."""

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from trustlab.errors import InputError
from trustlab.robustness import clopper_pearson_lower, clopper_pearson_upper

BOUNDS = [clopper_pearson_lower, clopper_pearson_upper]


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize(
    ("args", "argument", "expected"),
    [
        ((5, 10, 2.0), "alpha", "numbers in (0, 1)"),
        ((5, 10, -1.0), "alpha", "numbers in (0, 1)"),
        ((5, 10, 0.0), "alpha", "numbers in (0, 1)"),
        ((5, 10, np.nan), "alpha", "finite numbers"),
        ((11, 10, 0.05), "successes", "at most trials"),
        ((-1, 10, 0.05), "successes", "whole numbers >= 0"),
        ((3.5, 10, 0.05), "successes", "whole numbers >= 0"),
        (("a", 10, 0.05), "successes", "numbers"),
        ((True, 10, 0.05), "successes", "numbers"),
        ((0, 0, 0.05), "trials", "whole numbers >= 1"),
        ((5, "10", 0.05), "trials", "numbers"),
        (([1, 12], [10, 10], 0.05), "successes", "at most trials"),
        (([1, 2, 3], [10, 10], 0.05), "successes", "broadcast together"),
    ],
)
def test_arguments_outside_the_domain_are_refused_by_name(bound, args, argument, expected):
    with pytest.raises(InputError, match=f"^{argument}") as caught:
        bound(*args)
    assert caught.value.argument == argument
    assert expected in str(caught.value)


@pytest.mark.parametrize("seed", [54, 55])
def test_inside_the_domain_the_bounds_equal_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 5_000, size=200)
    k = rng.integers(0, n + 1)
    alpha = rng.uniform(1e-6, 0.4, size=200)
    low, high = proportion_confint(k, n, alpha=2 * alpha, method="beta")
    np.testing.assert_allclose(clopper_pearson_lower(k, n, alpha), low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clopper_pearson_upper(k, n, alpha), high, rtol=0, atol=1e-12)
    # whole numbers held as floats are counts too
    assert clopper_pearson_lower(float(k[0]), float(n[0]), alpha[0]) == pytest.approx(
        low[0], abs=1e-12
    )
