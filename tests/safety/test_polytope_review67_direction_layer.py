"""Review 67 of the layer of a refusal direction.

Measured on the old files (a 2-layer random Llama): refusal_direction(model, prompts, 5) and
(..., 2) stopped inside LocalModel.activations with "InputError: layers: expected an integer in
[0, 1] (2 layers), got 5": the argument is ``layer``, not ``layers``. A hand-built
RefusalDirection(layer=True) passed steered_generate's check (0 <= True < n_layers) and was
added at layer 1. Now refusal_direction refuses the layer by its own name before the model is
run, and a direction whose layer is a bool (or no integer) is refused as direction.layer."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import (
    RefusalDirection,
    SafetyPolytope,
    SafetyPrompts,
    refusal_direction,
    steered_generate,
)

PROMPTS = SafetyPrompts(
    prompts=("the cat sat", "hi now"),
    unsafe=np.array([True, False]),
    categories=("a", "benign"),
    sources=("test",),
    split="train",
)


class _Used(Exception):
    """The model was reached: every check had passed."""


class _StandIn:
    """A model's shape only (width 2, 2 layers); any use beyond the checks raises _Used."""

    name, hidden_size, n_layers = "stand-in", 2, 2

    def __getattr__(self, name):
        raise _Used(name)


@pytest.mark.parametrize("layer", [2, 5, np.int64(7)])
def test_a_layer_past_the_model_is_refused_as_layer(layer):
    with pytest.raises(InputError, match=r"^layer: expected a layer of stand-in \(0\.\.1\)") as e:
        refusal_direction(_StandIn(), PROMPTS, layer, chat=False)
    assert e.value.argument == "layer"


@pytest.mark.parametrize("layer", [0, 1])
def test_a_layer_of_the_model_reaches_the_model(layer):
    with pytest.raises(_Used):
        refusal_direction(_StandIn(), PROMPTS, layer, chat=False)


def _steer(layer):
    direction = RefusalDirection(
        model="stand-in", layer=layer, method="answers", n_prompts=1, norm=1.0,
        vector=np.array([1.0, 0.0]),
    )  # fmt: skip
    box = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0)
    return steered_generate(
        box, _StandIn(), ["hi"], 2, correction="direction", direction=direction, chat=False
    )


@pytest.mark.parametrize("layer", [True, False, 1.0, "1", None])
def test_a_direction_layer_that_is_no_integer_is_refused(layer):
    with pytest.raises(InputError, match=r"^direction\.layer: expected an integer layer") as e:
        _steer(layer)
    assert e.value.argument == "direction.layer"


@pytest.mark.parametrize("layer", [0, 1, np.int64(1)])
def test_an_integer_direction_layer_reaches_the_model(layer):
    with pytest.raises(_Used):
        _steer(layer)
