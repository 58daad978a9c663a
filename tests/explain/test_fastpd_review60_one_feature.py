"""Review 60: the audit's FastPD section of a one-feature model said 'has no pairwise
interaction: every interaction component m_jk is zero', where there is no pair at all."""

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fastpd as section
from trustlab.report import Paragraph


def test_audit_of_a_one_feature_model_says_there_is_no_pair():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.normal(40, 10, 120)})
    y = np.where(X.age > 40, "b", "a")
    tree = DecisionTreeClassifier(max_depth=2).fit(X, y)
    g = np.where(np.arange(120) % 2 == 0, "f", "m")
    ctx = AuditContext(
        dataset="s",
        label="y",
        group="g",
        labels=np.unique(y),
        feature_names=["age"],
        X_train=X[:80],
        X_test=X[80:],
        y_train=y[:80],
        y_test=y[80:],
        g_train=g[:80],
        g_test=g[80:],
        models={"tree": tree},
    )
    built = section.build(ctx)
    assert built.data["tree"]["top_interactions"] == []
    texts = [b.text for b in built.blocks if isinstance(b, Paragraph)]
    assert "tree has one feature (age): there is no pair of features to interact." in texts
    assert not any("m_jk is zero" in t for t in texts)
