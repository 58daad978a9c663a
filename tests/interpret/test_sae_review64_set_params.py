"""Encoding checks activation and k as set_params left them (review 64).

k may be set anew on fitted weights (the cache's run key tells such SAEs apart), but encode and
apply_torch did not check it: k=0 gave all-zero codes, activation 'gelu' encoded as TopK, k
above the latents raised numpy's 'kth out of bounds' / torch's 'selected index k out of range'.
Now an InputError names the setting. A 4 -> 8 SAE of given weights: no training.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.interpret import SparseAutoencoder

RNG = np.random.default_rng(0)
WEIGHTS = (RNG.normal(size=(4, 8)), np.zeros(8), RNG.normal(size=(8, 4)), np.zeros(4))
X = RNG.normal(size=(3, 4))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"k": 0}, "k: expected an integer >= 1, got 0"),
        ({"k": 100}, r"k: expected at most n_latents \(8\), got 100"),
        ({"activation": "gelu"}, "activation: expected one of"),
    ],
)
def test_a_changed_encoding_is_checked(change, said):
    sae = SparseAutoencoder.from_weights(*WEIGHTS, k=2).set_params(**change)
    with pytest.raises(InputError, match=said):
        sae.encode(X)
    with pytest.raises(InputError, match=said):
        sae.apply_torch(torch.tensor(X, dtype=torch.float32))


def test_a_valid_new_k_encodes_with_it():
    sae = SparseAutoencoder.from_weights(*WEIGHTS, k=2).set_params(k=3)
    assert ((sae.encode(X) > 0).sum(axis=1) <= 3).all()
    z, _ = sae.apply_torch(torch.tensor(X, dtype=torch.float32))
    assert np.allclose(z.numpy(), sae.encode(X), atol=1e-5)
