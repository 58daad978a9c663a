"""Diff review 60 (B) of 58762982: the backdoor measures name ``scale`` when the shift overflows a
float16 model, as ``LocalModel.steer`` now does.

``steered_completions`` with ``steer_at='last'`` and ``perplexity`` add ``scale * vector``
through their own ``intervene`` hooks. On a tiny float16 Llama (width 16, a unit vector at layer
0) scale 6e4 is measured (perplexity 7.66 with ``steer_at='all'``) and at 7e4 the shift is inf:
the error named ``fn`` ('fn: expected a tensor of finite values back ...'), an argument no caller
of these measures passes (``steered_completions(..., steer_at='all')``, through ``steer``, already
named ``scale``). Now all of them name ``scale``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import SteeringVector, perplexity, steered_completions

pytest.importorskip("torch")

MEASURES = {
    "completions-last": lambda lm, v, s: steered_completions(lm, ["a b"], vector=v, scale=s),
    "perplexity-all": lambda lm, v, s: perplexity(lm, ["a b c"], vector=v, scale=s, steer_at="all"),
    "perplexity-last": lambda lm, v, s: perplexity(lm, ["c d"], prompts=["a b"], vector=v, scale=s),
}


@pytest.fixture(scope="module")
def half_llama():
    lm = tiny_llama(word_tokenizer(["a", "b", "c", "d"]), 8, hidden_size=16)
    lm.model.half()
    return lm


def _vector():
    vector = np.zeros(16)
    vector[0] = 1.0
    return SteeringVector(
        vector=vector, layer=0, kind="prompt", model="x", n_pairs=1, n_positive=1, n_negative=1
    )


@pytest.mark.parametrize("name", list(MEASURES))
def test_a_shift_that_overflows_float16_is_refused_naming_scale(half_llama, name):
    with pytest.raises(InputError, match=r"^scale: expected scale \* vector to stay finite") as e:
        MEASURES[name](half_llama, _vector(), 7e4)
    assert e.value.argument == "scale"
    assert str(e.value).endswith("at layer 0 (float16)")


@pytest.mark.parametrize("name", list(MEASURES))
def test_a_shift_within_float16_is_still_measured(half_llama, name):
    value = MEASURES[name](half_llama, _vector(), 6e4)
    assert isinstance(value, list) or np.isfinite(value)
