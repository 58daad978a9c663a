"""Diff review 64 G: calibrate_strength's new ``start`` check refused a 0-d numpy array and a
0-d torch tensor (numbers that worked before it, shown as 'got 1.0'), and a start or bound past
float's range (10**400) was a bare OverflowError."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret.sae.intervention import calibrate_strength


def kl(s):
    return 0.01 * s**2  # KL 0.5 at s = sqrt(50)


def test_zero_dim_start_is_a_number():
    torch = pytest.importorskip("torch")
    plain = calibrate_strength(kl, start=1.0)
    for start in (np.array(1.0), torch.tensor(1.0), np.float32(1), np.int64(1), 1):
        found = calibrate_strength(kl, start=start)
        assert found.strength == plain.strength  # the same steps from the same first strength


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"start": 10**400}, "start"), ({"log10_bounds": (0, 10**400)}, "log10_bounds")],
)
def test_out_of_range_numbers_are_input_errors(kwargs, argument):
    with pytest.raises(InputError, match=f"^{argument}: expected") as info:
        calibrate_strength(kl, **kwargs)
    assert info.value.argument == argument
