"""EquiGX inputs that used to pass silently: non-finite node features, graphs whose network
output is 0 (no edge carries a message), and too few graphs for the train/validation/test split."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import EquiGX, PointGraph, recipe_data  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return TensorFieldNetwork(n_classes=3, mul=2, l_max=1, n_layers=2, k=3, radius=2.0,
                              dtype="float64")  # fmt: skip


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("method", ["fast", "rules"])
def test_non_finite_node_features_are_refused(net, bad, method):
    pos = np.random.default_rng(0).normal(size=(6, 3))
    x = np.ones((6, 1))
    x[2, 0] = bad
    with pytest.raises(InputError, match=r"^graph\.x: expected finite node features"):
        EquiGX(net, method=method).explain(PointGraph(pos=pos, x=x))
    with pytest.raises(InputError, match=r"^graph\.x: expected finite"):
        EquiGX(net).explain_many([{"pos": pos, "x": x}])
    with pytest.raises(InputError, match=r"^graph\.x: expected finite"):
        net({"pos": pos, "x": x})


def test_a_graph_without_messages_says_its_relevance_is_all_zero(net):
    far = PointGraph(pos=10.0 * np.eye(4, 3), x=np.ones((4, 1)))  # every pair beyond radius 2
    with pytest.warns(UserWarning, match="output is 0 for every class"):
        ex = EquiGX(net).explain(far)
    assert not np.any(ex.logits) and ex.total == 0
    assert "output is 0 for every class" in ex.summary()
    near = PointGraph(pos=np.random.default_rng(1).normal(size=(6, 3)), x=np.ones((6, 1)))
    with pytest.warns(UserWarning, match="output is 0"):
        EquiGX(net).explain_many([near, far])
    ok = EquiGX(net).explain(near)
    assert "output is 0" not in ok.summary() and abs(ok.total - 1) < 1e-6


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"source": "shapes_in_noise", "variant": "platonic", "n_graphs": 10}, "n_graphs"),
        ({"source": "shapes_in_noise", "variant": "platonic", "n_graphs": 15}, "n_graphs"),
        ({"source": "qm9_carbonyl", "n_molecules": 5}, "n_molecules"),
    ],
)
def test_too_few_graphs_for_the_split_names_the_count(spec, key):
    with pytest.raises(InputError, match=rf"^{key}: expected enough graphs") as info:
        recipe_data({**spec, "random_state": 0})
    assert info.value.argument == key
    n = 4 * (5 if key == "n_graphs" else 2)  # said to always suffice
    parts = recipe_data({**spec, key: n, "random_state": 0})
    assert all(len(p) > 0 for p in parts.values())


def _damaged(folder, what):
    """A network folder saved by TensorFieldNetwork.save, then damaged."""
    TensorFieldNetwork(mul=2, l_max=1, n_layers=2).save(folder)
    if what == "no weights":
        (folder / "weights.safetensors").unlink()
    elif what == "bad json":
        (folder / "config.json").write_text("{bad")
    elif what == "unknown setting":
        (folder / "config.json").write_text('{"foo": 1}')
    elif what == "bad weights":
        (folder / "weights.safetensors").write_text("garbage")
    elif what == "other settings":
        config = (folder / "config.json").read_text().replace('"mul": 2', '"mul": 3')
        (folder / "config.json").write_text(config)
    return folder


DAMAGE = ["no weights", "bad json", "unknown setting", "bad weights", "other settings"]


@pytest.mark.parametrize("what", DAMAGE)
def test_loading_a_damaged_network_folder_is_an_input_error(tmp_path, what):
    folder = _damaged(tmp_path / "m", what)
    with pytest.raises(InputError, match=r"^path: expected a folder written by") as info:
        TensorFieldNetwork.load(folder)
    assert info.value.argument == "path"


def test_explain_many_refuses_one_graph_and_one_target(net):
    g = PointGraph(pos=np.random.default_rng(2).normal(size=(6, 3)), x=np.ones((6, 1)))
    with pytest.raises(InputError, match=r"^graphs: expected a sequence of graphs"):
        EquiGX(net).explain_many(g)
    with pytest.raises(InputError, match=r"^graphs: expected a sequence"):
        EquiGX(net).explain_many({"pos": g.pos, "x": g.x})
    with pytest.raises(InputError, match=r"^targets: expected 1 class indices"):
        EquiGX(net).explain_many([g], targets=1)
    assert EquiGX(net).explain_many([g], targets=[1])[0].target == 1


def test_without_validation_training_keeps_the_last_epoch():
    from trustlab.explain.equigx import shapes_in_noise, train_tfn

    data = shapes_in_noise(24, variant="same_count", n_nodes=10, random_state=0)
    for seed in range(3):  # seed 0 once ended on epoch 5 of 6 (its running training accuracy)
        torch.manual_seed(seed)
        net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
        steps = []

        def last_weights(epoch, *_, net=net, steps=steps):
            steps.append({k: v.detach().clone() for k, v in net.state_dict().items()})

        history = train_tfn(net, data, max_epochs=6, batch_size=6, random_state=seed,
                            learning_rate=0.05, progress=last_weights)  # fmt: skip
        assert history.best_epoch == 6 == len(steps)
        for name, value in net.state_dict().items():
            assert torch.equal(value, steps[-1][name]), name


@pytest.mark.parametrize(
    ("graph", "name"),
    [
        ({"pos": [[0, 0, 0], [1, 0]], "x": [1, 1]}, "graph.pos"),
        ({"pos": "abc", "x": [1]}, "graph.pos"),
        ({"pos": np.zeros((2, 3)), "x": np.array(["a", "b"])}, "graph.x"),
    ],
)
def test_positions_and_features_that_are_not_numbers_are_refused(net, graph, name):
    with pytest.raises(InputError, match=rf"^{name}: expected numbers"):
        EquiGX(net).explain(graph)
