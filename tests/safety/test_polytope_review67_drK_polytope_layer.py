"""Review 67 (second reader K of 2f87ae89): a polytope's layer that is no integer, refused.

2f87ae89 refused a RefusalDirection whose layer is a bool or no integer (True passed
``0 <= layer < n_layers`` and was used as layer 1). The polytope's own layer had the same check:
SafetyPolytope(...) and from_parameters refuse a bool, but SafetyPolytope.load reads the layer
from polytope.json as written (and a layer can be set by hand). Measured on HEAD 2f87ae89 (a
saved polytope whose polytope.json says "layer": true or 1.5, a 2-layer stand-in model):
steered_generate passed the check and went on to use the model at int(layer) = 1; "1" stopped
on Python's raw "TypeError: '<=' not supported between instances of 'int' and 'str'". Now each
is "polytope.layer: expected an integer layer of <model>" before the model is used."""

import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope, steered_generate


class _Used(Exception):
    """The model was reached: every check had passed."""


class _StandIn:
    """A model's shape only (width 2, 2 layers); any use beyond the checks raises _Used."""

    name, hidden_size, n_layers = "stand-in", 2, 2

    def __getattr__(self, name):
        raise _Used(name)


def _saved_with_layer(folder, layer):
    SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0).save(folder)
    path = folder / "polytope.json"
    info = json.loads(path.read_text())
    info["params"]["layer"] = layer
    path.write_text(json.dumps(info))
    return SafetyPolytope.load(folder)


@pytest.mark.parametrize("layer", [True, False, 1.5, 1.0, "1"])
def test_a_loaded_layer_that_is_no_integer_is_refused(tmp_path, layer):
    polytope = _saved_with_layer(tmp_path / "p", layer)
    with pytest.raises(InputError, match=r"^polytope\.layer: expected an integer layer") as e:
        steered_generate(polytope, _StandIn(), ["hi"], 2, chat=False)
    assert e.value.argument == "polytope.layer"


def test_a_layer_set_by_hand_is_checked_too():
    polytope = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0)
    polytope.layer = np.True_
    with pytest.raises(InputError, match=r"^polytope\.layer: expected an integer layer"):
        steered_generate(polytope, _StandIn(), ["hi"], 2, chat=False)


@pytest.mark.parametrize("layer", [0, 1, np.int64(1)])
def test_an_integer_layer_reaches_the_model(tmp_path, layer):
    polytope = _saved_with_layer(tmp_path / "p", int(layer))
    polytope.layer = layer
    with pytest.raises(_Used):
        steered_generate(polytope, _StandIn(), ["hi"], 2, chat=False)
