"""Review pass 60: a steering shift too large for float32 is refused, not answered with nothing.

SmolLM2's RMSNorm sums the squares of the residual stream in float32. Once ``scale * vector`` has
an L2 norm past sqrt(float32 max) = 1.84e19 the sum overflows, every norm layer gives zeros, and
the output head a uniform distribution: ``steer(v, 10, scale=1e20)`` (or 1e38) gave the text ''
(token 0, <|endoftext|>, wins the all-way tie) and ``logprobs`` -log(49152) = -10.8027 for every
continuation, silently. Up to the limit the steered model is fine (a unit vector at 0.99 times
the limit gives -21.83 for " there", the value of every scale from 1e17 up).
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError

LIMIT = float(np.sqrt(np.finfo(np.float32).max))


def _unit(hidden):
    vector = np.random.default_rng(0).normal(size=hidden)
    return vector / np.linalg.norm(vector)


@pytest.mark.parametrize("scale", [1e38, 1e20, 1.01 * LIMIT])
def test_a_shift_past_float32s_square_root_is_refused(smollm2, scale):
    with pytest.raises(InputError, match=r"^scale: .*L2 norm below 1\.84e\+19") as caught:
        smollm2.steer(_unit(smollm2.hidden_size), 10, scale=scale)
    assert caught.value.argument == "scale"


def test_a_large_vector_with_scale_one_is_refused_too(smollm2):
    with pytest.raises(InputError, match="scale"):
        smollm2.steer(np.full(smollm2.hidden_size, 1e18), 3)  # norm 2.4e19


def test_a_shift_just_under_the_limit_still_steers(smollm2):
    uniform = -np.log(smollm2.model.config.vocab_size)
    with smollm2.steer(_unit(smollm2.hidden_size), 10, scale=0.99 * LIMIT):
        value = smollm2.logprobs(["Hi"], [" there"])[0]
    # far from the uniform answer of an overflowed norm (-10.80); measured -21.83
    assert value < uniform - 5.0
