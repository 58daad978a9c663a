"""The ranking section's caveat names the families of the models it ranked (review 60).

``trustlab audit --zoo logistic_regression,random_forest`` ranks two models, and the report
said "Models of different families (here linear, forest and boosting models) are often
calibrated differently": no boosting model was trained."""

from __future__ import annotations

import numpy as np
import pandas as pd

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import ranking
from trustlab.report import Paragraph


def _context(models):
    rng = np.random.default_rng(0)
    n = 30
    y = rng.integers(0, 2, n)
    empty = pd.DataFrame(index=range(n))
    return AuditContext(
        dataset="toy", label="y", group="g", labels=np.array([0, 1]), feature_names=[],
        X_train=empty, X_test=empty, y_train=y, y_test=y, g_train=y, g_test=y,
        probabilities={name: rng.dirichlet([1, 1], n) for name in models},
    )  # fmt: skip


def _caveat(models) -> str:
    section = ranking.build(_context(models))
    notes = [
        b.text
        for b in section.blocks
        if isinstance(b, Paragraph) and "Models of different families" in b.text
    ]
    assert len(notes) == 1
    return notes[0]


def test_the_caveat_names_only_the_ranked_families(monkeypatch):
    monkeypatch.setattr(ranking, "N_BOOTSTRAP", 100)  # the caveat does not depend on it
    text = _caveat(["logistic_regression", "random_forest"])
    assert "(here linear and forest models)" in text
    assert "boosting" not in text
    everyone = _caveat(["logistic_regression", "random_forest", "gradient_boosting"])
    assert "(here linear, forest and boosting models)" in everyone
