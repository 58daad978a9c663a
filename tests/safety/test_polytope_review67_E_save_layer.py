"""Review 67 (E): SafetyPolytope.save refuses a layer that is no integer layer, as ``layer``.

SafetyPolytope(...), fit and from_parameters refuse a bool or non-integer layer, but a layer set
by hand after fitting was saved as it was. Measured on d8070d9a (estimator.py as at 3d5dada5):
with ``polytope.layer`` set to True, 5.7, "3" or -1 after fitting, save wrote ``"layer": true``
(5.7, "3", -1) into polytope.json and SafetyPolytope.load read it back as the polytope's layer,
so the error (if any) came only where the loaded polytope met a model. Now save refuses it
before anything is written; None and integer layers (numpy's too) save and load as before."""

import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope


def _polytope(layer=1):
    return SafetyPolytope.from_parameters([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0], layer=layer)


@pytest.mark.parametrize("layer", [True, np.True_, 5.7, 2.0, "3", -1])
def test_a_hand_set_layer_that_is_no_layer_is_not_saved(tmp_path, layer):
    polytope = _polytope()
    polytope.layer = layer
    with pytest.raises(InputError, match=r"^layer: expected an integer >= 0") as e:
        polytope.save(tmp_path / "p")
    assert e.value.argument == "layer"
    assert not (tmp_path / "p" / "polytope.json").exists()


def test_the_earlier_polytope_stays_when_the_layer_is_refused(tmp_path):
    _polytope(layer=0).save(tmp_path)
    polytope = _polytope()
    polytope.layer = True
    with pytest.raises(InputError):
        polytope.save(tmp_path)
    assert SafetyPolytope.load(tmp_path).layer == 0


@pytest.mark.parametrize("layer", [None, 0, 3, np.int64(2)])
def test_integer_layers_save_and_load_as_before(tmp_path, layer):
    polytope = _polytope()
    polytope.layer = layer
    polytope.save(tmp_path)
    assert json.loads((tmp_path / "polytope.json").read_text())["params"]["layer"] == layer
    back = SafetyPolytope.load(tmp_path)
    assert back.layer == layer and not isinstance(back.layer, bool)
