"""Review 57: equal revenues that rounding splits still go to the lowest price.

The oracle is exact: on small integer data every revenue is a rational number (in score units
``R = pi * sum gap``), so ties are decided with ``fractions.Fraction``, not floats.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from trustlab.strategic import market_price


def test_a_tie_split_by_rounding_goes_to_the_lowest_price():
    # price 2.5 sells to user 0 (2.5 * 0.3 = 0.75), price 1.5 to both (1.5 * 0.5 = 0.75);
    # in floats the second is 0.7499999999999999
    res = market_price([1.0], 0.0, [[-0.3], [-0.2]], budgets=[0.75, 0.3])
    assert res.curve_prices.tolist() == pytest.approx([2.5, 1.5])
    assert res.price == pytest.approx(1.5)
    assert res.buyers.tolist() == [True, True]
    assert res.revenue == pytest.approx(0.75, rel=1e-12)


def exact_price_per_score(w, b0, X, budgets):
    """The lowest revenue-maximising price per unit of score, in exact rationals (None: none)."""
    if not any(v > 0 for v in w):
        return None
    gaps = [
        -(sum(Fraction(a) * Fraction(x) for a, x in zip(w, row, strict=True)) + Fraction(b0))
        for row in X
    ]
    prices = sorted(
        {Fraction(b) / g for b, g in zip(budgets, gaps, strict=True) if g > 0 and b > 0}
    )
    best = None
    for pi in prices:  # increasing: only a strictly larger revenue replaces the best
        revenue = sum(pi * g for b, g in zip(budgets, gaps, strict=True) if g > 0 and b >= pi * g)
        if best is None or revenue > best[1]:
            best = (pi, revenue)
    return None if best is None else best[0]


def test_integer_markets_match_an_exact_rational_oracle():
    rng = np.random.default_rng(5701)
    for _ in range(200):
        m, d = int(rng.integers(2, 8)), int(rng.integers(1, 4))
        X = rng.integers(-3, 4, size=(m, d)).astype(float)
        w = rng.integers(-2, 3, size=d).astype(float)
        w[0] = w[0] or 1.0
        b0 = float(rng.integers(-3, 4))
        budgets = rng.integers(0, 5, size=m).astype(float)
        res = market_price(w, b0, X, budgets)
        pi = exact_price_per_score(w.tolist(), b0, X.tolist(), budgets.tolist())
        if pi is None:
            assert res.price == np.inf and not res.buyers.any()
            continue
        norm = float(np.linalg.norm(w))
        assert res.price == pytest.approx(float(pi) * norm, rel=1e-12)
        gaps = -(X @ w + b0)
        expected = [
            g > 0 and b > 0 and Fraction(b) >= pi * Fraction(g)
            for g, b in zip(gaps, budgets, strict=True)
        ]
        assert res.buyers.tolist() == expected
