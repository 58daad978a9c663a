"""``trustlab watermark synth --overwrite`` keeps the earlier dataset until the new one is saved
whole (review 67). The command deleted the earlier images (00000.png, ...) before saving, so an
overwrite stopped in the save (Ctrl-C, a full disk) left the earlier annotations.json without its
images, although WatermarkDataset.save itself stages its files (3d5dada5). Now, as 'watermark
export' does, the earlier images that the new save did not rewrite are removed after it."""

from __future__ import annotations

from unittest import mock

import numpy as np

import trustlab._results as results
from cli_helpers import run_main
from trustlab.watermark.synth import load_watermark_dataset

_WRITE = results.write_atomic


def _synth(out, n, seed, capsys, *extra):
    args = ["watermark", "synth", "--n", n, "--seed", seed, "--kinds", "logo", "--out", out]
    return run_main([*args, *extra], capsys)


def _images(out):
    return {p.name: p.read_bytes() for p in (out / "images").iterdir()}


def _stop_at(name):
    def write(path, *args):
        if path.name == name:
            raise KeyboardInterrupt
        return _WRITE(path, *args)

    return mock.patch.object(results, "write_atomic", write)


def test_an_overwrite_stopped_in_the_save_keeps_the_earlier_dataset(tmp_path, capsys):
    out = tmp_path / "d"
    code, _, err = _synth(out, 3, 0, capsys)
    assert code == 0, err
    before, earlier = _images(out), load_watermark_dataset(out)
    with _stop_at(".arrays.npz.new"):  # every new image staged aside, none renamed in yet
        code, _, _ = _synth(out, 2, 1, capsys, "--overwrite")
    assert code == 130
    back = load_watermark_dataset(out)  # was: the earlier images deleted, the dataset broken
    assert np.array_equal(back.images, earlier.images)
    assert _images(out) == before  # the three earlier images, as they were


def test_a_finished_overwrite_leaves_no_earlier_images(tmp_path, capsys):
    out = tmp_path / "d"
    assert _synth(out, 3, 0, capsys)[0] == 0
    (out / "images" / "notes.png").write_bytes(b"a user's")
    code, _, err = _synth(out, 2, 1, capsys, "--overwrite")
    assert code == 0, err
    names = sorted(p.name for p in (out / "images").iterdir())
    assert names == ["00000.png", "00001.png", "notes.png"]
    back = load_watermark_dataset(out)
    assert (len(back), back.random_state) == (2, 1)
