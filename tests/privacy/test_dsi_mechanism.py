"""DSIMechanism and group_gradient_differences: leave-one-group-out differences, worked uses."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism, calibrate, group_gradient_differences


def logistic_gradients(weights, x, y):
    """Per-sample gradients of the logistic loss."""
    margin = 1 / (1 + np.exp(-x @ weights))
    return (margin - y)[:, None] * x


def train_logistic(data, steps=60, lr=0.5):
    """A small deterministic model: full-batch gradient descent on the logistic loss."""
    x, y = data
    weights = np.zeros(x.shape[1])
    for _ in range(steps):
        weights -= lr * logistic_gradients(weights, x, y).mean(axis=0)
    return weights


@pytest.fixture(scope="module")
def digits_with_canary():
    digits = load_digits(n_class=2)
    x = digits.data[:120] / 16.0
    y = digits.target[:120].astype(float)
    canary = np.random.default_rng(0).uniform(0, 1, size=(1, x.shape[1]))
    # the canary is an outlier with a random label, duplicated 3 times (one group)
    x = np.vstack([x, np.repeat(canary, 3, axis=0)])
    y = np.concatenate([y, [1 - y[0]] * 3])
    groups = np.concatenate([np.arange(120) % 20, [20] * 3])
    return x, y, groups


def test_mean_gradient_differences_equal_recomputed_means():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(50, 4)), rng.integers(0, 2, 50).astype(float)
    weights, groups = rng.normal(size=4), rng.integers(0, 7, 50)
    per_sample = logistic_gradients(weights, x, y)
    labels, diffs = group_gradient_differences(per_sample, groups)
    full = per_sample.mean(axis=0)
    for label, diff in zip(labels, diffs, strict=True):
        keep = groups != label
        recomputed = logistic_gradients(weights, x[keep], y[keep]).mean(axis=0)
        assert np.allclose(diff, full - recomputed, atol=1e-10, rtol=0)


def test_differences_are_leave_one_group_out_runs(digits_with_canary):
    x, y, groups = digits_with_canary
    mech = DSIMechanism(train_logistic, epsilon=2.0, delta=1e-5).fit((x, y), groups)
    assert mech.group_labels_.tolist() == list(range(21))
    keep = groups != 5
    expected = train_logistic((x, y)) - train_logistic((x[keep], y[keep]))
    assert np.allclose(mech.differences_[5], expected, atol=1e-12)
    assert mech.noise_multiplier_ == pytest.approx(calibrate(2.0, 1e-5).noise_multiplier)


def test_canary_influence_is_bounded_after_release(digits_with_canary):
    """Memorisation: the best test telling 'canary in' from 'canary out' from the released
    weights has power at most the Gaussian trade-off bound Phi(Phi^-1(alpha) + mu)."""
    x, y, groups = digits_with_canary
    mech = DSIMechanism(train_logistic, epsilon=1.0, delta=1e-5).fit((x, y), groups)
    canary_shift = mech.differences_[20]
    cov = mech.covariance_
    assert cov.mahalanobis(canary_shift)[0] <= 1 + 1e-6
    scale = mech.noise_multiplier_
    # without noise the canary is plainly visible: its shift dwarfs float error
    assert np.linalg.norm(canary_shift) > 1e-3
    rng = np.random.default_rng(2)
    inside = np.stack([mech.release(rng) for _ in range(4000)]) - mech.output_
    outside = cov.sample(4000, scale=scale, random_state=3) - canary_shift
    # Neyman-Pearson statistic: projection on Sigma^+ shift
    sigma = cov.covariance()
    direction = np.linalg.lstsq(sigma, canary_shift, rcond=None)[0]
    threshold = np.quantile(outside @ direction, 0.95)
    power = np.mean(inside @ direction > threshold)
    mu = 1.0 / scale
    bound = norm.cdf(norm.ppf(0.05) + mu)
    assert power <= bound + 3 * np.sqrt(bound * (1 - bound) / 4000) + 0.01


def test_poisoned_group_moves_predictions_no_more_than_the_noise():
    """Poisoning: one group with flipped labels on a trigger pattern; the release of predictions
    on trigger inputs has the poisoned group's shift within one noise standard deviation along
    it (Mahalanobis <= 1 before scaling by the multiplier >= 1)."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 5))
    y = (x[:, 0] > 0).astype(float)
    trigger = np.zeros(5)
    trigger[4] = 3.0
    poisoned = rng.choice(200, 10, replace=False)
    x[poisoned] += trigger
    y[poisoned] = 1.0
    groups = np.arange(200) % 10
    groups[poisoned] = 10
    probes = rng.normal(size=(8, 5)) + trigger

    def predict(data):
        weights = train_logistic(data, steps=40)
        return 1 / (1 + np.exp(-probes @ weights))

    mech = DSIMechanism(predict, epsilon=2.0, delta=1e-5).fit((x, y), groups)
    shift = mech.differences_[10]
    assert mech.covariance_.mahalanobis(shift)[0] <= 1 + 1e-6
    assert mech.noise_multiplier_ > 1.0
    assert mech.release(0).shape == (8,)
    assert mech.covariance_.trace <= mech.covariance_.isotropic_span_trace


def test_dataframe_and_list_data_give_the_same_differences():
    values = np.arange(20.0).reshape(10, 2) ** 1.5
    groups = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    frame = pd.DataFrame(values, columns=["a", "b"])
    from_array = DSIMechanism(lambda v: np.mean(v, axis=0), epsilon=1, delta=1e-5)
    from_frame = DSIMechanism(lambda f: f.to_numpy().mean(axis=0), epsilon=1, delta=1e-5)
    from_list = DSIMechanism(lambda rows: np.mean(rows, axis=0), epsilon=1, delta=1e-5)
    base = from_array.fit(values, groups).differences_
    assert np.allclose(from_frame.fit(frame, groups).differences_, base)
    assert np.allclose(from_list.fit(list(values), groups).differences_, base)


def test_uninformative_groups_are_left_out_of_the_solve():
    values = np.array([[1.0], [2.0], [3.0], [4.0]])
    # fn ignores group 9's record entirely; groups 0 and 1 give identical differences
    mech = DSIMechanism(lambda v: np.array([float(np.sum(v[v < 4]))]), epsilon=1.0, delta=1e-5).fit(
        values, [0, 1, 2, 9]
    )
    assert mech.constrained_.tolist() == [True, True, True, False]
    assert mech.covariance_.trace == pytest.approx(9.0, rel=1e-6)


def test_release_is_reproducible_and_needs_a_fit():
    values = np.random.default_rng(5).normal(size=(12, 3))
    mech = DSIMechanism(lambda v: v.mean(axis=0), epsilon=1.0, delta=1e-5)
    with pytest.raises(NotFittedError):
        mech.release(random_state=11)
    assert mech.fit(values, np.arange(12) % 4) is mech
    first = mech.release(random_state=11)
    assert np.array_equal(first, mech.release(random_state=11))
    assert not np.array_equal(first, mech.output_)


def test_mechanism_refuses_bad_input():
    values = np.ones((4, 2))
    with pytest.raises(InputError, match="groups"):
        DSIMechanism(lambda v: v.mean(0), epsilon=1, delta=1e-5).fit(values, [0, 1, 2])
    with pytest.raises(InputError, match="fn"):
        DSIMechanism(lambda v: np.ones(2), epsilon=1, delta=1e-5).fit(values, [0, 1, 2, 3])
    with pytest.raises(InputError, match="fn\\(data without group 0, 3 records\\)"):
        DSIMechanism(lambda v: v.sum(0)[: len(v) % 2 + 1], epsilon=1, delta=1e-5).fit(
            values, [0, 1, 2, 3]
        )
    with pytest.raises(InputError, match="epsilon"):
        DSIMechanism(lambda v: v.mean(0), epsilon=0, delta=1e-5).fit(values, [0, 1, 2, 3])
    with pytest.raises(InputError, match="fn: expected a callable"):
        DSIMechanism("mean", epsilon=1, delta=1e-5).fit(values, [0, 1, 2, 3])
    with pytest.raises(InputError, match="n_jobs"):
        DSIMechanism(lambda v: v.mean(0), epsilon=1, delta=1e-5, n_jobs=0).fit(values, [0, 1])


@pytest.mark.parametrize("scale", [1e170, 1e-170])
def test_mechanism_refuses_differences_the_solver_cannot_square(scale):
    # outputs beyond 1e100 (below 1e-100) gave a NaN covariance and a NaN release (a LinAlgError)
    values = np.arange(12.0).reshape(6, 2)
    mech = DSIMechanism(lambda v: v.mean(0) * scale, epsilon=2, delta=1e-5)
    with pytest.raises(InputError, match=r"^fn: expected differences of magnitude"):
        mech.fit(values, [0, 0, 1, 1, 2, 2])


def _rounding_fn(rows):
    # the second coordinate is 0.1 up to an ulp that depends on how many rows there are
    return np.array([rows.mean(), np.sum(np.full(len(rows), 0.1)) / len(rows)])


def test_a_rounding_level_change_is_refused_naming_the_group_and_what_to_do():
    """Group 1 leaves the mean alone and moves the second coordinate by one ulp only, outside
    every other difference's span: the refusal is right (that ulp tells the subset's size and no
    noise so small survives being added), but it said 'difference 1' (an index among the kept
    differences, not a group) and 'drop or rescale it', which a DSIMechanism user cannot do."""
    x = np.array([0.0, 1, 2, 4.5, 4.5, 7, 8, 9, 4.5, 4.5])
    groups = ["a", "a", "a", "b", "b", "c", "c", "c", "b", "b"]
    mech = DSIMechanism(_rounding_fn, epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match=r"^fn: .*the difference of group 'b' .*round fn's output"):
        mech.fit(x, groups)
    rounded = DSIMechanism(lambda rows: np.round(_rounding_fn(rows), 12), epsilon=1.0, delta=1e-5)
    assert rounded.fit(x, groups).constrained_.tolist() == [True, False, True]
