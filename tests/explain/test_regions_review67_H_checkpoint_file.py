"""A RegionSparseClassifier / WatermarkPredictor checkpoint_dir that is a file is refused in
words before any training (diff review 67 H, beside 038a6721's TensorFieldNetwork.save and the
write_model_folder fix: the same mkdir, reached through the fits' state saves).

Measured on c5786d74: ``RegionSparseClassifier(checkpoint_dir=file, max_epochs=1).fit(...)``
computed the superpixels, trained its first epoch and stopped on save_training_state's raw
``FileExistsError: [Errno 17] File exists`` (``file / "below"``: ``NotADirectoryError``);
WatermarkPredictor's fit the same (its ``check_params``, "every parameter now, as fit does
first", let it pass). ANOVATPNN already refused it by name. Now load_training_state, which both
fits call before their first epoch, refuses it: InputError naming ``checkpoint_dir``, no epoch
run; WatermarkPredictor also checks it with its other parameters (a value that is no path too,
which was Path's raw TypeError in fit). RegionSparseClassifier checks it after its superpixels
(its module is at the 600-line limit).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402


@pytest.fixture
def file(tmp_path):
    path = tmp_path / "f"
    path.write_text("keep me")
    yield path
    assert path.read_text() == "keep me"


@pytest.mark.parametrize("below", [False, True])
def test_region_sparse_fit_refuses_a_checkpoint_dir_that_is_a_file(file, below):
    from trustlab.explain.regions import RegionSparseClassifier

    net = RegionSparseClassifier(max_epochs=1, checkpoint_dir=file / "below" if below else file)
    epochs = []
    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a directory") as info:
        net.fit(np.zeros((2, 3, 24, 24)), [0, 1], progress=lambda e, *a: epochs.append(e))
    assert info.value.argument == "checkpoint_dir" and epochs == []


@pytest.mark.parametrize("below", [False, True])
def test_watermark_predictor_check_params_refuses_a_checkpoint_dir_that_is_a_file(file, below):
    from trustlab.watermark.nr import WatermarkPredictor

    model = WatermarkPredictor(checkpoint_dir=file / "below" if below else file)
    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a directory") as info:
        model.check_params()
    assert info.value.argument == "checkpoint_dir"
    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a folder path or None"):
        WatermarkPredictor(checkpoint_dir=5).check_params()
    WatermarkPredictor(checkpoint_dir=file.parent / "new").check_params()  # a folder to make
    assert not (file.parent / "new").exists()  # checking makes nothing


@pytest.mark.parametrize("below", [False, True])
def test_load_training_state_refuses_a_file_naming_checkpoint_dir(file, below):
    from trustlab._model_files import load_training_state

    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a directory") as info:
        load_training_state(file / "below" if below else file, "fingerprint")
    assert info.value.argument == "checkpoint_dir"
    assert load_training_state(file.parent / "new", "fingerprint") is None  # nothing there yet
    assert load_training_state(None, "fingerprint") is None
