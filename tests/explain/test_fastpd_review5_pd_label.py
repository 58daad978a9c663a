"""Review 5: the PD plot of a binary boosting model said "PD (log-odds)" without naming the class
whose log-odds it is (its one output is the positive class); a 2-feature plot said "PD (1)"
without saying what was drawn."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402

from trustlab.explain import FastPD  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    return X, X[:, 0] + X[:, 1]


def _curves(model, X):
    explainer = FastPD(model).fit(X)
    return explainer.pd_grid([0]), explainer.pd_grid([0, 1])


def _labels(curve):
    ax = curve.plot()
    try:
        colorbars = [a.get_ylabel() for a in ax.figure.axes if a is not ax]
        return ax.get_ylabel(), colorbars
    finally:
        plt.close(ax.figure)


def test_a_binary_boosting_model_s_pd_names_the_class_of_its_log_odds(data):
    X, y = data
    labels = np.where(y > 0, "yes", "no")
    model = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, labels)
    one, two = _curves(model, X)
    assert _labels(one)[0] == "PD (log-odds of class yes)"
    assert _labels(two)[1] == ["PD (log-odds of class yes)"]


def test_a_regressor_s_pd_label_is_unchanged(data):
    X, y = data
    one, two = _curves(GradientBoostingRegressor(n_estimators=5, max_depth=2).fit(X, y), X)
    assert _labels(one)[0] == "PD (prediction)"
    assert _labels(two)[1] == ["PD (prediction)"]


def test_several_classes_drawn_together_keep_the_kind_and_a_legend(data):
    X, y = data
    labels = np.digitize(y, [-0.5, 0.5])
    model = GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, labels)
    one, two = _curves(model, X)
    assert _labels(one)[0] == "PD (raw score (softmax logit))"
    ax = one.plot(output=2)
    assert ax.get_ylabel() == "PD (raw score (softmax logit) of class 2)"
    plt.close(ax.figure)
