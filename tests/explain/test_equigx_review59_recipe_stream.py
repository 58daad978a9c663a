"""train_recipe leaves the caller's torch random stream as it was (review 59).

It seeded the initial weights with an open ``torch.manual_seed``, so a caller's draws after
training came from the recipe's seed. The weights stay those of a hand-seeded network trained
by train_tfn with the recipe's settings.
"""

import pytest

torch = pytest.importorskip("torch")

from trustlab.explain.equigx import TensorFieldNetwork, train_tfn  # noqa: E402
from trustlab.explain.equigx.checkpoints import recipe_data, train_recipe  # noqa: E402


def test_train_recipe_leaves_the_callers_stream_and_seeds_the_weights(tmp_path):
    recipe = {
        "data": {"source": "shapes_in_noise", "n_graphs": 40, "variant": "same_count",
                 "n_nodes": 8, "random_state": 3},
        "model": {"mul": 2, "l_max": 1, "k": 4, "radius": 2.0},
        "train": {"max_epochs": 1, "batch_size": 8, "random_state": 1},
    }  # fmt: skip
    torch.manual_seed(123)
    train_recipe(recipe, tmp_path / "a")
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))
    # the initial weights are still the recipe seed's: a hand-seeded network trains the same
    loaded = TensorFieldNetwork.load(tmp_path / "a")
    train = recipe_data(recipe["data"])["train"]
    torch.manual_seed(1)
    net = TensorFieldNetwork(n_classes=train.n_classes, n_scalars=train[0].x.shape[1],
                             **recipe["model"])  # fmt: skip
    validation = recipe_data(recipe["data"])["validation"]
    train_tfn(net, train, validation=validation, **recipe["train"])
    for key, value in net.state_dict().items():
        assert torch.equal(value, loaded.state_dict()[key]), key
