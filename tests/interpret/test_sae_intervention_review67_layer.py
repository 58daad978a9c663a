"""The SAE intervention's ``layer`` is read as written or refused as ``layer`` (review 67).
_check_subject passed int(layer) on, so layer=True, 1.7 and "1" were all read as layer 1 (helper
E, tiny model): now a bool, a non-integral float or a string is an InputError naming layer and
the value given, before the model runs; ints, numpy integers and 0-d integer arrays read as
before. A 2-layer random Llama of width 16 on the words a-d (no model loading)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from tiny_llama import abcd_llama  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.interpret import (  # noqa: E402
    SparseAutoencoder,
    intervention_kl,
    kl_curve,
)
from trustlab.interpret.sae.effects import (  # noqa: E402
    intervened_generations,
    intervention_score,
    output_effects,
)

PROMPTS = ["a b c", "d a"]


@pytest.fixture(scope="module")
def subject():
    model = abcd_llama(16, 0)
    rng = np.random.default_rng(0)
    W_dec = rng.normal(size=(4, 16))
    sae = SparseAutoencoder.from_weights(W_dec.T, np.zeros(4), W_dec, np.zeros(16), k=2, layer=0)
    return model, sae


CALLS = {
    "intervention_kl": lambda m, s, layer: intervention_kl(m, s, 1, PROMPTS, 3.0, layer=layer),
    "kl_curve": lambda m, s, layer: kl_curve(m, s, 1, PROMPTS, layer=layer),
    "output_effects": lambda m, s, layer: output_effects(m, s, 1, PROMPTS, 3.0, layer=layer),
    "intervened_generations": lambda m, s, layer: intervened_generations(
        m, s, 1, PROMPTS, 3.0, max_new_tokens=1, layer=layer
    ),
    "intervention_score": lambda m, s, layer: intervention_score(
        m, s, 1, PROMPTS, "a", 3.0, layer=layer, generations=(["a", "b"], ["c", "d"])
    ),
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize(
    "layer, shown",
    [
        (True, "True"),
        (np.True_, "True"),
        (np.array(True), "True"),
        (1.7, "1.7"),
        (np.array(1.5), "1.5"),
        (float("nan"), "nan"),
        ("1", "'1'"),
    ],
)
def test_a_layer_that_is_no_integer_is_refused_as_layer(subject, call, layer, shown):
    with pytest.raises(
        InputError,
        match=r"^layer: expected an integer decoder layer of 'tiny-llama' in \[0, 1\], got ",
    ) as exc:
        CALLS[call](*subject, layer)
    assert exc.value.argument == "layer" and shown in str(exc.value)


@pytest.mark.parametrize("layer", [2, -1, np.int64(5)])
def test_a_layer_past_the_model_is_refused_as_given(subject, layer):
    with pytest.raises(
        InputError,
        match=r"^layer: expected an integer decoder layer of 'tiny-llama' in \[0, 1\], got -?\d",
    ):
        intervention_kl(*subject, 1, PROMPTS, 3.0, layer=layer)


def test_integer_layers_read_as_before(subject):
    model, sae = subject
    one = intervention_kl(model, sae, 1, PROMPTS, 3.0, layer=1)
    assert one != intervention_kl(model, sae, 1, PROMPTS, 3.0)  # the SAE's layer 0 differs
    for layer in (np.int64(1), np.array(1), np.array(1, dtype=np.uint8), 1.0):
        assert intervention_kl(model, sae, 1, PROMPTS, 3.0, layer=layer) == one
    assert kl_curve(model, sae, 1, PROMPTS, layer=np.array(1))(3.0) == one
