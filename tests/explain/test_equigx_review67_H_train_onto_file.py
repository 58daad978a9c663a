"""EquiGX training into a path that is a file is refused in words before any training (diff
review 67 H, a sister of 038a6721, which mended TensorFieldNetwork.save alone).

Measured on c5786d74: ``train_tfn(..., checkpoint_dir=file)`` trained its first epoch and then
stopped on the raw ``FileExistsError: [Errno 17] File exists`` of the state's ``mkdir``
(``file / "below"``: ``NotADirectoryError``); ``train_recipe(recipe, out_dir=file)`` built the
recipe's data, trained an epoch into ``file/_state`` and stopped on that ``NotADirectoryError``
(its net.save(file), 038a6721's InputError, came only after the whole training). Now InputError
naming ``checkpoint_dir`` / ``out_dir``, before the data or any epoch; the file is left as it was.
"""

from __future__ import annotations

import pytest

pytest.importorskip("e3nn")
torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise, train_tfn  # noqa: E402
from trustlab.explain.equigx.checkpoints import train_recipe  # noqa: E402


@pytest.fixture
def file(tmp_path):
    path = tmp_path / "f"
    path.write_text("keep me")
    yield path
    assert path.read_text() == "keep me"


@pytest.mark.parametrize("below", [False, True])
def test_train_tfn_refuses_a_checkpoint_dir_that_is_a_file(file, below):
    data = shapes_in_noise(6, variant="same_count", n_nodes=8, random_state=0)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    before = [p.detach().clone() for p in net.parameters()]
    epochs = []
    with pytest.raises(InputError, match=r"^checkpoint_dir: expected a directory") as info:
        train_tfn(net, data, max_epochs=1, batch_size=6, random_state=0,
                  checkpoint_dir=file / "below" if below else file,
                  progress=lambda e, *a: epochs.append(e))  # fmt: skip
    assert info.value.argument == "checkpoint_dir"
    assert epochs == [] and all(
        torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True)
    )


@pytest.mark.parametrize("below", [False, True])
def test_train_recipe_refuses_an_out_dir_that_is_a_file_before_its_data(file, below):
    recipe = {"data": {"name": "no such data"}}  # never read: the folder is refused first
    with pytest.raises(InputError, match=r"^out_dir: expected a directory") as info:
        train_recipe(recipe, file / "below" if below else file)
    assert info.value.argument == "out_dir"
