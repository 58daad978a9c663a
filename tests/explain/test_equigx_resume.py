"""EquiGX training resumes an interrupted run only with the settings it was started with: other
settings (learning rate, batch size, seed, architecture, data) and a checkpoint that does not
record them are refused before any training, naming the checkpoint and what differs."""

from __future__ import annotations

import pytest

pytest.importorskip("e3nn")
torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise, train_tfn  # noqa: E402

SETTINGS = dict(max_epochs=3, batch_size=12, random_state=0, learning_rate=2e-2)


class Stop(Exception):
    pass


def _stop(epoch, *args):
    raise Stop


def _net(mul=2):
    torch.manual_seed(0)
    return TensorFieldNetwork(n_classes=3, mul=mul, l_max=1, k=4, radius=2.0)


@pytest.fixture(scope="module")
def parts():
    return shapes_in_noise(36, variant="same_count", n_nodes=8, random_state=3).split(
        0.25, random_state=0
    )


def _interrupted(folder, parts):
    train, valid = parts
    with pytest.raises(Stop):
        train_tfn(_net(), train, validation=valid, checkpoint_dir=folder, progress=_stop,
                  **SETTINGS)  # fmt: skip
    assert (folder / "state.pt").is_file()


@pytest.mark.parametrize(
    "change, named",
    [
        ({"learning_rate": 0.5}, "learning_rate 0.02 (now 0.5)"),
        ({"batch_size": 8, "random_state": 7}, "batch_size 12 (now 8)"),
        ({"max_epochs": 5}, "max_epochs 3 (now 5)"),
    ],
)
def test_a_resume_with_other_training_settings_is_refused(tmp_path, parts, change, named):
    _interrupted(tmp_path, parts)
    train, valid = parts
    epochs = []
    with pytest.raises(InputError, match="checkpoint_dir") as err:
        train_tfn(_net(), train, validation=valid, checkpoint_dir=tmp_path,
                  progress=lambda e, *a: epochs.append(e), **{**SETTINGS, **change})  # fmt: skip
    assert named in str(err.value) and "resume=False" in str(err.value)
    assert epochs == []  # refused before any training
    # starting afresh is still possible
    h = train_tfn(_net(), train, validation=valid, checkpoint_dir=tmp_path, resume=False,
                  **{**SETTINGS, **change})  # fmt: skip
    assert h.epochs[0] == 1


def test_a_resume_with_another_architecture_is_a_clear_error_not_a_size_mismatch(tmp_path, parts):
    _interrupted(tmp_path, parts)
    train, valid = parts
    with pytest.raises(InputError, match=r"checkpoint_dir.*mul 2 \(now 3\)"):
        train_tfn(_net(mul=3), train, validation=valid, checkpoint_dir=tmp_path, **SETTINGS)


def test_a_resume_on_other_data_is_refused(tmp_path, parts):
    _interrupted(tmp_path, parts)
    other = shapes_in_noise(36, variant="same_count", n_nodes=8, random_state=4)
    train, valid = other.split(0.25, random_state=0)
    with pytest.raises(InputError, match=r"checkpoint_dir.*train"):
        train_tfn(_net(), train, validation=valid, checkpoint_dir=tmp_path, **SETTINGS)


def test_a_checkpoint_without_its_settings_is_refused(tmp_path, parts):
    _interrupted(tmp_path, parts)
    state = torch.load(tmp_path / "state.pt", weights_only=False)
    state.pop("settings", None)
    torch.save(state, tmp_path / "state.pt")
    train, valid = parts
    with pytest.raises(InputError, match=r"checkpoint_dir.*does not record"):
        train_tfn(_net(), train, validation=valid, checkpoint_dir=tmp_path, **SETTINGS)


def test_a_resume_with_the_same_settings_still_continues(tmp_path, parts):
    _interrupted(tmp_path, parts)
    train, valid = parts
    h = train_tfn(_net(), train, validation=valid, checkpoint_dir=tmp_path, **SETTINGS)
    assert h.epochs == (1, 2, 3)
