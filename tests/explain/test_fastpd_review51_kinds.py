"""What ``output_kind_`` says is decomposed for LightGBM's ``reg_sqrt`` (review 51: a regressor
fitted with ``reg_sqrt=True`` was labelled "prediction", yet its raw score, the decomposed output,
is the signed square root of the prediction)."""

import lightgbm as lgb
import numpy as np
import pytest

from trustlab.explain import FastPD

RNG = np.random.default_rng(5)
X = RNG.normal(size=(200, 3))
Y = np.exp(X[:, 0]) + X[:, 1] ** 2


@pytest.mark.parametrize("objective", ["regression", "regression_l1", "quantile"])
@pytest.mark.parametrize("reg_sqrt", [False, True])
def test_a_lightgbm_reg_sqrt_output_is_not_called_the_prediction(objective, reg_sqrt):
    model = lgb.LGBMRegressor(
        n_estimators=5, objective=objective, reg_sqrt=reg_sqrt, verbose=-1
    ).fit(X, Y)
    explainer = FastPD(model).fit(X[:80])
    rows = X[100:110]
    raw = explainer.shap_values(rows).sum(axis=1) + explainer.expected_value_
    prediction = model.predict(rows)
    if reg_sqrt:
        np.testing.assert_allclose(np.sign(raw) * raw**2, prediction, rtol=1e-10)
        assert "square root of the prediction" in explainer.output_kind_
    else:
        np.testing.assert_allclose(raw, prediction, rtol=1e-10)
        assert explainer.output_kind_ == "prediction"


def test_an_output_that_is_not_the_prediction_is_not_named_prediction():
    """Review 51: a log-link or reg_sqrt regressor's one output was named 'prediction' (the
    summary printed 'mean raw score (log of the prediction) ...: prediction 0.46')."""
    import xgboost as xgb
    from sklearn.ensemble import HistGradientBoostingRegressor

    counts = RNG.poisson(np.exp(0.5 * X[:, 0]))
    models = {
        "raw score": [
            HistGradientBoostingRegressor(loss="poisson", max_iter=5).fit(X, counts),
            xgb.XGBRegressor(n_estimators=5, objective="count:poisson").fit(X, counts),
            lgb.LGBMRegressor(n_estimators=5, objective="poisson", verbose=-1).fit(X, counts),
            lgb.LGBMRegressor(n_estimators=5, reg_sqrt=True, verbose=-1).fit(X, Y),
        ],
        "prediction": [
            HistGradientBoostingRegressor(max_iter=5).fit(X, Y),
            xgb.XGBRegressor(n_estimators=5).fit(X, Y),
            lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(X, Y),
        ],
    }
    for name, fitted in models.items():
        for model in fitted:
            explainer = FastPD(model).fit(X[:50])
            assert explainer.output_names_ == (name,), (model, explainer.output_kind_)
