"""Strategic classification. ``trustlab.strategic.markets``: the feature market a linear classifier
induces (exact revenue-maximising price, who buys, welfare) and learners that anticipate it
(MASC, with the naive and fixed-cost baselines); ``simulate`` runs them side by side.

Public names are imported from their module on first use, so ``import trustlab.strategic`` stays
cheap (torch is imported only when a learner is fitted).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".markets": [
            "market_price",
            "market_outcome",
            "best_response",
            "soft_market_price",
            "MarketResult",
            "BestResponse",
            "NaiveMarketClassifier",
            "FixedPriceStrategicClassifier",
            "MarketAwareClassifier",
        ],
        "._simulation": [
            "make_market_population",
            "load_market_data",
            "MarketData",
            "simulate",
            "SimulationResult",
        ],
    },
)
