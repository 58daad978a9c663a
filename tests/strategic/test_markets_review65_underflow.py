"""Review 65: a user whose budget per distance b_i / u_i underflows to 0 (budget 1e-320 at
distance 1e10) buys only at price 0, like a user with no budget, and adds no candidate price.
It added a price group at 0: MarketResult.revenue_at(0) and revenue_curve() divided 0 by 0
(NaN, 'invalid value encountered in divide'), and when no other user could pay market_price chose
price 0, at which the rejected user with budget 0 bought too (no market forms: price inf)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from trustlab.strategic import market_price


def _quiet(*args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = market_price(*args)
        return result, result.revenue_at(0.0), result.revenue_curve()


def test_an_underflowing_budget_per_distance_adds_no_price_group():
    result, at_zero, (xs, ys) = _quiet([1.0], 0.0, [[-1e10], [-1.0], [-2.0]], [1e-320, 1.0, 0.0])
    assert result.curve_prices.tolist() == [1.0] and result.price == 1.0
    assert result.buyers.tolist() == [False, True, False]
    assert at_zero == 0.0 and np.isfinite(xs).all() and np.isfinite(ys).all()


def test_only_underflowing_budgets_form_no_market():
    result, at_zero, _ = _quiet([1.0], 0.0, [[-1e10], [-2.0]], [1e-320, 0.0])
    assert result.price == math.inf and not result.market_forms
    assert result.predictions.tolist() == [0, 0] and at_zero == 0.0
