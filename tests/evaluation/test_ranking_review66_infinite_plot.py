"""RankingResult.plot draws a model with an infinite score without numpy warnings (review 66).

Once the bootstrap gave an interval with an infinite end to a model whose summed token NLL
overflowed on some items (TokenLogProbs of log-probabilities -1e308; interval [0.2, inf],
where it was [nan, nan]), _error_bars took inf - inf for its bars and the plot warned
'invalid value encountered in subtract' (numpy) and 'invalid value encountered in add'
(matplotlib); 'trustlab evaluate rank --out' printed them as 'trustlab: warning: ...' lines
(measured on 3 models x 6 items). Now a bar that is not finite is not drawn (length 0); finite
bars are unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np

from trustlab.evaluation import TokenLogProbs, rank_models
from trustlab.evaluation.results import _error_bars


def _result(correct):
    outputs = {
        "a": TokenLogProbs([[-1e308, -1e308]] * 3 + [[-0.2]] * 3),
        "b": TokenLogProbs([[-0.1]] * 3 + [[-0.3]] * 3),
        "c": TokenLogProbs([[-0.4], [-0.2]] * 3),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the sums' own overflow
        return rank_models(
            outputs, token_position="sum", correct=correct, n_bootstrap=200, random_state=0
        )


def test_plot_with_an_infinite_score_does_not_warn():
    correct = {"a": [0, 0, 0, 1, 1, 0], "b": [1, 1, 0, 1, 1, 1], "c": [1, 0, 0, 1, 1, 0]}
    for result in (_result(correct), _result(None)):
        assert np.isinf(result.scores[0]) and np.isinf(result.score_intervals[0, 1])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result.plot()


def test_error_bars_not_finite_are_zero_finite_unchanged():
    centre = np.array([np.inf, 0.3, 0.5])
    intervals = np.array([[0.2, np.inf], [0.2, np.inf], [0.4, 0.7]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bars = _error_bars(centre, intervals)
    np.testing.assert_allclose(bars, [[0.0, 0.1, 0.1], [0.0, 0.0, 0.2]], atol=1e-15)
