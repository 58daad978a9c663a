"""Diff review 66 N of 8f509924: ``TFNConfig`` stores a numpy long double as a Python float.

8f509924 stored a numpy float as ``value.item()``, which for ``np.longdouble`` is the long double
itself. Measured on 8f509924: ``TensorFieldNetwork(radius=np.longdouble(2.0))`` built and ran,
and its ``save`` raised a raw ``TypeError: Object of type longdouble is not JSON serializable``
(before 8f509924 the value was refused as an InputError naming radius); and
``radius=np.longdouble('1e400')``, finite as a long double, passed the finiteness check and was
kept, though as a float it is the infinite cut-off the check refuses (no edge carries a message).
Now a numpy float is stored as ``float(value)`` and checked as stored.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402


@pytest.mark.parametrize("name", ["radius", "avg_neighbors"])
def test_a_long_double_is_stored_as_a_float(name):
    from trustlab.explain.equigx import TFNConfig

    cfg = TFNConfig(mul=2, l_max=1, **{name: np.longdouble(2.5)})
    assert type(getattr(cfg, name)) is float
    assert cfg == TFNConfig(mul=2, l_max=1, **{name: 2.5})
    assert json.loads(json.dumps(asdict(cfg)))[name] == 2.5  # what save writes to config.json


@pytest.mark.parametrize("name", ["radius", "avg_neighbors"])
def test_a_long_double_beyond_float_range_is_refused(name):
    from trustlab.explain.equigx import TFNConfig

    with np.errstate(over="ignore"):
        huge = np.longdouble("1e400")  # finite where long double is wider than a float
    with pytest.raises(InputError) as info:
        TFNConfig(mul=2, l_max=1, **{name: huge})
    assert info.value.argument == name
