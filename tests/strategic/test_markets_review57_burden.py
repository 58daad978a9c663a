"""Review 57: with no positive weight nobody can move, so the social burden is infinite at any
price (as best_response's cost and market_price's no-market burden say)."""

from __future__ import annotations

import math

from trustlab.strategic import best_response, market_outcome, market_price


def test_no_positive_weight_gives_an_infinite_burden_at_any_price():
    w, b0, X, budgets, y = [-1.0], 0.0, [[1.0], [2.0]], [5.0, 5.0], [1, 1]
    assert best_response(w, b0, X, budgets, 1.0).cost.tolist() == [math.inf, math.inf]
    assert market_price(w, b0, X, budgets, y=y).social_burden == math.inf
    for price in (0.0, 1.0, math.inf):
        res = market_outcome(w, b0, X, budgets, price, y=y)
        assert res.n_buyers == 0 and res.social_burden == math.inf
    # nobody positive left out: no burden
    assert market_outcome(w, b0, [[1.0], [-2.0]], budgets, 1.0, y=[0, 1]).social_burden == 0.0


def test_a_movable_market_keeps_its_finite_burden():
    # w has a positive entry: the zero-budget user could be accepted by paying price * u
    res = market_outcome([1.0, -1.0], 0.0, [[-1.0, 0.0], [-2.0, 0.0]], [5.0, 0.0], 1.0, y=[1, 1])
    assert res.buyers.tolist() == [True, False]
    assert math.isclose(res.social_burden, 2.0 / math.sqrt(2.0), rel_tol=1e-12)
