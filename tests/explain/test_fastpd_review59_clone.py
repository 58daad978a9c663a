"""FastPD is a scikit-learn estimator: get_params, set_params and clone (review 59)."""

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingRegressor

from trustlab.explain import FastPD


def _model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    return X, GradientBoostingRegressor(n_estimators=10, max_depth=2, random_state=0).fit(X, y)


def test_clone_keeps_the_parameters_and_the_fitted_model_and_is_unfitted():
    X, model = _model()
    explainer = FastPD(model, max_order=2, n_jobs=1, feature_names=["a", "b", "c"]).fit(X)
    copy = clone(explainer)
    assert copy is not explainer
    assert copy.model is model  # the explained model is never refitted: cloning keeps it fitted
    assert copy.get_params(deep=False) == {
        "model": model,
        "max_order": 2,
        "n_jobs": 1,
        "feature_names": ["a", "b", "c"],
    }
    assert not hasattr(copy, "background_")
    # the clone fits and explains exactly as the original (same model, same background)
    np.testing.assert_array_equal(copy.fit(X).shap_values(X[:5]), explainer.shap_values(X[:5]))


def test_set_params_changes_a_parameter_used_by_fit():
    X, model = _model()
    explainer = FastPD(model).set_params(max_order=1).fit(X)
    assert explainer.max_order == 1
    assert max(len(s) for s in explainer.decompose(X[:3]).components) == 1
