"""Review 59: the market of ``w`` scaled by a tiny or huge constant (the same classifier).

``||w||`` was ``np.linalg.norm(w)``, rescaled only when ``||w||^2`` underflowed to exactly 0: for
``w`` near 1e-160 the squares are subnormal floats with few bits, and ``w = [1.585e-162]`` put
every distance 29% short (price 1.40 instead of 1). The soft price recomputed the distances with
torch's unscaled norm: 0 for ``w = [1e-200, 5e-201]`` (refused as a revenue overflow) and inf for
``1e160`` (a soft price of inf, "no market", where the hard price is 1.118)."""

import numpy as np
import pytest

from trustlab.strategic import market_price, soft_market_price

X = np.array([[-1.0, 0.0], [-2.0, 0.0], [-0.5, 0.0], [1.0, 0.0]])
BUDGETS = [2.0, 2.0, 2.0, 1.0]
W = np.array([1.0, 0.5])
# float64 keeps about 1e-16 per operation; a handful of operations stay within 1e-14
RTOL = 1e-14


@pytest.mark.parametrize("scale", [1e-155, 1e-158, 1e-160, 1.585e-162, 1e-200])
def test_distances_and_price_do_not_depend_on_the_scale_of_w(scale):
    same = market_price(W, 0.0, X, BUDGETS)
    res = market_price(W * scale, 0.0, X, BUDGETS)
    np.testing.assert_allclose(res.distances, same.distances, rtol=RTOL)
    assert res.price == pytest.approx(same.price, rel=RTOL)
    np.testing.assert_allclose(res.feature_prices, same.feature_prices, rtol=RTOL)


@pytest.mark.parametrize("scale", [1e-160, 1e-200, 1e160, 1e200, 1e300])
def test_soft_price_does_not_depend_on_the_scale_of_w(scale):
    pytest.importorskip("torch")
    same = soft_market_price(W, 0.0, X, BUDGETS, sort_temperature=1e-4, softmax_scale=1e3)
    soft = soft_market_price(W * scale, 0.0, X, BUDGETS, sort_temperature=1e-4, softmax_scale=1e3)
    assert soft == pytest.approx(same, rel=RTOL)
    assert same == pytest.approx(market_price(W, 0.0, X, BUDGETS).price, rel=1e-3)
