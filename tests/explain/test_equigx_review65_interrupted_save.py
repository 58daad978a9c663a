"""An interrupted overwrite of a saved TensorFieldNetwork (diff review 65 E): save wrote
weights.safetensors, then config.json, and left an earlier save's config.json in place meanwhile.
Stopped between the two (Ctrl-C), load gave the new weights under the old settings (radius 5.0
for a network saved with radius 2.0: same shapes). Now the old config.json is removed first."""

import pytest

from interrupted_saves import stopped_at
from trustlab.errors import InputError

torch = pytest.importorskip("torch")
equigx_model = pytest.importorskip("trustlab.explain.equigx.model")


def test_an_interrupted_overwrite_does_not_load_under_the_old_settings(tmp_path):
    torch.manual_seed(0)
    old = equigx_model.TensorFieldNetwork(mul=1, l_max=0, n_layers=1, radius=5.0)
    new = equigx_model.TensorFieldNetwork(mul=1, l_max=0, n_layers=1, radius=2.0)
    old.save(tmp_path)
    with stopped_at(equigx_model, "config.json"):
        new.save(tmp_path)
    with pytest.raises(InputError):  # the old radius beside the new weights loaded
        equigx_model.TensorFieldNetwork.load(tmp_path)
    new.save(tmp_path)  # a save that completes reads back whole
    loaded = equigx_model.TensorFieldNetwork.load(tmp_path)
    assert loaded.config.radius == 2.0
    for name, value in new.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value), name
