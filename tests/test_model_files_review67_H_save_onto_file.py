"""Saving a model folder (regions' BlackBoxClassifier / RegionSparseClassifier, the watermark
predictor: all through write_model_folder) onto a file is refused in words (diff review 67 H).

Measured on c5786d74: ``write_model_folder(file, ...)`` stopped on the raw ``FileExistsError:
[Errno 17] File exists`` of ``Path.mkdir`` and ``write_model_folder(file / "below", ...)`` on
``NotADirectoryError`` (038a6721 mended the same for TensorFieldNetwork.save only); ``""`` saved
into the working directory, which the other savers (through ``output_dir``) refuse. Now an
InputError naming ``path``, the savers' argument, and the file is left as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from trustlab._model_files import read_model_folder, write_model_folder  # noqa: E402
from trustlab.errors import InputError  # noqa: E402


@pytest.mark.parametrize("below", [False, True])
def test_a_file_in_the_way_is_refused_naming_path(tmp_path, below):
    file = tmp_path / "m"
    file.write_text("keep me")
    target = file / "below" if below else file
    with pytest.raises(InputError, match=r"^path: expected a directory") as info:
        write_model_folder(target, {"format": "t"}, {"n": torch.nn.Linear(2, 1)})
    assert info.value.argument == "path"
    assert file.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # nothing staged beside it


def test_an_empty_path_is_refused_as_the_other_savers_do(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^path: expected a folder path") as info:
        write_model_folder("", {"format": "t"}, {"n": torch.nn.Linear(2, 1)})
    assert info.value.argument == "path"
    assert list(tmp_path.iterdir()) == []  # was: model.json and weights.safetensors here


def test_a_folder_still_saves_and_loads(tmp_path):
    net = torch.nn.Linear(2, 1)
    out = write_model_folder(
        str(tmp_path / "a" / "b"), {"format": "t", "k": np.int64(3)}, {"n": net}
    )
    assert out == tmp_path / "a" / "b"
    meta, states = read_model_folder(out, "t", "the test")
    assert meta["k"] == 3 and torch.equal(states["n"]["weight"], net.weight.detach())


def test_a_regions_model_saved_onto_a_file_names_path(tmp_path):
    pytest.importorskip("skimage")
    from trustlab.explain.regions import BlackBoxClassifier

    bb = BlackBoxClassifier(classifier_widths=(4, 4, 4), random_state=0)
    # the fitted attributes save reads (a fit takes seconds; the refusal comes before weights)
    bb.classifier_, bb.classes_ = torch.nn.Linear(2, 1), np.array(["a", "b"])
    bb.image_size_, bb.history_ = (24, 24), {}
    file = tmp_path / "model"
    file.write_text("keep me")
    with pytest.raises(InputError, match=r"^path: expected a directory") as info:
        bb.save(file)
    assert info.value.argument == "path" and file.read_text() == "keep me"
    assert bb.save(tmp_path / "ok") == tmp_path / "ok"  # a folder saves as before
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == [
        "model.json",
        "weights.safetensors",
    ]
