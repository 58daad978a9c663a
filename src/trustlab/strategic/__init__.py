"""Strategic classification: the feature market a linear classifier induces, and learners that
anticipate it.

- ``market``: the mechanism: the exact revenue-maximising price (:func:`market_price`), the
  market at any price, users' best responses and MASC's soft price;
- ``learners``: :class:`MarketAwareClassifier` (MASC) and the naive and fixed-price baselines;
- ``simulation``: populations and the bundled tables as market tasks, and
  :func:`simulate_market`, the three learners side by side.

Public names are imported from their module on first use, so ``import trustlab.strategic`` stays
cheap (torch is imported only when a learner is fitted).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".market": [
            "market_price",
            "market_outcome",
            "best_response",
            "soft_market_price",
            "MarketResult",
            "BestResponse",
        ],
        ".learners": [
            "NaiveMarketClassifier",
            "FixedPriceStrategicClassifier",
            "MarketAwareClassifier",
        ],
        ".simulation": [
            "make_market_population",
            "load_market_data",
            "MarketData",
            "simulate_market",
            "MarketSimulation",
        ],
    },
)
