"""Kendall's tau counts equal infinite scores as a tie, as scipy does (review 66).

kendall_rows compared raw differences, and inf - inf is NaN: with two models whose summed token
NLL overflowed to inf (TokenLogProbs of log-probabilities -1e308, accepted), rank_models gave
kendall nan and kendall_interval (nan, nan) while spearman was 0.9487 and
scipy.stats.kendalltau of the same signed scores and accuracies is 0.9129 (measured;
kendall_rows([-inf, -inf, -0.5, -0.2], [0.1, 0.2, 0.5, 0.7]) was [nan]). Now the pairs are
compared on ranks, and tau equals scipy's; finite inputs are unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from trustlab.evaluation import TokenLogProbs, rank_models
from trustlab.evaluation._correlation import kendall_rows


@pytest.mark.parametrize(
    "x, y",
    [
        ([-np.inf, -np.inf, -0.5, -0.2], [0.1, 0.2, 0.5, 0.7]),
        ([np.inf, 1.0, np.inf, -np.inf], [3.0, 1.0, 2.0, 0.0]),
        ([0.3, 0.1, 0.2], [np.inf, np.inf, 1.0]),
    ],
)
def test_equal_infinities_tie_as_in_scipy(x, y):
    expected = stats.kendalltau(x, y).statistic
    assert kendall_rows(x, y)[0] == pytest.approx(expected, abs=1e-12)


def test_rank_models_kendall_with_two_overflowed_models():
    overflowed = TokenLogProbs([[-1e308, -1e308]] * 4)  # summed NLL: inf on every item
    steady = TokenLogProbs([[-0.1]] * 4)
    mixed = TokenLogProbs([[-0.5]] * 2 + [[-0.3]] * 2)
    correct = {"a": [0, 0, 0, 0], "b": [0, 0, 0, 1], "c": [1, 1, 1, 0], "d": [1, 1, 1, 1]}
    outputs = {"a": overflowed, "b": overflowed, "c": mixed, "d": steady}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the sums' own overflow
        result = rank_models(outputs, token_position="sum", correct=correct, n_bootstrap=0)
    assert np.isinf(result.scores[:2]).all()
    expected = stats.kendalltau(-result.scores, result.accuracy).statistic
    assert result.kendall == pytest.approx(expected, abs=1e-12)
    assert result.kendall == pytest.approx(0.9128709291752769, abs=1e-12)
