"""Review 64 (CLI): what `explain equigx train` and `watermark synth` write into --out is whole
or absent after an interrupted write (Ctrl-C, a full disk)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest


def _cut_short(path, stop=KeyboardInterrupt):
    """Write the start of a file, then stop as Ctrl-C (or a full disk) would."""
    with open(path, "wb") as fh:
        fh.write(b"half a file")
    raise stop


def test_equigx_network_save_is_whole_or_absent(tmp_path, monkeypatch):
    import safetensors.torch

    from trustlab.explain.equigx.model import TensorFieldNetwork

    net = TensorFieldNetwork(mul=2, l_max=1)
    folder = net.save(tmp_path / "net")
    monkeypatch.setattr(safetensors.torch, "save_file", lambda state, path: _cut_short(path))
    with pytest.raises(KeyboardInterrupt):
        TensorFieldNetwork(mul=2, l_max=1).save(folder)
    monkeypatch.undo()
    assert TensorFieldNetwork.load(folder).config == net.config  # the earlier network, whole
    monkeypatch.setattr(safetensors.torch, "save_file", lambda state, path: _cut_short(path))
    with pytest.raises(KeyboardInterrupt):
        net.save(tmp_path / "fresh")
    assert list((tmp_path / "fresh").iterdir()) == []  # was: config.json and half the weights


def test_equigx_training_record_is_not_written_in_place(tmp_path, monkeypatch):
    # train_recipe's training.json (what marks a trained network in --out) went through
    # Path.write_text: cut short there, half a record was left, and a rerun was refused
    from trustlab.explain.equigx import checkpoints, training

    graph = types.SimpleNamespace(x=np.zeros((3, 1)))
    train = type("Parts", (), {"n_classes": 2, "class_names": ["a", "b"]})()
    type(train).__getitem__ = lambda self, i: graph
    test = type("Test", (), {"labels": np.zeros(2, int), "__len__": lambda self: 2})()
    monkeypatch.setattr(
        checkpoints, "recipe_data", lambda spec: {"train": train, "validation": None, "test": test}
    )
    monkeypatch.setattr(training, "train_tfn", lambda *a, **k: types.SimpleNamespace(to_dict=dict))
    monkeypatch.setattr(training, "predict_graphs", lambda net, graphs: np.zeros((2, 2)))
    full_disk = OSError(28, "No space left on device")  # not Ctrl-C: that would stop pytest
    monkeypatch.setattr(Path, "write_text", lambda self, text, **kw: _cut_short(self, full_disk))
    recipe = {"data": {}, "model": {"mul": 2, "l_max": 1}, "train": {}}
    checkpoints.train_recipe(recipe, tmp_path)
    assert json.loads((tmp_path / "training.json").read_text())["test_accuracy"] == 1.0


def test_watermark_dataset_save_is_whole_or_absent(tmp_path, monkeypatch):
    from trustlab.watermark import synthesize

    dataset = synthesize(1, random_state=3)
    monkeypatch.setattr(np, "savez_compressed", lambda path, **arrays: _cut_short(path))
    with pytest.raises(KeyboardInterrupt):
        dataset.save(tmp_path)
    # was: annotations.json beside half an arrays.npz (a rerun refused it as a dataset)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images"]


def test_watermark_export_files_are_not_written_in_place(tmp_path, monkeypatch):
    # each stage's train.json (what `watermark export` refuses an --out for), structured.json
    # and README.txt went through Path.write_text: cut short there, half a file stayed
    from trustlab.watermark import synthesize
    from trustlab.watermark.export import export_stages

    dataset = synthesize(1, random_state=3)
    full_disk = OSError(28, "No space left on device")
    monkeypatch.setattr(Path, "write_text", lambda self, text, **kw: _cut_short(self, full_disk))
    export = export_stages(dataset, tmp_path, "llava", n_position=1)
    for name in export.files:
        if name.endswith(".json"):
            assert isinstance(json.loads(Path(name).read_text(encoding="utf-8")), list)
    assert (tmp_path / "WQA-Real" / "README.txt").read_text(encoding="utf-8").strip()
