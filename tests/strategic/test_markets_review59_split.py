"""Review 59: the trained learners' validation split. Training on every row (``train = order``
instead of the rows not held out) and moving the small-data boundary (``<=`` 10 held out) both
passed every fast learner test: no test looked at which rows train and which validate. The split
is read here from the scorer the learner builds (``_validation_scorer`` gets the split)."""

import numpy as np
import pytest

from trustlab.strategic import FixedPriceStrategicClassifier, learners, make_market_population


class _Stop(Exception):
    """Raised by the spy once the split is seen: no training is needed to check it."""


def _split(monkeypatch, n, fraction):
    seen = []

    def spy(data, *args, **kwargs):
        seen.append(data)
        raise _Stop

    monkeypatch.setattr(learners, "_validation_scorer", spy)
    X, y, b = make_market_population(n, budget_ratio=4.0, random_state=0)
    clf = FixedPriceStrategicClassifier(validation_fraction=fraction, random_state=0)
    with pytest.raises(_Stop):
        clf.fit(X, y, budgets=b)
    (data,) = seen
    return np.sort(data.train), np.sort(data.val)


@pytest.mark.parametrize(("n", "held_out"), [(100, 20), (48, 10)])
def test_held_out_users_are_not_trained_on(monkeypatch, n, held_out):
    train, val = _split(monkeypatch, n, 0.2)
    assert val.size == held_out and train.size == n - held_out
    assert np.array_equal(np.union1d(train, val), np.arange(n))  # disjoint, every row used


@pytest.mark.parametrize("n", [47, 20])
def test_small_data_validates_on_every_training_user(monkeypatch, n):
    # round(0.2 * 47) = 9 < 10 held out: nothing is held out, as documented (from 48 rows)
    train, val = _split(monkeypatch, n, 0.2)
    assert np.array_equal(train, np.arange(n)) and np.array_equal(val, np.arange(n))
