"""LocalModel.save removes no file of one's own that only looks like a model file (diff review 66 J).

Measured on 7f73eee9: the clean-up of 1a113b6d removed every file of the target folder whose name
matched broad patterns (``*.safetensors``, ``*.model``, ``tokenizer*``, ``vocab.*``), and on every
save, not only over an earlier model: a first save (no ``config.json``, no ``overwrite``) into a
folder holding ``probe.safetensors``, ``my.model``, ``vocab.md`` and ``tokenizer_notes.txt``
deleted all four (a ``vocab.txt`` of one's own too), ``save('.')`` deleted them from the working
directory, and an overwrite deleted them beside the model. Before 1a113b6d all of them stayed.

Now files are removed only where the folder held a model (``config.json``), and only by the names
transformers gives a save's files (``model.safetensors``, ``model-00001-of-00002.safetensors``,
``tokenizer.json``, ``vocab.json``, ``chat_template.jinja`` ...).
"""

from __future__ import annotations

import pytest

from tiny_llama import JOIN_TEMPLATE as TEMPLATE
from tiny_llama import abcd_llama as _model
from trustlab.llm import load_model

OWN = ["probe.safetensors", "my.model", "vocab.md", "tokenizer_notes.txt", "chat_template.txt"]
# names a save of another model could write: kept too where the folder holds no model
NO_MODEL = [*OWN, "vocab.txt", "merges.txt"]


def _own_files(folder, names=OWN):
    for name in names:
        (folder / name).write_text("mine")


def _kept(folder, names=OWN):
    return [n for n in names if (folder / n).is_file() and (folder / n).read_text() == "mine"]


def test_a_first_save_keeps_the_folders_files(tmp_path):
    folder = tmp_path / "my models"
    folder.mkdir()
    _own_files(folder, NO_MODEL)
    _model(8, 1).save(folder)
    assert _kept(folder, NO_MODEL) == NO_MODEL
    assert load_model(folder).hidden_size == 8


def test_a_save_into_the_working_directory_keeps_its_files(tmp_path, monkeypatch):
    _own_files(tmp_path, NO_MODEL)
    monkeypatch.chdir(tmp_path)
    _model(8, 1).save(".")
    assert _kept(tmp_path, NO_MODEL) == NO_MODEL
    assert load_model(tmp_path).hidden_size == 8


@pytest.mark.parametrize("shards", [False, True])
def test_an_overwrite_removes_the_earlier_models_files_only(tmp_path, shards):
    folder = tmp_path / "m"
    _model(16, 1, TEMPLATE).save(folder)
    _own_files(folder)
    if shards:  # an earlier sharded save (a larger model): its shards and index go
        (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
        (folder / "model-00002-of-00002.safetensors").write_text("old")
        (folder / "model.safetensors.index.json").write_text("{}")
    _model(8, 2).save(folder, overwrite=True)
    assert _kept(folder) == OWN
    assert not (folder / "chat_template.jinja").exists()
    assert not list(folder.glob("model-*-of-*.safetensors"))
    assert not (folder / "model.safetensors.index.json").exists()
    again = load_model(folder)
    assert again.hidden_size == 8 and not again.has_chat_template
