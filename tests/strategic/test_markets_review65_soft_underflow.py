"""Review 65: the soft price, like the exact one (ef52fb0b), leaves out a user whose budget per
distance b_i / u_i underflows to 0 (budget 1e-320 at distance 1e10): that user buys only at
price 0. It took part: beta / min(beta) divided by 0, so soft_market_price refused the first
market as a revenue overflow naming budgets (exact price 1), and gave 0.0 for the second, where
no market forms (exact price inf)."""

from __future__ import annotations

import math

import pytest

from trustlab.strategic import market_price, soft_market_price

pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("X", "budgets", "price"),
    [
        ([[-1e10], [-1.0], [-2.0]], [1e-320, 1.0, 0.0], 1.0),
        ([[-1e10], [-2.0]], [1e-320, 0.0], math.inf),
    ],
)
def test_an_underflowing_budget_per_distance_takes_no_part(X, budgets, price):
    assert market_price([1.0], 0.0, X, budgets).price == price
    # one user (or none) takes part: the soft price is that user's beta exactly
    assert soft_market_price([1.0], 0.0, X, budgets) == price
