"""LocalModel.save(overwrite=True) replaces the earlier model's files (review 66).

Measured on the old code: a tiny Llama with a chat template saved to a folder, then a tiny Llama
without one saved over it with ``overwrite=True``, left the first model's ``chat_template.jinja``
in the folder: ``load_model`` gave the second model the first one's chat template (``LocalModel(name='m',
n_layers=2, hidden_size=8, chat=True)``, saved with ``chat=False``). And the files
were written in place: a save that failed after the weights (here the tokenizer's save) left
the new weights beside the earlier tokenizer, so the folder loaded as neither model.

Now the save is written aside in the folder first and then moved over the earlier model's files;
a model file of the earlier save that the new one has no copy of is removed, other files stay,
and a failed save leaves the earlier model whole.
"""

from __future__ import annotations

import pytest

from tiny_llama import JOIN_TEMPLATE as TEMPLATE
from tiny_llama import abcd_llama as _model
from trustlab.llm import load_model


def test_overwriting_drops_the_earlier_models_chat_template(tmp_path):
    folder = tmp_path / "m"
    _model(16, 1, TEMPLATE).save(folder)
    plain = _model(8, 2)
    assert not plain.has_chat_template
    plain.save(folder, overwrite=True)
    again = load_model(folder)
    assert again.hidden_size == 8
    assert not again.has_chat_template  # the first model's template went with it
    assert not (folder / "chat_template.jinja").exists()


def test_files_that_are_no_model_files_stay(tmp_path):
    folder = tmp_path / "m"
    _model(16, 1, TEMPLATE).save(folder)
    (folder / "NOTES.md").write_text("kept")
    _model(8, 2).save(folder, overwrite=True)
    assert (folder / "NOTES.md").read_text() == "kept"
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".saving-")]


def test_a_failed_overwrite_leaves_the_earlier_model(tmp_path, monkeypatch):
    folder = tmp_path / "m"
    _model(16, 1, TEMPLATE).save(folder)
    newer = _model(8, 2)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(newer.tokenizer, "save_pretrained", broken)
    with pytest.raises(OSError, match="disk full"):
        newer.save(folder, overwrite=True)
    again = load_model(folder)
    assert again.hidden_size == 16 and again.has_chat_template
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".saving-")]
