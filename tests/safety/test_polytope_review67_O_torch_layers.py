"""Review 67 (third reader O of 969d9a07): prompt_activations reads torch layers as before.

969d9a07 replaced ``int(layer)`` (or ``[int(v) for v in layer]``) by a check that takes ints,
numpy numbers and 0-d numpy arrays only. Measured on 969d9a07^ with a 2-layer stand-in model:
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
    name, hidden_size, n_layers = "stand-in", 2, 2

    def __init__(self):
        self.layers = None

    def activations(self, texts, layers, positions, **kwargs):
        self.layers = layers
        shape = (len(texts), 2) if np.ndim(layers) == 0 else (len(texts), len(layers), 2)
        return np.zeros(shape, dtype=np.float32)


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
