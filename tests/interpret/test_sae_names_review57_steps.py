"""Review 57: SAEFit counts its Adam steps in ``n_steps`` (beside n_rows, n_held_out,
n_resampled); ``fit.steps`` still reads, with a FutureWarning, for one release, and SAEs saved
with the old key still load."""

import json

import numpy as np
import pytest

from trustlab.interpret import SparseAutoencoder, load_sae


def test_sae_fit_says_n_steps_and_an_old_file_loads(tmp_path):
    rng = np.random.default_rng(57)
    W = rng.normal(size=(3, 4))
    sae = SparseAutoencoder.from_weights(W, np.zeros(4), W.T, np.zeros(3), k=2)
    fit = sae.fit_
    assert fit.n_steps == 0 and "n_steps" in fit.to_dict() and "steps" not in fit.to_dict()
    with pytest.warns(FutureWarning, match="^steps is deprecated; use n_steps$"):
        assert fit.steps == 0
    sae.save(tmp_path / "sae")
    path = tmp_path / "sae" / "trustlab_sae.json"
    info = json.loads(path.read_text())
    info["fit"]["steps"] = 12  # as an SAE trained 12 steps and saved before review 57 says
    del info["fit"]["n_steps"]
    path.write_text(json.dumps(info))
    loaded = load_sae(tmp_path / "sae").fit_
    assert loaded.n_steps == 12
    assert {**loaded.to_dict(), "n_steps": 0} == fit.to_dict()
