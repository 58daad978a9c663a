"""Review 58 (evals F2): top_logprobs above the model's vocabulary size gives every token, best
first, as the OpenAI API does; it was torch's raw "selected index k out of range" (casebench's
logits mode asks 20 on any model)."""

from __future__ import annotations

import math

from tiny_llama import tiny_llama, word_tokenizer


def test_top_logprobs_beyond_the_vocabulary_lists_every_token():
    lm = tiny_llama(word_tokenizer(["a", "b"]), 5, hidden_size=16)
    (completion,) = lm.completions(["a"], max_new_tokens=2, top_logprobs=20, chat=False)
    assert completion.top_logprobs
    for token, logprob, top in zip(
        completion.tokens, completion.logprobs, completion.top_logprobs, strict=True
    ):
        assert len(top) == 5  # the whole vocabulary
        values = [v for _, v in top]
        assert values == sorted(values, reverse=True)
        assert math.isclose(sum(math.exp(v) for v in values), 1.0, rel_tol=1e-9)
        assert top[0] == (token, logprob)  # greedy: the chosen token is the best one
