"""An interrupted overwrite of a saved SAE (diff review 65 E): save wrote the weights, then
cfg.json and trustlab_sae.json, and left an earlier save's JSON in place meanwhile. Stopped
before either JSON (Ctrl-C), load_sae gave the new weights under the old k (2 for an SAE saved
with k 5: same shapes). Now both old JSON files are removed first, so such a folder is refused."""

import numpy as np
import pytest

import trustlab.interpret.sae.model as sae_model
from interrupted_saves import stopped_at
from trustlab.errors import TrustlabError
from trustlab.interpret import SparseAutoencoder, load_sae


def _sae(seed, k):
    rng = np.random.default_rng(seed)
    return SparseAutoencoder.from_weights(
        rng.normal(size=(4, 8)), np.zeros(8), rng.normal(size=(8, 4)), np.zeros(4), k=k
    )


@pytest.mark.parametrize("stop_at", [sae_model.CFG_FILE, sae_model.TRUSTLAB_FILE])
def test_an_interrupted_overwrite_does_not_load_under_the_old_k(tmp_path, stop_at):
    new = _sae(1, 5)
    _sae(0, 2).save(tmp_path)
    with stopped_at(sae_model, stop_at):
        new.save(tmp_path)
    with pytest.raises(TrustlabError):  # the old k beside the new weights loaded
        load_sae(tmp_path)
    new.save(tmp_path)  # a save that completes reads back whole
    loaded = load_sae(tmp_path)
    assert loaded.k == 5 and np.array_equal(loaded.W_enc_, new.W_enc_)
