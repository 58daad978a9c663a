"""Review 59: ``soft_market_price`` takes the budgets as given, so its softmax acts on revenues
in their units and the price changes with the currency (the exact price scales with it). It was
called "MASC's soft price" without saying that MASC divides the budgets by their median first;
the docstring and docs/strategic-markets.md now say so, with the figures pinned here."""

from pathlib import Path

import numpy as np
import pytest

from trustlab.strategic import make_market_population, market_price, soft_market_price

PAGE = " ".join(
    (Path(__file__).resolve().parents[2] / "docs" / "strategic-markets.md").read_text().split()
)


def test_soft_price_depends_on_the_units_of_the_budgets_as_documented():
    pytest.importorskip("torch")
    X, _, b = make_market_population(300, random_state=0)
    w = [1.0, 1.0]
    as_given = soft_market_price(w, 0.0, X, b)
    smaller = soft_market_price(w, 0.0, X, b / 100) * 100
    exact = market_price(w, 0.0, X, b).price
    # deterministic float64 computations, compared to the page's rounding
    assert (round(as_given, 3), round(smaller, 2), round(exact, 3)) == (0.263, 2.28, 0.257)
    for text in (soft_market_price.__doc__, PAGE):
        text = " ".join(text.split())
        assert "0.263" in text and "2.28" in text and "0.257" in text
        assert "units 100 times larger" in text
        assert "divided by 100" in text and "median positive value" in text

    # what MASC trains with, budgets over their median (price back in their units), does not
    # depend on the currency: the same per unit with every budget divided by 100
    def masc(budgets):
        median = float(np.median(budgets[budgets > 0]))
        return soft_market_price(w, 0.0, X, budgets / median) * median

    assert masc(b / 100) * 100 == pytest.approx(masc(b), rel=1e-12)
