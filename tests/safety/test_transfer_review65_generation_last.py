"""steered_completions(steer_at='last') adds the vector at each prompt's last token in the one
forward pass over the left-padded prompts, and not at generated tokens (review 65). Adding it
one column earlier (out[:, -2]) passed every light steering test (review 54 inputs, review 60
shift half/norm); this compares with greedy decoding one prompt at a time without a cache,
steered through ``intervene`` at the last prompt token only, and checks the position matters."""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.safety.transfer import SteeringVector, steered_completions

torch = pytest.importorskip("torch")
WORDS = "a b c d e f".split()
PROMPTS = ["a b c", "d e f a b", "c a", "f f e d c b a"]  # lengths 3-7: left padding


def _greedy(lm, vector, before_end, new_tokens=4):
    """Each prompt continued token by token (no cache), the vector added at the prompt's last
    token (``before_end`` 0) or the one before it (1)."""
    texts = []
    for prompt in PROMPTS:
        ids = list(lm.tokenizer(prompt)["input_ids"])
        where = len(ids) - 1 - before_end

        def add(h, where=where):
            out = h.clone()
            out[:, where] += torch.tensor(vector.vector, dtype=h.dtype)
            return out

        for _ in range(new_tokens):
            with torch.inference_mode(), lm.intervene(vector.layer, add):
                ids.append(int(lm.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax()))
        texts.append(lm.tokenizer.decode(ids[len(ids) - new_tokens :], skip_special_tokens=True))
    return texts


def test_generation_steers_the_last_prompt_token_only():
    lm = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=16, name="m", seed=1)
    vector = SteeringVector(
        vector=np.random.default_rng(1).normal(size=16) * 0.3, layer=0, kind="prompt",
        model="m", n_pairs=1, n_positive=1, n_negative=1,
    )  # fmt: skip
    got = steered_completions(lm, PROMPTS, vector=vector, max_new_tokens=4, batch_size=4)
    assert got == _greedy(lm, vector, 0)
    assert got != _greedy(lm, vector, 1)  # the position is visible in these texts (4 of 4 differ)
