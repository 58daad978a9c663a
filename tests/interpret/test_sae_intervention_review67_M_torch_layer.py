"""A 0-d torch tensor as the SAE intervention's ``layer`` reads as its item (diff review 67 M of
de014442). int(layer) read torch.tensor(1) as layer 1 before de014442; its new check read only
numpy's 0-d arrays, so torch.tensor(1) was refused as 'layer: expected an integer decoder
layer ..., got 1'. A torch bool or non-integral 0-d tensor is still refused as layer."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tiny_llama import abcd_llama  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.interpret import SparseAutoencoder, intervention_kl, kl_curve  # noqa: E402

PROMPTS = ["a b c", "d a"]


@pytest.fixture(scope="module")
def subject():
    model = abcd_llama(16, 0)
    W_dec = np.random.default_rng(0).normal(size=(4, 16))
    sae = SparseAutoencoder.from_weights(W_dec.T, np.zeros(4), W_dec, np.zeros(16), k=2, layer=0)
    return model, sae


def test_a_torch_integer_layer_reads_as_before(subject):
    model, sae = subject
    one = intervention_kl(model, sae, 1, PROMPTS, 3.0, layer=1)
    for layer in (torch.tensor(1), torch.tensor(1, dtype=torch.int32)):
        assert intervention_kl(model, sae, 1, PROMPTS, 3.0, layer=layer) == one
    assert kl_curve(model, sae, 1, PROMPTS, layer=torch.tensor(1))(3.0) == one


@pytest.mark.parametrize("layer", [torch.tensor(True), torch.tensor(1.5), torch.tensor(2)])
def test_a_torch_layer_that_is_no_layer_is_refused_as_layer(subject, layer):
    with pytest.raises(InputError, match=r"^layer: expected an integer decoder layer") as exc:
        intervention_kl(*subject, 1, PROMPTS, 3.0, layer=layer)
    assert exc.value.argument == "layer"
