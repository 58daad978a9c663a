"""Review 59: pins two results no test looked at (a mutation of either passed every market test).

- At a scalar price every feature with a positive weight is equally cheap per unit of score and
  the first of them is bought; the tests drew populations whose first weight was positive, so
  buying the first feature of all (a negative-weight one, a negative amount) went unseen.
- ``MarketResult.revenue_curve`` (the plotted saw-tooth): only its maximum was checked, so wrong
  vertices after each drop went unseen. Between two vertices the curve is ``rho * demand``,
  linear, so interpolating the polyline must give ``revenue_at``."""

import numpy as np
import pytest

from trustlab.strategic import best_response, market_price


def test_scalar_price_buys_the_first_positive_weight_feature():
    w = np.array([-1.0, 0.0, 2.0, 2.0])
    X = np.array([[0.0, 0.0, 0.0, 0.0], [3.0, 1.0, 0.25, 0.0], [0.0, 0.0, 1.0, 1.0]])
    br = best_response(w, -2.0, X, [10.0, 10.0, 10.0], 1.5)
    assert br.buys.tolist() == [True, True, False]
    # the missing score (2 and 4.5) bought as feature 2 (weight 2), nothing else
    assert br.purchases.tolist() == [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 2.25, 0.0], [0.0] * 4]
    np.testing.assert_allclose((br.X_after @ w - 2.0)[br.buys], 0.0, atol=1e-15)
    per_feature = 1.5 * np.maximum(w, 0.0) / np.linalg.norm(w)
    np.testing.assert_allclose(br.purchases @ per_feature, np.where(br.buys, br.cost, 0.0))


@pytest.mark.parametrize("seed", [None, 0, 1])
def test_revenue_curve_polyline_is_the_revenue(seed):
    if seed is None:  # the spec's worked example: vertices at 0.5, 1, 2, 4
        w, X, b = [1.0], [[-1.0], [-2.0], [-0.5], [1.0]], [2.0, 2.0, 2.0, 1.0]
    else:
        rng = np.random.default_rng(seed)
        w, X, b = [1.0, 0.5], rng.normal(size=(40, 2)), rng.lognormal(size=40)
    res = market_price(w, 0.0, X, b)
    xs, ys = res.revenue_curve()
    assert np.all(np.diff(xs) >= 0)
    for i in range(xs.size - 1):
        if xs[i] == xs[i + 1]:  # the drop at a price: the revenue there, then just above it
            above = res.revenue_at(float(np.nextafter(xs[i], np.inf)))
            assert (ys[i], ys[i + 1]) == pytest.approx((res.revenue_at(xs[i]), above), rel=1e-12)
        else:  # linear in between: the midpoint of the segment is the revenue there
            mid = 0.5 * (xs[i] + xs[i + 1])
            assert 0.5 * (ys[i] + ys[i + 1]) == pytest.approx(res.revenue_at(mid), rel=1e-12)
