"""Diff review 61 A of d0f82613: merge_near_ties merged an infinite mean score with its finite
neighbour (the tolerance, relative to max(1, |score|), became infinite), so a model whose summed
token NLL overflowed to inf tied 2nd with a finite model instead of ranking last."""

import warnings

import numpy as np

from trustlab.evaluation import TokenLogProbs, rank_models
from trustlab.evaluation._bootstrap import merge_near_ties


def test_infinite_and_nan_values_are_never_merged():
    values = np.array([[0.5, np.inf, 1.0], [-np.inf, 0.5, 1.0], [0.5, np.nan, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf is NaN, which numpy warns about (stop 61)
        merged = merge_near_ties(values)
        two_infinities = merge_near_ties(np.array([np.inf, np.inf, 2.0]))
    np.testing.assert_array_equal(merged, values)  # NaN == NaN here
    assert two_infinities.tolist() == [np.inf, np.inf, 2.0]


def test_an_overflowing_token_nll_ranks_last_alone():
    huge = TokenLogProbs([[-1e308, -1e308], [-0.1, -0.2]])  # summed NLL overflows to inf
    ok = TokenLogProbs([[-0.5, -0.5], [-0.3, -0.2]])
    best = TokenLogProbs([[-0.1, -0.1], [-0.1, -0.2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rank_models({"huge": huge, "ok": ok, "best": best}, token_position="sum")
    assert np.isinf(result.scores[0])
    assert result.ranks.tolist() == [3, 2, 1]
