"""Review 64: calibrate_strength gave bare TypeError / ValueError for a str ``start``, bounds that
are not two numbers and a ``kl`` returning None; now InputError naming the argument."""

import math

import pytest

from trustlab.errors import InputError
from trustlab.interpret.sae.intervention import calibrate_strength


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"start": "2"}, "start"),
        ({"start": math.inf}, "start"),
        ({"log10_bounds": "ab"}, "log10_bounds"),
        ({"log10_bounds": (1, 2, 3)}, "log10_bounds"),
        ({"log10_bounds": (-1, None)}, "log10_bounds"),
    ],
)
def test_calibrate_strength_bad_settings(kwargs, argument):
    with pytest.raises(InputError, match=f"^{argument}: expected") as info:
        calibrate_strength(lambda s: 0.01 * s**2, **kwargs)
    assert info.value.argument == argument


def test_calibrate_strength_kl_must_return_a_number():
    with pytest.raises(InputError, match="^kl: expected .* got None"):
        calibrate_strength(lambda s: None)
    # the analytic root sqrt(50) is still found (KL 0.01 s^2, within the default 10 % of 0.5)
    found = calibrate_strength(lambda s: 0.01 * s**2, start=1)
    assert found.converged and abs(found.kl - 0.5) <= 0.05
