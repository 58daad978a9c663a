"""Entropy of logits whose spread overflows: a probability of 0, not NaN.

Logits such as [1e308, -1e308] are finite (accepted) but their difference overflows, so
log_softmax gives log p = -inf where p = 0, and p log p was 0 * -inf = NaN: the model's score
was NaN and its rank an integer cast of NaN.
"""

import numpy as np
from scipy import stats

from trustlab.evaluation import item_scores, rank_models


def test_entropy_of_overflowing_logits_is_that_of_their_distribution():
    logits = np.array([[1e308, -1e308], [0.0, 1.0], [2.0, np.finfo(np.float64).min]])
    expected = stats.entropy(np.array([[1.0, 0.0], [1.0, np.e], [1.0, 0.0]]), axis=1)
    np.testing.assert_allclose(item_scores(logits, "entropy", from_logits=True), expected)
    other = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.0]])
    result = rank_models(
        {"sharp": logits, "other": other}, from_logits=True, score="entropy", n_bootstrap=50
    )
    assert np.isfinite(result.scores).all() and np.isfinite(result.score_intervals).all()
    assert result.predicted_ranking == ("sharp", "other")
