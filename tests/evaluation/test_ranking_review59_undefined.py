"""An undefined rank correlation has no interval even where the resamples define it (review 59).

test_ranking_review2_undefined's models make the same mistakes, so every resample ties their
accuracies too and the interval is NaN with or without the rule that clears it: deleting that
rule left all 173 ranking/evaluate tests passing. Here two models are right on different halves
of the items: equal accuracy on the data, unequal in almost every resample.
"""

import numpy as np

from trustlab.evaluation import rank_models


def test_equal_accuracy_from_different_mistakes_gives_no_interval():
    n = 40
    labels = np.zeros(n, dtype=int)
    right_first = np.arange(n) < n // 2
    a = np.where(right_first[:, None], [0.9, 0.1], [0.2, 0.8])
    b = np.where(right_first[:, None], [0.3, 0.7], [0.6, 0.4])
    result = rank_models({"a": a, "b": b}, labels=labels, n_bootstrap=200, random_state=0)
    assert result.accuracy.tolist() == [0.5, 0.5]
    assert np.isnan(result.spearman) and np.isnan(result.kendall)
    assert np.isnan(result.spearman_interval).all() and np.isnan(result.kendall_interval).all()
