"""Review 67 (third reader N of ff2f5fb7): RegionSparseClassifier.fit refuses a checkpoint_dir that
is a file, or no path, with its other parameters, before computing any superpixel.

ff2f5fb7 refused it through load_training_state, after the superpixels (seconds of work for real
images), and left ``checkpoint_dir=5`` to Path's raw TypeError in fit. Measured on HEAD before
this change (superpixels replaced by a stub that raises): the stub was reached for a file, a path
below a file and 5. Now one helper, _model_files.checkpoint_folder, checks it for the regions and
the watermark fits alike (WatermarkPredictor's messages unchanged).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402


class _Segmented(Exception):
    pass


def _no_superpixels(*args, **kwargs):
    raise _Segmented


@pytest.fixture
def estimator(monkeypatch):
    from trustlab.explain.regions import estimator

    monkeypatch.setattr(estimator, "superpixels", _no_superpixels)
    return estimator


def _fit(estimator, checkpoint_dir):
    net = estimator.RegionSparseClassifier(max_epochs=1, checkpoint_dir=checkpoint_dir)
    net.fit(np.zeros((2, 3, 24, 24)), [0, 1])


@pytest.mark.parametrize("where", ["file", "below"])
def test_a_file_is_refused_before_the_superpixels(estimator, tmp_path, where):
    file = tmp_path / "f"
    file.write_text("keep me")
    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a directory") as info:
        _fit(estimator, file if where == "file" else file / "below")
    assert info.value.argument == "checkpoint_dir" and file.read_text() == "keep me"


def test_no_path_is_refused_by_name(estimator):
    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a folder path or None"):
        _fit(estimator, 5)


@pytest.mark.parametrize("kind", ["none", "empty", "new", "str"])
def test_a_folder_still_reaches_the_superpixels(estimator, tmp_path, kind):
    (tmp_path / "empty").mkdir()
    value = {"none": None, "empty": tmp_path / "empty", "new": tmp_path / "a" / "b"}.get(
        kind, str(tmp_path / "s")
    )
    with pytest.raises(_Segmented):
        _fit(estimator, value)
    assert not (tmp_path / "a").exists()  # checking makes nothing
