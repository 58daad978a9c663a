"""The audit's FastPD section (review 52): when one tree model cannot be explained (a forest whose
root-to-leaf paths use more than 30 distinct features, as the zoo's unlimited-depth random forest
grows on a table with wide one-hot columns, made the whole section fail, losing the explanation
of every other model); the PD axis of a number the zoo standardises (drawn in z-scores under
the column's name: ages from -1.3 to 2)."""

from dataclasses import replace

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline as make_sklearn_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

from trustlab.audit.context import AuditContext
from trustlab.audit.models import make_pipeline
from trustlab.audit.sections import fastpd as section
from trustlab.explain.fastpd._kernel import MAX_PATH_WIDTH


def _context():
    d = MAX_PATH_WIDTH + 6
    X = pd.DataFrame(
        np.vstack([np.eye(d), np.zeros((1, d))] * 4), columns=[f"f{j}" for j in range(d)]
    )
    y = np.where(X.sum(axis=1) == 0, "no", "yes")  # "no" rows: every feature 0, d splits deep
    g = np.where(np.arange(len(X)) % 3 == 0, "f", "m")
    models = {
        "deep_tree": DecisionTreeClassifier(random_state=0),
        "stumps": GradientBoostingClassifier(n_estimators=5, max_depth=1),
    }
    fitted = {name: m.fit(X, y) for name, m in models.items()}
    return AuditContext(
        dataset="synthetic",
        label="y",
        group="g",
        labels=np.unique(y),
        feature_names=list(X.columns),
        X_train=X,
        X_test=X,
        y_train=y,
        y_test=y,
        g_train=g,
        g_test=g,
        models=fitted,
    )


def test_a_model_too_wide_to_explain_is_noted_and_the_others_are_still_explained():
    ctx = _context()
    assert ctx.models["deep_tree"].get_depth() > MAX_PATH_WIDTH
    built = section.build(ctx)
    assert set(built.data) == {"deep_tree", "stumps"}
    assert "distinct features" in built.data["deep_tree"]["not_explained"]
    assert built.data["stumps"]["output_kind"] == "log-odds"
    texts = [b.text for b in built.blocks if hasattr(b, "text")]
    assert any(t.startswith("Model deep_tree is not explained: a root-to-leaf path") for t in texts)
    assert any(t.startswith("Model stumps: FastPD explains") for t in texts)
    assert "deep_tree: not explained" in built.summary and "stumps: most important" in built.summary


def _zoo_context():
    """The zoo's pipeline (numbers standardised, text one-hot) on ages 20 to 70 and a town."""
    rng = np.random.default_rng(52)
    X = pd.DataFrame({"age": rng.uniform(20, 70, 240), "town": rng.choice(["north", "south"], 240)})
    y = np.where((X.age > 45) ^ (X.town == "north"), "yes", "no")
    g = np.where(rng.random(240) < 0.5, "f", "m")
    forest = RandomForestClassifier(20, max_depth=4, random_state=0)
    passthrough = make_sklearn_pipeline(
        make_column_transformer((OneHotEncoder(), ["town"]), remainder="passthrough"),
        RandomForestClassifier(20, max_depth=4, random_state=0),
    )
    models = {"zoo": make_pipeline(forest, X[:120]), "passthrough": passthrough}
    fitted = {name: m.fit(X[:120], y[:120]) for name, m in models.items()}
    return AuditContext(
        dataset="synthetic",
        label="y",
        group="g",
        labels=np.unique(y),
        feature_names=["age", "town"],
        X_train=X[:120],  # at most BACKGROUND_ROWS: the whole of it is the background
        X_test=X[120:],
        y_train=y[:120],
        y_test=y[120:],
        g_train=g[:120],
        g_test=g[120:],
        models=fitted,
    )


def test_pd_of_a_standardised_number_is_drawn_on_the_tables_scale():
    ctx = _zoo_context()
    built = section.build(ctx)
    data = built.data["zoo"]
    (age,) = [c for c in data["partial_dependence"] if c["features"] == ["age"]]
    grid = np.asarray(age["grid"][0])
    assert 20 <= grid.min() and grid.max() <= 70  # years, not z-scores
    assert data["pd_original_units"] == ["age"]
    model, background = ctx.models["zoo"], ctx.X_train
    for value, pd_value in zip(grid[::5], np.asarray(age["values"])[::5], strict=True):
        brute = model.predict_proba(background.assign(age=value)).mean(axis=0)
        np.testing.assert_allclose(pd_value, brute, atol=1e-12)
    captions = [b.caption for b in built.blocks if getattr(b, "caption", "").startswith("Partial")]
    assert "age on the scale of the audited table (the model reads it scaled)" in captions[0]
    assert built.data["passthrough"]["pd_original_units"] == []  # age passed through unscaled
    assert "scale of the audited table" not in captions[1]


def test_the_interaction_table_of_one_output_says_nothing_is_summed():
    ctx = _context()  # binary boosting, one output (log-odds); stumps have no pair to list
    X = ctx.X_train.assign(f0=np.arange(len(ctx.X_train)) % 3)
    depth2 = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, ctx.y_train)
    built = section.build(replace(ctx, X_train=X, X_test=X, models={"depth2": depth2}))
    assert built.data["depth2"]["top_interactions"]
    (caption,) = [b.caption for b in built.blocks if getattr(b, "caption", "").startswith("Strong")]
    assert "summed over classes" not in caption and caption.endswith("(log-odds)")
