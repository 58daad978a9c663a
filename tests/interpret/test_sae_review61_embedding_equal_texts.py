"""Diff review 61 E of 23eab230: the embedding scorer gives an activating and a non-activating
example of the same text the same score, as the surprisal scorer now does.

An embedder encodes in padded batches (sentence-transformers sorts by length, 32 a batch), so the
same text could come out of two batches up to 1e-7 apart (the shipped MiniLM: 1 of 40 draws of
101 texts) and its tie, worth half a pair in the AUROC, counted as a win or a loss. Each distinct
text is now embedded once. The stand-in embedder here shifts each row by its place in the call,
as batch rounding does.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from trustlab.interpret.sae.examples import Example, LatentExamples
from trustlab.interpret.sae.ranking import embedding_score

WORDS = ["cat", "dog", "sat", "mat"]


class PlaceRounding:
    """Word counts, each row nudged by 1e-9 x its place in the call (batch-dependent rounding)."""

    def encode(self, texts):
        counts = np.array([[t.split().count(w) + 0.1 for w in WORDS] for t in texts], float)
        return counts + 1e-9 * np.arange(len(texts))[:, None]


def _example(tokens, quantile):
    tokens = np.asarray(tokens)
    return Example(0, 0, tokens, np.full(len(tokens), float(quantile is not None)), quantile)


def test_the_same_text_in_both_classes_gets_one_embedding_score():
    test = (_example([0, 2], 0), _example([0, 3], 0), _example([1, 2, 3], 0))
    not_active = (_example([1, 2, 3], None), _example([1, 1], None), _example([2, 3], None))
    examples = LatentExamples(latent=0, n_activating=3, max_activation=1.0, explainable=True,
                              quantile_edges=(0.0,), test=test, not_active=not_active)  # fmt: skip
    result = embedding_score(examples, "cat", lambda t: WORDS[int(t)] + " ",
                             embedder=PlaceRounding(), n_bootstrap=10)  # fmt: skip
    assert result.scores[2] == result.scores[3]  # "dog sat mat" in both classes
    assert result.auroc == roc_auc_score(result.activating, result.scores)
