"""Diff review 64 O: atomic writes keep the file's own name and drop the old marker first."""

from __future__ import annotations

import tarfile
import types
import zipfile

import numpy as np
import pandas as pd
import pytest


def test_anova_predict_compressed_out_keeps_its_member_name(run, tmp_path, monkeypatch):
    # the CSV went to a temporary '.preds.csv.zip.<random>.zip': pandas named the zip's member
    # after it, and read '.gz' alone (no tar) for preds.tar.gz
    from trustlab.cli import explain_anova

    table = pd.DataFrame({"prediction": [0.5, 1.5]})
    fitted = types.SimpleNamespace(
        task_="regression", prediction_table=lambda frame, components: table.copy()
    )
    monkeypatch.setattr(explain_anova, "_load", lambda model: fitted)
    (tmp_path / "d.csv").write_text("a\n1\n2\n")
    for name in ("preds.csv.zip", "preds.tar.gz"):
        code, _, err = run(
            "explain", "anova-tpnn", "predict", "--model", tmp_path,
            "--data", tmp_path / "d.csv", "--out", tmp_path / name,
        )  # fmt: skip
        assert code == 0, err
    assert zipfile.ZipFile(tmp_path / "preds.csv.zip").namelist() == ["preds.csv"]
    with tarfile.open(tmp_path / "preds.tar.gz") as archive:
        assert len(archive.getnames()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "d.csv", "preds.csv.zip", "preds.tar.gz"
    ]  # fmt: skip


def _files(folder):
    """Every file below ``folder`` (hidden ones too) -> its bytes."""
    return {str(f.relative_to(folder)): f.read_bytes() for f in folder.rglob("*") if f.is_file()}


def test_interrupted_dataset_overwrite_keeps_the_earlier_folder_as_it_was(tmp_path, monkeypatch):
    # review 64: the old annotations.json / train.json stayed while the images were rewritten in
    # place, so the folder read as a whole dataset of new images after a Ctrl-C (it then removed
    # the marker first). Since 3d5dada5 (review 67) the new files are written aside and the
    # markers last: stopped at the second image, the folder is the earlier one exactly, its
    # marker and files, with no new image under the earlier marker and no staged copy left
    import PIL.Image

    from trustlab.watermark import synthesize
    from trustlab.watermark.export import export_stages

    dataset = synthesize(2, random_state=3)
    for earlier in (tmp_path / "ds" / "annotations.json", tmp_path / "ex/WQA-Position/train.json"):
        earlier.parent.mkdir(parents=True)
        earlier.write_text("[]")  # an earlier run's marker
    before = {name: _files(tmp_path / name) for name in ("ds", "ex")}

    save, calls = PIL.Image.Image.save, []

    def stop(*args, **kwargs):  # the first image is written, the second stopped
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return save(*args, **kwargs)

    monkeypatch.setattr(PIL.Image.Image, "save", stop)
    with pytest.raises(KeyboardInterrupt):
        dataset.save(tmp_path / "ds")
    assert _files(tmp_path / "ds") == before["ds"]
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        export_stages(dataset, tmp_path / "ex", "llava", n_position=1)
    assert _files(tmp_path / "ex") == before["ex"]
    assert np.asarray(dataset.images).size  # the dataset itself untouched
