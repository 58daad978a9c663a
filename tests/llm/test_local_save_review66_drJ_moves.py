"""A LocalModel.save(overwrite=True) cut short while moving its files leaves the earlier model
(diff review 66 J, of 1a113b6d).

Measured on 25af17c2: the save moved its files from the ``.saving-*`` folder one by one after
removing the earlier model's stale files; a move that failed (``os.replace`` raising on its third
call) left the new ``config.json`` and ``generation_config.json`` (width 8) beside the earlier
weights (width 16), without the earlier chat template: ``load_model`` raised BackendError
(mismatched sizes), a folder of neither model, though the docstring says a save that fails leaves
the earlier model as it was.

Now the files replaced or removed are moved aside first and back if a move fails.
"""

from __future__ import annotations

import os

import pytest

from tiny_llama import JOIN_TEMPLATE as TEMPLATE
from tiny_llama import abcd_llama as _model
from trustlab.llm import load_model, local


@pytest.mark.parametrize("failing", [1, 3, 6, 9])
def test_a_move_that_fails_puts_the_earlier_model_back(tmp_path, monkeypatch, failing):
    folder = tmp_path / "m"
    _model(16, 1, TEMPLATE).save(folder)
    (folder / "NOTES.md").write_text("kept")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    calls = []

    def replace(source, target):
        calls.append(source)
        if len(calls) == failing:
            raise OSError("cut short")
        os.replace(source, target)

    monkeypatch.setattr(local.os, "replace", replace)
    with pytest.raises(OSError, match="cut short"):
        _model(8, 2).save(folder, overwrite=True)
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".saving-")]
    again = load_model(folder)
    assert again.hidden_size == 16 and again.has_chat_template
