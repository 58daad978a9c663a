"""Detection and fuzzing read "1" and "0" off one forward pass a prompt
(``LocalModel.next_token_logprobs``), not two (``logprobs(prompts * 2, ...)``): the same
log-probabilities up to float32 rounding (the batches differ; measured on SmolLM2 at most 9e-6,
asserted within 1e-4), half the forward passes (speed, stop 63)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret.sae.scoring import render_one

TEXTS = ["the cat sat on the mat", "12 45 and 390", "def f(x): return x", "a", "numbers 7 8 9"]


@pytest.mark.parametrize("share", [False, True])
def test_one_pass_equals_two_passes(tiny, share):
    prompts = [render_one("detection", "numbers written as digits", t) for t in TEXTS]
    n = len(prompts)
    two = tiny.logprobs(prompts * 2, ["1"] * n + ["0"] * n, chat=True, share_prefix=share)
    one = tiny.next_token_logprobs(prompts, ["1", "0"], chat=True, share_prefix=share,
                                   batch_size=3)  # fmt: skip
    assert one.shape == (n, 2)
    np.testing.assert_allclose(one[:, 0], two[:n], rtol=0, atol=1e-4)
    np.testing.assert_allclose(one[:, 1], two[n:], rtol=0, atol=1e-4)


def test_tokens_must_be_one_token_each(tiny):
    with pytest.raises(InputError) as err:
        tiny.next_token_logprobs(["Answer:"], ["1", " numbers written"])
    assert err.value.argument == "tokens"
