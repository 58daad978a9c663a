"""Review 63: docs/strategic-markets.md's figures on how far MASC's soft price (its defaults)
strays from the exact price on small batches are what the code gives. The soft price is the
spec's formula (review 63 checked it against an independent numpy copy to 1e-15); the page says
how rough it is at the sizes MASC trains on. Figures are rounded to 2 significant digits, far
from a rounding boundary (the ratios are 0.4399, 14.03, 0.5339, 6.926, 0.6832, 1.651; the
median at 128 is 0.9955, 5e-4 from the boundary, where float paths differ by ~1e-15)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trustlab.strategic import make_market_population, market_price, soft_market_price

pytest.importorskip("torch")

PAGE = " ".join(
    (Path(__file__).resolve().parents[2] / "docs" / "strategic-markets.md").read_text().split()
)
CLASSIFIERS = [((1.0, 1.0), 0.0), ((1.0, 0.3), -0.5), ((0.5, 1.0), 1.0)]


def _ratios(n: int) -> np.ndarray:
    ratios = []
    for seed in range(15):
        X, _, budgets = make_market_population(n, random_state=seed)
        budgets = budgets / np.median(budgets)
        for w, b0 in CLASSIFIERS:
            exact = market_price(w, b0, X, budgets).price
            ratios.append(soft_market_price(w, b0, X, budgets) / exact)
    return np.asarray(ratios)


def test_soft_price_spread_on_small_batches_is_as_documented():
    at_128, at_64, at_256 = _ratios(128), _ratios(64), _ratios(256)
    text = (
        f"median {np.median(at_128):.2f}, from {at_128.min():.2f} to {at_128.max():.2g} at n = "
        f"128; from {at_64.min():.2f} to {at_64.max():.1f} at n = 64; from {at_256.min():.2f} "
        f"to {at_256.max():.2g} at n = 256"
    )
    assert text in PAGE, text


def test_lower_temperatures_reach_the_exact_price_on_the_worst_market():
    X, _, budgets = make_market_population(64, random_state=0)
    budgets = budgets / np.median(budgets)
    exact = market_price((0.5, 1.0), 1.0, X, budgets).price
    assert soft_market_price((0.5, 1.0), 1.0, X, budgets) / exact > 14
    sharp = soft_market_price(
        (0.5, 1.0), 1.0, X, budgets, sort_temperature=0.01, softmax_scale=200.0
    )
    assert sharp == pytest.approx(exact, rel=1e-9)
