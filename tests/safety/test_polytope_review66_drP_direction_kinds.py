"""Diff review 66 P of 706aca36: the direction check of steered_generate / compare_steering /
evaluate_polytope reads the vector as model.steer does.

Measured on 706aca36 with the tiny Llama of the suite (width 32, correction="direction"): a
RefusalDirection whose vector was an object array of floats (which model.steer converts, and
706aca36^ answered with) was refused as "direction: expected a RefusalDirection of width 32
(finite numbers)"; a torch bfloat16 tensor stopped on torch's raw "TypeError: Got unsupported
ScalarType BFloat16" (706aca36^: InputError from model.steer) and a tensor that requires grad on
a raw RuntimeError (both revisions). Now the check is as_float_array, the conversion model.steer
makes: what steer takes passes, the rest is the InputError naming direction."""

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.safety import RefusalDirection, SafetyPolytope, steered_generate

VALUES = [0.5, -2.0]


class _Used(Exception):
    """The model was reached: every check had passed."""


class _StandIn:
    """A model's shape only (width 2, 4 layers); any use beyond the checks raises _Used."""

    name, hidden_size, n_layers = "stand-in", 2, 4

    def __getattr__(self, name):
        raise _Used(name)


def _steer(vector):
    direction = RefusalDirection(
        model="stand-in", layer=0, method="answers", n_prompts=1, norm=1.0, vector=vector
    )
    box = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0)
    return steered_generate(
        box, _StandIn(), ["hi"], 2, correction="direction", direction=direction, chat=False
    )


@pytest.mark.parametrize(
    "vector",
    [
        np.array(VALUES, dtype=object),  # refused by 706aca36, steered by its parent
        np.array(VALUES),
        np.array(VALUES, dtype=np.float32),
        np.array(VALUES, dtype=np.float16),
        torch.tensor(VALUES),
        torch.tensor(VALUES, dtype=torch.float64),
        VALUES,
    ],
    ids=["object", "float64", "float32", "float16", "torch32", "torch64", "list"],
)
def test_every_vector_model_steer_takes_passes_the_check(vector):
    with pytest.raises(_Used):
        _steer(vector)


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(  # raw TypeError on 706aca36; numpy warns on torch's __array__ (shared
            torch.tensor(VALUES, dtype=torch.bfloat16),  # as_float_array, as in model.steer)
            marks=pytest.mark.filterwarnings("ignore::DeprecationWarning"),
        ),
        torch.tensor(VALUES, requires_grad=True),  # raw RuntimeError on 706aca36
        np.array([np.nan, 1.0], dtype=object),
        np.array([[0.5, 1.0]]),
    ],
    ids=["bfloat16", "requires_grad", "object_nan", "2d"],
)
def test_a_vector_model_steer_cannot_take_is_refused_by_name(vector):
    with pytest.raises(InputError, match=r"^direction: expected a RefusalDirection of width 2 "
                       r"\(finite numbers\)") as info:  # fmt: skip
        _steer(vector)
    assert info.value.argument == "direction"
