"""``predict --model DIR/model`` (the docs' form) read no record: a digits model was shown shape
images (the default data) instead of the digits it was trained on, as ``--model DIR`` does
(review 53). The record beside the model folder is now read."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main

pytest.importorskip("torch")
pytest.importorskip("skimage")


def test_predict_model_subfolder_uses_the_training_record(tmp_path, capsys):
    out = tmp_path / "dg"
    train = ["explain", "regions", "train", "--data", "bam-lite-digits", "--images", "40",
             "--size", "32", "--max-epochs", "1", "--pretrain-epochs", "0", "--segments", "8",
             "--out", out]  # fmt: skip
    code, _, err = run_main(train, capsys)
    assert code == 0, err
    payloads = []
    for model in (out, out / "model"):
        args = ["explain", "regions", "predict", "--model", model, "--n", "3", "--json"]
        code, stdout, err = run_main(args, capsys)
        assert code == 0, err
        payloads.append(json.loads(stdout))
    assert [p["images"] for p in payloads] == ["bam-lite-digits (seed 3)"] * 2
    assert "accuracy" in payloads[1] and payloads[1]["true_labels"] == payloads[0]["true_labels"]
