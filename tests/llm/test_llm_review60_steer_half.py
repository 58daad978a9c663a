"""Review pass 60: steering a float16 model past float16's range is refused naming ``scale``.

``steer`` casts ``scale * vector`` to the layer output's dtype; in a float16 model a shift entry
past 65504 becomes inf. On a tiny float16 Llama (width 16), a unit vector at scale 6e4 still
steers (log-probability -2.1517) and at 7e4 the cast overflowed: logprobs gave nan and generate
'' before this pass; with its finite check of ``intervene`` the error named ``fn``, which the
caller of ``steer`` never passed. Now it names ``scale``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def half_llama():
    lm = tiny_llama(word_tokenizer(["a", "b", "c", "d"]), 8, hidden_size=16)
    lm.model.half()
    return lm


def _unit(width):
    vector = np.zeros(width)
    vector[0] = 1.0
    return vector


def test_a_shift_that_overflows_float16_is_refused_naming_scale(half_llama):
    with half_llama.steer(_unit(16), 0, scale=7e4):
        with pytest.raises(InputError, match=r"^scale: expected scale \* vector to stay finite"):
            half_llama.logprobs(["a b"], ["c"])
        with pytest.raises(InputError, match=r"at layer 0 \(float16\)$") as caught:
            half_llama.generate("a b", 2, chat=False)
    assert caught.value.argument == "scale"


def test_a_shift_within_float16_still_steers(half_llama):
    with half_llama.steer(_unit(16), 0, scale=6e4):
        value = half_llama.logprobs(["a b"], ["c"])[0]
    assert np.isfinite(value)
