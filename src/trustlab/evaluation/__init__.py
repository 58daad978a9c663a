"""Model evaluation without labels: rank models on new data by their own uncertainty."""

from trustlab.evaluation.ranking import (
    SCORES,
    TOKEN_POSITIONS,
    RankingResult,
    TokenLogProbs,
    item_scores,
    rank_models,
)

__all__ = [
    "SCORES",
    "TOKEN_POSITIONS",
    "RankingResult",
    "TokenLogProbs",
    "item_scores",
    "rank_models",
]
