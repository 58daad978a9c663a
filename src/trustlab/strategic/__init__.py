"""Strategic classification. ``trustlab.strategic.markets``: the feature market a linear classifier
induces (exact revenue-maximising price, who buys, welfare) and learners that anticipate it
(MASC, with the naive and fixed-cost baselines); ``simulate`` runs them side by side.

Public names are imported from their module on first use, so ``import trustlab.strategic`` stays
cheap (torch is imported only when a learner is fitted).
"""

from __future__ import annotations

from trustlab._lazy import lazy_getattr

# public name -> the module that defines it
_LAZY = {
    "market_price": "trustlab.strategic.markets",
    "market_outcome": "trustlab.strategic.markets",
    "best_response": "trustlab.strategic.markets",
    "soft_market_price": "trustlab.strategic.markets",
    "MarketResult": "trustlab.strategic.markets",
    "BestResponse": "trustlab.strategic.markets",
    "NaiveMarketClassifier": "trustlab.strategic.markets",
    "FixedPriceStrategicClassifier": "trustlab.strategic.markets",
    "MarketAwareClassifier": "trustlab.strategic.markets",
    "make_market_population": "trustlab.strategic._simulation",
    "load_market_data": "trustlab.strategic._simulation",
    "MarketData": "trustlab.strategic._simulation",
    "simulate": "trustlab.strategic._simulation",
    "SimulationResult": "trustlab.strategic._simulation",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr("trustlab.strategic", _LAZY)
