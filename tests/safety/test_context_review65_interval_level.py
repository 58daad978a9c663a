"""ContextScores' bootstrap intervals follow confidence_level (review 65 mutation check).

Quantiles fixed at 2.5 % / 97.5 % whatever confidence_level passed all 261 context tests. The
oracle redraws the same multinomial resamples (seeded Generator) and takes numpy's quantiles of
the resampled accuracy and Brier score directly.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.safety.context import context_scores

RATE = np.array([2, 15, 11, 9, 20, 5, 13, 1, 17, 8, 12, 6]) / 21
SCORES = [3, 8, 6, 7, 9, 2, 4, 1, 10, 6, 5, 3]


@pytest.mark.parametrize("level", [0.5, 0.9])
def test_interval_level(level):
    result = context_scores(
        SCORES, RATE, "score", n_bootstrap=200, confidence_level=level, random_state=4
    )
    n = len(RATE)
    draws = np.random.default_rng(4).multinomial(n, np.full(n, 1 / n), size=200)
    x = np.asarray(SCORES, dtype=float)
    truth, pred, p = RATE > 0.5, x > 5.5, (x - 0.5) / 10
    accuracy = (draws @ (truth == pred)) / n
    brier = (draws @ (p - RATE) ** 2) / n
    tails = [(1 - level) / 2, (1 + level) / 2]
    np.testing.assert_allclose(
        result.intervals["accuracy"], np.quantile(accuracy, tails), atol=1e-12
    )
    np.testing.assert_allclose(result.intervals["brier"], np.quantile(brier, tails), atol=1e-12)
