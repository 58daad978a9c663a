"""rank_models warns when there are too few resamples for a percentile interval at the level
asked: with 1 resample the '95% interval' was one value that need not hold the estimate (the
CLI printed 0.5437 [0.6105, 0.6105]) without a word."""

import math
import re
import warnings

import numpy as np
import pytest

from trustlab.evaluation import rank_models


def _outputs(seed):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet([1.0, 1.0, 1.0], size=60)
    sharp = probs**3 / (probs**3).sum(axis=1, keepdims=True)
    return {"a": probs, "b": sharp}


@pytest.mark.parametrize(
    ("level", "need", "said"),
    [
        (0.95, 40, "95%"),
        (0.9, 20, "90%"),
        (0.99, 200, "99%"),
        (0.5, 4, "50%"),
        (0.999, 2000, "99.9%"),
    ],
)
def test_fewer_resamples_than_the_level_needs_warn(level, need, said):
    assert need == math.ceil(2 / (1 - level) - 1e-9)
    # the level as given: 0.999 read 'a 100% percentile interval'
    with pytest.warns(
        UserWarning,
        match=f"n_bootstrap={need - 1}: a {re.escape(said)} percentile .* at least {need} resamples",
    ):
        rank_models(_outputs(54), n_bootstrap=need - 1, confidence_level=level, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rank_models(_outputs(54), n_bootstrap=need, confidence_level=level, random_state=0)
        rank_models(_outputs(54), n_bootstrap=0, confidence_level=level, random_state=0)


def test_one_resample_gives_an_interval_that_misses_the_estimate_hence_the_warning():
    # the case the warning is for: the single resampled mean is the whole "interval"
    misses = 0
    for seed in range(55, 65):
        with pytest.warns(UserWarning, match="n_bootstrap=1"):
            result = rank_models(_outputs(seed), n_bootstrap=1, random_state=seed)
        low, high = np.asarray(result.score_intervals).T
        assert np.array_equal(low, high)
        misses += int(np.any((result.scores < low) | (result.scores > high)))
    assert misses >= 5
