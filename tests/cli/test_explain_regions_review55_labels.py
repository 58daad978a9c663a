"""``evaluate --model A/model --model B/model`` labels the rows by the run folders, A and B
(review 55: 'model' and 'model_2', as train writes every model to OUT/model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustlab.cli._runs import folder_labels


def test_folder_labels_use_the_run_folder_only_where_names_collide():
    paths = [Path("runs/A/model"), Path("B/model"), Path("single"), Path("x/other/")]
    assert folder_labels(paths) == ["A", "B", "single", "other"]
    assert folder_labels([Path("A/model")]) == ["model"]


def test_models_of_train_folders_are_labelled_by_their_run_folder(run, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("skimage")
    from trustlab.explain.regions import load_checkpoint

    net = load_checkpoint("blackbox")
    for run_folder in ("A", "B"):
        net.save(tmp_path / run_folder / "model")
    code, stdout, err = run("explain", "regions", "evaluate", "--n", "2", "--deltas", "none",
                            "--model", tmp_path / "A" / "model", "--model",
                            tmp_path / "B" / "model", "--json")  # fmt: skip
    assert code == 0, err
    rows = json.loads(stdout)["accuracy"]
    assert [r["model"] for r in rows if r["kind"] == "blackbox"] == ["A", "B"]
