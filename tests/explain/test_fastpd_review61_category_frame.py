"""Review 61: a boosting model fitted on a frame with a category column it never splits on.

FastPD predicted on a frame of floats rebuilt from the rows, which LightGBM ("train and valid
dataset categorical_feature do not match") and xgboost ("The data type doesn't match the one used
in the training dataset") refuse with a raw library error. The column carries no split, so the
model is a plain tree ensemble; FastPD must explain it like any other (checked by brute force).
"""

import numpy as np
import pandas as pd
import pytest

from trustlab.explain import FastPD


def _frame():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "a": pd.Categorical(rng.integers(0, 3, 200)),
            "b": rng.normal(size=200),
            "c": rng.normal(size=200),
        }
    )
    return frame, 2 * frame["b"].to_numpy() + frame["c"].to_numpy()


def _lightgbm(frame, y):
    lgb = pytest.importorskip("lightgbm")
    model = lgb.LGBMRegressor(n_estimators=3, max_depth=2, verbose=-1).fit(frame, y)
    assert set(model.booster_.trees_to_dataframe()["split_feature"].dropna()) <= {"b", "c"}
    return model, model.predict


def _xgboost(frame, y):
    xgb = pytest.importorskip("xgboost")
    model = xgb.XGBRegressor(
        n_estimators=3, max_depth=1, enable_categorical=True, tree_method="hist"
    ).fit(frame, y)
    features = set(model.get_booster().trees_to_dataframe()["Feature"])
    assert features <= {"b", "c", "Leaf"}
    return model, lambda rows: model.predict(rows, output_margin=True)


@pytest.mark.parametrize("build", [_lightgbm, _xgboost], ids=["lightgbm", "xgboost"])
def test_category_column_never_split_on_is_explained(build):
    frame, y = _frame()
    model, predict = build(frame, y)
    background, rows = frame.iloc[:30], frame.iloc[40:45]
    explainer = FastPD(model).fit(background)
    brute = [predict(background.assign(b=value)).mean() for value in rows["b"]]
    # exact up to rounding: xgboost sums its float32 leaves in float32 (about 1e-7 here)
    np.testing.assert_allclose(explainer.pd_function(rows, ["b"]), brute, rtol=0, atol=1e-5)
    phi = explainer.shap_values(rows)
    assert np.all(phi[:, 0] == 0.0)  # the category column carries no split
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, predict(rows), rtol=0, atol=1e-5)
