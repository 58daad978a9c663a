"""``TFNConfig`` reads numpy numbers as numbers and refuses bools (review 66).

Measured before: ``TensorFieldNetwork(radius=True)`` built a network of radius 1 whose config
(and saved config.json) said ``true``; ``k=True`` a 1-nearest-neighbour graph, ``l_max=True``
order 1; while ``mul=np.int64(2)`` was refused as "mul: expected a positive integer, got 2" and
``radius=np.float32(2.0)`` as "radius: expected a finite positive number, got 2.0". Now a bool
is refused naming its setting, and numpy integers/floats are kept as the Python numbers they
equal (the JSON config holds plain numbers); Python numbers are kept as given.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402


@pytest.mark.parametrize("name", ["radius", "k", "l_max", "avg_neighbors", "mul"])
def test_a_bool_is_no_setting(name):
    from trustlab.explain.equigx import TFNConfig

    with pytest.raises(InputError) as info:
        TFNConfig(**{"mul": 2, "l_max": 1, name: True})
    assert info.value.argument == name


def test_numpy_numbers_are_read_as_numbers(tmp_path):
    from trustlab.explain.equigx import TensorFieldNetwork, TFNConfig

    given = dict(mul=np.int64(2), l_max=np.int32(1), k=np.int64(4), radius=np.float32(2.5),
                 avg_neighbors=np.float64(6.0), n_classes=np.uint8(3))  # fmt: skip
    cfg = TFNConfig(**given)
    plain = TFNConfig(mul=2, l_max=1, k=4, radius=2.5, avg_neighbors=6.0, n_classes=3)
    assert cfg == plain
    assert all(type(getattr(cfg, n)) is type(getattr(plain, n)) for n in given)
    folder = TensorFieldNetwork(cfg).save(tmp_path / "net")
    saved = json.loads((folder / "config.json").read_text())
    assert saved["radius"] == 2.5 and saved["mul"] == 2
    assert TensorFieldNetwork.load(folder).config == plain
    assert TFNConfig(radius=2).radius == 2 and type(TFNConfig(radius=2).radius) is int
