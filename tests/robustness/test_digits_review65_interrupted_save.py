"""An interrupted overwrite of a saved base model (diff review 65 E): save_base_model wrote
model.pt, then model.json, and left an earlier save's model.json in place meanwhile. Stopped
between the two (Ctrl-C), load_base_model gave the new weights under the old description: a
model trained at sigma 0.5 certified as one of sigma 0.25. Now the old model.json is removed
first, so such a folder is refused."""

import pytest

from interrupted_saves import stopped_at
from trustlab.errors import InputError

torch = pytest.importorskip("torch")
digits = pytest.importorskip("trustlab.robustness.digits")


def test_an_interrupted_overwrite_does_not_load_under_the_old_sigma(tmp_path):
    old = digits.digits_model(hidden=8, random_state=0)
    new = digits.digits_model(hidden=8, random_state=1)
    digits.save_base_model(old, tmp_path, sigma=0.25)
    with stopped_at(digits, digits.DESCRIPTION_FILE):
        digits.save_base_model(new, tmp_path, sigma=0.5)
    with pytest.raises(InputError):  # the old sigma beside the new weights loaded
        digits.load_base_model(tmp_path)
    digits.save_base_model(new, tmp_path, sigma=0.5)  # a save that completes reads back whole
    loaded = digits.load_base_model(tmp_path)
    assert loaded.trustlab_description["sigma"] == 0.5
    assert all(
        torch.equal(a, b)
        for a, b in zip(loaded.state_dict().values(), new.state_dict().values(), strict=True)
    )


def test_info_that_is_not_json_leaves_the_earlier_model(tmp_path):
    model = digits.digits_model(hidden=8, random_state=0)
    other = digits.digits_model(hidden=8, random_state=1)
    digits.save_base_model(model, tmp_path, sigma=0.25)
    with pytest.raises(TypeError):  # refused before anything is removed or rewritten
        digits.save_base_model(other, tmp_path, sigma=object())
    loaded = digits.load_base_model(tmp_path)  # other's weights were written under sigma 0.25
    assert loaded.trustlab_description["sigma"] == 0.25
    assert torch.equal(loaded.state_dict()["0.weight"], model.state_dict()["0.weight"])
