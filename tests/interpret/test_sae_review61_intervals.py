"""Review 61 (polysae): the scorers' bootstrap intervals are the 95 % percentile intervals of the
metric over resampled examples.

Their tests checked only ``low <= estimate <= high`` (or a perfect scorer's (1, 1)), so a 90 %
interval (percentiles 5 and 95 instead of 2.5 and 97.5) passed them all (mutation of
scoring._bootstrap and ranking._result). Here each interval is recomputed from the same
resamples with scikit-learn's balanced accuracy and AUROC.
"""

from __future__ import annotations

import numpy as np
import pytest
from rule_scorer import RuleScorer
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from trustlab.interpret.sae.examples import Example, LatentExamples
from trustlab.interpret.sae.ranking import embedding_score
from trustlab.interpret.sae.scoring import detection_score

WORDS = ["cat", "dog", "sat", "mat", "red", "sun"]
N_BOOTSTRAP, SEED = 100, 3


def decode(token):
    return WORDS[int(token)] + " "


@pytest.fixture(scope="module")
def examples():
    """15 activating texts (about half with "cat") and 15 non-activating ones (a few with it):
    a rule scorer for "cat" is right on some of each class and wrong on others."""
    rng = np.random.default_rng(0)

    def example(quantile, cat):
        tokens = rng.integers(1, len(WORDS), size=4)
        tokens[rng.integers(4)] = 0 if cat else tokens[0]
        return Example(0, 0, tokens, np.full(4, float(quantile is not None)), quantile)

    test = tuple(example(i % 3, rng.random() < 0.6) for i in range(15))
    not_active = tuple(example(None, rng.random() < 0.25) for _ in range(15))
    return LatentExamples(latent=0, n_activating=15, max_activation=1.0, explainable=True,
                          quantile_edges=(0.0, 0.3, 0.6), test=test, not_active=not_active)  # fmt: skip


def _percentiles(values):
    return tuple(np.percentile(values, [2.5, 97.5]))


def test_detection_interval_is_the_percentile_interval_of_balanced_accuracy(examples):
    result = detection_score(examples, "the word cat", RuleScorer(), decode,
                             n_bootstrap=N_BOOTSTRAP, random_state=SEED)  # fmt: skip
    truth, guess = result.activating, result.predicted
    assert result.n_failed == 0 and 0.5 < result.balanced_accuracy < 1.0
    rng = np.random.default_rng(SEED)
    rng.permutation(result.n_examples)  # the scorer's shuffle comes first from the same stream
    draws = []
    for _ in range(N_BOOTSTRAP):
        rows = rng.integers(0, len(truth), len(truth))
        if truth[rows].any() and not truth[rows].all():
            draws.append(balanced_accuracy_score(truth[rows], guess[rows]))
    assert np.allclose(result.interval, _percentiles(draws), rtol=0, atol=1e-12)


class WordCounts:
    """A stand-in embedder: a text's counts of each word (the query shares its "cat")."""

    def encode(self, texts):
        return np.array([[t.split().count(w) + 0.1 for w in WORDS] for t in texts], float)


def test_embedding_interval_is_the_percentile_interval_of_the_auroc(examples):
    result = embedding_score(examples, "cat", decode, embedder=WordCounts(),
                             n_bootstrap=N_BOOTSTRAP, random_state=SEED)  # fmt: skip
    scores, positive = result.scores, result.activating
    assert 0.5 < result.auroc < 1.0
    rng = np.random.default_rng(SEED)
    rows = rng.integers(0, len(scores), (N_BOOTSTRAP, len(scores)))
    draws = [roc_auc_score(positive[r], scores[r]) for r in rows if 0 < positive[r].sum() < len(r)]
    assert np.allclose(result.interval, _percentiles(draws), rtol=0, atol=1e-12)
