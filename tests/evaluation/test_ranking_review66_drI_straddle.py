"""A percentile end between a finite resample and an infinite one is that infinity (review 66 I).

Second reading of 1ecab654: percentile_interval replaced numpy's NaN by the common value only
where the two resamples around an end are equal. numpy's linear interpolation also takes
inf - inf where one of the two is finite and the other infinite (``b - (b - a) * (1 - t)`` for
t >= 0.5 when b is inf; ``a + (b - a) * t`` for t < 0.5 when a is -inf), so such an end was
NaN, though the interpolation a + (b - a) t of a finite a and b = inf is inf for every t in
(0, 1). Measured: 25 finite resamples below 975 infinite ones gave the 95% interval
[nan, inf] (24 or 26 finite ones: [inf, inf] and [1.999, inf]); rank_models of a model with 3
overflowed items of 10 (summed token NLL inf; n_bootstrap=1000) printed its score interval as
'[nan, inf]' (and null in to_dict) in 28 of 400 seeds. Now that end is the infinity; an end
between -inf and inf stays NaN, and finite samples give numpy's interpolation bit for bit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab.evaluation import TokenLogProbs, rank_models
from trustlab.evaluation._bootstrap import percentile_interval


def _by_hand(column: np.ndarray, q: float) -> float:
    """Linear interpolation (numpy's default definition) with the infinities taken exactly."""
    ordered = np.sort(column[~np.isnan(column)])
    virtual = q * (len(ordered) - 1)
    j = int(np.floor(virtual))
    t = virtual - j
    a, b = ordered[j], ordered[min(j + 1, len(ordered) - 1)]
    if t == 0 or a == b:
        return float(a)
    if np.isinf(a) or np.isinf(b):
        return float(a + b) if np.isinf(a) and np.isinf(b) else float(a if np.isinf(a) else b)
    return float(np.quantile(ordered, q))


@pytest.mark.parametrize("n_finite", [24, 25, 26])
def test_finite_below_infinite_resamples(n_finite):
    samples = np.r_[np.linspace(1.0, 2.0, n_finite), np.full(1000 - n_finite, np.inf)]
    got = percentile_interval(samples[:, None], 0.95)[0]
    tail = (1.0 - 0.95) / 2.0  # as percentile_interval computes it
    expected = [_by_hand(samples, tail), _by_hand(samples, 1.0 - tail)]
    assert got.tolist() == expected
    assert not np.isnan(got).any()


def test_negative_infinity_below_finite_resamples():
    # 0.05 * (1005 - 1) = 50.2: between the 51st sample (-inf) and the 52nd (finite), t < 0.5
    samples = np.r_[np.full(51, -np.inf), np.linspace(1.0, 2.0, 954)]
    got = percentile_interval(samples[:, None], 0.9)[0]
    assert got[0] == -np.inf
    assert got[1] == _by_hand(samples, 1.0 - (1.0 - 0.9) / 2.0)
    both = np.r_[np.full(3, -np.inf), np.full(3, np.inf)]  # ends at 2.25 and 2.75 of 0..5:
    assert np.isnan(percentile_interval(both[:, None], 0.1)[0]).all()  # -inf to inf, undefined


def test_rank_models_interval_of_an_overflowed_model():
    rng = np.random.default_rng(18)
    outputs = {
        "a": TokenLogProbs([[-1e308, -1e308]] * 3 + [[-x] for x in rng.uniform(0.1, 2, 7)]),
        "b": TokenLogProbs(rng.uniform(-2, 0, (10, 1))),
        "c": TokenLogProbs(rng.uniform(-2, 0, (10, 1))),
    }
    correct = {k: rng.integers(0, 2, 10) for k in outputs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the sums' own overflow
        result = rank_models(
            outputs, token_position="sum", correct=correct, n_bootstrap=1000, random_state=18
        )
        item = np.column_stack([-v.log_likelihood("sum") for v in outputs.values()])
        means = item[np.random.default_rng(18).integers(0, 10, size=(1000, 10))].mean(axis=1)
    assert (~np.isfinite(means[:, 0])).sum() == 975  # the lower end lies between 25 and 26
    assert result.score_intervals[0].tolist() == [np.inf, np.inf]
    assert "[nan" not in result.summary()
    np.testing.assert_allclose(
        result.score_intervals[1:], np.quantile(means[:, 1:], [0.025, 0.975], axis=0).T, rtol=1e-12
    )


def test_finite_samples_bit_for_bit_numpy():
    rng = np.random.default_rng(4)
    for size in (1, 2, 7, 40, 41, 200, 1001):
        samples = np.round(rng.normal(size=(size, 5)), 1)  # ties
        samples[rng.random(samples.shape) < 0.1] = np.nan
        samples[:, 4] = np.nan  # a column without a resample
        for level in (0.5, 0.9, 0.95, 0.99):
            tail = (1.0 - level) / 2.0
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                expected = np.nanquantile(samples, [tail, 1.0 - tail], axis=0).T
            got = percentile_interval(samples, level)
            assert np.array_equal(got, expected, equal_nan=True)
