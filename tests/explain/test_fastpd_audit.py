"""The audit report section "Tree model explanations (FastPD)" on the bundled chile data."""

import json

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.inspection import partial_dependence
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from trustlab.audit.context import AuditContext
from trustlab.audit.models import make_pipeline
from trustlab.audit.sections import fastpd as section
from trustlab.data import load_dataset
from trustlab.report import Report


def chile_context(models):
    data = load_dataset("chile")
    X, y, groups = data.X, data.y, data.groups()
    train, test = train_test_split(np.arange(len(y)), test_size=0.25, random_state=0, stratify=y)
    X_train, X_test = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
    fitted = {name: make_pipeline(m, X_train).fit(X_train, y[train]) for name, m in models.items()}
    return AuditContext(
        dataset="chile",
        label=data.label,
        group=data.protected[0],
        labels=np.unique(y),
        feature_names=list(data.features),
        X_train=X_train,
        X_test=X_test,
        y_train=y[train],
        y_test=y[test],
        g_train=groups[train],
        g_test=groups[test],
        models=fitted,
    )


@pytest.fixture(scope="module")
def context():
    return chile_context(
        {
            "logistic_regression": LogisticRegression(max_iter=500),
            "random_forest": RandomForestClassifier(30, min_samples_leaf=5, random_state=0),
            "gradient_boosting": HistGradientBoostingClassifier(max_iter=20, random_state=0),
        }
    )


@pytest.fixture(scope="module")
def built(context):
    return section.build(context)


def test_section_explains_the_tree_models_only(built):
    assert built.id == "fastpd" and built.title == section.TITLE
    assert set(built.data) == {"random_forest", "gradient_boosting"}
    assert built.data["random_forest"]["output_kind"] == "probability"
    assert built.data["gradient_boosting"]["output_kind"] == "raw score (softmax logit)"
    assert built.data["random_forest"]["output_names"] == ["A", "N", "U", "Y"]
    assert "random_forest: most important" in built.summary


def test_section_holds_a_shap_plot_pd_plots_and_an_interaction_table_per_model(built):
    kinds = [type(b).__name__ for b in built.blocks]
    assert kinds.count("Figure") == 4 and kinds.count("Table") == 2
    table = next(b for b in built.blocks if type(b).__name__ == "Table")
    assert table.columns == ["feature", "feature", "mean |m_jk|"]
    assert len(table.rows) == section.TOP_PAIRS
    values = [float(row[2]) for row in table.rows]
    assert values == sorted(values, reverse=True)


def test_section_data_is_plain_json_and_renders_in_a_report(built, tmp_path):
    assert json.loads(json.dumps(built.data)) == built.data
    report = Report("FastPD section")
    report.add(built)
    html, _ = report.write(tmp_path)
    assert section.TITLE in html.read_text()


def test_section_pd_curves_equal_sklearn_brute_partial_dependence(context, built):
    pipeline = context.models["random_forest"]
    model, background, _, names, raw = section._tree_model(pipeline, context)
    assert len(background) == section.BACKGROUND_ROWS
    data = built.data["random_forest"]
    for curve in data["partial_dependence"]:
        name, grid = curve["features"][0], np.asarray(curve["grid"][0])
        if name in data["pd_original_units"]:  # a standardised number: its grid in table units
            theirs = np.stack(
                [pipeline.predict_proba(raw.assign(**{name: v})).mean(axis=0) for v in grid], 1
            )
        else:
            j = names.index(name)
            theirs = partial_dependence(
                model, background, [j], method="brute", custom_values={j: grid}
            )["average"]
        assert np.abs(np.asarray(curve["values"]).T - theirs).max() <= 1e-9
    assert "age" in data["pd_original_units"]


def test_section_is_absent_without_tree_models(context):
    linear_only = {"logistic_regression": context.models["logistic_regression"]}
    ctx = AuditContext(**{**context.__dict__, "models": linear_only})
    assert section.build(ctx) is None


def test_a_bare_tree_model_is_explained_on_numeric_raw_features(context):
    numeric = ["population", "age", "income", "statusquo"]
    X_train, X_test = context.X_train[numeric], context.X_test[numeric]
    model = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X_train, context.y_train)
    ctx = AuditContext(
        **{**context.__dict__, "models": {"mine": model}, "X_train": X_train, "X_test": X_test}
    )
    built = section.build(ctx)
    assert set(built.data) == {"mine"}
    assert set(built.data["mine"]["mean_abs_shap"]) == set(numeric)
