"""The importance summary of a model with several outputs says its pair values are summed over
them (review: a binary forest's line showed twice either class's mean |m_jk| unlabelled)."""

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from trustlab.explain import FastPD


def test_the_interaction_lines_say_they_sum_over_outputs():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    model = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, X[:, 0] * X[:, 1] > 0)
    explainer = FastPD(model).fit(X[:100])
    importance = explainer.importance(X[100:160], max_order=2)
    lines = importance.summary().splitlines()
    header = lines.index("strongest pairwise interactions (mean |m_jk|, summed over outputs):")
    (a, b), value = importance.top_interactions(1)[0]
    assert lines[header + 1] == f"  {a} \u00d7 {b}: {value:.4g}"
    per_class = np.abs(explainer.decompose(X[100:160], max_order=2).component(a, b)).mean(axis=0)
    np.testing.assert_allclose(value, per_class.sum())
    np.testing.assert_allclose(per_class[0], per_class[1])  # two classes: the sum is twice either


def test_a_one_output_summary_does_not_speak_of_summing_over_outputs():
    """Review 51: a regressor's summary said 'summed over outputs' though it has one."""
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 3))
    model = GradientBoostingRegressor(n_estimators=10).fit(X, X[:, 0] * X[:, 1])
    summary = FastPD(model).fit(X[:80]).importance(X[80:120], max_order=2).summary()
    assert "summed over outputs" not in summary
    assert "mean |SHAP|:" in summary.splitlines()
    assert "strongest pairwise interactions (mean |m_jk|):" in summary.splitlines()
