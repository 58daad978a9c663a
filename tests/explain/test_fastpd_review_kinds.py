"""What ``output_kind_`` says is decomposed (review: GradientBoostingClassifier with
``loss="exponential"`` was labelled "log-odds", yet its decision_function, the decomposed raw
score, is half the log-odds; so was LightGBM's binary objective with ``sigmoid=2``)."""

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier

from trustlab.explain import FastPD

RNG = np.random.default_rng(3)
X = RNG.normal(size=(200, 3))
Y = X[:, 0] + 0.5 * X[:, 1] > 0


@pytest.mark.parametrize(("loss", "log_odds_per_unit"), [("log_loss", 1.0), ("exponential", 2.0)])
def test_the_binary_gradient_boosting_output_is_named_for_what_it_is(loss, log_odds_per_unit):
    model = GradientBoostingClassifier(loss=loss, n_estimators=10, random_state=0).fit(X, Y)
    explainer = FastPD(model).fit(X[:80])
    rows = X[100:110]
    phi = explainer.shap_values(rows)
    raw = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(raw, model.decision_function(rows), atol=1e-10)
    p = model.predict_proba(rows)[:, 1]
    np.testing.assert_allclose(log_odds_per_unit * raw, np.log(p / (1 - p)), atol=1e-8)
    is_log_odds = explainer.output_kind_ == "log-odds"
    assert is_log_odds == (log_odds_per_unit == 1.0), explainer.output_kind_
    if not is_log_odds:
        assert "half the log-odds" in explainer.output_kind_


@pytest.mark.parametrize("sigmoid", [1.0, 2.0])
def test_a_lightgbm_sigmoid_other_than_one_is_not_called_log_odds(sigmoid):
    model = lgb.LGBMClassifier(n_estimators=5, sigmoid=sigmoid, verbose=-1).fit(X, Y)
    explainer = FastPD(model).fit(X[:80])
    rows = X[100:110]
    raw = explainer.shap_values(rows).sum(axis=1) + explainer.expected_value_
    p = model.predict_proba(rows)[:, 1]
    np.testing.assert_allclose(sigmoid * raw, np.log(p / (1 - p)), atol=1e-8)
    if sigmoid == 1.0:
        assert explainer.output_kind_ == "log-odds"
    else:
        assert explainer.output_kind_ == "raw score (log-odds divided by sigmoid=2)"


@pytest.mark.parametrize(
    "model",
    [
        GradientBoostingClassifier(loss="exponential", n_estimators=10, random_state=0),
        lgb.LGBMClassifier(n_estimators=5, sigmoid=2.0, verbose=-1),
    ],
)
def test_a_scaled_log_odds_still_gives_the_predicted_class_shap(model):
    model.fit(X, Y)
    explanation = FastPD(model).fit(X[:80]).explain(X[100:140])
    phi = explanation.shap_values
    negative = model.predict(X[100:140]) == 0
    assert negative.any() and (~negative).any()
    sign = np.where(negative, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(explanation.predicted_class_shap(), phi * sign)
