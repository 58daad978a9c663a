"""Review pass 3: a method named twice in evaluate_explanations, and train_recipe's seed covering
the network's initial weights."""

from __future__ import annotations

import pytest
import torch

from trustlab.errors import InputError
from trustlab.explain.equigx import (
    DATA_SOURCES,
    TensorFieldNetwork,
    evaluate_explanations,
    shapes_in_noise,
    train_recipe,
)


@pytest.mark.parametrize("methods", [["gradient", "gradient"], ["equigx", "random", "equigx"]])
def test_a_method_named_twice_is_refused_naming_methods(methods):
    # a repeated baseline collected its scores twice per graph and failed in zip(); a repeated
    # EquiGX method was scored twice and shown twice
    data = shapes_in_noise(6, variant="same_count", n_nodes=10, random_state=0)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    with pytest.raises(InputError, match="repeated") as info:
        evaluate_explanations(net, data, methods=methods, n_random=1)
    assert info.value.argument == "methods"


def test_train_recipe_trains_the_same_network_twice(tmp_path):
    recipe = {
        "data": {**DATA_SOURCES["shapes-same-count"], "n_graphs": 40, "random_state": 0},
        "model": {"mul": 1, "l_max": 1, "n_layers": 1, "k": 4, "radius": 2.0,
                  "avg_neighbors": 4.0},
        "train": {"max_epochs": 1, "learning_rate": 1e-2, "batch_size": 8, "random_state": 3},
    }  # fmt: skip
    torch.manual_seed(1)  # whatever the global generator holds before each run
    first = train_recipe(recipe, tmp_path / "a")
    torch.manual_seed(2)
    second = train_recipe(recipe, tmp_path / "b")
    assert first.train_loss == second.train_loss
    a = TensorFieldNetwork.load(tmp_path / "a").state_dict()
    b = TensorFieldNetwork.load(tmp_path / "b").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
