"""The bootstrap of a model with an infinite item score matches a brute-force bootstrap (review 66).

A summed token NLL that overflows (TokenLogProbs of log-probabilities -1e308, accepted) is an
item score of inf. The resampled means were one product ``counts @ values``, where an item left
out of a resample gave 0 * inf = NaN: every resample of such a model was inf or NaN, never the
finite mean of the items it drew, and descending_ranks cast the NaN ranks to int64. Measured on
4 models x 4 items (a, b overflowed on every item; n_bootstrap=50, random_state=0):
score_intervals [[nan, nan], [nan, nan], ...] and rank_intervals
[[-9223372036854775808, 3], ...] for every model. Now an infinite item makes infinite only
the means of the resamples that draw it, the interval between two equal infinite resamples is
that infinity, and every number equals the brute-force bootstrap with the same seed
(values[indices].mean(axis=1), scipy's rankdata); finite scores take the old path unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from trustlab.evaluation import TokenLogProbs, rank_models
from trustlab.evaluation._bootstrap import resampled_means


def test_resampled_means_equal_brute_force_with_infinities():
    values = np.array([[0.5, np.inf, 1.0], [0.25, 2.0, -np.inf], [0.75, 3.0, 2.0]] * 2)
    indices = np.random.default_rng(3).integers(0, len(values), size=(40, len(values)))
    expected = values[indices].mean(axis=1)
    got = resampled_means(values, indices)
    assert np.isfinite(got[:, 0]).all()
    assert np.isfinite(got[:, 1]).any() and np.isinf(got[:, 1]).any()  # left out, drawn
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def _overflowing_zoo():
    overflowed = [[-1e308, -1e308]]  # its sum is -inf: an item NLL of inf
    rng = np.random.default_rng(0)
    outputs = {
        name: TokenLogProbs(overflowed * k + [[-x] for x in rng.uniform(0.1, 2.0, 8 - k)])
        for name, k in (("a", 8), ("b", 1), ("c", 0), ("d", 0))
    }
    correct = {name: rng.integers(0, 2, 8) for name in outputs}
    return outputs, correct


def test_rank_models_intervals_equal_brute_force():
    outputs, correct = _overflowing_zoo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the sums' own overflow
        result = rank_models(
            outputs, token_position="sum", correct=correct, n_bootstrap=200, random_state=5
        )
        item = np.column_stack([-v.log_likelihood("sum") for v in outputs.values()])
    indices = np.random.default_rng(5).integers(0, 8, size=(200, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's inf - inf between two ends
        means = item[indices].mean(axis=1)
        linear = np.quantile(means, [0.025, 0.975], axis=0).T
        lower = np.quantile(means, [0.025, 0.975], axis=0, method="lower").T
        higher = np.quantile(means, [0.025, 0.975], axis=0, method="higher").T
    # a, on every item: inf; b: finite below (resamples without its item), inf above, where
    # the two resamples around the end are both inf (numpy's interpolation says NaN there)
    assert result.score_intervals[0].tolist() == [np.inf, np.inf]
    assert result.score_intervals[1, 0] == pytest.approx(linear[1, 0], rel=1e-12)
    assert np.isfinite(linear[1, 0]) and lower[1, 1] == higher[1, 1] == np.inf
    assert result.score_intervals[1, 1] == np.inf
    np.testing.assert_allclose(result.score_intervals[2:], linear[2:], rtol=1e-12)
    ranks = stats.rankdata(means, method="min", axis=1)  # lower NLL: more confident
    low = np.quantile(ranks, 0.025, axis=0, method="lower")
    high = np.quantile(ranks, 0.975, axis=0, method="higher")
    assert result.rank_intervals.tolist() == np.column_stack([low, high]).tolist()


@pytest.mark.parametrize("score", ["nll", "max_prob"])
def test_finite_scores_unchanged(score):
    rng = np.random.default_rng(2)
    finite = {k: TokenLogProbs(rng.uniform(-2.0, 0.0, (8, 2))) for k in "abcd"}
    correct = {k: rng.integers(0, 2, 8) for k in "abcd"}
    result = rank_models(finite, score=score, correct=correct, n_bootstrap=100, random_state=1)
    assert np.isfinite(result.score_intervals).all()
    assert (result.rank_intervals >= 1).all() and (result.rank_intervals <= 4).all()
