"""Review 65: set_params(n_latents=16) on a fitted 2-latent SAE, then save, wrote a folder
load_sae refused ("its settings give 16 latents, its weights 2"); save now refuses it first."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret.sae import SparseAutoencoder, load_sae


def _sae():
    return SparseAutoencoder.from_weights(np.eye(2), [0.0, -1.0], np.eye(2), [0.0, 0.0])


def test_save_refuses_n_latents_changed_after_fit(tmp_path):
    sae = _sae().set_params(n_latents=16)
    with pytest.raises(InputError, match=r"^n_latents: expected None or the 2 latents.*got 16"):
        sae.save(tmp_path / "sae")
    assert not (tmp_path / "sae").exists()
    assert sae.encode([[3.0, 0.5]]).shape == (1, 2)  # the fitted SAE still encodes


@pytest.mark.parametrize("n_latents", [None, 2])
def test_save_with_n_latents_none_or_the_weights_loads(tmp_path, n_latents):
    _sae().set_params(n_latents=n_latents).save(tmp_path / "sae")
    assert load_sae(tmp_path / "sae").n_latents_ == 2
