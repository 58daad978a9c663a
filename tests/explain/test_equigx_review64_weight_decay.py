"""train_tfn's weight_decay (diff review 64 I): True was taken as 1.0 and inf accepted (Adam
turns every weight into NaN), while a numpy float32 0.01 was refused as 'a number >= 0'."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import GraphDataset, TensorFieldNetwork  # noqa: E402
from trustlab.explain.equigx.data import Graph  # noqa: E402
from trustlab.explain.equigx.training import train_tfn  # noqa: E402


def data():
    rng = np.random.default_rng(0)
    graphs = tuple(
        Graph(
            pos=rng.normal(size=(4, 3)), x=np.ones((4, 1)), label=i % 2, node_mask=np.zeros(4, bool)
        )  # fmt: skip
        for i in range(4)
    )
    return GraphDataset(name="t", class_names=("a", "b"), feature_names=("f",), graphs=graphs)


def net():
    return TensorFieldNetwork(n_classes=2, n_scalars=1, mul=2, l_max=1, n_layers=1, k=3)


@pytest.mark.parametrize("bad", [True, np.inf, float("nan"), -0.1, "0.1"])
def test_weight_decay_refused(bad):
    with pytest.raises(InputError, match="^weight_decay: expected"):
        train_tfn(net(), data(), max_epochs=1, batch_size=4, weight_decay=bad, random_state=0)


def test_numpy_weight_decay_trains_as_the_float():
    first, second = net(), net()
    second.load_state_dict(first.state_dict())
    a = train_tfn(first, data(), max_epochs=1, batch_size=4, weight_decay=np.float32(0.5),
                  random_state=0)  # fmt: skip
    b = train_tfn(second, data(), max_epochs=1, batch_size=4, weight_decay=float(np.float32(0.5)),
                  random_state=0)  # fmt: skip
    assert a.train_loss == b.train_loss
    for p, q in zip(first.parameters(), second.parameters(), strict=True):
        assert torch.equal(p, q)
