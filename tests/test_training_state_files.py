"""The training state a fit leaves in its checkpoint_dir (trustlab._model_files): written
atomically, read back, and refused clearly when it is another fit's or not a state at all."""

from __future__ import annotations

import pytest

from trustlab._model_files import load_training_state, save_training_state
from trustlab.errors import InputError, ResourceError

torch = pytest.importorskip("torch")


def test_a_state_round_trips_and_another_fits_is_refused(tmp_path):
    save_training_state(tmp_path, "fit-a", {"epoch": 3, "weights": torch.arange(4.0)})
    state = load_training_state(tmp_path, "fit-a")
    assert state["epoch"] == 3 and torch.equal(state["weights"], torch.arange(4.0))
    with pytest.raises(InputError, match="checkpoint_dir"):
        load_training_state(tmp_path, "fit-b")
    assert load_training_state(tmp_path / "empty", "fit-a") is None
    assert load_training_state(None, "fit-a") is None


@pytest.mark.parametrize("content", [b"", b"not a torch file", b"PK\x03\x04 truncated zip"])
def test_an_unreadable_state_is_a_resource_error_naming_the_file(tmp_path, content):
    (tmp_path / "state.pt").write_bytes(content)
    with pytest.raises(ResourceError, match=r"checkpoint_dir: .*state\.pt could not be read"):
        load_training_state(tmp_path, "fit-a")


def test_a_torch_file_that_is_not_a_state_is_refused(tmp_path):
    torch.save([1, 2, 3], tmp_path / "state.pt")  # not a dict: no fingerprint to compare
    with pytest.raises(InputError, match="checkpoint_dir"):
        load_training_state(tmp_path, "fit-a")
