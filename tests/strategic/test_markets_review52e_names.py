"""The strategic learners follow scikit-learn's feature-name convention: fitted on a DataFrame
they set ``feature_names_in_`` (and check the names at prediction); fitted on an array, none."""

import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.strategic import NaiveMarketClassifier


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 2)), columns=["income", "tenure"])
    return X, (X["income"] > 0).astype(int), np.ones(40)


def test_a_frame_sets_feature_names_in_and_an_array_removes_them(frame):
    X, y, budgets = frame
    model = NaiveMarketClassifier().fit(X, y, budgets)
    assert list(model.feature_names_in_) == ["income", "tenure"]
    assert model.feature_names_in_.dtype == object
    model.fit(X.to_numpy(), y, budgets)
    assert not hasattr(model, "feature_names_in_")


def test_names_are_checked_at_prediction(frame):
    X, y, budgets = frame
    model = NaiveMarketClassifier().fit(X, y, budgets)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X)  # the same names: no warning
    with pytest.raises(InputError, match="feature names"):
        model.predict(X.rename(columns={"income": "savings"}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(X.to_numpy())
