"""Models of equal accuracy are shown tied: in the summary's true ranking and in the audit
section's "rank by accuracy" column (which numbered them by their input order)."""

import numpy as np

from trustlab.audit.sections.ranking import _ranking_table
from trustlab.evaluation import SCORES, rank_models

LABELS = np.array([0, 1, 0, 1, 0, 1])
# "b" and "a" are right on every item (b the less confident), "c" on 5 of 6
OUTPUTS = {
    "b": np.array([[0.6, 0.4], [0.4, 0.6], [0.55, 0.45], [0.45, 0.55], [0.51, 0.49], [0.49, 0.51]]),
    "a": np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6], [0.6, 0.4], [0.3, 0.7]]),
    "c": np.array([[0.4, 0.6], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6], [0.6, 0.4], [0.3, 0.7]]),
}


def test_summary_joins_models_of_equal_accuracy():
    result = rank_models(OUTPUTS, labels=LABELS, n_bootstrap=0)
    assert result.accuracy.tolist() == [1.0, 1.0, 5 / 6]
    assert "true ranking: b = a, c" in result.summary().splitlines()
    untied = rank_models(
        {"b": OUTPUTS["b"], "c": OUTPUTS["c"]}, labels=LABELS, n_bootstrap=0
    ).summary()
    assert "true ranking: b, c" in untied.splitlines()


def test_audit_rank_by_accuracy_shares_the_better_rank_on_ties():
    results = {s: rank_models(OUTPUTS, score=s, labels=LABELS, n_bootstrap=20) for s in SCORES}
    table = _ranking_table(results)
    column = table.columns.index("rank by accuracy")
    assert {row[0]: row[column] for row in table.rows} == {"b": 1, "a": 1, "c": 3}
    # the label-free ranks follow the same rule (a, c, b by confidence here)
    nll_column = table.columns.index("rank by nll")
    assert {row[0]: row[nll_column] for row in table.rows} == {"a": 1, "c": 2, "b": 3}
