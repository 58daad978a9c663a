"""Stop 61: ``intervene(..., argument=...)`` names what a nan or inf result is blamed on.

The transfer measures add ``scale * vector`` at chosen positions through ``intervene``; they used
to wrap every hook in a second finite check of their own (two isfinite reductions per forward
pass) only to name ``scale`` instead of ``fn``. Now ``intervene`` takes ``argument="scale"`` and
words the refusal as ``steer`` does; anything else for ``argument`` is refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.llm.settings import STEER_NORM_LIMIT, check_steering_scale

torch = pytest.importorskip("torch")


def test_a_scale_blamed_intervention_names_scale(smollm2):
    with smollm2.intervene(5, lambda h: h + float("inf"), argument="scale"):
        with pytest.raises(InputError, match=r"^scale: expected scale \* vector to stay finite"):
            smollm2.logprobs(["Hi"], [" there"])


@pytest.mark.parametrize("argument", ["vector", "", None])
def test_another_argument_is_refused_before_any_hook(smollm2, argument):
    with pytest.raises(InputError, match=r"^argument: expected one of") as caught:
        smollm2.intervene(5, lambda h: h, argument=argument)
    assert caught.value.argument == "argument"
    assert not smollm2._layers[5]._forward_hooks


def test_the_shift_check_takes_norms_just_below_the_limit_and_names_its_argument():
    unit = np.zeros(4)
    unit[0] = 1.0
    assert check_steering_scale(np.float32(2.5), unit) == 2.5
    below = float(np.nextafter(STEER_NORM_LIMIT, 0.0))
    assert check_steering_scale(below, unit) == below
    with pytest.raises(InputError, match=r"^alpha: .*L2 norm below 1\.84e\+19.*alpha=") as caught:
        check_steering_scale(STEER_NORM_LIMIT, unit, "alpha")
    assert caught.value.argument == "alpha"
    with pytest.raises(InputError, match=r"^scale: expected finite values, got nan"):
        check_steering_scale(float("nan"), unit)
