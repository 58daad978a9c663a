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


def test_page_summary_names_no_best_method_when_no_graph_was_scored():
    import dataclasses

    from trustlab.audit.sections.equigx import build_page

    data = shapes_in_noise(6, variant="same_count", n_nodes=10, random_state=0)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    ev = evaluate_explanations(net, data, methods=["equigx", "random"], n_random=1)
    empty = {"estimate": None, "low": None, "high": None, "n": 0}
    none = dataclasses.replace(ev, auroc={m: empty for m in ev.methods})
    summary = build_page(none).sections[0].summary
    assert "highest" not in summary and "no correctly classified graph" in summary
    # an AUROC of 0 is a value: it can be the highest
    zero = {"estimate": 0.0, "low": 0.0, "high": 0.0, "n": 1}
    ev0 = dataclasses.replace(ev, auroc={"equigx": zero, "random": empty})
    assert build_page(ev0).sections[0].summary.endswith("highest: equigx 0.000.")


def test_coincident_nodes_are_not_blamed_on_the_cut_off():
    import warnings

    from trustlab.explain.equigx import EquiGX

    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = EquiGX(net).explain({"pos": [[0.0, 0.0, 0.0]] * 2, "x": [[1.0], [1.0]]})
    assert ex.edge_index.shape[1] == 2 and ex.total == 0.0  # both edges have length 0
    assert "at distance 0" in ex.summary()
    assert any("at distance 0" in str(w.message) for w in caught)
