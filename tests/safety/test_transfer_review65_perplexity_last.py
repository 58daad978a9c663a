"""perplexity(steer_at='last') adds the vector at each prompt's last token, the position that
predicts the first counted token (review 65). Moving it one token on (the first continuation
token) passed every light steering test (review 54 inputs, review 60 shift half/norm); this
compares with a brute force over one text at a time, steered through ``intervene`` at that
position only, and checks the neighbouring position gives another number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.safety.transfer import SteeringVector, perplexity

torch = pytest.importorskip("torch")
WORDS = "a b c d e f".split()


def _brute_force(lm, vector, prompts, texts, at):
    """exp(mean NLL of the continuation tokens), the vector added at ``at(len(prompt ids))``."""
    total, count = 0.0, 0
    for prompt, text in zip(prompts, texts, strict=True):
        head = lm.tokenizer(prompt)["input_ids"]
        tail = lm.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([head + tail])
        where = at(len(head))

        def add(h, where=where):
            out = h.clone()
            out[:, where] += torch.tensor(vector.vector, dtype=h.dtype)
            return out

        with torch.inference_mode(), lm.intervene(vector.layer, add):
            logits = lm.model(input_ids=ids).logits[0].double()
        scores = torch.log_softmax(logits[:-1], dim=-1).gather(1, ids[0, 1:, None])[:, 0]
        total -= float(scores[len(head) - 1 :].sum())
        count += len(tail)
    return math.exp(total / count)


def test_perplexity_steers_the_last_prompt_token():
    lm = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=16, name="m", seed=1)
    vector = SteeringVector(
        vector=np.random.default_rng(0).normal(size=16) * 3, layer=0, kind="prompt", model="m",
        n_pairs=1, n_positive=1, n_negative=1,
    )  # fmt: skip
    prompts, texts = ["a b c", "d e f a b", "c a"], ["d e", "c", "f f b"]
    got = perplexity(lm, texts, prompts=prompts, vector=vector, batch_size=2)
    assert got == pytest.approx(_brute_force(lm, vector, prompts, texts, lambda n: n - 1), rel=1e-6)
    # float32 forward passes batched vs one at a time differ by ~1e-7 relative; the next position
    # gives another perplexity
    wrong = _brute_force(lm, vector, prompts, texts, lambda n: n)
    assert abs(got / wrong - 1) > 1e-3
