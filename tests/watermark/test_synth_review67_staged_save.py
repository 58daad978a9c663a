"""An overwrite of a saved watermark dataset or stage export stopped midway keeps the earlier one
(review 67). WatermarkDataset.save removed the earlier annotations.json and export_stages each
stage's train.json before rewriting the images in place, so a save stopped at an image (Ctrl-C, a
full disk) lost the earlier dataset or export. Measured on bb1f2f74: a dataset save stopped at
its second image or at arrays.npz left a folder load_watermark_dataset refused; an export stopped
at a position image had removed WQA-Position/train.json and rewritten two of its images, and
one stopped at the first train.json left the earlier WQA-Synthetic/train.json beside the new
WQA-Position. Now both write every file whole aside first, then remove the earlier description
files, rename and write the descriptions last (trustlab._results.replace_saved)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from PIL import Image

import trustlab.watermark.export as export
import trustlab.watermark.synth as synth
from interrupted_saves import stopped_at
from trustlab.errors import InputError
from trustlab.watermark.export import export_stages
from trustlab.watermark.synth import load_watermark_dataset, synthesize

_SAVE = Image.Image.save


@pytest.fixture(scope="module")
def datasets():
    return synthesize(2, random_state=0), synthesize(2, random_state=1)


@contextmanager
def _stopped_in_png(name):
    """PIL stops (half a file written) at the PNG ``name``, written in place or staged aside."""

    def save(self, fp, *args, **kwargs):
        if Path(fp).name.lstrip(".").startswith(name):
            Path(fp).write_bytes(b"half a png")
            raise KeyboardInterrupt
        return _SAVE(self, fp, *args, **kwargs)

    with mock.patch.object(Image.Image, "save", save), pytest.raises(KeyboardInterrupt):
        yield


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _same(back, ds):
    assert np.array_equal(back.images, ds.images)
    assert np.array_equal(back.masks, ds.masks)
    assert back.levels == ds.levels and back.random_state == ds.random_state


def test_a_dataset_save_stopped_at_an_image_keeps_the_earlier_dataset(datasets, tmp_path):
    a, b = datasets
    a.save(tmp_path)
    before = _files(tmp_path)
    with _stopped_in_png("00001.png"):
        b.save(tmp_path)
    _same(load_watermark_dataset(tmp_path), a)  # was: refused, annotations.json removed
    assert _files(tmp_path) == before  # no staged copies left


def test_a_dataset_save_stopped_in_the_arrays_keeps_the_earlier_dataset(
    datasets, tmp_path, monkeypatch
):
    a, b = datasets
    a.save(tmp_path)
    before = _files(tmp_path)

    def cut(path, **arrays):
        Path(path).write_bytes(b"half an npz")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", cut)
    with pytest.raises(KeyboardInterrupt):
        b.save(tmp_path)
    monkeypatch.undo()
    _same(load_watermark_dataset(tmp_path), a)
    assert _files(tmp_path) == before


def test_a_dataset_save_stopped_before_its_annotations_loads_nothing(datasets, tmp_path):
    a, b = datasets
    a.save(tmp_path)
    with stopped_at(synth, "annotations.json"):
        b.save(tmp_path)
    assert not (tmp_path / "annotations.json").exists()  # never B's images under A's
    with pytest.raises(InputError):
        load_watermark_dataset(tmp_path)
    written = b.save(tmp_path)
    assert [p.name for p in written[-2:]] == ["annotations.json", "arrays.npz"]
    assert [p.name for p in written[:-2]] == ["00000.png", "00001.png"]
    _same(load_watermark_dataset(tmp_path), b)
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".new")]


def test_an_export_stopped_at_an_image_keeps_the_earlier_export(datasets, tmp_path):
    a, b = datasets
    export_stages(a, tmp_path, n_position=2, random_state=0)
    before = _files(tmp_path)
    for image in ("position_00001.png", "00001.png"):  # WQA-Position's, WQA-Synthetic's
        with _stopped_in_png(image):
            export_stages(b, tmp_path, n_position=2, random_state=1)
        assert _files(tmp_path) == before  # was: WQA-Position/train.json gone, images new


def test_an_export_stopped_at_a_train_json_leaves_no_earlier_train_json(datasets, tmp_path):
    a, b = datasets
    export_stages(a, tmp_path, n_position=2, random_state=0)
    with stopped_at(export, "train.json"):  # the first: WQA-Position's
        export_stages(b, tmp_path, n_position=2, random_state=1)
    # was: A's WQA-Synthetic/train.json (and WQA-Real's) beside B's WQA-Position images
    assert sorted(tmp_path.rglob("train.json")) == []
    new = export_stages(b, tmp_path, n_position=2, random_state=1)
    assert _files(tmp_path).keys() == {str(Path(f).relative_to(tmp_path)) for f in new.files}
    train = json.loads((tmp_path / "WQA-Synthetic" / "train.json").read_text(encoding="utf-8"))
    assert [r["image"] for r in train] == ["00000.png", "00001.png"]
    image = Image.open(tmp_path / "WQA-Synthetic" / "images" / "00001.png").convert("RGB")
    assert np.array_equal(np.asarray(image), b.images[1])
