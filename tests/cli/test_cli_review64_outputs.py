"""Review 64 (CLI): a final output is whole or absent after an interrupted write (Ctrl-C)."""

from __future__ import annotations

import types

import pandas as pd
import pytest


def _cut_short(path, text=b"half a file"):
    """Write the start of a file, then stop as Ctrl-C would."""
    with open(path, "wb") as fh:
        fh.write(text)
    raise KeyboardInterrupt


def test_anova_predict_interrupted_write_leaves_no_csv(run, tmp_path, monkeypatch):
    from trustlab.cli import explain_anova

    table = pd.DataFrame({"prediction": [0.5, 1.5]})
    fitted = types.SimpleNamespace(
        task_="regression", prediction_table=lambda frame, components: table.copy()
    )
    monkeypatch.setattr(explain_anova, "_load", lambda model: fitted)
    monkeypatch.setattr(pd.DataFrame, "to_csv", lambda self, path=None, **kw: _cut_short(path))
    (tmp_path / "d.csv").write_text("a\n1\n2\n")
    out = tmp_path / "preds.csv"
    code, _, err = run(
        "explain", "anova-tpnn", "predict", "--model", tmp_path, "--data", tmp_path / "d.csv",
        "--out", out,
    )  # fmt: skip
    assert code == 130, err
    assert list(tmp_path.iterdir()) == [tmp_path / "d.csv"]  # no half preds.csv, no temp file


def test_model_folder_is_whole_or_absent_after_an_interrupted_save(tmp_path, monkeypatch):
    import safetensors.torch
    import torch

    from trustlab._model_files import read_model_folder, write_model_folder

    net = torch.nn.Linear(2, 1)
    folder = write_model_folder(tmp_path / "m", {"format": "old"}, {"net": net})
    monkeypatch.setattr(safetensors.torch, "save_file", lambda state, path: _cut_short(path))
    with pytest.raises(KeyboardInterrupt):
        write_model_folder(folder, {"format": "new"}, {"net": torch.nn.Linear(2, 1)})
    assert sorted(p.name for p in folder.iterdir()) == ["model.json", "weights.safetensors"]
    _, states = read_model_folder(folder, "old", "the test")  # the earlier model, whole
    assert torch.equal(states["net"]["weight"], net.weight.detach())
    with pytest.raises(KeyboardInterrupt):
        write_model_folder(tmp_path / "fresh", {"format": "new"}, {"net": net})
    assert list((tmp_path / "fresh").iterdir()) == []  # was: model.json and half the weights


def test_transfer_report_interrupted_sweep_figure_leaves_no_png(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from trustlab.cli import safety_transfer

    sweep = types.SimpleNamespace(layers=[1, 2], plot=lambda ax: ax.plot([0, 1], [0, 1]))
    study = types.SimpleNamespace(source_sweep=sweep, target_sweep=sweep)
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: _cut_short(path))
    with pytest.raises(KeyboardInterrupt):
        safety_transfer._write_parts(study, tmp_path, (None, None))
    assert list(tmp_path.iterdir()) == []  # was: half a layer_sweep_source.png
