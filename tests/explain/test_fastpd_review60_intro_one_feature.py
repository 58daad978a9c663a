"""Diff review 60 H: the audit's FastPD section of a one-feature model began 'FastPD explains
its probability on 1 encoded features'."""

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fastpd as section
from trustlab.report import Paragraph


def _context(columns):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.normal(40, 10, 60) for c in columns})
    y = np.where(X[columns[0]] > 40, "b", "a")
    g = np.where(np.arange(60) % 2 == 0, "f", "m")
    return AuditContext(dataset="s", label="y", group="g", labels=np.unique(y),
                        feature_names=list(columns), X_train=X[:40], X_test=X[40:],
                        y_train=y[:40], y_test=y[40:], g_train=g[:40], g_test=g[40:],
                        models={"tree": DecisionTreeClassifier(max_depth=2).fit(X, y)})  # fmt: skip


def test_the_intro_counts_one_feature_in_the_singular():
    for columns, count in (
        (["age"], "1 encoded feature,"),
        (["age", "hours"], "2 encoded features,"),
    ):
        texts = [
            b.text for b in section.build(_context(columns)).blocks if isinstance(b, Paragraph)
        ]
        assert any(f"FastPD explains its probability on {count} for" in t for t in texts), texts
