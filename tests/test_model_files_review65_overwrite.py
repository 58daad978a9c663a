"""An interrupted overwrite of a folder written by write_model_folder (review 65, diff review of
3622db32/2bfaa9e9): it wrote weights.safetensors, then model.json, and left an earlier save's
model.json in place meanwhile. Stopped between the two (Ctrl-C), read_model_folder gave the new
weights under the old description (here the class names the other way round); the savers of
regions (RegionsExplainer, BlackBoxClassifier) and watermark (NR model) share it. Now the old
model.json is removed first, so such a folder is no model."""

import pytest

import trustlab._model_files as model_files
from interrupted_saves import stopped_at
from trustlab.errors import InputError

torch = pytest.importorskip("torch")


def test_an_interrupted_overwrite_does_not_load_under_the_old_description(tmp_path):
    torch.manual_seed(0)
    old, new = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    model_files.write_model_folder(tmp_path, {"format": "t", "classes": ["cat", "dog"]}, {"n": old})
    newer = {"format": "t", "classes": ["dog", "cat"]}
    with stopped_at(model_files, "model.json"):
        model_files.write_model_folder(tmp_path, newer, {"n": new})
    with pytest.raises(InputError):  # the old model.json beside the new weights loaded
        model_files.read_model_folder(tmp_path, "t", "the test")
    model_files.write_model_folder(tmp_path, newer, {"n": new})  # a save that completes
    meta, states = model_files.read_model_folder(tmp_path, "t", "the test")
    assert meta["classes"] == ["dog", "cat"]
    assert torch.equal(states["n"]["weight"], new.weight.detach())


def test_a_description_that_cannot_be_written_keeps_the_earlier_model(tmp_path):
    net = torch.nn.Linear(2, 1)
    model_files.write_model_folder(tmp_path, {"format": "t", "k": 1}, {"n": net})
    with pytest.raises(TypeError):  # refused before anything is removed or rewritten
        model_files.write_model_folder(tmp_path, {"format": "t", "k": object()}, {"n": net})
    assert model_files.read_model_folder(tmp_path, "t", "the test")[0]["k"] == 1
