"""Review 53: pairs whose mean |m_jk| is rounding error of an additive model (xgboost's float32
leaves: about 1e-6; float64 models: 1e-14) or exactly zero are not listed as interactions."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor

from trustlab.explain import FastPD


def _data(interacting: bool):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(600, 3)).astype(float)
    X[:, 2] = rng.normal(size=600)
    y = 3 * X[:, 0] + 5 * X[:, 1] + 100  # additive: depth-2 trees split on x0 then x1
    if interacting:
        y = y + 0.1 * X[:, 0] * X[:, 1]  # a small real interaction, far above rounding
    return X, y


def _models():
    xgboost = pytest.importorskip("xgboost")
    return {
        "xgboost": xgboost.XGBRegressor(
            n_estimators=200, max_depth=2, reg_lambda=0, min_child_weight=0, learning_rate=0.3
        ),
        "sklearn": GradientBoostingRegressor(n_estimators=200, max_depth=2, random_state=0),
    }


def _brute_mean_abs_m01(model, B, E):
    """mean |v_01 - v_0 - v_1 + v_empty| over E, by predicting on the background."""

    def v(x, S):
        Z = B.copy()
        Z[:, S] = x[S]
        return model.predict(Z).mean()

    empty = model.predict(B).mean()
    return np.mean([abs(v(x, [0, 1]) - v(x, [0]) - v(x, [1]) + empty) for x in E])


@pytest.mark.parametrize("kind", ["xgboost", "sklearn"])
def test_additive_model_lists_no_interaction(kind):
    X, y = _data(interacting=False)
    model = _models()[kind].fit(X, y)
    explainer = FastPD(model).fit(X[:300])
    explanation = explainer.explain(X[300:400])
    importance = explanation.importance
    assert importance.top_interactions() == []
    computed = explanation.interaction_table()
    assert len(computed) == 1 and computed["mean_abs_m"].iloc[0] > 0  # the path has the pair
    assert computed["mean_abs_m"].iloc[0] <= importance.rounding_level
    assert "interactions" not in importance.summary()
    assert importance.to_dict()["top_interactions"] == []


@pytest.mark.parametrize("kind", ["xgboost", "sklearn"])
def test_interacting_model_lists_its_interaction(kind):
    X, y = _data(interacting=True)
    model = _models()[kind].fit(X, y)
    B, E = X[:300], X[300:360]
    importance = FastPD(model).fit(B).importance(E)
    [(pair, value)] = importance.top_interactions()
    assert pair == ("x0", "x1")
    # brute force predicts in the model's precision (xgboost: float32 at outputs of about 108)
    assert value == pytest.approx(_brute_mean_abs_m01(model, B, E), abs=importance.rounding_level)
    assert value > 100 * importance.rounding_level


def test_exact_zero_pair_is_not_listed():
    X, y = _data(interacting=False)
    model = GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    importance = FastPD(model).fit(X[:300]).importance(X[300:])
    zeroed = type(importance)(
        feature_names=importance.feature_names,
        output_names=importance.output_names,
        output_kind=importance.output_kind,
        shap=importance.shap,
        components={(0, 1): np.zeros(1), (0,): np.ones(1)},
    )
    assert zeroed.rounding_level == 0.0
    assert zeroed.top_interactions() == []
