"""The audit's FastPD section when one tree model cannot be explained (review 52: a forest whose
root-to-leaf paths use more than 30 distinct features, as the zoo's unlimited-depth random forest
grows on a table with wide one-hot columns, made the whole section fail, losing the explanation
of every other model)."""

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.tree import DecisionTreeClassifier

from trustlab.audit.context import AuditContext
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
