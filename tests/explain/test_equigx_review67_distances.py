"""TFNConfig distances no network computes with are refused; huge integers run (review 67).

Measured on 1b2aaee5: ``TFNConfig(radius=10**400)`` and ``avg_neighbors=10**400`` were accepted
(0 < 10**400 < inf holds for a Python int) and the first forward pass stopped on ``OverflowError:
int too big to convert``; ``radius=10**300`` and ``2**63`` (float64 network) on the same
OverflowError (torch reads a Python int as an int64); ``radius=1e39`` with the default float32
dtype on torch's ``RuntimeError: value cannot be converted to type float without overflow``. Now
an int beyond any float and a radius beyond the dtype's largest number are InputErrors naming
the argument; an integer of 2**63 or more is stored as the float it stands for, so the network
runs; smaller integers stay integers (config.json unchanged).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import PointGraph  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork, TFNConfig  # noqa: E402


@pytest.mark.parametrize(
    ("settings", "argument"),
    [
        ({"radius": 10**400}, "radius"),
        ({"avg_neighbors": 10**400}, "avg_neighbors"),
        ({"radius": 1e39}, "radius"),  # beyond float32's largest number
        ({"radius": 10**39}, "radius"),
    ],
    ids=["radius 10**400", "avg_neighbors 10**400", "radius 1e39", "radius 10**39"],
)
def test_distances_no_float32_network_computes_with_are_refused(settings, argument):
    with pytest.raises(InputError, match=rf"^{argument}: expected") as info:
        TFNConfig(**settings)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    "radius", [10**300, 2**64, 2**63, 1e39], ids=["10**300", "2**64", "2**63", "1e39"]
)
def test_large_distances_a_float64_network_computes_with_run(radius, tmp_path):
    cfg = TFNConfig(mul=1, l_max=1, n_layers=1, dtype="float64", radius=radius)
    # stored as the float it stands for (diff review 67 J: on 1b2aaee5 an int radius of 2**63
    # ran as an int, from 2**64 up it stopped on 'OverflowError: int too big to convert')
    assert cfg.radius == float(radius) and type(cfg.radius) is float
    net = TensorFieldNetwork(cfg)
    graph = PointGraph(pos=np.random.default_rng(0).normal(size=(5, 3)), x=np.ones((5, 1)))
    assert torch.isfinite(net(graph)).all()
    if radius == 10**300:  # config.json keeps it
        assert TensorFieldNetwork.load(net.save(tmp_path / "n")).config == cfg


def test_ordinary_integer_distances_stay_integers():
    cfg = TFNConfig(radius=7, avg_neighbors=np.int64(3))
    assert (cfg.radius, cfg.avg_neighbors) == (7, 3)
    assert type(cfg.radius) is int and type(cfg.avg_neighbors) is int
