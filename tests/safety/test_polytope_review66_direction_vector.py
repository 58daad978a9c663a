"""Review 66 of the refusal direction given to steered_generate / compare_steering /
evaluate_polytope (correction="direction"): its vector must be finite numbers.

Measured on the old file: a RefusalDirection whose vector held NaN ([nan, 0]), inf ([inf, 0])
or text (["a", "b"]) passed the check of the width only, and steered_generate went on to use
the model (a stand-in model recorded the 'activations' call); with a real model the NaN is
added to every state of the flagged prompts and their answers become noise without a word.
Now InputError "direction: expected a RefusalDirection of width 2 (finite numbers) for
correction='direction', ..." before the model is used; a finite vector of the right width is
accepted as before (the model is reached)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import RefusalDirection, SafetyPolytope, steered_generate


class _Used(Exception):
    """The model was reached: every check had passed."""


class _StandIn:
    """A model's shape only (width 2, 4 layers); any use beyond the checks raises _Used."""

    name, hidden_size, n_layers = "stand-in", 2, 4

    def __getattr__(self, name):
        raise _Used(name)


def _direction(vector):
    return RefusalDirection(
        model="stand-in", layer=0, method="answers", n_prompts=1, norm=1.0, vector=vector
    )


def _steer(vector):
    box = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0)
    return steered_generate(
        box, _StandIn(), ["hi"], 2, correction="direction", direction=_direction(vector),
        chat=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    "vector",
    [np.array([np.nan, 0.0]), np.array([np.inf, 0.0]), np.array(["a", "b"]), np.array([1e400, 1])],
)
def test_a_direction_that_is_not_finite_numbers_is_refused_before_the_model_is_used(vector):
    with pytest.raises(InputError, match=r"^direction: expected a RefusalDirection of width 2 "
                       r"\(finite numbers\)") as info:  # fmt: skip
        _steer(vector)
    assert info.value.argument == "direction"


@pytest.mark.parametrize("vector", [np.array([0.5, -2.0]), np.array([1, 0]), [0.0, 3.0]])
def test_a_finite_direction_of_the_right_width_is_accepted(vector):
    with pytest.raises(_Used):
        _steer(vector)
