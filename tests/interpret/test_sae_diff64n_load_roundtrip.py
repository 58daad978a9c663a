"""What save writes, load_sae reads back (diff review 64 N of 579f8055).

579f8055 checked trustlab_sae.json's settings as fit checks them, so a folder save had just
written was refused: an SAE of given weights with one latent ('n_latents: expected an integer
>= 2, got 1'), or one whose training setting was set anew after the fit (batch_size=0). Encoding
reads activation and k only; those (and a stated n_latents) are still checked.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import SparseAutoencoder, load_sae


@pytest.mark.parametrize("k", [None, 1])
def test_a_one_latent_sae_of_given_weights_loads(tmp_path, k):
    sae = SparseAutoencoder.from_weights(np.ones((3, 1)), [0.0], np.ones((1, 3)), np.zeros(3), k=k)
    back = load_sae(sae.save(tmp_path / "sae"))
    assert back.n_latents_ == 1 and back.activation == sae.activation
    np.testing.assert_array_equal(back.encode([[1.0, 2.0, 3.0]]), [[6.0]])


def test_a_training_setting_set_after_the_fit_does_not_block_loading(tmp_path):
    sae = SparseAutoencoder.from_weights(np.eye(4, 8), np.zeros(8), np.eye(8, 4), np.zeros(4), k=2)
    sae.set_params(batch_size=0, max_epochs=0)
    back = load_sae(sae.save(tmp_path / "sae"))
    assert (back.k, back.n_latents_) == (2, 8)


@pytest.mark.parametrize(("k", "said"), [(0, "k: expected an integer >= 1, got 0"), (2.5, "k: ")])
def test_save_refuses_a_k_that_load_would_refuse(tmp_path, k, said):
    sae = SparseAutoencoder.from_weights(np.eye(4, 8), np.zeros(8), np.eye(8, 4), np.zeros(4), k=2)
    sae.set_params(k=k)
    with pytest.raises(InputError, match=said):
        sae.save(tmp_path / "sae")
    assert not (tmp_path / "sae").exists()
