"""Review 62 (misuse): the monitor's bootstrap interval is the documented one. Its tests checked
that it holds the AUROC, is seeded and keeps both classes; an interval at the wrong level (the
5%/95% percentiles for 95%) passed all of them. Here the stratified bootstrap is redone by hand
(the same seeded draws: positives, then negatives, each with replacement within its class;
the Mann-Whitney AUROC of each resample by brute force) and its percentiles are compared at two levels."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.metrics import roc_auc_score  # noqa: E402

from trustlab.safety.misuse import evaluate_monitor  # noqa: E402


class Scores:
    def __init__(self, scores):
        self.scores = scores

    def score_sequences(self, items):
        return self.scores


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_the_interval_is_the_percentile_interval_of_a_stratified_bootstrap(level):
    rng = np.random.default_rng(7)
    labels = np.r_[np.ones(12, int), np.zeros(9, int)]
    # whole numbers: ties across the classes (-0 and 0 by 5 positives and 3 negatives, 1 by 6 and 1),
    # so the check covers ties counted half in every resample (at one decimal there were none)
    scores = np.round(labels * 0.8 + rng.normal(size=21))
    items = [{"requests": ["r"], "objective": "o", "label": int(y), "task_id": str(i)}
             for i, y in enumerate(labels)]  # fmt: skip
    B = 200
    result = evaluate_monitor(Scores(scores), items, n_bootstrap=B, random_state=3,
                              confidence_level=level)  # fmt: skip
    draw = np.random.default_rng(3)
    pos, neg = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    pos_rows = pos[draw.integers(0, pos.size, (B, pos.size))]
    neg_rows = neg[draw.integers(0, neg.size, (B, neg.size))]
    # Mann-Whitney by brute force over all (positive, negative) pairs of each resample
    diff = scores[pos_rows][:, :, None] - scores[neg_rows][:, None, :]
    aurocs = ((diff > 0) + 0.5 * (diff == 0)).mean(axis=(1, 2))
    tail = (1 - level) / 2
    expected = np.quantile(aurocs, [tail, 1 - tail])
    # the same resamples, AUROC by a different formula: equal up to float rounding
    assert result.auroc_interval == pytest.approx(tuple(expected), abs=1e-12)
    assert result.auroc == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
