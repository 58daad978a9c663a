"""Diff review 63 D of 5e05fd86: ``explanation_logprobs(batch=False)`` runs each explanation in a
batch of its own and every passage once. The commit's test compares values only, and on the tiny
model a batched run gave the same bits for its two explanations, so always batching passed it
(mutation, measured); the forward calls' batch sizes and count pin it without a float path."""

from __future__ import annotations

import pytest

from trustlab.interpret.sae.effects import explanation_logprobs

PASSAGES = ["The cat sat on the mat and purred", "Numbers 12, 45 and 7", "x"]
EXPLANATIONS = ["cats and mats", "numbers written as digits", "a"]


class _Counting:
    """The tiny model, recording the batch size of every forward_cached call."""

    def __init__(self, model):
        self.model, self.sizes = model, []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def forward_cached(self, input_ids, cache=None):
        self.sizes.append(int(input_ids.shape[0]))
        return self.model.forward_cached(input_ids, cache)


@pytest.mark.parametrize("batch", [False, True])
def test_each_explanation_alone_and_passages_once(tiny, batch):
    scorer = _Counting(tiny)
    explanation_logprobs(scorer, PASSAGES, EXPLANATIONS, batch=batch)
    tok = tiny.tokenizer
    multi = sum(len(tok(e, add_special_tokens=False)["input_ids"]) > 1 for e in EXPLANATIONS)
    assert multi >= 2  # two explanations run after each passage
    n = len(PASSAGES)
    if batch:  # shots, then per passage: the passage and one batch of all explanations
        assert scorer.sizes == [1] + [1, len(EXPLANATIONS)] * n
    else:  # shots, then per passage: the passage once and each longer explanation alone
        assert scorer.sizes == [1] + [1] * (n * (1 + multi))
