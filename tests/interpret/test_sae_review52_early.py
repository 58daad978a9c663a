"""`interpret sae` options refused before the language model loads (review 52): `train --layer`
past the model folder's num_hidden_layers, `cache --batch-size 0` and `report --method` of a
method not scored were refused only after the model (or tokenizer) loaded, seconds later, and
under load a progress line came before the error."""

from __future__ import annotations

import json

import numpy as np
import pytest

import trustlab.llm
from cli_helpers import one_line, run_main
from trustlab.interpret import SparseAutoencoder


@pytest.fixture
def no_model(monkeypatch):
    """Any model load fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a model was loaded: {args}")

    monkeypatch.setattr(trustlab.llm, "load_model", refuse)


def test_train_layer_checked_against_the_folder_config(tmp_path, capsys, no_model):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"num_hidden_layers": 2}), encoding="utf-8")
    base = ["interpret", "sae", "train", "--model", model, "--out", tmp_path / "o"]
    for layer in (2, 5, -1):
        code, _, err = run_main([*base, "--layer", layer], capsys)
        assert code == 2, err
        assert one_line(err) == (
            f"trustlab: error: --layer: expected a decoder layer of 'm': in [0, 1], got {layer}"
        )


def test_cache_batch_size_refused_before_the_model(tmp_path, capsys, no_model):
    rows = np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)
    sae = SparseAutoencoder(n_latents=16, k=2, max_epochs=1, batch_size=32, random_state=0)
    sae.fit(rows, model_name="some-model", layer=0)
    sae.save(tmp_path / "sae")
    args = ["interpret", "sae", "cache", "--sae", tmp_path / "sae", "--out", tmp_path / "c"]
    code, _, err = run_main([*args, "--batch-size", 0], capsys)
    assert code == 2
    assert one_line(err) == "trustlab: error: --batch-size: expected an integer >= 1, got 0"


def test_report_method_refused_before_the_tokenizer(tmp_path, capsys, no_model):
    scores = tmp_path / "s"
    scores.mkdir()
    (scores / "result.json").write_text(json.dumps({"explanations": str(tmp_path / "e")}))
    rows = [{"latent": 1, "shuffled": False, "explanation": "cats", "embedding": 0.9},
            {"latent": 1, "shuffled": True, "explanation": "dogs", "embedding": 0.4}]  # fmt: skip
    (scores / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["interpret", "sae", "report", "--scores", scores, "--out", tmp_path / "r"]
    code, _, err = run_main([*args, "--method", "bogus"], capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --method: expected one of the scored methods: embedding, got 'bogus'"
    )
