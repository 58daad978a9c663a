"""A HistGradientBoosting model that declares categorical features none of its trees split on is
refused without claiming categorical splits (review 55: it said "got categorical splits on x0")."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


def test_declared_categorical_features_without_splits_are_named_as_declared():
    rng = np.random.default_rng(55)
    x = np.column_stack([rng.integers(0, 4, 200), rng.normal(size=200)])
    model = HistGradientBoostingRegressor(max_iter=2, categorical_features=[0]).fit(x, x[:, 1])
    assert not any(p[0].nodes["is_categorical"].any() for p in model._predictors)
    with pytest.raises(InputError) as caught:
        FastPD(model).fit(x[:5])
    message = str(caught.value)
    assert "categorical splits" not in message
    assert message.startswith(
        "model: expected a HistGradientBoosting model without categorical features, "
        "got categorical_features x0;"
    )
