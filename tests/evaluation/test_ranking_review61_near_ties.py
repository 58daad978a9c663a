"""Review 61: mean scores equal up to rounding are ties (the same model given two ways).

Logits shifted by a constant are the same model, but their mean max-probability differed in the
last bit (2.2e-16) on 59 of 200 seeds: the copy was ranked 2nd, and Spearman against the
accuracies (tied) was 0.866 instead of scipy's 1.0 on the true tie.
"""

import numpy as np
import pytest
from scipy import stats

from trustlab.evaluation import rank_models
from trustlab.evaluation._bootstrap import merge_near_ties


def _zoo(seed: int = 4, n: int = 40):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), labels] += 1.5
    weak = rng.normal(size=(n, 3)) * 0.3
    return {"a": logits, "a_shifted": logits + 5.0, "weak": weak}, labels


def test_shifted_logits_of_one_model_tie_in_ranks_and_correlations():
    outputs, labels = _zoo()
    result = rank_models(
        outputs,
        from_logits=True,
        labels=labels,
        score="max_prob",
        n_bootstrap=50,
        random_state=0,
    )
    assert result.ranks.tolist() == [1, 1, 3]
    assert result.rank_intervals[:2].tolist() == [[1, 1], [1, 1]]
    exact = [result.scores[0], result.scores[0], result.scores[2]]  # the tie made exact
    # scipy's tau-b on the exact tie is 1 up to rounding (0.9999999999999999)
    assert result.spearman == pytest.approx(stats.spearmanr(exact, result.accuracy)[0], abs=1e-12)
    assert result.kendall == pytest.approx(stats.kendalltau(exact, result.accuracy)[0], abs=1e-12)
    assert result.spearman == result.kendall == 1.0


def test_merge_near_ties_keeps_real_differences_and_merges_rounding():
    values = np.array([[0.5, 0.5 + 2e-16, 0.5 + 1e-9, 3.0, 3.0 - 4e-16]])
    merged = merge_near_ties(values)
    assert merged[0, 0] == merged[0, 1] != merged[0, 2]  # 1e-9 is a real difference
    assert merged[0, 3] == merged[0, 4]
    assert stats.rankdata(merged[0]).tolist() == [1.5, 1.5, 3.0, 4.5, 4.5]
    assert merge_near_ties(values[0]).shape == (5,)
