"""Review pass 60: ``intervene`` refuses a function that writes nan or inf into the residual stream.

With ``lm.intervene(5, lambda h: h * nan)`` (or ``h + inf``) the logits were all nan: greedy
``generate`` and ``completions`` answered '' (argmax of nan picks token 0, <|endoftext|>),
``logprobs`` nan, and sampling raised torch's raw 'probability tensor contains either inf, nan
or element < 0'. Now the forward pass raises InputError naming ``fn``. A layer output that is
not finite on its own (the model's doing, here simulated by a plain torch hook) is not blamed on
a later ``fn``.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError

torch = pytest.importorskip("torch")

MESSAGE = r"^fn: expected a tensor of finite values back, got \d+ nan or inf value\(s\) at layer 5"


@pytest.mark.parametrize("poison", [float("nan"), float("inf")])
def test_greedy_generation_and_scoring_refuse_a_non_finite_fn(smollm2, poison):
    with smollm2.intervene(5, lambda h: h + poison):
        with pytest.raises(InputError, match=MESSAGE) as caught:
            smollm2.generate("Hi", 2)
        assert caught.value.argument == "fn"
        with pytest.raises(InputError, match=MESSAGE):
            smollm2.completions("Hi", 2)
        with pytest.raises(InputError, match=MESSAGE):
            smollm2.logprobs(["Hi"], [" there"])


def test_sampling_refuses_it_in_trustlabs_words(smollm2):
    with smollm2.intervene(5, lambda h: h * float("nan")):
        with pytest.raises(InputError, match=MESSAGE):
            smollm2.completions("Hi", 2, temperature=0.7, random_state=0)


def test_a_layer_output_already_non_finite_is_not_blamed_on_fn(smollm2):
    layer = smollm2.model.model.layers[5]
    handle = layer.register_forward_hook(lambda m, a, out: out * float("nan"))
    try:
        with smollm2.intervene(6, lambda h: h):
            assert np.isnan(smollm2.logprobs(["Hi"], [" there"])[0])  # as the model gives
    finally:
        handle.remove()
