"""steered_completions(steer_at='last') leaves the generated tokens unsteered (diff review 65 F
of fa4984a4). A mutant adding the vector also at every decoding step passed
test_transfer_review65_generation_last.py: the tiny random Llamas (tied embeddings) repeat one
token, so their greedy texts rarely show it (13 of 288 settings tried, by near ties). This
watches the layer's function instead: it shifts the prompt's last column only, and returns the
one-token decoding passes unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.safety.transfer import SteeringVector, steered_completions

torch = pytest.importorskip("torch")
WORDS = "a b c d e f".split()


def test_generation_does_not_steer_the_decoding_steps(monkeypatch):
    lm = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=16, name="m", seed=1)
    vector = SteeringVector(
        vector=np.random.default_rng(1).normal(size=16) * 0.3, layer=0, kind="prompt",
        model="m", n_pairs=1, n_positive=1, n_negative=1,
    )  # fmt: skip
    calls = []  # (tokens in the pass, columns the function changed)
    intervene = lm.intervene

    def watched(layer, fn, **kwargs):
        def spy(h):
            out = fn(h)
            changed = (out != h).any(dim=2).any(dim=0).nonzero()[:, 0].tolist()
            calls.append((h.shape[1], changed))
            return out

        return intervene(layer, spy, **kwargs)

    monkeypatch.setattr(lm, "intervene", watched)
    steered_completions(lm, ["a b c", "d e f a b"], vector=vector, max_new_tokens=4)
    width = len(lm.tokenizer("d e f a b")["input_ids"])
    assert calls[0] == (width, [width - 1])  # the prompts' pass: their (left-padded) last token
    assert len(calls) == 4 and all(call == (1, []) for call in calls[1:])  # 3 decoding steps
