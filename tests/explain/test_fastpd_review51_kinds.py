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
