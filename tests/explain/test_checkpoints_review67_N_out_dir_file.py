"""Review 67 (third reader N of 310a5b3b): the regions and watermark ``train_checkpoint`` refuse an
``out_dir`` that is a file (or lies under one) naming ``out_dir``, before any image is made.

310a5b3b did this for EquiGX's train_recipe. Measured on HEAD before this change: the regions
``train_checkpoint(name, file)`` built its training images and trained (a blackbox checkpoint then
stopped on model.save's 'path: expected a directory ...', a p2p one on 'checkpoint_dir: ...' after
its superpixels); the watermark one generated its 12,000 training images before the predictor's
check refused ``checkpoint_dir`` (an argument the caller never gave)."""

import pytest

from trustlab.errors import InputError


class _DataBuilt(Exception):
    pass


def _no_data(*args, **kwargs):
    raise _DataBuilt


@pytest.fixture(params=["file", "below"])
def in_the_way(request, tmp_path):
    f = tmp_path / "f"
    f.write_text("mine")
    yield f if request.param == "file" else f / "below"
    assert f.read_text() == "mine"


@pytest.mark.parametrize("name", ["blackbox", "p2p_fixed"])
def test_regions_train_checkpoint_refuses_a_file_before_the_data(monkeypatch, in_the_way, name):
    from trustlab.explain.regions import checkpoints

    monkeypatch.setattr(checkpoints, "checkpoint_data", _no_data)
    with pytest.raises(InputError, match="^out_dir: expected a directory that can be created"):
        checkpoints.train_checkpoint(name, in_the_way)


def test_watermark_train_checkpoint_refuses_a_file_before_the_images(monkeypatch, in_the_way):
    from trustlab.watermark import checkpoints

    monkeypatch.setattr(checkpoints, "checkpoint_data", _no_data)
    with pytest.raises(InputError, match="^out_dir: expected a directory that can be created"):
        checkpoints.train_checkpoint(in_the_way)


@pytest.mark.parametrize("kind", ["regions", "watermark"])
def test_a_folder_still_reaches_the_data(monkeypatch, tmp_path, kind):
    from trustlab.explain.regions import checkpoints as regions
    from trustlab.watermark import checkpoints as watermark

    module = regions if kind == "regions" else watermark
    monkeypatch.setattr(module, "checkpoint_data", _no_data)
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "new" / "sub"):
        with pytest.raises(_DataBuilt):
            if kind == "regions":
                module.train_checkpoint("blackbox", out)
            else:
                module.train_checkpoint(out)
