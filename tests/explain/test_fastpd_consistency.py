"""The paper's consistency claim (Sim 1): with correlated features, FastPD's SHAP values and PD
functions converge to the model's true interventional ones as the background grows, while
path-dependent TreeSHAP keeps an error floor.

Setting (Liu et al. 2025, Sim 1): X ~ N(0, [[1, .3], [.3, 1]]), y = x1 + x2 + 2 x1 x2 + N(0, 1),
a gradient-boosting model fitted on n rows and explained with those n rows as background. The
oracle is the same model under the true Gaussian: every leaf weighted by the exact probability of
its box, so the model's true SHAP value and PD function are known in closed form.
"""

import numpy as np
import pytest
import shap
from scipy.stats import multivariate_normal, norm
from sklearn.ensemble import GradientBoostingRegressor

from trustlab.explain import FastPD

RHO = 0.3
COV = np.array([[1.0, RHO], [RHO, 1.0]])
SIZES = (300, 3000)
REPLICATIONS = 2


def leaf_boxes(model):
    """Lower and upper corners and weighted values of every leaf of a GradientBoostingRegressor."""
    lower, upper, values = [], [], []
    for estimator in model.estimators_[:, 0]:
        tree = estimator.tree_
        stack = [(0, np.full(2, -np.inf), np.full(2, np.inf))]
        while stack:
            node, lo, hi = stack.pop()
            if tree.children_left[node] < 0:
                lower.append(lo)
                upper.append(hi)
                values.append(tree.value[node, 0, 0] * model.learning_rate)
                continue
            feature, threshold = tree.feature[node], tree.threshold[node]
            left_hi, right_lo = hi.copy(), lo.copy()
            left_hi[feature] = min(hi[feature], threshold)
            right_lo[feature] = max(lo[feature], threshold)
            stack.append((tree.children_left[node], lo, left_hi))
            stack.append((tree.children_right[node], right_lo, hi))
    return np.array(lower), np.array(upper), np.array(values)


def true_shap_and_pd(model, rows):
    """The model's SHAP value of x1 and PD function of x1 under the true Gaussian distribution."""
    lower, upper, values = leaf_boxes(model)
    init = (
        model.predict(np.zeros((1, 2)))[0]
        - values[np.all((lower < 0.0) & (upper >= 0.0), axis=1)].sum()
    )
    gaussian = multivariate_normal(np.zeros(2), COV)

    def cdf(a, b):
        return gaussian.cdf(np.column_stack([np.clip(a, -9, 9), np.clip(b, -9, 9)]))

    box = (
        cdf(upper[:, 0], upper[:, 1])
        - cdf(lower[:, 0], upper[:, 1])
        - cdf(upper[:, 0], lower[:, 1])
        + cdf(lower[:, 0], lower[:, 1])
    )
    v_empty = init + values @ box

    def v_single(j):  # feature j at the row's value, the other one from its N(0, 1) marginal
        other = 1 - j
        inside = (rows[:, [j]] > lower[:, j]) & (rows[:, [j]] <= upper[:, j])
        margin = norm.cdf(upper[:, other]) - norm.cdf(lower[:, other])
        return init + (inside * margin) @ values

    v1, v2, v12 = v_single(0), v_single(1), model.predict(rows)
    return 0.5 * ((v1 - v_empty) + (v12 - v2)), v1


def errors_at(n, rows):
    """Mean squared errors against the oracle, averaged over replications."""
    found = []
    for rep in range(REPLICATIONS):
        rng = np.random.default_rng(1000 * n + rep)
        X = rng.multivariate_normal(np.zeros(2), COV, size=n)
        y = X[:, 0] + X[:, 1] + 2 * X[:, 0] * X[:, 1] + rng.normal(size=n)
        model = GradientBoostingRegressor(
            n_estimators=100, max_depth=3, learning_rate=0.1, random_state=rep
        ).fit(X, y)
        true_phi, true_pd = true_shap_and_pd(model, rows)
        explainer = FastPD(model).fit(X)
        path = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
        truth = rows[:, 0] + rows[:, 0] * rows[:, 1] - 0.3  # SHAP of the data-generating function
        fastpd_phi = explainer.shap_values(rows)[:, 0]
        path_phi = path.shap_values(rows)[:, 0]
        found.append(
            {
                "fastpd": np.mean((fastpd_phi - true_phi) ** 2),
                "path": np.mean((path_phi - true_phi) ** 2),
                "fastpd_pd": np.mean((explainer.pd_function(rows, [0]) - true_pd) ** 2),
                "fastpd_vs_truth": np.mean((fastpd_phi - truth) ** 2),
                "path_vs_truth": np.mean((path_phi - truth) ** 2),
            }
        )
    return {key: float(np.mean([f[key] for f in found])) for key in found[0]}


@pytest.fixture(scope="module")
def errors():
    rows = np.random.default_rng(7).multivariate_normal(np.zeros(2), COV, size=300)
    return {n: errors_at(n, rows) for n in SIZES}


def test_fastpd_shap_error_falls_as_the_background_grows(errors):
    small, large = errors[SIZES[0]], errors[SIZES[1]]
    assert large["fastpd"] <= 0.5 * small["fastpd"]


def test_fastpd_pd_function_error_falls_as_the_background_grows(errors):
    small, large = errors[SIZES[0]], errors[SIZES[1]]
    assert large["fastpd_pd"] <= 0.5 * small["fastpd_pd"]


def test_path_dependent_treeshap_keeps_an_error_floor(errors):
    small, large = errors[SIZES[0]], errors[SIZES[1]]
    assert large["path"] >= 0.4 * small["path"]  # does not fall like FastPD's
    assert large["path"] >= 5 * large["fastpd"]


def test_fastpd_is_closer_to_the_data_generating_shap_values(errors):
    small, large = errors[SIZES[0]], errors[SIZES[1]]
    assert large["fastpd_vs_truth"] <= 0.5 * small["fastpd_vs_truth"]
    assert large["path_vs_truth"] >= 1.5 * large["fastpd_vs_truth"]
