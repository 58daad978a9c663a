"""Review 67 (second reader K of 2f87ae89): prompt_activations' layer, refused as ``layer``.

2f87ae89 made refusal_direction name a layer past the model ``layer`` (LocalModel.activations
called it ``layers``) and refuse a bool direction layer. prompt_activations, the public function
that reads the states, had the same defect: measured on HEAD 2f87ae89 with a stand-in model, it
passed int(layer) on, so True was read as layer 1, 2.7 as layer 2, "1" as layer 1, [0, 2.5] as
[0, 2], None stopped on int()'s raw TypeError, and a layer past a real model (or -1, or [])
was refused by the model as ``layers: ...``. Now each layer is refused by the argument's name;
integers (numpy's too), integral floats and arrays of them read as before.

Third reader O of 969d9a07: that check took ints, numpy numbers and 0-d numpy arrays only. Measured on 969d9a07^ with a 2-layer stand-in model:
torch.tensor(1), torch.tensor(1.0), torch.tensor([0, 1]) and [torch.tensor(0), torch.tensor(1)]
were read as 1, 1, [0, 1], [0, 1]; on 969d9a07 each was refused as ``layer: expected an integer
layer``. A torch tensor's value is read as a Python number first, so they read as before and a
bool or non-integral tensor is still refused as ``layer``."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import prompt_activations

torch = pytest.importorskip("torch")


class _Model:
    """Stands in for a 2-layer LocalModel: records the layers it is asked for."""

    name, hidden_size, n_layers = "stand-in", 2, 2

    def __init__(self):
        self.layers = None

    def activations(self, texts, layers, positions, **kwargs):
        self.layers = layers
        shape = (len(texts), 2) if np.ndim(layers) == 0 else (len(texts), len(layers), 2)
        return np.zeros(shape, dtype=np.float32)


@pytest.mark.parametrize("layer", [True, 2.7, "1", None, [0, 2.5], [True], (0, "1")])
def test_a_layer_that_is_no_integer_is_refused_as_layer(layer):
    model = _Model()
    with pytest.raises(InputError, match=r"^layer: expected an integer layer") as e:
        prompt_activations(model, ["hi"], layer, chat=False)
    assert e.value.argument == "layer" and model.layers is None


@pytest.mark.parametrize("layer", [2, -1, np.int64(5), [0, 2], 2.0])
def test_a_layer_past_the_model_is_refused_as_layer(layer):
    model = _Model()
    with pytest.raises(InputError, match=r"^layer: expected a layer of stand-in \(0\.\.1\)") as e:
        prompt_activations(model, ["hi"], layer, chat=False)
    assert e.value.argument == "layer" and model.layers is None


def test_no_layers_is_refused_as_layer():
    with pytest.raises(InputError, match=r"^layer: expected a layer or a non-empty sequence"):
        prompt_activations(_Model(), ["hi"], [], chat=False)


@pytest.mark.parametrize(
    ("layer", "read"),
    [(1, 1), (np.int64(1), 1), (1.0, 1), (np.array(1), 1), ([0, 1], [0, 1]),
     (np.array([1, 0]), [1, 0]), (np.array([0.0, 1.0]), [0, 1])],
)  # fmt: skip
def test_integer_layers_read_as_before(layer, read):
    model = _Model()
    prompt_activations(model, ["hi"], layer, chat=False)
    assert model.layers == read
    assert all(type(v) is int for v in np.atleast_1d(model.layers).tolist())
    assert type(model.layers) in (int, list)


@pytest.mark.parametrize(
    ("layer", "read"),
    [
        (torch.tensor(1), 1),
        (torch.tensor(1, dtype=torch.int8), 1),
        (torch.tensor(1.0), 1),
        (torch.tensor([0, 1]), [0, 1]),
        ([torch.tensor(0), torch.tensor(1)], [0, 1]),
    ],
)
def test_torch_layers_read_as_before(layer, read):
    model = _Model()
    prompt_activations(model, ["hi"], layer, chat=False)
    assert model.layers == read and type(model.layers) is type(read)


@pytest.mark.parametrize(
    "layer", [torch.tensor(True), torch.tensor(0.5), torch.tensor([0.0, 1.5]), torch.tensor(2)]
)
def test_bool_fractional_or_out_of_range_tensors_are_still_refused(layer):
    model = _Model()
    with pytest.raises(InputError, match=r"^layer: expected") as e:
        prompt_activations(model, ["hi"], layer, chat=False)
    assert e.value.argument == "layer" and model.layers is None
