"""FastPD results: JSON-safe dictionaries, short summaries, plots, and importance that finds the
interaction the data were made with."""

import json

import numpy as np
import pytest
from matplotlib.axes import Axes
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier

from trustlab.errors import InputError
from trustlab.explain import FastPD, Importance, plot_shap_summary

RNG = np.random.default_rng(4)
X = RNG.normal(size=(400, 4))
Y = 2 * X[:, 0] * X[:, 1] + X[:, 2]
NAMES = ["age", "income", "hours", "noise"]


@pytest.fixture(scope="module")
def regression():
    model = GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0).fit(X, Y)
    return FastPD(model, feature_names=NAMES).fit(X[:150])


@pytest.fixture(scope="module")
def classifier():
    labels = np.digitize(Y, [-1.0, 1.0])
    model = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, labels)
    return FastPD(model).fit(X[:100])


def plain_json(payload):
    """json.dumps without a default: fails on any numpy value."""
    return json.loads(json.dumps(payload))


def test_importance_ranks_the_interacting_pair_first(regression):
    importance = regression.importance(X[200:300])
    assert importance.top_interactions(1)[0][0] == ("age", "income")
    assert set(importance.top_features(3)) == {"age", "income", "hours"}


def test_importance_from_values_equals_importance(regression):
    rows = X[200:260]
    direct = regression.importance(rows, max_order=2)
    assembled = Importance.from_values(
        regression.shap_values(rows), regression.decompose(rows, max_order=2)
    )
    assert np.array_equal(direct.shap, assembled.shap)
    assert direct.components.keys() == assembled.components.keys()
    with pytest.raises(InputError, match="shap_values: expected shape"):
        Importance.from_values(np.zeros((3, 4)), regression.decompose(rows, max_order=1))


def test_to_dict_is_plain_json(regression, classifier):
    rows = X[200:210]
    for explainer in (regression, classifier):
        decomposition = explainer.decompose(rows, max_order=2)
        payloads = [
            decomposition.to_dict(),
            explainer.pd_grid(0, grid_resolution=5).to_dict(),
            explainer.pd_grid([0, 1], grid_resolution=4).to_dict(),
            explainer.importance(rows, max_order=2).to_dict(),
        ]
        for payload in payloads:
            assert plain_json(payload) == payload
    data = regression.decompose(rows, max_order=2).to_dict()
    assert data["components"]["age:income"] == regression.decompose(rows).component(0, 1).tolist()


def test_summaries_name_the_output_and_the_largest_terms(regression, classifier):
    decomposition = regression.decompose(X[200:260], max_order=2)
    text = decomposition.summary()
    assert "decomposition of the prediction" in text and "age \u00d7 income" in text
    assert "(truncated)" in text
    summary = classifier.importance(X[200:260]).summary()
    assert "of the probability over 60 rows" in summary
    assert "partial dependence of the prediction on age" in regression.pd_grid("age").summary()


def test_pd_grid_defaults_to_background_quantiles(regression):
    curve = regression.pd_grid("hours", grid_resolution=7)
    column = regression.background_[:, 2]
    expected = np.quantile(column, np.linspace(0.05, 0.95, 7))
    assert np.allclose(curve.grid[0], expected)
    assert curve.values.shape == (7, 1)
    assert np.allclose(curve.values[:, 0], regression.pd_function(_with(2, expected), [2]))


def _with(j, values):
    rows = np.zeros((len(values), 4))
    rows[:, j] = values
    return rows


def test_pd_grid_uses_distinct_values_of_a_discrete_feature():
    discrete = X.copy()
    discrete[:, 3] = RNG.integers(0, 3, len(X))
    model = GradientBoostingRegressor(n_estimators=5).fit(discrete, Y)
    curve = FastPD(model).fit(discrete[:100]).pd_grid(3)
    assert curve.grid[0].tolist() == [0.0, 1.0, 2.0]


def test_plots_return_axes(regression, classifier):
    rows = X[200:260]
    regression_phi = regression.shap_values(rows)
    classifier_phi = classifier.shap_values(rows)
    axes = [
        regression.decompose(rows, max_order=2).plot(),
        regression.pd_grid("age").plot(),
        regression.pd_grid(["age", "income"], grid_resolution=6).plot(),
        classifier.pd_grid(1).plot(),
        classifier.pd_grid([0, 1], grid_resolution=5).plot(output="2"),
        regression.importance(rows).plot(),
        classifier.importance(rows).plot(kind="components"),
        plot_shap_summary(regression_phi, rows, NAMES),
        plot_shap_summary(classifier_phi, rows, kind="bar", output_names=["a", "b", "c"]),
        plot_shap_summary(classifier_phi, rows, output=1),
    ]
    for ax in axes:
        assert isinstance(ax, Axes)
        assert ax.has_data()
    labels = [t.get_text() for t in axes[7].get_yticklabels()]
    assert labels[-1] == NAMES[np.argmax(np.abs(regression_phi).mean(axis=0))]  # largest on top


def test_plot_arguments_are_checked(classifier):
    phi = classifier.shap_values(X[:5])
    with pytest.raises(InputError, match="kind: expected 'beeswarm' or 'bar'"):
        plot_shap_summary(phi, kind="violin")
    with pytest.raises(InputError, match="output: expected an index below 3"):
        plot_shap_summary(phi, output=5)
    with pytest.raises(InputError, match="output: expected one of"):
        classifier.pd_grid(0).plot(output="nope")
    with pytest.raises(InputError, match="kind: expected 'shap' or 'components'"):
        classifier.importance(X[:5]).plot(kind="x")


def test_explanation_holds_the_api_values(regression):
    rows = X[200:260]
    explanation = regression.explain(rows, features=["hours", "age"])
    np.testing.assert_array_equal(explanation.shap_values, regression.shap_values(rows))
    direct = regression.importance(rows, max_order=2)
    np.testing.assert_array_equal(explanation.importance.shap, direct.shap)
    assert explanation.importance.to_dict() == direct.to_dict()
    assert explanation.expected_value.tolist() == [regression.expected_value_]
    assert [c.features for c in explanation.partial_dependence] == [("hours",), ("age",)]
    np.testing.assert_array_equal(
        explanation.partial_dependence[1].values, regression.pd_grid("age").values
    )
    payload = explanation.to_dict()
    assert list(payload) == ["importance", "expected_value", "n_background", "partial_dependence"]
    assert plain_json(payload) == payload
    assert "FastPD importance of the prediction over 60 rows" in explanation.summary()


def test_explanation_draws_the_most_important_features_by_default(regression):
    explanation = regression.explain(X[200:260])
    top = explanation.importance.top_features(3)
    assert [c.features[0] for c in explanation.partial_dependence] == top


def test_explanation_is_saved_as_tables_and_plots(classifier, tmp_path):
    from trustlab._results import write_outputs

    explanation = classifier.explain(X[200:230], features=[1])
    written = {p.name for p in write_outputs(explanation, tmp_path)}
    assert written == {
        "result.json",
        "shap_summary.png",
        "shap_values.csv",
        "interactions.csv",
        "pd_x1.png",
    }
    table = explanation.shap_table()
    assert list(table.columns[:5]) == ["row", "0:x0", "0:x1", "0:x2", "0:x3"]
    assert list(table["row"]) == list(range(30))
    np.testing.assert_array_equal(table["2:x3"], explanation.shap_values[:, 3, 2])


def test_predicted_class_shap_picks_each_rows_predicted_class(classifier):
    rows = X[200:230]
    explanation = classifier.explain(rows)
    chosen = explanation.predicted_class_shap()
    predicted = classifier.model.predict_proba(rows).argmax(axis=1)
    np.testing.assert_array_equal(chosen, explanation.shap_values[np.arange(30), :, predicted])


def test_explain_table_draws_the_background_and_names_bad_columns():
    import pandas as pd

    from trustlab.explain import explain_table

    frame = pd.DataFrame(X, columns=NAMES).assign(label=Y)
    model = GradientBoostingRegressor(n_estimators=5).fit(X, Y)  # stores no feature names
    args = {"label": "label", "background_size": 50, "rows": slice(0, 20), "random_state": 0}
    explanation = explain_table(model, frame, **args)
    assert explanation.n_background == 50 and explanation.importance.n_rows == 20
    again = explain_table(model, frame, **args)
    np.testing.assert_array_equal(explanation.shap_values, again.shap_values)
    with pytest.raises(InputError, match="data: expected 4 feature columns .* got 5"):
        explain_table(model, frame)
    with pytest.raises(InputError, match="exclude: expected a column of the data"):
        explain_table(model, frame, exclude=["height"])
    with pytest.raises(InputError, match="background_size: expected an integer >= 1"):
        explain_table(model, frame, label="label", background_size=0)
