"""``explanation_logprobs(batch=False)`` (what ``sae score --methods intervention`` uses for a
latent's true and shuffled explanation): the worked examples and passages run once, each
explanation in a batch of its own, so its numbers equal a call with it alone bit for bit
(speed, stop 63: the shuffled row ran every passage again)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret.sae.effects import explanation_logprobs

PASSAGES = ["The cat sat on the mat and purred", "Numbers 12, 45 and 7"]
EXPLANATIONS = ["cats", "numbers written as digits"]


def test_unbatched_equals_one_call_per_explanation(tiny):
    together = explanation_logprobs(tiny, PASSAGES, EXPLANATIONS, batch=False)
    alone = np.vstack([explanation_logprobs(tiny, PASSAGES, [e]) for e in EXPLANATIONS])
    assert together.shape == (2, 2)
    assert np.array_equal(together, alone)  # bit for bit


def test_batch_must_be_a_bool(tiny):
    with pytest.raises(InputError) as err:
        explanation_logprobs(tiny, PASSAGES, EXPLANATIONS, batch="no")
    assert err.value.argument == "batch"
