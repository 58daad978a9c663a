"""Review 64: train_tfn checked only the first graph's feature count and batch_graphs nothing, so
a later graph of other widths stopped training with a bare numpy ValueError, and batch_graphs
gave bare errors for an empty list, one graph not in a list, a PointGraph or a str dtype."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import GraphDataset, PointGraph, TensorFieldNetwork  # noqa: E402
from trustlab.explain.equigx.data import Graph  # noqa: E402
from trustlab.explain.equigx.training import batch_graphs, train_tfn  # noqa: E402


def graph(pos=None, width=1, label=0, seed=0):
    pos = np.random.default_rng(seed).normal(size=(5, 3)) if pos is None else pos
    return Graph(pos=pos, x=np.ones((len(pos), width)), label=label,
                 node_mask=np.zeros(len(pos), bool))  # fmt: skip


def dataset(bad):
    graphs = (graph(seed=1), graph(label=1, seed=2), bad)
    return GraphDataset(name="t", class_names=("a", "b"), feature_names=("f",), graphs=graphs)


@pytest.mark.parametrize(
    ("bad", "where"),
    [(graph(width=2), r"train\[2\]\.x"), (graph(pos=np.zeros((5, 2))), r"train\[2\].*\(n, 3\)")],
)
def test_train_tfn_checks_every_graph(bad, where):
    net = TensorFieldNetwork(n_classes=2, n_scalars=1, mul=2, l_max=1, n_layers=1, k=3)
    with pytest.raises(InputError, match=where):
        train_tfn(net, dataset(bad), max_epochs=1, batch_size=8, random_state=0)


def test_batch_graphs_input():
    for bad in ([], graph()):
        with pytest.raises(InputError, match="^graphs: expected"):
            batch_graphs(bad, torch.float64)
    with pytest.raises(InputError, match="^dtype: expected"):
        batch_graphs([graph()], "float32")
    with pytest.raises(InputError, match=r"graphs\[1\]\.x"):
        batch_graphs([graph(), graph(width=2)], torch.float64)
    # the numbers: each graph cast as before (stacked, then cast), PointGraphs and dicts too
    gs = [graph(seed=3), graph(seed=4)]
    got = batch_graphs(gs, torch.float32)
    assert torch.equal(
        got["pos"], torch.as_tensor(np.vstack([g.pos for g in gs]), dtype=torch.float32)
    )
    assert got["batch"].tolist() == [0] * 5 + [1] * 5
    points = [PointGraph(pos=torch.as_tensor(g.pos), x=torch.as_tensor(g.x)) for g in gs]
    again = batch_graphs(points, torch.float32)
    assert all(torch.equal(again[k], got[k]) for k in ("pos", "x", "batch"))
