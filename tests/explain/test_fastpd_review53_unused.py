"""Review 53: a feature whose mean |SHAP| is rounding level (a one-hot column no tree uses
usefully: 1.6e-17) was drawn as the third "most important" PD curve, flat; the audit showed an
empty interaction table for a model without interactions."""

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeRegressor

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fastpd as section
from trustlab.explain import FastPD
from trustlab.report import Paragraph, Table


def _table(n=400):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "age": rng.normal(40, 10, n),
            "income": rng.normal(50, 20, n),
            "town": rng.choice(["north", "south", "east"], n),
        }
    )
    y = np.where(X.town == "north", "a", np.where(X.age > 40, "b", "c"))
    return X, y


def test_default_curves_leave_out_unused_features():
    X, y = _table()
    encode = make_column_transformer((OneHotEncoder(), ["town"]), remainder="passthrough")
    model = make_pipeline(encode, HistGradientBoostingClassifier(max_iter=10)).fit(X, y)
    explanation = FastPD(model).fit(X).explain(X)
    importance = explanation.importance
    shap = dict(zip(importance.feature_names, importance.shap.sum(axis=1), strict=True))
    drawn = [c.features[0] for c in explanation.partial_dependence]
    assert drawn == ["onehotencoder__town_north", "remainder__age"]
    assert all(v <= importance.rounding_level for k, v in shap.items() if k not in drawn)
    for curve in explanation.partial_dependence:  # each drawn curve moves
        assert np.ptp(curve.values, axis=0).max() > 0.1


def test_constant_model_still_gets_one_curve():
    X, _ = _table(60)
    rows = X[["age", "income"]].to_numpy()
    model = DecisionTreeRegressor().fit(rows, np.full(60, 2.5))  # one leaf: no feature used
    explanation = FastPD(model).fit(rows).explain(rows)
    assert [c.features for c in explanation.partial_dependence] == [("x0",)]


def test_audit_says_a_model_has_no_interaction():
    X, y = _table()
    stumps = GradientBoostingClassifier(n_estimators=10, max_depth=1).fit(X[["age", "income"]], y)
    Xn = X[["age", "income"]]
    g = np.where(np.arange(len(X)) % 2 == 0, "f", "m")
    ctx = AuditContext(
        dataset="s",
        label="y",
        group="g",
        labels=np.unique(y),
        feature_names=list(Xn.columns),
        X_train=Xn[:200],
        X_test=Xn[200:],
        y_train=y[:200],
        y_test=y[200:],
        g_train=g[:200],
        g_test=g[200:],
        models={"stumps": stumps},
    )
    built = section.build(ctx)
    assert built.data["stumps"]["top_interactions"] == []
    assert not [b for b in built.blocks if isinstance(b, Table)]
    texts = [b.text for b in built.blocks if isinstance(b, Paragraph)]
    assert any("stumps has no pairwise interaction" in t for t in texts)
