"""Models with native categorical splits are refused in one line naming the features (review 52:
xgboost's refusal carried the model's multi-line repr, 'got XGBRegressor XGBRegressor(base_score=
None, ...' over two lines, and LightGBM's said only "got \"'=='\""; an unfitted xgboost model too)."""

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import HistGradientBoostingRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD

RNG = np.random.default_rng(52)
FRAME = pd.DataFrame(
    {"a": RNG.normal(size=300), "town": pd.Categorical(RNG.choice(["p", "q", "r"], 300))}
)
Y = FRAME.a + 2.0 * (FRAME.town == "q")


@pytest.mark.parametrize(
    "model, what",
    [
        (
            xgb.XGBRegressor(n_estimators=3, enable_categorical=True, tree_method="hist"),
            "an xgboost",
        ),
        (lgb.LGBMRegressor(n_estimators=3, verbose=-1, min_child_samples=5), "a LightGBM"),
        (
            HistGradientBoostingRegressor(max_iter=3, categorical_features=["town"]),
            "a HistGradientBoosting",
        ),
    ],
)
def test_categorical_splits_are_refused_in_one_line_naming_the_feature(model, what):
    model.fit(FRAME, Y)
    with pytest.raises(InputError) as caught:
        FastPD(model).fit(FRAME)
    message = str(caught.value)
    assert "\n" not in message
    if what == "a HistGradientBoosting":  # its declared features (see review 55's test)
        assert message.startswith(f"model: expected {what} model without categorical features")
        assert "got categorical_features town;" in message and "one-hot encode" in message
    else:
        assert message.startswith(f"model: expected {what} model without categorical splits")
        assert "got categorical splits on town;" in message and "one-hot encode" in message
    assert not FastPD.supports(model)


@pytest.mark.parametrize(
    "model", [xgb.XGBClassifier(n_estimators=3), lgb.LGBMClassifier(n_estimators=3)]
)
def test_an_unfitted_model_is_refused_in_one_line(model):
    with pytest.raises(InputError) as caught:  # xgboost's repr spans two lines
        FastPD(model).fit(FRAME[["a"]])
    assert str(caught.value) == f"model: expected a fitted model, got {type(model).__name__}"
