"""LocalModel.save(overwrite=True) removes no folder of one's own (review 66, after 1a113b6d).

Measured on 1a113b6d: the overwrite removed every entry of the model folder whose name matched
the patterns of a Hugging Face save's files, folders included: a folder ``tokenizer_notes/``
(matching ``tokenizer*``) with a file in it, kept beside a model, was deleted with its content by
``save(folder, overwrite=True)``.

Now only files that match are removed; the one folder a save writes,
``additional_chat_templates`` (a tokenizer's named chat templates), goes when the new model has
none; other folders stay whatever their names.
"""

from __future__ import annotations

from tiny_llama import JOIN_TEMPLATE as TEMPLATE
from tiny_llama import abcd_llama as _model
from trustlab.llm import load_model


def test_a_folder_of_ones_own_stays_whatever_its_name(tmp_path):
    folder = tmp_path / "m"
    _model(16, 1).save(folder)
    notes = folder / "tokenizer_notes"
    notes.mkdir()
    (notes / "why.txt").write_text("kept")
    _model(8, 2).save(folder, overwrite=True)
    assert (notes / "why.txt").read_text() == "kept"
    assert load_model(folder).hidden_size == 8


def test_the_earlier_models_named_chat_templates_go(tmp_path):
    folder = tmp_path / "m"
    _model(16, 1, {"default": TEMPLATE, "tool_use": TEMPLATE}).save(folder)
    assert (folder / "additional_chat_templates").is_dir()
    _model(8, 2).save(folder, overwrite=True)
    assert not (folder / "additional_chat_templates").exists()
    assert not load_model(folder).has_chat_template
