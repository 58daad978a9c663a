"""Review 61 (polysae): an activating and a non-activating example of the same text get the same
surprisal score.

The surprisal scorer runs its few-shot prompt once per batch (``share_prefix``, the default),
whose float32 rounding depends on a row's batch: the same text came out 6e-9 to 5e-8 nats apart
in the two classes, so a tie (half a pair in the AUROC) counted as a win or a loss (AUROC 0.5714
instead of 0.5595 on 7 + 6 examples). Each distinct prompt and continuation is now computed once.
A tiny random Llama on a word tokenizer stands in for the scorer.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.interpret.sae.examples import Example, LatentExamples
from trustlab.interpret.sae.ranking import surprisal_prompts, surprisal_score

SEED, BATCH = 1, 3  # a draw and batch size whose shared-prompt rounding split the tie


@pytest.fixture(scope="module")
def scorer():
    torch.set_num_threads(1)
    tokenizer = word_tokenizer(" ".join(surprisal_prompts("x")).split())
    return tiny_llama(tokenizer, len(tokenizer.get_vocab()))


def _examples(vocab: int) -> LatentExamples:
    """Five activating and five non-activating random texts, and one text in both classes."""
    rng = np.random.default_rng(SEED)

    def example(tokens, quantile):
        tokens = np.asarray(tokens)
        return Example(0, 0, tokens, np.full(len(tokens), float(quantile is not None)), quantile)

    same = rng.integers(3, vocab, size=rng.integers(1, 4))
    test = [example(rng.integers(3, vocab, size=rng.integers(1, 5)), 0) for _ in range(5)]
    not_active = [example(same, None)]
    not_active += [example(rng.integers(3, vocab, size=rng.integers(1, 5)), None) for _ in range(5)]
    return LatentExamples(latent=0, n_activating=6, max_activation=1.0, explainable=True,
                          quantile_edges=(0.0,), test=(*test, example(same, 0)),
                          not_active=tuple(not_active))  # fmt: skip


def test_surprisal_scores_the_same_text_alike_in_both_classes(scorer):
    words = {i: w for w, i in scorer.tokenizer.get_vocab().items()}
    examples = _examples(len(words))
    result = surprisal_score(examples, "fruits", scorer, lambda t: words[int(t)] + " ",
                             batch_size=BATCH, n_bootstrap=10)  # fmt: skip
    assert result.scores[5] == result.scores[6]  # the last test example, the first other one
    assert result.auroc == roc_auc_score(result.activating, result.scores)


def test_each_distinct_prompt_and_continuation_is_asked_once():
    from trustlab.interpret.sae.ranking import _distinct_logprobs

    class Counting:
        def logprobs(self, prompts, continuations, **options):
            self.seen = (list(prompts), list(continuations), options)
            return [
                float(len(p) + 10 * len(c)) for p, c in zip(prompts, continuations, strict=True)
            ]

    model = Counting()
    out = _distinct_logprobs(model, ["a", "b", "a", "a"], ["x", "x", "x", "yy"], batch_size=2)
    assert model.seen == (["a", "b", "a"], ["x", "x", "yy"], {"batch_size": 2})
    assert out.tolist() == [11.0, 11.0, 11.0, 21.0] and out.dtype == np.float64
